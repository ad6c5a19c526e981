// Running a sweep (sim/sweep.h): validation, resumability, the local and Slurm
// executors, and the gathered table.
#include "sim/sweep.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>
#include <thread>

#include "sim/config_reader.h"
#include "sim/fabric.h"
#include "sim/process_pool.h"
#include "sim/python_script.h"

namespace fabricsim::sim {

namespace fs = std::filesystem;

namespace {

constexpr int kSweepSchemaVersion = 1;

/// The chakra section's figures the table reads (docs/results.md): columns of their own.
constexpr const char* kChakraColumns[] = {"iteration_time_us", "compute_mean_us", "exposed_communication_mean_us",
                                          "communication_fraction"};

fs::path point_dir(const fs::path& dir, std::size_t index) {
  char name[32];
  std::snprintf(name, sizeof name, "%04zu", index);
  return dir / "points" / name;
}

/// The overrides that make a point's configuration: the sweep's, then where it writes.
std::vector<Override> point_overrides(const SweepPoint& p, const fs::path& dir, bool packet_csv) {
  std::vector<Override> o = p.overrides;
  o.push_back({"output.directory=" + yaml_quoted(point_dir(dir, p.index).string()), ""});
  o.push_back({std::string("output.packet_csv=") + (packet_csv ? "true" : "false"), ""});
  return o;
}

std::string self_exe() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find the fabricsim binary (/proc/self/exe)");
  return exe.string();
}

/// The launchers of a point over several processes: each runs `fabricsim run` in every
/// process it starts (tlm/distributed.h joins them).
std::string mpirun_launcher(int processes) { return "mpirun -np " + std::to_string(processes) + " --oversubscribe"; }
std::string srun_launcher(int processes) {
  return "srun --mpi=pmix --ntasks=" + std::to_string(processes) + " --kill-on-bad-exit=1";
}

/// Runs a point over several processes: `launcher` starts `fabricsim run` of the base
/// configuration with the point's overrides, which writes the point's files as a point
/// run in one process does, `record` under sweep_point. Its output goes to the point's
/// run.log, kept when the run fails. The point ran when the run wrote results.json (a
/// failed scoreboard or a stall is the point's result, as in one process); otherwise its
/// results.json holds the error (the exit code, the end of run.log). Returns the exit
/// code of a pool child: 0 when the point ran.
int run_point_over_processes(const std::string& launcher, const std::string& base,
                             const std::vector<Override>& overrides, const FabricConfig& config,
                             const nlohmann::ordered_json& record) {
  const fs::path dir(config.output.directory), log = dir / "run.log";
  fs::create_directories(dir);
  fs::remove(dir / "results.json");  // present after the run only when this run wrote it
  std::string cmd = launcher + " " + shell_quoted(self_exe()) + " run " + shell_quoted(base);
  for (const auto& o : overrides) cmd += " --set " + shell_quoted(o.assignment);
  cmd += " --quiet --sweep-point " + shell_quoted(record.dump());
  std::fflush(nullptr);
  const int status = std::system((cmd + " </dev/null >" + shell_quoted(log.string()) + " 2>&1").c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (fs::is_regular_file(dir / "results.json")) {
    if (code == 0) fs::remove(log);
    return 0;
  }
  std::ifstream in(log);
  std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  constexpr std::size_t kTail = 2000;
  if (output.size() > kTail) output = "..." + output.substr(output.size() - kTail);
  write_results(dir, {{"error", launcher + " fabricsim run exited with code " + std::to_string(code) +
                                    " and wrote no results.json; its output (run.log): " + output},
                      {"sweep_point", nlohmann::json::parse(record.dump())}});
  return 1;
}

}  // namespace

int run_point(const FabricConfig& config, const std::string& record_key, const nlohmann::ordered_json& record) {
  const fs::path dir(config.output.directory);
  fs::create_directories(dir);
  const nlohmann::json point = nlohmann::json::parse(record.dump());
  try {
    RunFiles files(dir, config);
    nlohmann::json r = run_simulation(config, files.logs(), nullptr, ModelTeardown::skip);  // the point's process exits next
    r[record_key] = point;
    files.finish(r);
    return 0;
  } catch (const std::exception& e) {
    write_results(dir, {{"error", e.what()}, {record_key, point}});
    return 1;
  }
}

namespace {

/// Why the point's results.json is not a complete result of this point and configuration,
/// or empty when it is (then `r` holds it). Complete: it parses, holds no error, was made
/// for this very point (`sweep_point`) and configuration (its `config` echo), has every
/// section the table reads, lists the CSV files this configuration writes, each of them
/// present, and, when its scoreboard passed, conserves packets (injected = delivered +
/// dropped + in flight; a failed scoreboard is itself the point's result).
std::string incomplete(const fs::path& dir, const SweepPoint& p, const FabricConfig& config, nlohmann::json& r) {
  const fs::path pdir = point_dir(dir, p.index);
  std::ifstream in(pdir / "results.json");
  if (!in) return "no results.json";
  try {
    r = nlohmann::json::parse(in);
    if (r.contains("error")) return "it failed: " + r["error"].dump();
    if (r.value("sweep_point", nlohmann::json()) != nlohmann::json::parse(p.record().dump()))
      return "results.json is another point's";
    if (r.value("config", nlohmann::json()) != config.echo) return "results.json is of another configuration";
    const auto& k = r.at("packets");
    const auto n = [&](const char* key) { return k.at(key).get<std::uint64_t>(); };
    const std::uint64_t injected = n("injected"), delivered = n("delivered"), dropped = n("dropped"),
                        in_flight = n("in_flight");
    for (const char* key : {"offered_load", "injected_load", "accepted_load"}) r.at("throughput").at(key);
    r.at("latency").at("network_latency_ns").at("count").get<std::uint64_t>();
    r.at("simulated_time_ns").get<double>();
    if (r.contains("chakra"))
      for (const char* key : kChakraColumns) r.at("chakra").at(key);
    if (r.at("scoreboard").at("ok").get<bool>() && injected != delivered + dropped + in_flight)
      return "its packets do not add up: injected " + std::to_string(injected) + " != delivered " +
             std::to_string(delivered) + " + dropped " + std::to_string(dropped) + " + in flight " +
             std::to_string(in_flight);
    if (r.value("files", nlohmann::json()) != nlohmann::json(RunFiles::file_names(config)))
      return "results.json does not list the files this configuration writes";
    for (const auto& f : RunFiles::file_names(config))
      if (!fs::is_regular_file(pdir / f)) return f + " is missing";
    return "";
  } catch (const std::exception& e) {
    return std::string("results.json is unreadable: ") + e.what();
  }
}

/// The point's results when complete (see `incomplete`), else null.
nlohmann::json complete_result(const fs::path& dir, const SweepPoint& p, const FabricConfig& config) {
  nlohmann::json r;
  return incomplete(dir, p, config, r).empty() ? r : nlohmann::json(nullptr);
}

/// The table columns measured per point (after point, the axes and the seed).
const std::vector<std::string>& metric_columns() {
  static const std::vector<std::string> c = [] {
    std::vector<std::string> v{"status",          "offered_load",   "injected_load",  "accepted_load",
                               "injected",        "delivered",      "dropped",        "latency_mean_ns",
                               "latency_p50_ns",  "latency_p99_ns", "latency_p999_ns", "latency_max_ns",
                               "simulated_time_ns", "busbw_GBps"};
    v.insert(v.end(), std::begin(kChakraColumns), std::end(kChakraColumns));
    return v;
  }();
  return c;
}

nlohmann::ordered_json metrics(const nlohmann::json& r) {
  nlohmann::ordered_json m;
  if (r.is_null()) {
    for (const auto& c : metric_columns()) m[c] = nullptr;
    m["status"] = "missing";
    return m;
  }
  m["status"] = r.contains("stall") ? "stalled" : !r["scoreboard"]["ok"].get<bool>() ? "scoreboard_failed" : "ok";
  const auto& t = r["throughput"];
  const auto& l = r["latency"]["network_latency_ns"];
  m["offered_load"] = t["offered_load"];
  m["injected_load"] = t["injected_load"];
  m["accepted_load"] = t["accepted_load"];
  m["injected"] = r["packets"]["injected"];
  m["delivered"] = r["packets"]["delivered"];
  m["dropped"] = r["packets"]["dropped"];
  m["latency_mean_ns"] = l["mean"];
  m["latency_p50_ns"] = l["p50"];
  m["latency_p99_ns"] = l["p99"];
  m["latency_p999_ns"] = l["p99.9"];
  m["latency_max_ns"] = l["max"];
  m["simulated_time_ns"] = r["simulated_time_ns"];
  // Collectives: bus bandwidth at the largest message size.
  m["busbw_GBps"] = nullptr;
  if (r.contains("collective") && !r["collective"]["sizes"].empty())
    m["busbw_GBps"] = r["collective"]["sizes"].back()["busbw_GBps"];
  // A Chakra trace or a generated training job: the chakra section's iteration and means over ranks.
  for (const char* key : kChakraColumns) m[key] = r.contains("chakra") ? r["chakra"].at(key) : nlohmann::json(nullptr);
  return m;
}

std::string csv_field(const nlohmann::ordered_json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  }
  return v.dump();
}

/// sweep.csv and sweep.json from the points' results; returns the number of points not ok.
std::size_t gather(const SweepSpec& spec, const std::vector<FabricConfig>& configs, const fs::path& dir,
                   const std::string& executor, int processes, Verbosity verbosity) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::size_t bad = 0;
  for (const auto& p : spec.points) {
    const nlohmann::json r = complete_result(dir, p, configs[p.index]);
    nlohmann::ordered_json row = p.record();
    row["metrics"] = metrics(r);
    row["results"] = (fs::path("points") / point_dir(dir, p.index).filename() / "results.json").string();
    if (row["metrics"]["status"] != "ok") ++bad;
    rows.push_back(row);
  }
  write_file_atomically(dir / "sweep.csv", [&](std::ostream& csv) {
    csv << "point";
    for (const auto& k : spec.axis_keys) csv << ',' << csv_field(k);
    csv << ",seed";
    for (const auto& c : metric_columns()) csv << ',' << c;
    csv << '\n';
    for (const auto& row : rows) {
      csv << row["point"].get<std::size_t>();
      for (const auto& k : spec.axis_keys) csv << ',' << csv_field(row["axes"][k]);
      csv << ',' << row["seed"].get<std::uint64_t>();
      for (const auto& c : metric_columns()) csv << ',' << csv_field(row["metrics"][c]);
      csv << '\n';
    }
  });
  const nlohmann::ordered_json report{{"schema_version", kSweepSchemaVersion},
                                      {"sweep_file", spec.file},
                                      {"base_config", spec.base},
                                      {"executor", executor},
                                      {"processes", processes},
                                      {"axes", spec.axis_keys},
                                      {"columns", metric_columns()},
                                      {"points", rows}};
  write_file_atomically(dir / "sweep.json", [&](std::ostream& out) { out << report.dump(2) << "\n"; });
  if (verbosity != Verbosity::quiet) {
    std::printf("%6s", "point");
    for (const auto& k : spec.axis_keys) std::printf(" %14s", k.c_str());
    std::printf(" %6s %9s %9s %10s %10s %s\n", "seed", "injected", "accepted", "p50 ns", "p99 ns", "status");
    for (const auto& row : rows) {
      std::printf("%6zu", row["point"].get<std::size_t>());
      for (const auto& k : spec.axis_keys) std::printf(" %14s", row["axes"][k].get<std::string>().c_str());
      const auto& m = row["metrics"];
      const auto num = [](const nlohmann::ordered_json& v) { return v.is_number() ? v.get<double>() : 0.0; };
      std::printf(" %6llu %9.4f %9.4f %10.1f %10.1f %s\n", row["seed"].get<unsigned long long>(),
                  num(m["injected_load"]), num(m["accepted_load"]), num(m["latency_p50_ns"]),
                  num(m["latency_p99_ns"]), m["status"].get<std::string>().c_str());
    }
    std::cout << "results: " << (dir / "sweep.csv").string() << ", " << (dir / "sweep.json").string() << "\n";
  }
  return bad;
}

int run_local(const std::vector<FabricConfig>& configs, const SweepSpec& spec, const fs::path& dir,
              const std::vector<std::size_t>& todo, int processes, const SweepOptions& o) {
  const int cpus = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // A point over several processes takes that many of the --jobs.
  const int parallel = std::max(1, cpus / processes);
  const std::string base = fs::absolute(spec.base).lexically_normal().string();
  auto run = [&](std::size_t i) {
    const SweepPoint& p = spec.points[todo[i]];
    if (processes == 1) return run_point(configs[p.index], "sweep_point", p.record());
    return run_point_over_processes(mpirun_launcher(processes), base, point_overrides(p, dir, spec.packet_csv),
                                    configs[p.index], p.record());
  };
  Progress progress(o.verbosity);
  std::size_t done = 0, failed = 0;
  run_process_pool(
      todo.size(), parallel, run,
      [&](std::size_t i, int status, double wall_s) {
        ++done;
        if (!exited_ok(status)) ++failed;
        if (o.verbosity == Verbosity::verbose) {
          progress.finish();
          std::string axes;
          for (const auto& [k, v] : spec.points[todo[i]].axes) axes += " " + k + "=" + v;
          std::printf("sweep: [%zu/%zu] point %zu%s seed=%llu: %s in %.2f s\n", done, todo.size(), todo[i],
                      axes.c_str(), static_cast<unsigned long long>(spec.points[todo[i]].seed),
                      exited_ok(status) ? "done" : "FAILED", wall_s);
          std::fflush(stdout);
        }
        progress.update(static_cast<double>(done), static_cast<double>(todo.size()), "points", done == todo.size());
      });
  progress.finish();
  return failed == 0 ? 0 : 1;
}

/// Runs `cmd`, returns its exit code and output (stdout and stderr).
int capture(const std::string& cmd, std::string& output) {
  output.clear();
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  if (!f) return -1;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) output.append(buf, n);
  const int status = pclose(f);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// slurm/job_id: the job array a submitter is waiting for; left behind when the submitter
/// was killed, while the array may still be queued or running.
fs::path job_id_file(const fs::path& dir) { return dir / "slurm" / "job_id"; }

/// True while Slurm job `job` has a task pending or running; throws when squeue cannot tell.
bool job_active(const std::string& job) {
  std::string q;
  const int rc = capture("squeue --noheader --jobs=" + shell_quoted(job) + " --format=%i", q);
  if (rc != 0 && q.find("Invalid job id") != std::string::npos) return false;  // ended and forgotten
  if (rc != 0) throw std::runtime_error("squeue failed: " + q.substr(0, q.find_last_not_of(" \n") + 1));
  return q.find_first_not_of(" \n") != std::string::npos;
}

/// Refuses to touch a results folder whose earlier Slurm array is still queued or running:
/// its tasks read slurm/plan.json and write the points (a rerun would run points twice and
/// rewrite the plan under them). An array that has ended leaves nothing to wait for.
void check_no_earlier_array(const fs::path& dir) {
  const fs::path file = job_id_file(dir);
  std::ifstream in(file);
  std::string job;
  if (!(in >> job)) return;
  bool active = true;
  try {
    active = job_active(job);
  } catch (const std::exception& e) {
    throw ConfigError(file.string(), "", "cannot tell whether Slurm job " + job + " of an earlier run of this sweep " +
                                             "still runs (" + e.what() + "); once it has ended, remove this file");
  }
  if (active)
    throw ConfigError(file.string(), "", "Slurm job " + job + " of an earlier run of this sweep is still queued or " +
                                             "running (its tasks write this folder): wait for it to end, or cancel it " +
                                             "with `scancel " + job + "`, then run the sweep again");
  fs::remove(file);
}

int run_slurm(const std::vector<FabricConfig>& configs, const SweepSpec& spec, const fs::path& dir,
              const std::vector<std::size_t>& todo, int processes, const SweepOptions& o) {
  const fs::path sdir = dir / "slurm";
  fs::create_directories(sdir);
  // The plan: every point's overrides (the task reloads and revalidates the configuration) and
  // which points each array task runs.
  nlohmann::json points = nlohmann::json::array(), tasks = nlohmann::json::array();
  for (const auto& p : spec.points) {
    nlohmann::json ov = nlohmann::json::array();
    for (const auto& x : point_overrides(p, dir, spec.packet_csv))
      ov.push_back({{"assignment", x.assignment}, {"origin", x.origin}});
    points.push_back({{"record", nlohmann::json::parse(p.record().dump())}, {"overrides", ov}});
  }
  const std::size_t per = static_cast<std::size_t>(std::max(1, o.points_per_task));
  for (std::size_t i = 0; i < todo.size(); i += per)
    tasks.push_back(std::vector<std::size_t>(todo.begin() + i, todo.begin() + std::min(todo.size(), i + per)));
  const fs::path plan = sdir / "plan.json";
  // Absolute paths: array tasks reload the configuration wherever they start.
  const nlohmann::json plan_json{{"base", fs::absolute(spec.base).lexically_normal().string()},
                                 {"processes", processes},
                                 {"points", points},
                                 {"tasks", tasks}};
  write_file_atomically(plan, [&](std::ostream& out) { out << plan_json.dump(1) << "\n"; });

  const fs::path script = sdir / "sweep.sbatch";
  write_file(script, "#!/bin/sh\n"
                     "#SBATCH --job-name=fabricsim-sweep\n"
                     "#SBATCH --array=0-" + std::to_string(tasks.size() - 1) + "\n"
                     "#SBATCH --output=" + (sdir / "task_%a.out").string() + "\n"
                     "#SBATCH --chdir=" + fs::current_path().string() + "\n"
                     "#SBATCH --ntasks=" + std::to_string(processes) + "\n#SBATCH --cpus-per-task=1\n"
                     "exec " + shell_quoted(self_exe()) + " sweep-task " + shell_quoted(plan.string()) +
                     " \"$SLURM_ARRAY_TASK_ID\"\n");
  std::string cmd = "sbatch --parsable";
  for (const auto& x : o.sbatch_options) cmd += " " + shell_quoted(x);
  cmd += " " + shell_quoted(script.string());
  std::string out;
  if (capture(cmd, out) != 0)
    throw std::runtime_error("sbatch failed: " + out + "(is Slurm reachable? SLURM_CONF, scripts/slurm_local.sh)");
  const std::string job = out.substr(0, out.find_first_of(";\n"));
  write_file_atomically(job_id_file(dir), [&](std::ostream& file) { file << job << "\n"; });
  if (o.verbosity != Verbosity::quiet)
    std::printf("sweep: Slurm job %s: %zu array tasks for %zu points (logs %s/task_N.out)\n", job.c_str(),
                tasks.size(), todo.size(), sdir.string().c_str());
  std::fflush(stdout);

  // Wait until no task of the job is pending or running, following the finished points.
  Progress progress(o.verbosity);
  for (;;) {
    std::size_t done = 0;
    for (std::size_t i : todo) done += !complete_result(dir, spec.points[i], configs[i]).is_null();
    progress.update(static_cast<double>(done), static_cast<double>(todo.size()), "points");
    if (!job_active(job)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  fs::remove(job_id_file(dir));
  std::size_t done = 0;
  for (std::size_t i : todo) done += !complete_result(dir, spec.points[i], configs[i]).is_null();
  progress.update(static_cast<double>(done), static_cast<double>(todo.size()), "points", true);
  progress.finish();
  return done == todo.size() ? 0 : 1;
}

/// True when `program` is an executable file in a folder of PATH.
bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream folders(path ? path : "");
  for (std::string folder; std::getline(folders, folder, ':');)
    if (!folder.empty() && access((fs::path(folder) / program).c_str(), X_OK) == 0) return true;
  return false;
}

/// Refuses a sweep of several processes per point that cannot run: a build without MPI,
/// the local executor without mpirun, a point that does not run over processes (the
/// rules of a run: Fabric::refuse_over_processes). `given`: where the count comes from.
void check_processes(const SweepSpec& spec, const std::vector<FabricConfig>& configs, int processes,
                     const std::string& executor, const std::string& given, const std::string& key) {
  const std::string per_point = "runs each point over " + std::to_string(processes) + " processes";
  if (!FABRICSIM_MPI)
    throw ConfigError(given, key, per_point + ", but this fabricsim is built without MPI (FABRICSIM_MPI OFF): "
                                  "build it with Open MPI (libopenmpi-dev) or run one process per point");
  if (executor == "local" && !on_path("mpirun"))
    throw ConfigError(given, key, per_point + ", which the local executor starts with mpirun, not found on PATH "
                                  "(openmpi-bin); use --executor slurm (srun) or one process per point");
  for (const auto& p : spec.points) {
    try {
      Fabric::refuse_over_processes(configs[p.index], processes);
    } catch (const std::invalid_argument& e) {
      std::string axes;
      for (const auto& [k, v] : p.axes) axes += k + "=" + v + ", ";
      throw ConfigError(given, key, per_point + "; point " + std::to_string(p.index) + " (" + axes + "seed " +
                                        std::to_string(p.seed) + ") does not: " + e.what());
    }
  }
}

}  // namespace

int sweep_command(SweepSpec spec, const SweepOptions& o) {
  if (o.executor != "local" && o.executor != "slurm")
    throw ConfigError("--executor " + o.executor, "", "expected local or slurm");
  if (o.processes < 0) throw ConfigError("--processes " + std::to_string(o.processes), "", "expected at least 1");
  const fs::path dir = fs::absolute(o.out_dir.empty() ? "results/sweep_" + fs::path(spec.file).stem().string()
                                                      : o.out_dir).lexically_normal();
  // Every point is read and checked before anything runs.
  std::vector<FabricConfig> configs;
  for (auto& p : spec.points) {
    configs.push_back(load_config_with_origins(spec.base, point_overrides(p, dir, spec.packet_csv)));
    p.seed = configs.back().simulation.seed;
  }
  // --processes wins over the sweep file's processes:.
  const int processes = o.processes > 0 ? o.processes : spec.processes;
  if (processes > 1) {
    if (o.processes > 0)
      check_processes(spec, configs, processes, o.executor, "--processes " + std::to_string(processes), "");
    else
      check_processes(spec, configs, processes, o.executor, spec.processes_origin, "processes");
  }
  check_no_earlier_array(dir);
  fs::create_directories(dir);
  std::vector<std::size_t> todo;
  for (const auto& p : spec.points) {
    nlohmann::json r;
    const std::string why = incomplete(dir, p, configs[p.index], r);
    if (why.empty()) continue;
    todo.push_back(p.index);
    if (o.verbosity == Verbosity::verbose && why != "no results.json")
      std::printf("sweep: point %zu runs again: %s\n", p.index, why.c_str());
  }
  if (o.verbosity != Verbosity::quiet)
    std::printf("sweep: %zu points, %zu already done, %zu to run (%s executor%s)\n", spec.points.size(),
                spec.points.size() - todo.size(), todo.size(), o.executor.c_str(),
                processes > 1 ? (", " + std::to_string(processes) + " processes per point").c_str() : "");
  std::fflush(stdout);
  if (!todo.empty()) {
    if (o.executor == "slurm")
      run_slurm(configs, spec, dir, todo, processes, o);
    else
      run_local(configs, spec, dir, todo, processes, o);
  }
  const std::size_t bad = gather(spec, configs, dir, o.executor, processes, o.verbosity);
  if (bad) {
    std::cerr << "fabricsim: sweep: " << bad << " of " << spec.points.size()
              << " points did not finish ok (status column of sweep.csv; errors in points/NNNN/results.json"
              << (o.executor == "slurm" ? ", Slurm logs in slurm/task_N.out" : "")
              << "); rerun the same command to retry the missing ones\n";
    return 1;
  }
  return 0;
}

int sweep_task(const std::string& plan_file, int task) {
  std::ifstream in(plan_file);
  if (!in) throw std::runtime_error("cannot read " + plan_file);
  const nlohmann::json plan = nlohmann::json::parse(in);
  if (task < 0 || static_cast<std::size_t>(task) >= plan["tasks"].size())
    throw std::runtime_error("no task " + std::to_string(task) + " in " + plan_file);
  const int processes = plan.value("processes", 1);
  int rc = 0;
  for (const auto& i : plan["tasks"][static_cast<std::size_t>(task)]) {
    const auto& p = plan["points"][i.get<std::size_t>()];
    std::vector<Override> ov;
    for (const auto& x : p["overrides"]) ov.push_back({x["assignment"], x["origin"]});
    const FabricConfig config = load_config_with_origins(plan["base"].get<std::string>(), ov);
    const nlohmann::ordered_json record = nlohmann::ordered_json::parse(p["record"].dump());
    if (processes > 1) {  // a job step of the array task's processes
      rc |= run_point_over_processes(srun_launcher(processes), plan["base"].get<std::string>(), ov, config, record);
      continue;
    }
    // Each point in its own process: SystemC elaborates once per process.
    run_process_pool(1, 1, [&](std::size_t) { return run_point(config, "sweep_point", record); },
                     [&](std::size_t, int status, double) { rc |= exited_ok(status) ? 0 : 1; });
  }
  return rc;
}

}  // namespace fabricsim::sim
