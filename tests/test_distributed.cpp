// The processes of a distributed run (tlm/distributed.h), in one process and, in builds
// with MPI, over two and three (tests/CMakeLists.txt runs this binary under mpirun too):
// size and rank, reductions, the exchange of uneven and empty buffers, broadcast, gather;
// and how `fabricsim` starts under a launcher. Every process runs every test, and every
// collective in the same order: checks are EXPECT_*, never a return before a collective.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <systemc>  // declares sc_main extern "C", as libsystemc.so calls it

#include "tlm/distributed.h"

namespace dist = fabricsim::tlm_fabric::distributed;

namespace {

using Bytes = std::vector<unsigned char>;

/// The byte `i` of what process `from` sends to process `to`.
unsigned char pattern(int from, int to, std::size_t i) {
  return static_cast<unsigned char>(from * 31 + to * 7 + static_cast<int>(i % 251));
}

Bytes message(int from, int to, std::size_t length) {
  Bytes b(length);
  for (std::size_t i = 0; i < length; ++i) b[i] = pattern(from, to, i);
  return b;
}

/// Lengths differing by sender and receiver, zero for some pairs (and for 0 to 0).
std::size_t uneven_length(int from, int to) { return static_cast<std::size_t>((from * 5 + to * 3) % 7) * 100; }

std::uint64_t n() { return static_cast<std::uint64_t>(dist::size()); }
std::uint64_t me() { return static_cast<std::uint64_t>(dist::rank()); }

}  // namespace

TEST(Distributed, SizeAndRankAreTheLaunchers) {
  const char* launched = std::getenv("OMPI_COMM_WORLD_SIZE");
  EXPECT_EQ(dist::size(), launched != nullptr ? std::atoi(launched) : 1);
  if (const char* rank = std::getenv("OMPI_COMM_WORLD_RANK")) {
    EXPECT_EQ(dist::rank(), std::atoi(rank));
  }
  EXPECT_GE(dist::rank(), 0);
  EXPECT_LT(dist::rank(), dist::size());
  EXPECT_EQ(dist::active(), dist::size() > 1);
  // Every process counted once, each rank a different one.
  EXPECT_EQ(dist::sum_over_processes(std::uint64_t{1}), n());
  EXPECT_EQ(dist::sum_over_processes(me()), n() * (n() - 1) / 2);
}

TEST(Distributed, MinimaAndSumsOverTheProcesses) {
  const std::uint64_t big = std::uint64_t{1} << 40;  // beyond 32 bits
  EXPECT_EQ(dist::min_over_processes(big + 100 - me()), big + 101 - n());
  EXPECT_EQ(dist::sum_over_processes(big + me()), n() * big + n() * (n() - 1) / 2);
  EXPECT_EQ(dist::min_over_processes(5 - dist::rank()), 6 - dist::size());
  EXPECT_EQ(dist::min_over_processes(-7), -7);

  std::vector<std::uint64_t> counts{me(), 1, big << 10};
  dist::sum_over_processes(counts);
  EXPECT_EQ(counts, (std::vector<std::uint64_t>{n() * (n() - 1) / 2, n(), n() * (big << 10)}));
  std::vector<std::uint64_t> none;
  dist::sum_over_processes(none);
  EXPECT_TRUE(none.empty());
  std::vector<std::uint64_t> least{big - me(), 7 + me()};
  dist::min_over_processes(least);
  EXPECT_EQ(least, (std::vector<std::uint64_t>{big + 1 - n(), 7}));

  // Added in rank order: these bits, in every process.
  auto values_of = [](std::uint64_t r) { return std::vector<double>{0.1 * static_cast<double>(r + 1), 1e16, -1e16}; };
  std::vector<double> expected = values_of(0);
  for (std::uint64_t r = 1; r < n(); ++r)
    for (std::size_t i = 0; i < expected.size(); ++i) expected[i] += values_of(r)[i];
  std::vector<double> values = values_of(me());
  dist::sum_over_processes(values);
  EXPECT_EQ(values, expected);
}

TEST(Distributed, ExchangeDeliversEachBufferToItsProcess) {
  std::vector<Bytes> out;
  for (int to = 0; to < dist::size(); ++to) out.push_back(message(dist::rank(), to, uneven_length(dist::rank(), to)));
  const std::vector<Bytes> in = dist::exchange(out);
  ASSERT_EQ(in.size(), static_cast<std::size_t>(dist::size()));
  for (int from = 0; from < dist::size(); ++from)
    EXPECT_EQ(in[static_cast<std::size_t>(from)], message(from, dist::rank(), uneven_length(from, dist::rank())))
        << "from process " << from;
}

TEST(Distributed, ExchangeOfEmptyAndLargeBuffers) {
  const std::vector<Bytes> nothing(static_cast<std::size_t>(dist::size()));
  EXPECT_EQ(dist::exchange(nothing), nothing);

  // Only the last process sends, 3 MiB to each (shared memory's large-message path).
  const int last = dist::size() - 1;
  const std::size_t large = std::size_t{3} << 20;
  std::vector<Bytes> out(static_cast<std::size_t>(dist::size()));
  if (dist::rank() == last)
    for (int to = 0; to < dist::size(); ++to) out[static_cast<std::size_t>(to)] = message(last, to, large);
  const std::vector<Bytes> in = dist::exchange(out);
  ASSERT_EQ(in.size(), out.size());
  for (int from = 0; from < dist::size(); ++from)
    EXPECT_EQ(in[static_cast<std::size_t>(from)], from == last ? message(last, dist::rank(), large) : Bytes{})
        << "from process " << from;
}

// The exchange's count step carries numbers whose least every process gets: with buffers
// and without any (no byte step).
TEST(Distributed, ExchangeAgreesOnMinima) {
  for (const bool send : {true, false}) {
    std::vector<Bytes> out(static_cast<std::size_t>(dist::size()));
    if (send)
      for (int to = 0; to < dist::size(); ++to) out[static_cast<std::size_t>(to)] = message(dist::rank(), to, 3);
    std::vector<std::uint64_t> least{100 - me(), ~std::uint64_t{0}, 40 + me()};
    const std::vector<Bytes> in = dist::exchange(out, least);
    EXPECT_EQ(least, (std::vector<std::uint64_t>{101 - n(), ~std::uint64_t{0}, 40})) << "send " << send;
    for (int from = 0; from < dist::size(); ++from)
      EXPECT_EQ(in[static_cast<std::size_t>(from)], send ? message(from, dist::rank(), 3) : Bytes{}) << "from " << from;
  }
}

TEST(Distributed, ExchangeNeedsABufferPerProcess) {
  const std::vector<Bytes> one_too_many(static_cast<std::size_t>(dist::size() + 1));
  EXPECT_THROW(dist::exchange(one_too_many), std::invalid_argument);
}

TEST(Distributed, BroadcastGivesEveryProcessTheRootsBytes) {
  for (int root = 0; root < dist::size(); ++root) {
    // Every process passes bytes of its own; the root's arrive.
    const Bytes got = dist::broadcast(message(dist::rank(), root, 1000 + 10 * me()), root);
    EXPECT_EQ(got, message(root, root, 1000 + 10 * static_cast<std::size_t>(root))) << "root " << root;
  }
  EXPECT_EQ(dist::broadcast(dist::rank() == 0 ? Bytes{} : Bytes{1, 2, 3}, 0), Bytes{});
  EXPECT_THROW(dist::broadcast({}, dist::size()), std::invalid_argument);
  EXPECT_THROW(dist::broadcast({}, -1), std::invalid_argument);
}

TEST(Distributed, GatherCollectsEveryProcessAtTheRoot) {
  for (int root = 0; root < dist::size(); ++root) {
    // Process 0 sends nothing, the others 5 bytes more each.
    const auto got = dist::gather(message(dist::rank(), root, 5 * me()), root);
    if (dist::rank() != root) {
      EXPECT_TRUE(got.empty()) << "root " << root;
      continue;
    }
    ASSERT_EQ(got.size(), n());
    for (int from = 0; from < dist::size(); ++from)
      EXPECT_EQ(got[static_cast<std::size_t>(from)], message(from, root, 5 * static_cast<std::size_t>(from)))
          << "root " << root << ", from process " << from;
  }
  EXPECT_THROW(dist::gather({}, dist::size()), std::invalid_argument);
}

namespace {

struct Command {
  int exit_code = -1;
  std::string output;
};

/// Runs `command` in a shell, stdout and stderr together.
Command shell(const std::string& command) {
  Command r;
  FILE* f = popen((command + " 2>&1").c_str(), "r");
  if (f == nullptr) return r;
  char buf[4096];
  for (std::size_t got; (got = std::fread(buf, 1, sizeof buf, f)) > 0;) r.output.append(buf, got);
  const int status = pclose(f);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

const std::string kConfig = std::string(FABRICSIM_SOURCE_DIR) + "/examples/quickstart.yaml";
const std::string kBinary = FABRICSIM_BINARY;

/// Whether mpirun started this test: the commands below would inherit its environment.
bool under_mpirun() { return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr; }

/// `fabricsim validate` with the environment `env` (as a launcher would set it) exits with
/// `code` and says `says`.
void expect_validate(const std::string& env, int code, const std::string& says) {
  const Command c = shell("env " + env + " " + kBinary + " validate " + kConfig);
  EXPECT_EQ(c.exit_code, code) << env << ": " << c.output;
  EXPECT_NE(c.output.find(says), std::string::npos) << env << ": " << c.output;
}

}  // namespace

// Slurm without a PMI plugin and a launcher that says one process: fabricsim runs alone.
TEST(FabricsimUnderALauncher, OneProcessRunsWithoutMpi) {
  if (under_mpirun()) GTEST_SKIP() << "the plain run of this test checks fabricsim's launch";
  expect_validate("OMPI_COMM_WORLD_SIZE=1 OMPI_COMM_WORLD_RANK=0", 0, ": valid");
  expect_validate("SLURM_STEP_ID=0 SLURM_NTASKS=4 SLURM_PROCID=2", 0, ": valid");
}

#if FABRICSIM_MPI

namespace {
std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}
}  // namespace

// Every subcommand but `run` runs in one process: each process exits with the same code,
// and the reason is printed once. (Each shell exits 0 after saying its fabricsim's code:
// mpirun stops the other processes once one exits with another code.)
TEST(FabricsimUnderALauncher, SubcommandsOtherThanRunRefuseSeveralProcesses) {
  if (under_mpirun()) GTEST_SKIP() << "the plain run of this test checks fabricsim under mpirun";
  const std::string sweep = std::string(FABRICSIM_SOURCE_DIR) + "/examples/sweeps/switch_buffers.yaml";
  for (const std::string& args : {"sweep " + sweep, "validate " + kConfig, std::string("params")}) {
    const Command c = shell(std::string(FABRICSIM_MPIEXEC) + " -n 2 --oversubscribe sh -c '" + kBinary + " " + args +
                            " >/dev/null; echo fabricsim exit code $?'");
    const std::string subcommand = args.substr(0, args.find(' '));
    EXPECT_EQ(occurrences(c.output, "fabricsim " + subcommand + " runs in one process; start it without mpirun"), 1u)
        << args << ": " << c.output;
    EXPECT_EQ(occurrences(c.output, "fabricsim exit code 2"), 2u) << args << ": " << c.output;
  }
}

namespace {

struct ProcessCase {
  const char* name;
  std::vector<std::string> sets;
  std::string config = "bench/s2_kary_ntree.yaml";
};
void PrintTo(const ProcessCase& c, std::ostream* os) { *os << c.name; }

/// `fabricsim run CONFIG` with `sets` over `processes` processes (1: without mpirun) into
/// `dir`: its output, and results.json (but the simulator section), packets.csv and qps.csv.
struct RunOutput {
  Command command;
  nlohmann::json results;
  std::string packets, qps, occupancy, qp_rates;
};
std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
RunOutput run_config(int processes, const std::string& config, const std::vector<std::string>& sets,
                     const std::filesystem::path& dir) {
  std::string command = processes > 1 ? std::string(FABRICSIM_MPIEXEC) + " -n " + std::to_string(processes) +
                                            " --oversubscribe "
                                      : "";
  command += kBinary + " run " + std::string(FABRICSIM_SOURCE_DIR) + "/" + config + " --packet-csv --out " + dir.string();
  for (const auto& s : sets) command += " --set " + s;
  RunOutput r;
  r.command = shell(command);
  const std::string results = read_file(dir / "results.json");
  if (!results.empty()) {
    r.results = nlohmann::json::parse(results);
    r.results.erase("simulator");
  }
  r.packets = read_file(dir / "packets.csv");
  r.qps = read_file(dir / "qps.csv");
  r.occupancy = read_file(dir / "occupancy.csv");
  r.qp_rates = read_file(dir / "qp_rates.csv");
  std::filesystem::remove_all(dir);
  return r;
}

}  // namespace

class ProcessesMatchOneProcess : public ::testing::TestWithParam<ProcessCase> {};

// `mpirun -n 2` and `-n 3 fabricsim run`: results.json but its simulator section and
// every CSV file (packets, QPs, the sampler's occupancy and QP rates every microsecond)
// are those of one process, byte for byte, over the buffer organisations, adaptive
// routing, credit stalls, PFC with ECN and DCQCN over RDMA, and bit errors with go-back-N
// (calls crossing processes: packets, credits, PAUSE frames), and over collectives and a
// Chakra training job (a landing releasing a transfer in another process, a graph's end
// agreed by all, scale-up transfers moved between windows).
TEST_P(ProcessesMatchOneProcess, SameResultsAndFiles) {
  if (under_mpirun()) GTEST_SKIP() << "the plain run of this test starts mpirun itself";
  const ProcessCase& c = GetParam();
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("fabricsim_processes_" + std::to_string(getpid()));
  const RunOutput one = run_config(1, c.config, c.sets, dir);
  ASSERT_EQ(one.command.exit_code, 0) << one.command.output;
  ASSERT_GT(one.results["packets"]["delivered"].get<std::uint64_t>(), 1000u);
  for (const int processes : {2, 3}) {
    const RunOutput many = run_config(processes, c.config, c.sets, dir);
    ASSERT_EQ(many.command.exit_code, 0) << processes << " processes: " << many.command.output;
    EXPECT_EQ(occurrences(many.command.output, "results: "), 1u) << "process 0 alone reports: " << many.command.output;
    const auto diff = nlohmann::json::diff(one.results, many.results);
    for (std::size_t i = 0; i < diff.size() && i < 10; ++i)
      ADD_FAILURE() << processes << " processes: results.json differs at " << diff[i]["path"];
    EXPECT_TRUE(diff.empty()) << processes << " processes";
    EXPECT_TRUE(many.packets == one.packets) << processes << " processes: packets.csv differs";
    EXPECT_TRUE(many.qps == one.qps) << processes << " processes: qps.csv differs";
    EXPECT_TRUE(many.occupancy == one.occupancy) << processes << " processes: occupancy.csv differs";
    EXPECT_TRUE(many.qp_rates == one.qp_rates) << processes << " processes: qp_rates.csv differs";
  }
}

namespace {
/// S2 for 20 us, sampled every microsecond, with `sets`.
ProcessCase s2(const char* name, std::vector<std::string> sets) {
  sets.insert(sets.end(), {"simulation.duration=20us", "simulation.warmup=5us", "output.sample_interval=1us"});
  return {name, sets};
}
/// The two-tier InfiniBand leaf-spine of 32 hosts: a ring AllReduce of 64 KiB and 1 MiB, with `sets`.
ProcessCase allreduce(const char* name, std::vector<std::string> sets) {
  sets.insert(sets.end(), {"collective.sizes=[64KiB,1MiB]", "output.sample_interval=1us"});
  return {name, sets, "examples/allreduce_leafspine_ib.yaml"};
}
}  // namespace

INSTANTIATE_TEST_SUITE_P(
    FabricsimUnderALauncher, ProcessesMatchOneProcess,
    ::testing::Values(s2("S2", {}), s2("OutputQueued", {"switch.buffer=output_queued"}),
                      s2("Cioq", {"switch.buffer=cioq", "switch.speedup=2"}),
                      s2("SharedMemoryAdaptive", {"switch.buffer=shared_memory", "routing.algorithm=adaptive"}),
                      s2("CreditStalls", {"switch.input_buffer=12KiB", "traffic.load=0.8"}),
                      s2("PfcPausesEcnDcqcnRdma",
                         {"link.framing=roce_v2", "link.flow_control=pfc", "switch.pfc.xoff=4KiB", "switch.pfc.xon=2KiB",
                          "switch.pfc.headroom=8KiB", "switch.input_buffer=64KiB", "switch.ecn.enabled=true",
                          "traffic.transport=rdma", "nic.congestion_control.kind=dcqcn", "traffic.pattern=hotspot",
                          "traffic.load=0.6"}),
                      s2("BitErrorsGoBackNLatencyBreakdown",
                         {"link.ber=1e-6", "traffic.transport=rdma", "output.latency_breakdown=true"}),
                      allreduce("RingAllReduce", {"collective.iterations=2"}),
                      allreduce("DoubleBinaryTreeSlots", {"collective.algorithm=double_binary_tree", "collective.tree_chunk=64KiB",
                                                         "collective.tree_slots=2"}),
                      allreduce("SharpInNetworkReduction", {"collective.algorithm=sharp", "switch.in_network_reduction=true"}),
                      // Servers of 4 GPUs, tensor parallel 2: data-parallel rings mix NVLink and fabric hops.
                      ProcessCase{"ChakraTrainingJobScaleUp",
                                  {"training.parallelism.tp=2", "training.parallelism.pp=2", "server.gpus=4"},
                                  "examples/training/gpt_small.yaml"}),
    [](const ::testing::TestParamInfo<ProcessCase>& param) { return std::string(param.param.name); });

// A credit-loop deadlock across processes (five switches in a ring, PFC): the watchdog of
// every process stops the run, exit code 4 in each, and the stall report names every
// blocked buffer and the whole cycle, as in one process.
TEST(FabricsimUnderALauncher, AStalledRunReportsTheWholeDeadlock) {
  if (under_mpirun()) GTEST_SKIP() << "the plain run of this test starts mpirun itself";
  const std::string ring = "tests/deadlock/ring5_pfc.yaml";
  const std::vector<std::string> sets{"output.sample_interval=0s"};
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("fabricsim_stalled_" + std::to_string(getpid()));
  const RunOutput one = run_config(1, ring, sets, dir);
  ASSERT_EQ(one.command.exit_code, 4) << one.command.output;
  ASSERT_EQ(one.results["stall"]["cycle"].size(), 6u) << one.results["stall"].dump();
  const RunOutput two = run_config(2, ring, sets, dir);
  EXPECT_EQ(two.command.exit_code, 4) << two.command.output;
  EXPECT_EQ(two.results, one.results) << nlohmann::json::diff(one.results, two.results).dump().substr(0, 1000);
}

// What a run over processes refuses, it refuses in every process alike: one message, one
// exit code.
TEST(FabricsimUnderALauncher, ARefusedRunSaysWhyOnce) {
  if (under_mpirun()) GTEST_SKIP() << "the plain run of this test starts mpirun itself";
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("fabricsim_refused_" + std::to_string(getpid()));
  const Command c = shell(std::string(FABRICSIM_MPIEXEC) + " -n 2 --oversubscribe sh -c '" + kBinary + " run " +
                          std::string(FABRICSIM_SOURCE_DIR) + "/examples/allreduce_leafspine_ib.yaml --set " +
                          "simulation.fast_forward=true --out " + dir.string() + "; echo fabricsim exit code $?'");
  std::filesystem::remove_all(dir);
  EXPECT_EQ(occurrences(c.output, "simulation.fast_forward: not run over several processes"), 1u) << c.output;
  EXPECT_EQ(occurrences(c.output, "fabricsim exit code 1"), 2u) << c.output;
  // RTL coverage would count each process's blocks only.
  const Command coverage = shell(std::string(FABRICSIM_MPIEXEC) + " -n 2 --oversubscribe sh -c '" + kBinary + " run " +
                                 kConfig + " --rtl-coverage " + (dir / "coverage.json").string() +
                                 " --out " + dir.string() + "; echo fabricsim exit code $?'");
  std::filesystem::remove_all(dir);
  EXPECT_EQ(occurrences(coverage.output, "--rtl-coverage: not over several processes"), 1u) << coverage.output;
  EXPECT_EQ(occurrences(coverage.output, "fabricsim exit code 2"), 2u) << coverage.output;
}

#else

TEST(FabricsimUnderALauncher, ABuildWithoutMpiRefusesToBeOneOfSeveralProcesses) {
  const std::string says = "fabricsim is built without MPI (FABRICSIM_MPI=OFF): it cannot run as one of 3 processes";
  expect_validate("OMPI_COMM_WORLD_SIZE=3 OMPI_COMM_WORLD_RANK=1", 2, says);
  expect_validate("SLURM_STEP_ID=0 SLURM_NTASKS=3 PMIX_RANK=1", 2, says);
}

#endif

// libsystemc.so, linked through the tlm library, needs an sc_main; the tests never call it
// (test_distributed_lanes.cpp elaborates its models from the tests).
int sc_main(int, char*[]) { return 0; }

namespace {

/// Prints a failed check with its process number: the listener of every process but 0,
/// which keeps GoogleTest's own output.
class FailurePrinter : public ::testing::EmptyTestEventListener {
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::cerr << "[process " << dist::rank() << "] " << (result.file_name() ? result.file_name() : "") << ":"
              << result.line_number() << ": " << result.summary() << "\n";
  }
};

}  // namespace

int main(int argc, char** argv) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  dist::start(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (dist::rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter);
  }
  const bool passed = RUN_ALL_TESTS() == 0;
  // Every process fails when one does.
  const bool all_passed = dist::min_over_processes(passed ? 1 : 0) == 1;
  if (passed && !all_passed && dist::rank() == 0) std::cerr << "[process 0] checks failed in another process\n";
  return all_passed ? 0 : 1;
}
