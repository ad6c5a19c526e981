// Same configuration and seed, same results: every example is run twice through the
// `fabricsim` binary (separate processes, so nothing carries over in memory) and the
// two results.json must be byte-identical once the "simulator" section (wall time,
// speed) is removed; the packets.csv timelines must be identical too.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hw/units.h"
#include "sim/config.h"
#include "sim/child_run.h"
#include "sim/config_reader.h"
#include "sim/fabric.h"
#include "tlm/rtl_allocator.h"
#include "tlm/switch.h"
#include "tlm/wake_queue.h"
#include "tests/command.h"
#include "tests/sanitizer.h"
#include "tests/switch_test_access.h"

namespace {

namespace fs = std::filesystem;
using fabricsim::hw::Time;
using fabricsim::testing::run_command;

// Each example is cut to the shortest prefix that still delivers packets: 100 us of
// simulated time, then 1.25x longer until packets arrive or the example's own
// duration is reached. Long examples stay quick; ones that compute before they
// communicate (training steps) still move data.
const Time kFirstCut = Time::us(100);
constexpr double kCutGrowth = 1.25;

std::vector<fs::path> examples() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(FABRICSIM_SOURCE_DIR) / "examples"))
    if (e.path().extension() == ".yaml") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// --set arguments that run `example` for `cut` (warmup dropped if it would not fit);
// empty if the example runs for at most `cut` anyway, nullopt if the cut is invalid
// (e.g. a flow that starts later).
std::optional<std::string> cut_to(const fs::path& example, const fabricsim::sim::FabricConfig& full, Time cut) {
  if (!(cut < full.simulation.duration)) return std::string();
  std::vector<std::string> sets{"simulation.duration=" + fabricsim::hw::to_string(cut)};
  if (!(full.simulation.warmup < cut)) sets.push_back("simulation.warmup=0s");
  try {
    fabricsim::sim::load_config(example.string(), sets);
  } catch (const fabricsim::sim::ConfigError&) {
    return std::nullopt;
  }
  std::string args;
  for (const auto& s : sets) args += " --set " + s;
  return args;
}

// One run: its results.json without "simulator", its packets.csv, its qps.csv and
// qp_rates.csv (one after the other), its occupancy.csv, and how often the switches and
// NICs woke (from "simulator").
struct RunOutput {
  nlohmann::json results;
  std::string packets, qps, occupancy;
  std::uint64_t activations = 0;
};

RunOutput run_once(const std::string& args, const fs::path& out) {
  const auto r = run_command(args);
  EXPECT_EQ(r.exit_code, 0) << "fabricsim " << args << "\n" << r.output;
  RunOutput run;
  run.results = nlohmann::json::parse(read_file(out / "results.json"), nullptr, /*allow_exceptions=*/false);
  if (run.results.is_object() && run.results.contains("simulator")) {
    run.activations = run.results["simulator"].value("process_activations", std::uint64_t{0});
    run.results.erase("simulator");
  }
  run.packets = read_file(out / "packets.csv");
  run.qps = read_file(out / "qps.csv") + read_file(out / "qp_rates.csv");
  run.occupancy = read_file(out / "occupancy.csv");
  fs::remove_all(out);
  return run;
}

std::uint64_t delivered(const RunOutput& r) {
  const auto& p = r.results.is_object() ? r.results.value("packets", nlohmann::json::object()) : nlohmann::json::object();
  return p.value("delivered", std::uint64_t{0});
}

// The same model results and packets.csv (in the order of delivery time, then
// destination: tlm/packet_log.h; packet numbers per source): flow-completion means sum
// flows in the order they complete, which for flows completing at one instant is the
// kernel's order of same-time processes, so their last digit may differ.
void expect_same_model(RunOutput a, RunOutput b, const std::string& what) {
  for (auto* r : {&a, &b}) r->results.erase("config");
  int differences = 0;
  for (const auto& op : nlohmann::json::diff(a.results, b.results)) {
    const std::string path = op["path"];
    const bool flow_mean = path.rfind("/flows/", 0) == 0 && path.size() > 5 &&
                           path.compare(path.size() - 5, 5, "/mean") == 0 && op["op"] == "replace";
    if (!flow_mean) {
      if (++differences <= 10) ADD_FAILURE() << what << ": results differ at " << path;
      continue;
    }
    const double x = a.results.at(nlohmann::json::json_pointer(path)).get<double>();
    EXPECT_NEAR(x, op["value"].get<double>(), 1e-12 * std::abs(x)) << what << " " << path;
  }
  EXPECT_LE(differences, 10) << what << ": " << differences << " results differ in all";
  EXPECT_TRUE(a.packets == b.packets) << what << ": packets.csv differ";
  EXPECT_TRUE(a.occupancy == b.occupancy) << what << ": occupancy.csv differ";
}

class Determinism : public ::testing::TestWithParam<fs::path> {};

// The first run of `example` cut to a prefix that delivers packets (kFirstCut) into
// `first`; its command line.
std::string first_delivering_run(const fs::path& example, const fs::path& out, RunOutput& first) {
  const auto full = fabricsim::sim::load_config(example.string());
  std::string args;
  for (Time cut = kFirstCut;; cut = Time::seconds(cut.in_seconds() * kCutGrowth)) {
    const auto sets = cut_to(example, full, cut);
    if (!sets) continue;
    args = "run " + example.string() + *sets + " --packet-csv --out " + out.string();
    first = run_once(args, out);
    if (::testing::Test::HasFailure() || delivered(first) > 0 || sets->empty()) break;
  }
  return args;
}

TEST_P(Determinism, TwoRunsGiveIdenticalResults) {
  const fs::path example = GetParam();
  const fs::path dir = fs::temp_directory_path() / ("fabricsim_determinism_" + example.stem().string() + "_" +
                                                    std::to_string(getpid()));
  fs::remove_all(dir);
  const fs::path out = dir / "out";
  // Both runs write to the same --out folder, so the echoed configuration is the same.
  RunOutput first;
  const std::string args = first_delivering_run(example, out, first);
  ASSERT_FALSE(::testing::Test::HasFailure()) << "the first run failed";
  ASSERT_TRUE(first.results.is_object()) << "results.json is not a JSON object";
  // A run that moves nothing would be trivially identical.
  ASSERT_GT(delivered(first), 0u) << "no packet delivered: nothing to compare";
  const RunOutput second = run_once(args, out);
  fs::remove_all(dir);
  ASSERT_FALSE(::testing::Test::HasFailure()) << "the second run failed";
  if (first.results.dump(1) != second.results.dump(1)) {
    // Show where they part, as JSON Patch operations (RFC 6902).
    const auto diff = nlohmann::json::diff(first.results, second.results);
    nlohmann::json head = nlohmann::json::array();
    for (std::size_t i = 0; i < diff.size() && i < 10; ++i) head.push_back(diff[i]);
    ADD_FAILURE() << "fabricsim " << args << ": results.json differ between two runs (" << diff.size()
                  << " differences), first ones:\n"
                  << head.dump(1);
  }
  EXPECT_TRUE(first.packets == second.packets) << "fabricsim " << args << ": packets.csv differ between two runs";
  EXPECT_TRUE(first.qps == second.qps) << "fabricsim " << args << ": qps.csv or qp_rates.csv differ between two runs";
  EXPECT_TRUE(first.occupancy == second.occupancy) << "fabricsim " << args << ": occupancy.csv differ between two runs";
}

// The occupancy sampler only reads: a run with it gives the same model results as one
// without (everything but the time series and the echoed configuration; packets.csv
// the same bit for bit), although the
// switches wake on fewer edges than the sampler's instants (Switch::occupancy
// counts the buffer releases already due).
TEST(Determinism, OccupancySamplerDoesNotPerturbTheModel) {
  const fs::path out = fs::temp_directory_path() / ("fabricsim_sampler_" + std::to_string(getpid()));
  for (const char* example : {"examples/quickstart.yaml", "bench/s2_kary_ntree.yaml"}) {
    std::vector<RunOutput> runs;
    for (const char* interval : {"0s", "100ns"})
      runs.push_back(run_once(std::string("run ") + FABRICSIM_SOURCE_DIR + "/" + example +
                                  " --set simulation.duration=20us --set simulation.warmup=0us"
                                  " --set output.sample_interval=" + interval + " --packet-csv --out " + out.string(),
                              out));
    ASSERT_GT(delivered(runs[0]), 0u) << example;
    ASSERT_FALSE(runs[1].results["timeseries"]["time_ns"].empty()) << example;
    ASSERT_FALSE(runs[1].occupancy.empty()) << example;
    for (auto& r : runs)
      for (const char* k : {"timeseries", "config", "files"}) r.results.erase(k);
    EXPECT_EQ(runs[0].results.dump(1), runs[1].results.dump(1)) << example;
    // The sampler's own activations can change the kernel's order of same-time
    // processes; packets.csv's order and packet numbers do not depend on it.
    EXPECT_GT(std::count(runs[0].packets.begin(), runs[0].packets.end(), '\n'), 1) << example;
    EXPECT_TRUE(runs[0].packets == runs[1].packets) << example << ": packets.csv differ";
  }
}

// A switch applies a buffer release at its next wake, which can be much later (or never,
// once traffic stops); the sampler must still see the buffer empty once every packet
// has left it.
TEST(Determinism, OccupancySamplerSeesReleasedBuffersEmpty) {
  const fs::path out = fs::temp_directory_path() / ("fabricsim_sampler_empty_" + std::to_string(getpid()));
  const RunOutput r = run_once(std::string("run ") + FABRICSIM_SOURCE_DIR +
                                   "/examples/quickstart.yaml --set traffic.messages=3 --set simulation.duration=30us"
                                   " --set simulation.warmup=0us --set output.sample_interval=1us --out " + out.string(),
                               out);
  ASSERT_GT(delivered(r), 0u);
  ASSERT_EQ(r.results["packets"]["in_flight"], 0) << "traffic must be over before the end";
  // occupancy.csv has a row per port holding bytes at a sample; per sample they add up
  // to results.json's totals, and the last sample has none.
  const auto& ts = r.results["timeseries"];
  const auto& times = ts["time_ns"];
  ASSERT_GT(times.size(), 20u);
  std::map<long long, std::pair<std::uint64_t, std::uint64_t>> sums;  // time [ns] -> (ingress, egress)
  std::istringstream csv(r.occupancy);
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "time_ns,switch,port,ingress_bytes,egress_bytes");
  while (std::getline(csv, line)) {
    std::vector<std::string> cells;
    std::istringstream row(line);
    for (std::string c; std::getline(row, c, ',');) cells.push_back(c);
    ASSERT_EQ(cells.size(), 5u) << line;
    auto& s = sums[std::llround(std::stod(cells[0]))];
    s.first += std::stoull(cells[3]);
    s.second += std::stoull(cells[4]);
  }
  ASSERT_GT(sums.size(), 2u) << "no sample saw a buffer in use";
  for (std::size_t k = 0; k < times.size(); ++k) {
    const auto at = sums.find(std::llround(times[k].get<double>()));
    const auto held = at == sums.end() ? std::make_pair(std::uint64_t{0}, std::uint64_t{0}) : at->second;
    EXPECT_EQ(ts["ingress_bytes"][k].get<std::uint64_t>(), held.first) << "sample " << k;
    EXPECT_EQ(ts["egress_bytes"][k].get<std::uint64_t>(), held.second) << "sample " << k;
  }
  EXPECT_EQ(ts["ingress_bytes"].back(), 0);
  EXPECT_EQ(ts["egress_bytes"].back(), 0);
  EXPECT_EQ(sums.count(std::llround(times.back().get<double>())), 0u) << "rows at the last sample";
}

// Runs `config` in a child process twice, with the switches' event-driven wake-ups and
// with every switch waking on every core edge (SwitchTestAccess::wake_every_edge), and
// requires the same model results, packets.csv and occupancy.csv, and fewer wake-ups.
void expect_same_as_every_edge(const fabricsim::sim::FabricConfig& config, const std::string& what) {
  std::vector<RunOutput> runs;
  for (bool every_edge : {false, true}) {
    nlohmann::json r = fabricsim::sim::in_child([&] {
      fabricsim::tlm_fabric::SwitchTestAccess::wake_every_edge(every_edge);
      std::ostringstream packets, occupancy;
      nlohmann::json results = fabricsim::sim::run_simulation(config, {&packets, nullptr, nullptr, &occupancy});
      results["packets_csv"] = packets.str();
      results["occupancy_csv"] = occupancy.str();
      return results;
    });
    ASSERT_FALSE(r.contains("error")) << r.dump().substr(0, 400);
    RunOutput run;
    run.activations = r["simulator"]["process_activations"].get<std::uint64_t>();
    run.packets = r["packets_csv"].get<std::string>();
    run.occupancy = r["occupancy_csv"].get<std::string>();
    for (const char* k : {"simulator", "packets_csv", "occupancy_csv"}) r.erase(k);
    run.results = std::move(r);
    runs.push_back(std::move(run));
  }
  ASSERT_GT(delivered(runs[0]), 0u) << what;
  EXPECT_LT(runs[0].activations, runs[1].activations) << what << ": the event-driven switch wakes less";
  expect_same_model(runs[0], runs[1], what);
}

// Folded admission (Switch::admission_wake): a switch admits a packet at its first wake
// at or after the header edge. Checked against the every-edge reference (below) where
// folding has to stay exact: the occupancy sampler on the core edges, runs ending at
// assorted instants (Switch::settle_admissions), ECN marking, routes chosen at
// admission, output-side buffers, PFC inputs and lossy ones (buffer and WRED drops).
TEST(Determinism, FoldedAdmissionMatchesEdgeByEdgeAdmission) {
  const bool asan = fabricsim::test::kAddressSanitizer;
  const std::vector<std::string> ecn = {"switch.ecn.enabled=true", "switch.ecn.kmin=1KB", "switch.ecn.kmax=16KB",
                                        "switch.ecn.pmax=0.5", "traffic.load=0.7"};
  const std::vector<std::string> lossy = {"link.flow_control=none", "switch.wred.enabled=true", "switch.wred.kmin=2KB",
                                          "switch.wred.kmax=16KB", "traffic.load=0.8"};
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const std::vector<std::pair<const char*, std::vector<std::string>>> cases = {
      {"bench/s2_kary_ntree.yaml", {}},
      {"bench/s2_kary_ntree.yaml", with(ecn, {"switch.buffer=shared_memory", "switch.shared_buffer=32MiB"})},
      // The route is chosen at admission: on the queues (adaptive), per packet (spray).
      {"bench/s2_kary_ntree.yaml", with(ecn, {"routing.algorithm=adaptive"})},
      {"bench/s2_kary_ntree.yaml", {"routing.algorithm=spray", "switch.buffer=output_queued", "switch.speedup=2",
                                    "switch.output_buffer=4MiB"}},
      {"examples/single_switch.yaml", with(ecn, {"switch.buffer=output_queued", "switch.speedup=2"})},
      {"examples/single_switch.yaml", with(ecn, {"switch.buffer=cioq", "traffic.load=0.95"})},
      {"examples/single_switch.yaml",
       with(ecn, {"link.flow_control=pfc", "switch.buffer=voq", "switch.pfc.xoff=24KiB", "switch.pfc.xon=12KiB",
                  "switch.pfc.headroom=64KiB", "traffic.load=0.9"})},
      // Lossy: drops for the input buffer, the output queue or the shared pool (which
      // releases change: not folded), and WRED's.
      {"bench/s2_kary_ntree.yaml", with(lossy, {"switch.buffer=voq", "switch.input_buffer=8KiB"})},
      {"examples/single_switch.yaml", with(lossy, {"switch.buffer=output_queued", "switch.output_buffer=16KiB"})},
      {"examples/single_switch.yaml", with(lossy, {"switch.buffer=cioq", "switch.output_buffer=16KiB"})},
      {"examples/single_switch.yaml", with(lossy, {"switch.buffer=shared_memory", "switch.shared_buffer=64KiB"})},
  };
  const std::vector<const char*> durations =
      asan ? std::vector<const char*>{"7.0007us"} : std::vector<const char*>{"20us", "13.3337us", "7.0007us"};
  for (const auto& [file, overrides] : cases) {
    for (const char* duration : durations) {
      auto sets = with(overrides, {std::string("simulation.duration=") + duration, "simulation.warmup=0us",
                                   "output.sample_interval=1us"});
      const auto config = fabricsim::sim::load_config(std::string(FABRICSIM_SOURCE_DIR) + "/" + file, sets);
      std::string what = std::string(file) + " for " + duration;
      for (const auto& o : overrides) what += " " + o;
      expect_same_as_every_edge(config, what);
    }
  }
}

// A switch wakes only on the edges where something can happen: a header or a ready
// head, a wire or read port about to free, a credit or release that can change a
// decision, the edge after a wake that left a head able to leave (it lost allocation)
// and the edge where a credit stall opens or ends. The reference is the same fabric
// with every switch waking on every core edge while it holds a packet, as a hardware
// allocator runs every cycle (SwitchTestAccess::wake_every_edge): both must deliver the
// same packets at the same times with the same results.
struct ReferenceCase {
  const char* name;  // the test's name
  const char* file;
  std::vector<std::string> overrides;
};

// The sanitizer build runs several times slower: there S1 and S2 stop earlier (the
// Release pass runs them to the lengths that found the bugs above), and each case is a
// test of its own so that none comes near ctest's time limit on a 2-core machine.
std::vector<ReferenceCase> reference_cases() {
  const bool asan = fabricsim::test::kAddressSanitizer;
  const std::string s1 = asan ? "20us" : "60us", s2 = asan ? "30us" : "100us";
  const std::string s2_pfc = asan ? "15us" : "40us", incast = asan ? "60us" : "150us";
  // The sanitizer build stops the AllReduce examples part way (about 1 ms whole) and runs
  // a shorter training step (a tenth of the compute, a third of the gradients, the first
  // bucket's AllReduce still overlapping the backward pass); Release runs the examples as
  // they are.
  using Overrides = std::vector<std::string>;
  const Overrides collective = asan ? Overrides{"simulation.duration=400us"} : Overrides{};
  const Overrides training = asan ? Overrides{"training.forward=100us", "training.backward=200us",
                                              "training.gradient_size=16MiB", "training.bucket_size=8MiB"}
                                  : Overrides{};
  return {
      {"S1", "bench/s1_switch64.yaml", {"simulation.duration=" + s1, "simulation.warmup=5us"}},
      {"SingleSwitch", "examples/single_switch.yaml", {"simulation.duration=10us", "simulation.warmup=0us"}},
      {"SingleSwitchOldestFirst", "examples/single_switch.yaml",
       {"simulation.duration=10us", "simulation.warmup=0us", "switch.allocator=oldest_first"}},
      {"S2", "bench/s2_kary_ntree.yaml", {"simulation.duration=" + s2, "simulation.warmup=5us"}},
      {"AllreduceRailIb", "examples/allreduce_rail_ib.yaml", collective},
      {"AllreduceLeafspineIb", "examples/allreduce_leafspine_ib.yaml", collective},
      // Adaptive routing, FECN marking, selective-repeat NAKs, credit stalls.
      {"DoubleBinaryTree", "examples/allreduce_leafspine_ib.yaml",
       {"collective.algorithm=double_binary_tree", "collective.sizes=[1MiB]"}},
      {"TrainingStepFattree", "examples/training_step_fattree.yaml", training},
      // Output queues at crossbar speedup 1: saturated inputs wait for write ports (the
      // crossbar writes decided ahead of the packets), also with no ingress pipeline
      // (a write decided on the edge it is asked for) and under an AllReduce's ACKs.
      {"SingleSwitchOutputQueued", "examples/single_switch.yaml",
       {"simulation.duration=20us", "simulation.warmup=0us", "switch.buffer=output_queued", "traffic.load=1.0"}},
      {"SingleSwitchOutputQueuedNoPipeline", "examples/single_switch.yaml",
       {"simulation.duration=10us", "simulation.warmup=0us", "switch.buffer=output_queued", "traffic.load=1.0",
        "switch.pipeline.parse=0", "switch.pipeline.route_lookup=0", "switch.pipeline.vl_mapping=0",
        "switch.pipeline.buffer_admission=0", "switch.forwarding=store_and_forward"}},
      // Ports of 100G, 200G and 400G forwarding per port pair (fast_to_slow: a packet's
      // ready time is known once it is routed) and one port storing and forwarding.
      {"SingleSwitchMixedSpeedsFastToSlow", "examples/single_switch.yaml",
       {"simulation.duration=20us", "simulation.warmup=0us", "traffic.load=0.8", "switch.forwarding=fast_to_slow",
        "switch.port_forwarding={5: store_and_forward}",
        "topology.links=[{endpoint: 0, lanes: 2}, {endpoint: 1, lanes: 4}, {endpoint: 2, lanes: 2}]"}},
      // VOQ inputs (cioq): the write ports of an edge matched to the inputs by grant and
      // accept in rounds, also decided on the edge they are asked for (no ingress
      // pipeline); four VLs (a VOQ per output and VL), and PFC pausing and resuming.
      {"SingleSwitchCioq", "examples/single_switch.yaml",
       {"simulation.duration=20us", "simulation.warmup=0us", "switch.buffer=cioq", "traffic.load=1.0"}},
      {"SingleSwitchCioqNoPipeline", "examples/single_switch.yaml",
       {"simulation.duration=10us", "simulation.warmup=0us", "switch.buffer=cioq", "traffic.load=1.0",
        "switch.pipeline.parse=0", "switch.pipeline.route_lookup=0", "switch.pipeline.vl_mapping=0",
        "switch.pipeline.buffer_admission=0", "switch.forwarding=store_and_forward"}},
      {"SingleSwitchCioqVlsPfc", "examples/single_switch.yaml",
       {"simulation.duration=20us", "simulation.warmup=0us", "switch.buffer=cioq", "switch.speedup=2",
        "switch.vls=4", "traffic.sl=[0,1,2,3]", "traffic.load=0.95", "link.flow_control=pfc",
        "switch.pfc.xoff=8KiB", "switch.pfc.xon=4KiB", "switch.pfc.headroom=64KiB", "switch.output_buffer=16MiB"}},
      {"AllreduceLeafspineIbOutputQueued", "examples/allreduce_leafspine_ib.yaml",
       asan ? Overrides{"simulation.duration=400us", "switch.buffer=output_queued"}
            : Overrides{"switch.buffer=output_queued"}},
      {"Quickstart", "examples/quickstart.yaml", {}},
      // PFC: PAUSE, refresh and RESUME on VOQ inputs (small thresholds: inputs pause and
      // resume all the time), and the RoCE examples (shared memory, ECN, DCQCN).
      {"S2PfcPauses", "bench/s2_kary_ntree.yaml",
       {"simulation.duration=" + s2_pfc, "simulation.warmup=5us", "link.framing=roce_v2", "link.flow_control=pfc",
        "switch.pfc.xoff=4KiB", "switch.pfc.xon=2KiB", "switch.pfc.headroom=8KiB", "switch.input_buffer=64KiB",
        "switch.pfc.pause_quanta=64", "traffic.pattern=hotspot", "traffic.load=0.6"}},
      {"IncastRoce", "examples/incast_roce.yaml", {"simulation.duration=" + incast, "simulation.warmup=10us"}},
      {"DcqcnIncastRoce", "examples/dcqcn_incast_roce.yaml", {"simulation.duration=" + incast, "simulation.warmup=10us"}},
  };
}

void PrintTo(const ReferenceCase& c, std::ostream* os) {
  *os << c.file;
  for (const auto& o : c.overrides) *os << " " << o;
}

class WakeUpsMatchEveryEdgeReference : public ::testing::TestWithParam<ReferenceCase> {};

TEST_P(WakeUpsMatchEveryEdgeReference, SameModel) {
  const ReferenceCase& c = GetParam();
  auto sets = c.overrides;
  sets.push_back("output.sample_interval=0s");
  const auto config = fabricsim::sim::load_config(std::string(FABRICSIM_SOURCE_DIR) + "/" + c.file, sets);
  std::string what = c.file;
  for (const auto& o : c.overrides) what += " " + o;
  expect_same_as_every_edge(config, what);
}

std::string reference_name(const ::testing::TestParamInfo<ReferenceCase>& param) { return param.param.name; }

INSTANTIATE_TEST_SUITE_P(Determinism, WakeUpsMatchEveryEdgeReference, ::testing::ValuesIn(reference_cases()),
                         reference_name);

// Parallel lanes (simulation.threads; docs/architecture.md, "Lanes"): the results and
// every CSV file must be those of one lane, bit for bit, in two lanes and in three (whose
// calls between lanes cross as bytes, as between processes: WakeQueue::
// serialise_between_lanes). The
// cases cover the buffer organisations, adaptive routing, credit stalls, the occupancy
// sampler, PFC with ECN and DCQCN, bit errors with go-back-N, every collective algorithm
// (100 m cables: the NICs' completion delay bounds the lookahead), a training step and,
// in RTL builds, the Verilated allocator in every switch (S4). Replaying a deferred call
// at the callee's time, a lookahead above a credit's least delay and a window running
// past the sampler's time each fail it.
struct LaneCase {
  const char* name;
  std::vector<std::string> overrides;
  bool rtl = false;  // the Verilated allocator in every switch (S4): RTL builds only, a shorter run
  const char* file = "bench/s2_kary_ntree.yaml";
  bool whole = false;  // runs until its workload is done (a collective), not for a set time
};

void PrintTo(const LaneCase& c, std::ostream* os) { *os << c.name; }

class LanesMatchOneLane : public ::testing::TestWithParam<LaneCase> {};

TEST_P(LanesMatchOneLane, SameResults) {
  const LaneCase& c = GetParam();
  if (c.rtl && fabricsim::tlm_fabric::rtl_allocator_models().empty()) GTEST_SKIP() << "built without -DFABRICSIM_RTL=ON";
  const bool asan = fabricsim::test::kAddressSanitizer;
  std::vector<std::string> sets = c.overrides;
  if (!c.whole) {
    sets.push_back(std::string("simulation.duration=") + (asan || c.rtl ? "15us" : "60us"));
    sets.push_back("simulation.warmup=5us");
  }
  std::vector<nlohmann::json> runs;
  for (int threads : {1, 2, 3}) {
    auto with = sets;
    with.push_back("simulation.threads=" + std::to_string(threads));
    const auto config = fabricsim::sim::load_config(std::string(FABRICSIM_SOURCE_DIR) + "/" + c.file, with);
    nlohmann::json r = fabricsim::sim::in_child([&] {
      // Three lanes hand their calls across as bytes, as lanes in different processes do.
      fabricsim::tlm_fabric::WakeQueue::serialise_between_lanes(threads == 3);
      std::ostringstream log, qps, rates, occupancy;
      nlohmann::json results = fabricsim::sim::run_simulation(config, {&log, &qps, &rates, &occupancy});
      results["packets_csv"] = log.str();
      results["qps_csv"] = qps.str();
      results["qp_rates_csv"] = rates.str();
      results["occupancy_csv"] = occupancy.str();
      return results;
    });
    ASSERT_FALSE(r.contains("error")) << c.name << " threads " << threads << ": " << r.dump().substr(0, 400);
    EXPECT_EQ(r["simulator"]["lanes"].get<int>(), threads) << c.name;
    if (threads > 1) {
      EXPECT_GT(r["simulator"]["parallel_windows"].get<std::uint64_t>(), 100u) << c.name;
    }
    r.erase("simulator");
    r.erase("config");
    runs.push_back(std::move(r));
  }
  ASSERT_GT(runs[0]["packets"]["delivered"].get<std::uint64_t>(), 1000u) << c.name;
  const std::string& csv = runs[0]["packets_csv"].get_ref<const std::string&>();
  EXPECT_GT(std::count(csv.begin(), csv.end(), '\n'), 1000) << c.name << ": packets.csv rows";
  if (c.whole) {
    ASSERT_TRUE(runs[0]["collective"]["finished"].get<bool>()) << c.name;
  }
  for (std::size_t k = 1; k < runs.size(); ++k) {
    const auto diff = nlohmann::json::diff(runs[0], runs[k]);
    for (std::size_t i = 0; i < diff.size() && i < 10; ++i)
      ADD_FAILURE() << c.name << ", " << k + 1 << " lanes: results differ at " << diff[i]["path"];
    EXPECT_TRUE(diff.empty()) << c.name << ", " << k + 1 << " lanes: " << diff.size() << " differences";
  }
}

// A workload that acts on NICs of several lanes at no delay runs on one lane whatever
// simulation.threads asks (Fabric::plan_lanes), with the results of threads: 1: a
// perftest between two leaves, a collective whose landings are visible at once (no DMA
// write or poll latency), ring or in-network (sharp).
TEST(Determinism, WorkloadsActingOnNicsAtOnceRunOnOneLane) {
  const std::string ib = "examples/allreduce_leafspine_ib.yaml";
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases{
      {"examples/perftest_ib_b2b.yaml",
       {"topology={kind: leaf_spine, radix: 4}", "perftest.client=0", "perftest.server=3", "perftest.iterations=20",
        "perftest.sizes=[2B, 4KiB]"}},
      {ib, {"nic.pcie.host_write_latency=0ns", "nic.pcie.gpu_write_latency=0ns", "nic.poll_latency=0ns",
            "collective.sizes=[64KiB]"}},
      {ib, {"collective.algorithm=sharp", "switch.in_network_reduction=true", "nic.pcie.host_write_latency=0ns",
            "nic.pcie.gpu_write_latency=0ns", "nic.poll_latency=0ns", "collective.sizes=[64KiB]"}},
  };
  for (const auto& [file, sets] : cases) {
    std::vector<nlohmann::json> runs;
    for (int threads : {1, 2}) {
      auto with = sets;
      with.push_back("simulation.threads=" + std::to_string(threads));
      const auto config = fabricsim::sim::load_config(std::string(FABRICSIM_SOURCE_DIR) + "/" + file, with);
      nlohmann::json r = fabricsim::sim::in_child([&] { return fabricsim::sim::run_simulation(config); });
      ASSERT_FALSE(r.contains("error")) << file << " " << sets[0] << ": " << r.dump().substr(0, 400);
      EXPECT_EQ(r["simulator"]["lanes"].get<int>(), 1) << file << " " << sets[0];
      r.erase("simulator");
      r.erase("config");
      runs.push_back(std::move(r));
    }
    ASSERT_GT(runs[0]["packets"]["delivered"].get<std::uint64_t>(), 0u) << file << " " << sets[0];
    EXPECT_TRUE(nlohmann::json::diff(runs[0], runs[1]).empty()) << file << " " << sets[0];
  }
}

std::string lane_case_name(const ::testing::TestParamInfo<LaneCase>& param) { return param.param.name; }

INSTANTIATE_TEST_SUITE_P(
    Determinism, LanesMatchOneLane,
    ::testing::Values(LaneCase{"S2", {}}, LaneCase{"OutputQueued", {"switch.buffer=output_queued"}},
                      LaneCase{"Cioq", {"switch.buffer=cioq", "switch.speedup=2"}},
                      LaneCase{"SharedMemoryAdaptive", {"switch.buffer=shared_memory", "routing.algorithm=adaptive"}},
                      LaneCase{"CreditStalls", {"switch.input_buffer=12KiB", "traffic.load=0.8"}},
                      LaneCase{"OccupancySampler", {"output.sample_interval=1us", "switch.input_buffer=24KiB"}},
                      LaneCase{"PfcPausesEcnDcqcnRdma",  // PFC is Ethernet's: RoCEv2 framing on the S2 fabric
                               {"link.framing=roce_v2", "link.flow_control=pfc", "switch.pfc.xoff=4KiB", "switch.pfc.xon=2KiB",
                                "switch.pfc.headroom=8KiB", "switch.input_buffer=64KiB", "switch.ecn.enabled=true",
                                "traffic.transport=rdma", "nic.congestion_control.kind=dcqcn", "traffic.pattern=hotspot",
                                "traffic.load=0.6", "output.sample_interval=1us"}},
                      LaneCase{"BitErrorsGoBackN", {"link.ber=1e-6", "traffic.transport=rdma"}},
                      LaneCase{"RtlAllocator", {"switch.allocator_impl=rtl"}, true},
                      LaneCase{"RingAllReduceTwoChannels",
                               {"collective.sizes=[64KiB, 1MiB]", "collective.iterations=2", "collective.channels=2"},
                               false, "examples/allreduce_leafspine_ib.yaml", true},
                      LaneCase{"RingAllReduceLongCables",  // lookahead: the completion delay, not the cables
                               {"link.cable_length=100m", "collective.sizes=[16KiB, 64KiB, 256KiB]",
                                "collective.iterations=3"},
                               false, "examples/allreduce_leafspine_ib.yaml", true},
                      LaneCase{"DoubleBinaryTree", {"collective.algorithm=double_binary_tree", "collective.sizes=[2MiB]",
                                                    "collective.tree_chunk=128KiB", "collective.tree_slots=2"},
                               false, "examples/allreduce_leafspine_ib.yaml", true},
                      LaneCase{"HalvingDoubling", {"collective.algorithm=halving_doubling", "collective.sizes=[1MiB]"},
                               false, "examples/allreduce_leafspine_ib.yaml", true},
                      LaneCase{"AllToAll", {"collective.op=alltoall", "collective.algorithm=direct",
                                            "collective.sizes=[1MiB]"},
                               false, "examples/allreduce_leafspine_ib.yaml", true},
                      LaneCase{"SharpTwoSizes",  // aggregation ports in their switch's lane
                               {"collective.algorithm=sharp", "switch.in_network_reduction=true",
                                "collective.sizes=[64KiB, 1MiB]", "collective.iterations=2"},
                               false, "examples/allreduce_leafspine_ib.yaml", true},
                      LaneCase{"RingAllReduceRocePfcDcqcn", {"collective.sizes=[1MiB]"}, false,
                               "examples/allreduce_leafspine_roce.yaml", true},
                      LaneCase{"TrainingStep",
                               {"training.forward=20us", "training.backward=40us", "training.optimizer=5us",
                                "training.gradient_size=2MiB", "training.bucket_size=512KiB"},
                               false, "examples/training_step_fattree.yaml", true}),
    lane_case_name);

std::string test_name(const ::testing::TestParamInfo<fs::path>& info) {
  std::string name = info.param.stem().string();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Examples, Determinism, ::testing::ValuesIn(examples()), test_name);

// simulation.engine: kernel runs each block on an sc_event and a method process of its
// own, in step with the kernel; every example gives the wheel's results (results.json
// but "simulator" and the echoed configuration; packets.csv, qps.csv and qp_rates.csv).
class EnginesMatch : public ::testing::TestWithParam<fs::path> {};

TEST_P(EnginesMatch, KernelEngineGivesTheWheelsResults) {
  const fs::path example = GetParam();
  const fs::path out = fs::temp_directory_path() / ("fabricsim_engines_" + example.stem().string() + "_" +
                                                    std::to_string(getpid()));
  fs::remove_all(out);
  RunOutput wheel;
  const std::string args = first_delivering_run(example, out, wheel);
  ASSERT_FALSE(::testing::Test::HasFailure()) << "the wheel's run failed";
  ASSERT_GT(delivered(wheel), 0u) << "no packet delivered: nothing to compare";
  RunOutput kernel = run_once(args + " --set simulation.engine=kernel", out);
  ASSERT_FALSE(::testing::Test::HasFailure()) << "the kernel engine's run failed";
  EXPECT_TRUE(wheel.qps == kernel.qps) << "fabricsim " << args << ": qps.csv or qp_rates.csv differ";
  expect_same_model(std::move(wheel), std::move(kernel), "fabricsim " + args + " (wheel, kernel)");
}

INSTANTIATE_TEST_SUITE_P(Examples, EnginesMatch, ::testing::ValuesIn(examples()), test_name);

}  // namespace
