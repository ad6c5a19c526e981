// `fabricsim sweep` (sweep files, the local and Slurm executors, resuming), `fabricsim
// report` in headless Chromium, and the progress line of long runs.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "command.h"
#include "temp_files.h"
#include "sim/config_reader.h"
#include "sim/progress.h"
#include "sim/sweep.h"

namespace {

namespace fs = std::filesystem;
using fabricsim::testing::run_command;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kSource = FABRICSIM_SOURCE_DIR;

// A fresh folder per test under the system temp folder.
fs::path temp_dir() { return fabricsim::testing::test_temp_dir("sweep"); }

using fabricsim::testing::write_text;

std::string read(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The acceptance sweep: 6 loads x 2 buffer organisations x 2 seeds = 24 points on the
// 16-port switch, 15 us simulated each.
const std::string kSweep24 = kSource + "/examples/sweeps/switch_buffers.yaml";

std::vector<fs::file_time_type> result_times(const fs::path& out, int n) {
  std::vector<fs::file_time_type> t;
  char name[16];
  for (int i = 0; i < n; ++i) {
    std::snprintf(name, sizeof name, "%04d", i);
    const fs::path f = out / "points" / name / "results.json";
    t.push_back(fs::exists(f) ? fs::last_write_time(f) : fs::file_time_type::min());
  }
  return t;
}

// The gathered table without the run-specific fields (where results are, which executor).
nlohmann::json table_of(const fs::path& out) {
  nlohmann::json j = nlohmann::json::parse(read(out / "sweep.json"));
  for (auto& p : j["points"]) p.erase("results");
  return j["points"];
}

TEST(SweepSpec, CartesianRangesSeedsAndZip) {
  const fs::path d = temp_dir();
  const auto spec = fabricsim::sim::read_sweep_file(kSweep24, {});
  ASSERT_EQ(spec.points.size(), 24u);
  EXPECT_EQ(spec.axis_keys, (std::vector<std::string>{"traffic.load", "switch.buffer"}));
  // The first axis varies slowest, seeds fastest; the range includes its end on the grid.
  EXPECT_EQ(spec.points[0].axes[0].second, "0.2");
  EXPECT_EQ(spec.points[1].seed, 2u);
  EXPECT_EQ(spec.points[2].axes[1].second, "voq");
  EXPECT_EQ(spec.points[23].axes[0].second, "0.95");
  EXPECT_EQ(spec.points[23].overrides.back().assignment, "simulation.seed=2");

  const auto zipped = fabricsim::sim::read_sweep_file(
      write_text(d / "z.yaml", "base: " + kSource + "/examples/single_switch.yaml\n"
                          "axes:\n"
                          "  - key: traffic.load\n"
                          "    range: {from: 0.1, to: 0.3, count: 3}\n"
                          "  - zip:\n"
                          "      - {key: switch.allocator, values: [islip, pim]}\n"
                          "      - {key: switch.allocator_iterations, values: [1, 3]}\n")
          .string(),
      {});
  ASSERT_EQ(zipped.points.size(), 6u);  // 3 loads x 2 zipped pairs
  EXPECT_EQ(zipped.points[1].axes[1].second, "pim");
  EXPECT_EQ(zipped.points[1].axes[2].second, "3");
  EXPECT_EQ(zipped.points[4].axes[0].second, "0.3");

  const auto all_zip = fabricsim::sim::read_sweep_file(
      write_text(d / "zz.yaml", "base: " + kSource + "/examples/single_switch.yaml\ncombine: zip\n"
                           "axes:\n  - {key: traffic.load, values: [0.2, 0.4]}\n"
                           "  - {key: switch.buffer, values: [voq, output_queued]}\n")
          .string(),
      {});
  ASSERT_EQ(all_zip.points.size(), 2u);
  EXPECT_EQ(all_zip.points[1].axes[1].second, "output_queued");
}

// A bad key or value in an axis is reported at its line in the sweep file, like any
// configuration error, before anything runs.
TEST(SweepSpec, ErrorsNameTheSweepFileLineAndKey) {
  const fs::path d = temp_dir();
  const std::string base = "base: " + kSource + "/examples/single_switch.yaml\n";
  struct Case {
    std::string text, expect;
  };
  const std::vector<Case> cases{
      {base + "axes:\n  - key: traffic.laod\n    values: [0.2, 0.5]\n",
       "s.yaml:4:14: traffic.laod: unknown key; allowed keys here:"},
      {base + "axes:\n  - key: switch.buffer\n    values: [voq, voqq]\n", "s.yaml:4:19: switch.buffer: unknown value 'voqq'"},
      {base + "axes:\n  - key: traffic.load\n    values: [0.2, 1.7]\n", "s.yaml:4:19: traffic.load: must be a number in"},
      {base + "set:\n  simulation.duraton: 5us\naxes:\n  - {key: traffic.load, values: [0.2]}\n",
       "s.yaml:3:23: simulation.duraton: unknown key"},
      {base + "axes:\n  - key: traffic.load\n    range: {from: 0.5, to: 0.1, step: 0.1}\n", "s.yaml:4:28: axes[0].range.to: must be >= from"},
      {base + "axes:\n  - zip:\n    - {key: traffic.load, values: [0.2, 0.3]}\n    - {key: switch.buffer, values: [voq]}\n",
       "axes[0].zip: zipped axes need the same number of values"},
      {base + "axes:\n  - {key: traffic.load, valeus: [0.2]}\n", "axes[0]"},
      {"axes:\n  - {key: traffic.load, values: [0.2]}\n", "s.yaml:1:1: base: a sweep file names its base configuration"},
      {base + "axes: []\n", "axes: expected a list of axes"},
      // A misspelt axes list is named as such, not read as a plain configuration.
      {base + "axis:\n  - {key: traffic.load, values: [0.2]}\n", "s.yaml:2:1: axis: unknown key; allowed keys here:"},
      {"base: s.yaml\naxes:\n  - {key: traffic.load, values: [0.2]}\n",
       "s.yaml:1:7: base: '" + (d / "s.yaml").string() + "' is a sweep file (this one); base names the configuration"},
      {base + "axes:\n  - {key: traffic.load, values: [0.2]}\nseeds: [1, 7, 1]\n",
       "s.yaml:4:8: seeds: seed 1 appears twice"},
      {base + "axes:\n  - {key: traffic.load, values: [0.2, 0.5, 0.2]}\n",
       "s.yaml:3:44: axes[0].values: value '0.2' appears twice"},
  };
  for (const auto& c : cases) {
    write_text(d / "s.yaml", c.text);
    const auto r = run_command("sweep " + (d / "s.yaml").string() + " --out " + (d / "out").string());
    EXPECT_EQ(r.exit_code, 2) << c.text << r.output;
    EXPECT_THAT(r.output, HasSubstr(c.expect)) << c.text;
    EXPECT_FALSE(fs::exists(d / "out" / "points")) << "nothing runs when a point is bad: " << c.text;
  }
}

// --jobs counts simulations at once: 0 or a negative count is a usage error, not "every CPU".
TEST(Sweep, JobsMustBePositive) {
  const std::string out = " --out " + (temp_dir() / "out").string();
  for (const char* jobs : {"0", "-1"}) {
    for (const std::string& command : {"sweep " + kSweep24, "compare " + kSource + "/examples/quickstart.yaml"}) {
      const auto r = run_command(command + " --jobs " + jobs + out);
      EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.output;
      EXPECT_THAT(r.output, HasSubstr("--jobs")) << r.output;
      EXPECT_THAT(r.output, HasSubstr("not in range 1 to 4096")) << r.output;
    }
  }
}

// The offered-load sweep of a plain configuration is an axis on traffic.load.
TEST(Sweep, LoadsOfAConfigurationAreAnAxis) {
  const fs::path d = temp_dir();
  const auto r = run_command("sweep " + kSource + "/examples/single_switch.yaml --loads 0.2,0.4 --set switch.buffer=voq "
                             "--set simulation.duration=15us --out " + (d / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string csv = read(d / "out" / "sweep.csv");
  EXPECT_THAT(csv, HasSubstr("point,traffic.load,seed,status,offered_load,injected_load,accepted_load"));
  const auto points = table_of(d / "out");
  ASSERT_EQ(points.size(), 2u);
  for (const auto& p : points) {
    const double offered = std::stod(p["axes"]["traffic.load"].get<std::string>());
    EXPECT_EQ(p["metrics"]["offered_load"].get<double>(), offered);
    // Below saturation a VOQ switch accepts what is offered (within the 12 us window's noise).
    EXPECT_NEAR(p["metrics"]["accepted_load"].get<double>(), offered, 0.05);
  }
  for (const char* chakra : {"iteration_time_us", "compute_mean_us", "exposed_communication_mean_us", "communication_fraction"})
    EXPECT_TRUE(points[0]["metrics"][chakra].is_null()) << chakra << ": no trace ran";
  const auto bad = run_command("sweep " + kSource + "/examples/single_switch.yaml --loads 0.5,1.5");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.output, HasSubstr("--loads 0.5,1.5: expected comma-separated loads in (0, 1], got '1.5'"));
}

// A point that runs a Chakra trace reports the chakra section's iteration time, the
// means over ranks of compute and exposed communication, and exposed / iteration.
TEST(Sweep, ChakraPointsReportTheIteration) {
  const fs::path d = temp_dir();
  write_text(d / "s.yaml", "base: " + kSource + "/examples/chakra_tiny.yaml\n"
                      "axes:\n  - key: chakra.step_latency\n    values: [0us, 2us]\n");
  const auto r = run_command("sweep " + (d / "s.yaml").string() + " --jobs 2 --out " + (d / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(read(d / "out" / "sweep.csv"),
              HasSubstr(",busbw_GBps,iteration_time_us,compute_mean_us,exposed_communication_mean_us,"
                        "communication_fraction\n"));
  const auto points = table_of(d / "out");
  ASSERT_EQ(points.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& m = points[i]["metrics"];
    const auto c = nlohmann::json::parse(read(d / "out" / "points" / ("000" + std::to_string(i)) / "results.json"))["chakra"];
    double compute = 0, exposed = 0;
    for (const auto& rank : c["per_rank"]) {
      compute += rank["compute_us"].get<double>();
      exposed += rank["exposed_communication_us"].get<double>();
    }
    const double ranks = static_cast<double>(c["per_rank"].size());
    EXPECT_EQ(m["iteration_time_us"], c["iteration_time_us"]);
    EXPECT_DOUBLE_EQ(m["compute_mean_us"].get<double>(), compute / ranks);
    EXPECT_DOUBLE_EQ(m["exposed_communication_mean_us"].get<double>(), exposed / ranks);
    EXPECT_DOUBLE_EQ(m["communication_fraction"].get<double>(), exposed / ranks / c["iteration_time_us"].get<double>());
    EXPECT_GT(m["communication_fraction"].get<double>(), 0.0);
  }
  // The step latency lengthens every transfer of the AllReduce, and so the iteration.
  EXPECT_GT(points[1]["metrics"]["iteration_time_us"].get<double>(), points[0]["metrics"]["iteration_time_us"].get<double>());
}

// 24 points; deleted, truncated or inconsistent results, and a result whose packets.csv is
// gone, are the only ones rerun, and the table is the same.
TEST(Sweep, RerunRunsOnlyTheMissingPoints) {
  const fs::path d = temp_dir();
  // A copy of the example with its base configuration found from the copy's folder.
  const fs::path sweep = d / "s.yaml";
  std::string text = read(kSweep24);
  text.replace(text.find("../single_switch.yaml"), 21, kSource + "/examples/single_switch.yaml");
  write_text(sweep, text);
  const std::string cmd = "sweep " + sweep.string() + " --jobs 2 --out " + (d / "out").string();
  const auto first = run_command(cmd);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_THAT(first.output, HasSubstr("24 points, 0 already done, 24 to run"));
  const auto table = table_of(d / "out");
  ASSERT_EQ(table.size(), 24u);
  // The sweep did what it says: input FIFO saturates near Karol's 0.586, VOQ does not.
  EXPECT_LT(table[20]["metrics"]["accepted_load"].get<double>(), 0.65);  // 0.95, input_fifo
  EXPECT_GT(table[22]["metrics"]["accepted_load"].get<double>(), 0.85);  // 0.95, voq
  const auto before = result_times(d / "out", 24);
  fs::remove(d / "out/points/0003/results.json");
  fs::remove(d / "out/points/0017/results.json");
  write_text(d / "out/points/0009/results.json", "{\"schema_version\": 3, \"pack");  // a torn file
  // A result that parses but does not add up, and one whose packets.csv is gone.
  nlohmann::json r11 = nlohmann::json::parse(read(d / "out/points/0011/results.json"));
  r11["packets"]["delivered"] = r11["packets"]["injected"].get<std::uint64_t>() + 5;
  write_text(d / "out/points/0011/results.json", r11.dump());
  fs::remove(d / "out/points/0014/packets.csv");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto second = run_command(cmd + " --verbose");
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_THAT(second.output, HasSubstr("24 points, 19 already done, 5 to run"));
  EXPECT_THAT(second.output, HasSubstr("point 11 runs again: its packets do not add up: injected "));
  EXPECT_THAT(second.output, HasSubstr("point 14 runs again: packets.csv is missing"));
  EXPECT_THAT(second.output, HasSubstr("point 9 runs again: results.json is unreadable"));
  for (const char* p : {"point 3 ", "point 9 ", "point 11 ", "point 14 ", "point 17 "})
    EXPECT_THAT(second.output, HasSubstr(p));
  EXPECT_THAT(second.output, Not(HasSubstr("point 4 ")));
  EXPECT_TRUE(fs::exists(d / "out/points/0014/packets.csv"));
  const auto after = result_times(d / "out", 24);
  for (int i = 0; i < 24; ++i) {
    if (i == 3 || i == 9 || i == 11 || i == 14 || i == 17) continue;
    EXPECT_EQ(after[i], before[i]) << "point " << i << " was rerun";
  }
  EXPECT_EQ(table_of(d / "out"), table);
  // A result made for another configuration is not complete: a changed `set:` reruns all.
  text.replace(text.find("duration: 15us"), 14, "duration: 16us");
  write_text(sweep, text);
  const auto third = run_command(cmd);
  EXPECT_THAT(third.output, HasSubstr("24 points, 0 already done, 24 to run"));
  EXPECT_THAT(run_command(cmd).output, HasSubstr("24 points, 24 already done, 0 to run"));
}

// Killing a sweep midway, then running it again, runs exactly the points without a result.
TEST(Sweep, KilledMidwayFinishesOnlyTheMissingPoints) {
  const fs::path d = temp_dir();
  const fs::path out = d / "out";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setpgid(0, 0);
    const int fd = open("/dev/null", O_WRONLY);
    dup2(fd, 1);
    dup2(fd, 2);
    execl(FABRICSIM_BINARY, FABRICSIM_BINARY, "sweep", kSweep24.c_str(), "--set", "simulation.duration=60us", "--jobs",
          "1", "--out", out.c_str(), nullptr);
    _exit(127);
  }
  setpgid(pid, pid);
  // Wait for a few finished points, then kill the sweep and its running child.
  int finished = 0;
  for (int i = 0; i < 3000 && finished < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    finished = 0;
    for (auto t : result_times(out, 24)) finished += t != fs::file_time_type::min();
  }
  kill(-pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_GE(finished, 4);
  int done = 0;
  for (auto t : result_times(out, 24)) done += t != fs::file_time_type::min();
  ASSERT_LT(done, 24) << "the sweep finished before it was killed";
  const auto before = result_times(out, 24);
  const auto r = run_command("sweep " + kSweep24 + " --set simulation.duration=60us --jobs 2 --verbose --out " +
                             out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("24 points, " + std::to_string(done) + " already done, " +
                                  std::to_string(24 - done) + " to run"));
  const auto after = result_times(out, 24);
  int reran = 0;
  for (int i = 0; i < 24; ++i) {
    if (before[i] != fs::file_time_type::min()) {
      EXPECT_EQ(after[i], before[i]) << "point " << i << " was rerun";
    }
    reran += before[i] == fs::file_time_type::min();
    EXPECT_NE(after[i], fs::file_time_type::min()) << "point " << i << " has no result";
  }
  EXPECT_EQ(reran, 24 - done);
}

// Runs `fabricsim ARGS` in its own process group with output to `log`; returns its pid.
pid_t spawn(const std::vector<std::string>& args, const std::string& log = "/dev/null") {
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv{const_cast<char*>(FABRICSIM_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(FABRICSIM_BINARY, argv.data());
    _exit(127);
  }
  setpgid(pid, pid);
  return pid;
}

// A rerun into a folder leaves only its own outputs: an earlier run's CSV files that
// this run does not write are removed when it starts, and so is results.json, so a
// killed run never looks complete; results.json lists the files beside it.
TEST(ResultsFolder, RerunRemovesStaleOutputsAndAKilledRunHasNoResults) {
  const fs::path d = temp_dir();
  const fs::path out = d / "out";
  const std::string config = kSource + "/examples/single_switch.yaml";
  const auto first = run_command("run " + config + " --set simulation.duration=15us --packet-csv --quiet --out " +
                                 out.string());
  ASSERT_EQ(first.exit_code, 0) << first.output;
  for (const char* f : {"results.json", "packets.csv", "qps.csv", "qp_rates.csv", "occupancy.csv"})
    ASSERT_TRUE(fs::exists(out / f)) << f;
  EXPECT_EQ(nlohmann::json::parse(read(out / "results.json"))["files"],
            nlohmann::json({"packets.csv", "qps.csv", "qp_rates.csv", "occupancy.csv"}));

  // A long run without packets.csv or samples, killed once it has started.
  const pid_t pid = spawn({"run", config, "--set", "simulation.duration=100ms", "--set", "output.sample_interval=0s",
                           "--quiet", "--out", out.string()});
  for (int i = 0; i < 3000 && fs::exists(out / "packets.csv"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const bool started = !fs::exists(out / "packets.csv");
  kill(-pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  ASSERT_TRUE(started) << "the rerun left the earlier packets.csv";
  EXPECT_FALSE(fs::exists(out / "results.json")) << "a killed run looks complete";

  const auto rerun = run_command("run " + config + " --set simulation.duration=15us --set output.sample_interval=0s "
                                 "--quiet --out " + out.string());
  ASSERT_EQ(rerun.exit_code, 0) << rerun.output;
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(out)) left.push_back(e.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"qps.csv", "results.json"}));
  EXPECT_EQ(nlohmann::json::parse(read(out / "results.json"))["files"], nlohmann::json({"qps.csv"}));
}

// A private single-node Slurm cluster (scripts/slurm_local.sh) for the length of a test.
class LocalSlurm {
 public:
  explicit LocalSlurm(const fs::path& dir) : dir_(dir) {
    const auto r = shell(kSource + "/scripts/slurm_local.sh start " + dir.string());
    code_ = r.first;
    log_ = r.second;
    if (code_ == 0) setenv("SLURM_CONF", (dir / "slurm.conf").c_str(), 1);
  }
  ~LocalSlurm() {
    shell(kSource + "/scripts/slurm_local.sh stop " + dir_.string());
    unsetenv("SLURM_CONF");
  }
  int code() const { return code_; }
  const std::string& log() const { return log_; }

  static std::pair<int, std::string> shell(const std::string& cmd) {
    std::string out;
    FILE* f = popen((cmd + " 2>&1").c_str(), "r");
    char buf[4096];
    for (std::size_t n; f && (n = fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
    const int status = f ? pclose(f) : -1;
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
  }

 private:
  fs::path dir_;
  int code_ = -1;
  std::string log_;
};

// The acceptance check: the same 24 points through an sbatch job array on a real
// slurmctld + slurmd give the local executor's table, and a rerun on Slurm runs only
// the missing points.
TEST(Sweep, SlurmJobArrayEqualsLocalExecutor) {
  const fs::path d = temp_dir();
  const std::string sweep = kSweep24;
  LocalSlurm slurm(d / "slurm");
  if (slurm.code() == 3) GTEST_SKIP() << "Slurm cannot start on this machine: " << slurm.log();
  ASSERT_EQ(slurm.code(), 0) << slurm.log();

  const auto local = run_command("sweep " + sweep + " --jobs 2 --out " + (d / "local").string());
  ASSERT_EQ(local.exit_code, 0) << local.output;
  const auto on_slurm = run_command("sweep " + sweep + " --executor slurm --points-per-task 4 --out " +
                                    (d / "slurm_out").string());
  ASSERT_EQ(on_slurm.exit_code, 0) << on_slurm.output << read(d / "slurm_out/slurm/task_0.out");
  EXPECT_THAT(on_slurm.output, HasSubstr("6 array tasks for 24 points"));
  EXPECT_EQ(read(d / "slurm_out/sweep.csv"), read(d / "local/sweep.csv"));
  EXPECT_EQ(table_of(d / "slurm_out"), table_of(d / "local"));
  EXPECT_EQ(table_of(d / "slurm_out").size(), 24u);
  EXPECT_FALSE(fs::exists(d / "slurm_out/slurm/job_id")) << "the job has ended";

  fs::remove(d / "slurm_out/points/0005/results.json");
  fs::remove(d / "slurm_out/points/0020/results.json");
  const auto before = result_times(d / "slurm_out", 24);
  const auto rerun = run_command("sweep " + sweep + " --executor slurm --out " + (d / "slurm_out").string());
  ASSERT_EQ(rerun.exit_code, 0) << rerun.output;
  EXPECT_THAT(rerun.output, HasSubstr("24 points, 22 already done, 2 to run"));
  EXPECT_THAT(rerun.output, HasSubstr("2 array tasks for 2 points"));
  const auto after = result_times(d / "slurm_out", 24);
  for (int i = 0; i < 24; ++i) {
    if (i == 5 || i == 20) continue;
    EXPECT_EQ(after[i], before[i]) << "point " << i << " was rerun";
  }
  EXPECT_EQ(read(d / "slurm_out/sweep.csv"), read(d / "local/sweep.csv"));
}

// A rerun while the killed submitter's job array is still queued neither runs its points
// a second time nor rewrites the plan its tasks read: it names the job and how to cancel
// it. Once the job is cancelled, the sweep runs.
#if FABRICSIM_MPI
// One fabric over two processes of a Slurm job step (`srun --mpi=pmix`, Slurm's PMIx
// plugin; --overcommit: two tasks on the private cluster's one node): the results of the
// same run in one process.
TEST(Sweep, SrunRunsOneFabricOverTwoProcesses) {
  const fs::path d = temp_dir();
  LocalSlurm slurm(d / "slurm");
  if (slurm.code() == 3) GTEST_SKIP() << "Slurm cannot start on this machine: " << slurm.log();
  ASSERT_EQ(slurm.code(), 0) << slurm.log();
  const std::string run = "run " + kSource +
                          "/bench/s2_kary_ntree.yaml --set simulation.duration=20us --set simulation.warmup=5us "
                          "--set output.sample_interval=0s --quiet --out ";
  const auto one = run_command(run + (d / "one").string());
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const auto two = LocalSlurm::shell("srun --mpi=pmix -n 2 --overcommit " + std::string(FABRICSIM_BINARY) + " " + run +
                                     (d / "two").string());
  ASSERT_EQ(two.first, 0) << two.second;
  nlohmann::json a = nlohmann::json::parse(read(d / "one/results.json"));
  nlohmann::json b = nlohmann::json::parse(read(d / "two/results.json"));
  EXPECT_EQ(b["simulator"]["lanes"], 2);
  for (auto* r : {&a, &b}) {
    r->erase("simulator");
    (*r)["config"]["output"].erase("directory");
  }
  EXPECT_TRUE(a == b) << nlohmann::json::diff(a, b).dump().substr(0, 1000);
  EXPECT_EQ(read(d / "one/qps.csv"), read(d / "two/qps.csv"));
}

// The environment mpirun needs here (fabricsim_mpirun_environment in tests/CMakeLists.txt),
// for the sweep and the processes it starts.
void set_mpirun_environment() {
  std::stringstream words(FABRICSIM_MPIRUN_ENVIRONMENT);
  for (std::string w; words >> w;) {
    const auto eq = w.find('=');
    setenv(w.substr(0, eq).c_str(), w.substr(eq + 1).c_str(), 1);
  }
}

// A sweep file of two points on S2 (20 us) whose points each run over two processes.
fs::path two_process_sweep(const fs::path& d) {
  return write_text(d / "over_processes.yaml", "base: " + kSource + "/bench/s2_kary_ntree.yaml\n"
                    "set: {simulation.duration: 20us, simulation.warmup: 5us}\n"
                    "axes:\n  - key: traffic.load\n    values: [0.2, 0.4]\n"
                    "processes: 2\n");
}

// The same points (`a` and `b`: results folders of a sweep): each point's results.json but
// its simulator section and results folder, and its CSV files byte for byte; the points of
// `b` ran over `lanes` lanes.
void expect_same_points(const fs::path& a, const fs::path& b, int points, int lanes) {
  EXPECT_EQ(table_of(b), table_of(a));
  EXPECT_EQ(read(b / "sweep.csv"), read(a / "sweep.csv"));
  for (int i = 0; i < points; ++i) {
    const fs::path point = fs::path("points") / ("000" + std::to_string(i));
    nlohmann::json ra = nlohmann::json::parse(read(a / point / "results.json"));
    nlohmann::json rb = nlohmann::json::parse(read(b / point / "results.json"));
    EXPECT_EQ(rb["simulator"]["lanes"], lanes) << point;
    ASSERT_EQ(ra["files"], rb["files"]) << point;
    for (const auto& f : ra["files"]) EXPECT_EQ(read(b / point / f), read(a / point / f)) << point / f;
    for (auto* r : {&ra, &rb}) {
      r->erase("simulator");
      (*r)["config"]["output"].erase("directory");
    }
    EXPECT_TRUE(ra == rb) << point << ": " << nlohmann::json::diff(ra, rb).dump().substr(0, 1000);
    EXPECT_FALSE(fs::exists(b / point / "run.log")) << "a point that ran keeps no log";
  }
}

// The sweep file's `processes: 2` through Slurm: each array task holds two tasks and runs
// its point with `srun --mpi=pmix`; the table and every point's results are those of the
// same sweep with one process per point (--processes 1, the local executor).
TEST(Sweep, SlurmRunsEachPointOverTwoProcesses) {
  const fs::path d = temp_dir();
  LocalSlurm slurm(d / "slurm");
  if (slurm.code() == 3) GTEST_SKIP() << "Slurm cannot start on this machine: " << slurm.log();
  ASSERT_EQ(slurm.code(), 0) << slurm.log();
  set_mpirun_environment();
  const std::string sweep = "sweep " + two_process_sweep(d).string();
  const auto one = run_command(sweep + " --processes 1 --jobs 2 --out " + (d / "one").string());
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const auto two = run_command(sweep + " --executor slurm --out " + (d / "two").string());
  ASSERT_EQ(two.exit_code, 0) << two.output << read(d / "two/slurm/task_0.out") << read(d / "two/points/0000/run.log");
  EXPECT_THAT(two.output, HasSubstr("2 to run (slurm executor, 2 processes per point)"));
  EXPECT_THAT(read(d / "two/slurm/sweep.sbatch"), HasSubstr("#SBATCH --ntasks=2\n"));
  EXPECT_EQ(nlohmann::json::parse(read(d / "two/sweep.json"))["processes"], 2);
  expect_same_points(d / "one", d / "two", 2, 2);
}

// --processes 2 with the local executor: each point under `mpirun -np 2`, two of the --jobs.
TEST(Sweep, LocalRunsEachPointOverTwoProcessesWithMpirun) {
  if (LocalSlurm::shell("command -v mpirun").first != 0) GTEST_SKIP() << "mpirun is not on PATH";
  set_mpirun_environment();
  const fs::path d = temp_dir();
  const std::string sweep = "sweep " + two_process_sweep(d).string() + " --jobs 2 --out ";
  const auto one = run_command(sweep + (d / "one").string() + " --processes 1");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const auto two = run_command(sweep + (d / "two").string() + " --verbose");
  ASSERT_EQ(two.exit_code, 0) << two.output << read(d / "two/points/0000/run.log");
  EXPECT_THAT(two.output, HasSubstr("2 to run (local executor, 2 processes per point)"));
  expect_same_points(d / "one", d / "two", 2, 2);
}
#endif

// Processes per point that cannot run are refused (exit 2) before any point runs or
// anything is submitted: a count that is not a positive integer, a build without MPI, the
// local executor without mpirun, and a point a run refuses over several processes.
TEST(Sweep, ProcessesRefusedBeforeAnythingRuns) {
  const fs::path d = temp_dir();
  const fs::path out = d / "out";
  const std::string s2 = "sweep " + kSource + "/bench/s2_kary_ntree.yaml --loads 0.2,0.4 --out " + out.string();
  for (const char* bad : {"0", "-1", "two", "1.5"}) {
    const auto r = run_command(s2 + " --processes " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << r.output;
    EXPECT_THAT(r.output, HasSubstr("--processes")) << bad;
  }
  const fs::path file = write_text(d / "bad.yaml", "base: " + kSource + "/examples/single_switch.yaml\n"
                                   "axes:\n  - key: traffic.load\n    values: [0.2]\nprocesses: 1.5\n");
  const auto r = run_command("sweep " + file.string() + " --out " + out.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr(file.string() + ":5:12: processes:"));

  // A perftest, and more processes than S2's 16 switches with hosts, both on Slurm.
  const fs::path perftest = write_text(d / "perftest.yaml", "base: " + kSource + "/examples/perftest_ib_b2b.yaml\n"
                                       "axes:\n  - key: simulation.seed\n    values: [1, 2]\nprocesses: 2\n");
  struct Case {
    std::string command, says;
  };
  std::vector<Case> cases{
      {"sweep " + perftest.string() + " --executor slurm --out " + out.string(),
       perftest.string() + ":5:12: processes: runs each point over 2 processes; point 0 (simulation.seed=1, seed 1) "
                           "does not: perftest: not run over several processes"},
      {s2 + " --executor slurm --processes 17",
       "--processes 17: runs each point over 17 processes; point 0 (traffic.load=0.2, seed 1) does not: the fabric "
       "has 16 switches with hosts, fewer than the 17 processes"}};
  if (!FABRICSIM_MPI)
    cases = {{s2 + " --processes 2", "--processes 2: runs each point over 2 processes, but this fabricsim is built "
                                     "without MPI (FABRICSIM_MPI OFF)"}};
  for (const auto& c : cases) {
    const auto refused = run_command(c.command);
    EXPECT_EQ(refused.exit_code, 2) << c.command << "\n" << refused.output;
    EXPECT_THAT(refused.output, HasSubstr(c.says)) << c.command;
    EXPECT_FALSE(fs::exists(out)) << "a refused sweep wrote " << out;
  }
  // The local executor starts each point with mpirun: refused when PATH has none.
  if (FABRICSIM_MPI) {
    const std::string path = std::getenv("PATH");
    setenv("PATH", d.c_str(), 1);
    const auto no_mpirun = run_command(s2 + " --processes 2");
    setenv("PATH", path.c_str(), 1);
    EXPECT_EQ(no_mpirun.exit_code, 2) << no_mpirun.output;
    EXPECT_THAT(no_mpirun.output, HasSubstr("--processes 2: runs each point over 2 processes, which the local "
                                            "executor starts with mpirun, not found on PATH"));
    EXPECT_FALSE(fs::exists(out));
  }
}

TEST(Sweep, SlurmRerunRefusesWhileTheEarlierArrayIsQueued) {
  const fs::path d = temp_dir();
  LocalSlurm slurm(d / "slurm");
  if (slurm.code() == 3) GTEST_SKIP() << "Slurm cannot start on this machine: " << slurm.log();
  ASSERT_EQ(slurm.code(), 0) << slurm.log();
  const fs::path out = d / "out";
  const std::vector<std::string> sweep{"sweep", kSource + "/examples/single_switch.yaml", "--loads", "0.2,0.4",
                                       "--set", "simulation.duration=15us", "--out", out.string()};
  // The first submitter's array is held in the queue; the submitter is killed while it waits.
  std::vector<std::string> held = sweep;
  held.insert(held.end(), {"--executor", "slurm", "--sbatch-option=--hold"});
  const pid_t pid = spawn(held, (d / "first.log").string());
  std::smatch job;
  const std::regex job_line("Slurm job ([0-9]+):");
  for (int i = 0; i < 6000; ++i) {
    const std::string log = read(d / "first.log");
    if (std::regex_search(log, job, job_line)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(-pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  const std::string first_log = read(d / "first.log");
  ASSERT_TRUE(std::regex_search(first_log, job, job_line)) << first_log;
  const std::string id = job[1];
  const std::string plan = read(out / "slurm/plan.json");
  ASSERT_FALSE(plan.empty());

  std::string cmd;
  for (const auto& a : sweep) cmd += " " + a;
  for (const std::string executor : {"local", "slurm"}) {
    const auto rerun = run_command(cmd + " --executor " + executor);
    EXPECT_EQ(rerun.exit_code, 2) << rerun.output;
    EXPECT_THAT(rerun.output, HasSubstr("slurm/job_id: Slurm job " + id + " of an earlier run of this sweep is still "
                                        "queued or running"));
    EXPECT_THAT(rerun.output, HasSubstr("`scancel " + id + "`"));
    EXPECT_EQ(read(out / "slurm/plan.json"), plan) << "the plan was rewritten under the queued array";
    EXPECT_FALSE(fs::exists(out / "points/0000/results.json")) << executor;
  }

  ASSERT_EQ(LocalSlurm::shell("scancel " + id).first, 0);
  bool gone = false;
  for (int i = 0; i < 600 && !gone; ++i) {
    const auto q = LocalSlurm::shell("squeue --noheader --jobs=" + id + " --format=%i");
    gone = q.second.find_first_not_of(" \n") == std::string::npos || q.second.find("Invalid job id") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(gone);
  const auto after = run_command(cmd + " --executor local");
  ASSERT_EQ(after.exit_code, 0) << after.output;
  EXPECT_THAT(after.output, HasSubstr("2 points, 0 already done, 2 to run"));
  EXPECT_FALSE(fs::exists(out / "slurm/job_id"));
}

// The report of a load sweep, of a collective sweep and of one DCQCN run (its QPs' rates
// over time) opens in headless Chromium at 1280 px with every plot decoded, no console error,
// nothing wider than the page (wide tables scroll in their own box), and a screenshot. The
// report's own layout check finds every legend outside its plot area; the load sweep's two
// seeds per point are drawn as error bars and the references as labelled lines.
TEST(Report, OpensInHeadlessChromiumWithEveryPlot) {
  if (!fs::exists("/usr/bin/chromium")) GTEST_SKIP() << "/usr/bin/chromium not installed (scripts/setup.sh installs it)";
  const fs::path d = temp_dir();
  ASSERT_EQ(run_command("sweep " + kSweep24 + " --out " + (d / "load").string()).exit_code, 0);
  write_text(d / "c.yaml", "base: " + kSource + "/examples/quickstart.yaml\n"
                      "set:\n  simulation.duration: 200us\n"
                      "  collective: {op: allreduce, sizes: [4KiB, 16KiB, 64KiB], iterations: 1}\n"
                      "axes:\n  - {key: collective.algorithm, values: [ring, halving_doubling]}\n");
  ASSERT_EQ(run_command("sweep " + (d / "c.yaml").string() + " --out " + (d / "coll").string()).exit_code, 0);
  ASSERT_EQ(run_command("run " + kSource + "/examples/dcqcn_incast_roce.yaml --set simulation.duration=300us"
                        " --set simulation.warmup=50us --quiet --out " + (d / "dcqcn").string()).exit_code, 0);
  const std::map<std::string, std::vector<std::string>> expected{
      {"load", {"load_latency.png", "throughput_load.png", "latency_cdf.png", "buffer_occupancy.png", "link_utilisation.png"}},
      {"coll", {"allreduce_busbw.png", "latency_cdf.png", "link_utilisation.png"}},
      {"dcqcn", {"cc_rates.png", "buffer_occupancy.png", "link_utilisation.png"}}};
  for (const auto& [name, pngs] : expected) {
    const fs::path dir = d / name;
    const auto r = run_command("report " + dir.string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("report: layout check: the legends of")) << r.output;
    EXPECT_THAT(r.output, Not(HasSubstr("layout check failed")));
    const fs::path index = dir / "report" / "index.html";
    const std::string page = read(index);
    if (name == "load") {
      EXPECT_THAT(page, HasSubstr("mean of 2 seeds, bars: min-max over the seeds"));
      EXPECT_THAT(page, HasSubstr("Dotted: the zero-load latency"));
      EXPECT_THAT(page, HasSubstr("Dashed: the line-rate bound"));
      // Numbers in the table: right-aligned, four significant digits (the loads 0.xxxx).
      EXPECT_TRUE(std::regex_search(page, std::regex("<td class=\"num\">0\\.[0-9]{4}</td>")));
      EXPECT_FALSE(std::regex_search(page, std::regex("<td class=\"num\">-?[0-9]*\\.[0-9]{5,}")));
    }
    EXPECT_THAT(page, Not(HasSubstr("http://")));  // offline: nothing to fetch
    EXPECT_THAT(page, Not(HasSubstr("https://")));
    int images = 0;
    for (std::size_t at = 0; (at = page.find("data:image/png;base64,", at)) != std::string::npos; ++at) ++images;
    for (const auto& png : pngs) {
      EXPECT_TRUE(fs::exists(dir / "report" / png)) << png;
      EXPECT_THAT(page, HasSubstr("alt=\"" + png + "\"")) << png;
    }
    const std::string chromium = "/usr/bin/chromium --headless --no-sandbox --disable-gpu --window-size=1280,2000 ";
    const auto dom = LocalSlurm::shell("timeout 60 " + chromium + "--enable-logging=stderr --v=0 --dump-dom file://" +
                                       index.string());
    ASSERT_EQ(dom.first, 0) << dom.second;
    // The page's own check counts the images the browser decoded.
    EXPECT_THAT(dom.second, HasSubstr("data-images-total=\"" + std::to_string(images) + "\""));
    EXPECT_THAT(dom.second, HasSubstr("data-images-decoded=\"" + std::to_string(images) + "\""));
    EXPECT_GE(images, static_cast<int>(pngs.size()));
    // The page's check: how far the page, a table's box or a figure reaches past the window.
    EXPECT_THAT(dom.second, HasSubstr("data-overflow-px=\"0\""));
    EXPECT_THAT(dom.second, Not(HasSubstr("Uncaught")));
    EXPECT_THAT(dom.second, Not(HasSubstr("CONSOLE")));
    const fs::path shot = dir / "screenshot.png";
    const auto s = LocalSlurm::shell("timeout 60 " + chromium + "--screenshot=" + shot.string() + " file://" + index.string());
    ASSERT_EQ(s.first, 0) << s.second;
    const std::string png = read(shot);
    ASSERT_GT(png.size(), 10000u);
    EXPECT_EQ(png.substr(1, 3), "PNG");
  }
}

// Progress: a line with simulated time, wall time, rate and ETA when asked for (--verbose)
// or on a terminal; nothing when not a terminal; the results do not change.
TEST(Progress, LineOnRequestOrTerminalAndSameResults) {
  const fs::path d = temp_dir();
  const std::string run = "run " + kSource + "/examples/single_switch.yaml --set simulation.duration=30us --out ";
  const auto plain = run_command(run + (d / "plain").string());
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_THAT(plain.output, Not(HasSubstr("ETA")));
  const auto verbose = run_command(run + (d / "verbose").string() + " --verbose");
  ASSERT_EQ(verbose.exit_code, 0) << verbose.output;
  EXPECT_TRUE(std::regex_search(verbose.output, std::regex("simulated 30.0 us / 30.0 us \\(100%\\)  wall [0-9.]+ "
                                                           "(s|min)  rate [0-9.]+ [nmu]?s/s  done")))
      << verbose.output;
  auto strip = [](nlohmann::json j) {
    j.erase("simulator");
    j.erase("config");
    return j;
  };
  EXPECT_EQ(strip(nlohmann::json::parse(read(d / "verbose/results.json"))),
            strip(nlohmann::json::parse(read(d / "plain/results.json"))));
  const auto quiet = run_command(run + (d / "quiet").string() + " --quiet");
  EXPECT_EQ(quiet.exit_code, 0);
  EXPECT_EQ(quiet.output, "");
  EXPECT_TRUE(fs::exists(d / "quiet/results.json"));
  // On a terminal (script(1) gives the command a pseudo-terminal) the line redraws in place.
  const auto tty = LocalSlurm::shell("script -qec '" + std::string(FABRICSIM_BINARY) + " " + run +
                                     (d / "tty").string() + "' /dev/null");
  EXPECT_EQ(tty.first, 0) << tty.second;
  EXPECT_THAT(tty.second, HasSubstr("\rsimulated "));
  EXPECT_THAT(tty.second, HasSubstr("ETA"));
  EXPECT_EQ(fabricsim::sim::Progress::text(25e3, 100e3, 10, true, ""),
            "simulated 25.0 us / 100.0 us (25%)  wall 10.0 s  rate 2.5 us/s  ETA 30.0 s");
  EXPECT_EQ(fabricsim::sim::Progress::text(6, 24, 3, false, "points"),
            "points 6 / 24 (25%)  wall 3.0 s  rate 2.00 /s  ETA 9.0 s");
}

}  // namespace
