// The fabric trace (`fabricsim run --trace perfetto|vcd`, tlm/fabric_trace.h): the files
// read back and checked against results.json. The Chrome JSON trace parses, has a
// delivery slice per packet delivered and egress counters whose maxima are the ports'
// egress high-water marks; credits never go negative and end where they started; the VCD
// has the same maxima; the window and the filters shrink the files, the size limit stops
// them; the same bytes on one lane and on two; a longer run holds no more events at once;
// filters that match nothing warn; the CLI's errors.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/command.h"
#include "tests/temp_files.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A 2-level leaf-spine of radix 4 (4 leaves of 2 hosts, 2 spines) on InfiniBand credits:
// every source sends a fixed number of messages, so the fabric drains before the end.
const char* kConfig = R"(simulation: {seed: 3, duration: 100us, warmup: 0us}
link: {framing: infiniband, lanes: 4, lane_rate: 106.25Gb/s, fec: rs544_514, cable_length: 5m, flow_control: credit}
switch: {core_clock: 1.5GHz, buffer: voq, allocator: islip, input_buffer: 64KiB}
nic: {mtu: 4KiB}
topology: {kind: leaf_spine, radix: 4, oversubscription: 1}
traffic: {pattern: uniform, load: 0.6, message_size: 16KiB, messages: 40}
output: {sample_interval: 0s}
)";

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(read_file(p)); }

struct TracedRun {
  fs::path out;
  nlohmann::json results;
};

/// Runs the configuration with `args` into dir/name; fails the test on a bad exit.
TracedRun run(const fs::path& dir, const std::string& name, const std::string& args) {
  const fs::path config = fabricsim::testing::write_text(dir / "trace.yaml", kConfig);
  TracedRun r{dir / name, {}};
  const auto c = fabricsim::testing::run_command("run -q " + config.string() + " --out " + r.out.string() + " " + args);
  EXPECT_EQ(c.exit_code, 0) << c.output;
  if (fs::exists(r.out / "results.json")) r.results = read_json(r.out / "results.json");
  return r;
}

/// A counter of the Chrome trace: its process's name and the counter's name.
struct CounterKey {
  std::string process, name;
  bool operator<(const CounterKey& o) const { return std::tie(process, name) < std::tie(o.process, o.name); }
};

struct Perfetto {
  std::size_t delivered = 0, switch_hops = 0, link_hops = 0;
  std::map<CounterKey, std::vector<std::int64_t>> counters;  // values in file order (time order)
  std::vector<double> slice_starts, slice_ends;              // [us]
};

Perfetto parse_perfetto(const fs::path& file) {
  const nlohmann::json doc = read_json(file);
  Perfetto p;
  std::map<int, std::string> process;
  for (const auto& e : doc.at("traceEvents"))
    if (e.at("ph") == "M" && e.at("name") == "process_name") process[e.at("pid").get<int>()] = e["args"]["name"];
  double last_counter_ts = -1;
  for (const auto& e : doc.at("traceEvents")) {
    const std::string ph = e.at("ph");
    EXPECT_TRUE(ph == "X" || ph == "C" || ph == "M") << e.dump();
    if (ph == "X") {
      const std::string cat = e.at("cat");
      p.delivered += cat == "delivered";
      p.switch_hops += cat == "switch";
      p.link_hops += cat == "link";
      EXPECT_GE(e.at("dur").get<double>(), 0.0) << e.dump();
      p.slice_starts.push_back(e.at("ts").get<double>());
      p.slice_ends.push_back(e.at("ts").get<double>() + e.at("dur").get<double>());
    } else if (ph == "C") {
      const double ts = e.at("ts").get<double>();
      EXPECT_GE(ts, last_counter_ts) << "events in time order";
      last_counter_ts = ts;
      const auto& args = e.at("args");
      EXPECT_EQ(args.size(), 1U);
      p.counters[{process.at(e.at("pid").get<int>()), e.at("name")}].push_back(args.begin()->get<std::int64_t>());
    }
  }
  return p;
}

/// VCD signals by their full name (scope.scope.name): every value in order.
std::map<std::string, std::vector<std::uint64_t>> parse_vcd(const fs::path& file) {
  std::ifstream in(file);
  std::map<std::string, std::string> name_of;  // id -> full name
  std::map<std::string, std::vector<std::uint64_t>> values;
  std::vector<std::string> scope;
  std::string line;
  std::uint64_t last_time = 0;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string w;
    words >> w;
    if (w == "$scope") {
      std::string kind, name;
      words >> kind >> name;
      scope.push_back(name);
    } else if (w == "$upscope") {
      scope.pop_back();
    } else if (w == "$var") {
      std::string type, width, id, name;
      words >> type >> width >> id >> name;
      std::string full;
      for (const auto& s : scope) full += s + ".";
      name_of[id] = full + name;
      values[full + name];
    } else if (!w.empty() && w[0] == '#') {
      const std::uint64_t t = std::stoull(w.substr(1));
      EXPECT_GE(t, last_time) << "VCD times ascend";
      last_time = t;
    } else if (!w.empty() && w[0] == 'b') {
      std::string id;
      words >> id;
      EXPECT_TRUE(name_of.count(id)) << line;
      values[name_of[id]].push_back(std::stoull(w.substr(1), nullptr, 2));
    } else if (!w.empty() && (w[0] == '0' || w[0] == '1') && w.size() > 1) {
      values[name_of.at(w.substr(1))].push_back(static_cast<std::uint64_t>(w[0] - '0'));
    }
  }
  return values;
}

std::uint64_t stat(const nlohmann::json& results, const std::string& name) {
  return results.at("stats").at(name).at("value").get<std::uint64_t>();
}

TEST(FabricTrace, PerfettoMatchesResults) {
  const auto dir = fabricsim::testing::test_temp_dir("trace");
  const TracedRun r = run(dir, "out", "--trace perfetto");
  ASSERT_TRUE(r.results.contains("trace"));
  EXPECT_EQ(r.results["trace"][0]["file"], "trace.perfetto.json");
  EXPECT_FALSE(r.results["trace"][0]["limit_reached"].get<bool>());
  EXPECT_EQ(r.results["packets"]["in_flight"].get<std::uint64_t>(), 0U) << "the fabric drains";
  const Perfetto p = parse_perfetto(r.out / "trace.perfetto.json");
  const auto delivered = r.results["packets"]["delivered"].get<std::size_t>();
  ASSERT_GT(delivered, 100U);
  EXPECT_EQ(p.delivered, delivered) << "a last-hop slice per packet delivered";
  EXPECT_GE(p.switch_hops, delivered);
  EXPECT_GT(p.link_hops, p.switch_hops);
  // Egress counters: their maxima are the ports' egress high-water marks.
  std::size_t egress = 0, credit_tracks = 0;
  std::uint64_t busiest = 0;
  for (const auto& [key, values] : p.counters) {
    const auto space = key.name.find(' ');
    const std::string port = key.name.substr(0, space), what = key.name.substr(space + 1);
    const std::int64_t max = *std::max_element(values.begin(), values.end());
    if (what == "egress") {
      ++egress;
      EXPECT_EQ(static_cast<std::uint64_t>(max), stat(r.results, key.process + "." + port + ".egress_high_water"))
          << key.process << " " << key.name;
      EXPECT_EQ(values.back(), 0) << "the buffers drain: " << key.process << " " << key.name;
      busiest = std::max(busiest, static_cast<std::uint64_t>(max));
    } else if (what == "ingress") {
      EXPECT_LE(static_cast<std::uint64_t>(max), stat(r.results, key.process + "." + port + ".ingress_high_water"))
          << key.process << " " << key.name;
      EXPECT_EQ(values.back(), 0) << key.process << " " << key.name;
    } else if (what.rfind("credits", 0) == 0) {
      ++credit_tracks;
      EXPECT_GE(*std::min_element(values.begin(), values.end()), 0) << key.process << " " << key.name;
      EXPECT_EQ(values.back(), values.front()) << "credits end where they started: " << key.process << " " << key.name;
      EXPECT_GT(values.size(), 1U) << key.process << " " << key.name;
    }
  }
  EXPECT_EQ(egress, 24U) << "6 switches of 4 ports";
  EXPECT_EQ(credit_tracks, 24U + 8U) << "every switch port and NIC transmits on one VL";
  EXPECT_GT(busiest, 0U);
}

TEST(FabricTrace, VcdHasTheSameMaxima) {
  const auto dir = fabricsim::testing::test_temp_dir("trace");
  const TracedRun r = run(dir, "out", "--trace perfetto,vcd");
  const auto vcd = parse_vcd(r.out / "fabric.vcd");
  const Perfetto p = parse_perfetto(r.out / "trace.perfetto.json");
  std::size_t egress = 0;
  for (const auto& [name, values] : vcd) {
    ASSERT_FALSE(values.empty()) << name << ": a value at the start";
    const std::uint64_t max = *std::max_element(values.begin(), values.end());
    const auto dot = name.rfind('.');
    const std::string port = name.substr(0, dot), signal = name.substr(dot + 1);
    if (signal == "egress_bytes") {
      ++egress;
      EXPECT_EQ(max, stat(r.results, port + ".egress_high_water")) << name;
      const auto sw = port.substr(0, port.rfind('.'));
      const auto& in_json = p.counters.at({sw, port.substr(port.rfind('.') + 1) + " egress"});
      EXPECT_EQ(max, static_cast<std::uint64_t>(*std::max_element(in_json.begin(), in_json.end()))) << name;
    } else if (signal.rfind("credits", 0) == 0) {
      EXPECT_EQ(values.back(), values.front()) << name;
    }
  }
  EXPECT_EQ(egress, 24U);
}

TEST(FabricTrace, WindowAndFiltersShrinkTheFiles) {
  const auto dir = fabricsim::testing::test_temp_dir("trace");
  const TracedRun all = run(dir, "all", "--trace perfetto --trace vcd");
  const auto size = [](const TracedRun& r, const char* f) { return fs::file_size(r.out / f); };
  const TracedRun window = run(dir, "window", "--trace perfetto --trace vcd --trace-from 10us --trace-to 12us");
  EXPECT_LT(size(window, "trace.perfetto.json") * 4, size(all, "trace.perfetto.json"));
  EXPECT_LT(size(window, "fabric.vcd") * 4, size(all, "fabric.vcd"));
  const Perfetto w = parse_perfetto(window.out / "trace.perfetto.json");
  ASSERT_FALSE(w.slice_starts.empty());
  for (std::size_t i = 0; i < w.slice_starts.size(); ++i) {
    EXPECT_LE(w.slice_starts[i], 12.0);
    EXPECT_GE(w.slice_ends[i], 10.0);
  }
  const TracedRun endpoint = run(dir, "endpoint", "--trace perfetto --trace-endpoint 0");
  const Perfetto e = parse_perfetto(endpoint.out / "trace.perfetto.json");
  EXPECT_LT(size(endpoint, "trace.perfetto.json"), size(all, "trace.perfetto.json"));
  EXPECT_EQ(e.delivered, endpoint.results["endpoints"][0]["rx_packets"].get<std::size_t>())
      << "only endpoint 0's NIC delivers in the trace";
  const TracedRun flow = run(dir, "flow", "--trace perfetto --trace-flow 1:0 --trace-flow 2:0");
  const Perfetto f = parse_perfetto(flow.out / "trace.perfetto.json");
  EXPECT_GT(f.delivered, 0U);
  EXPECT_LT(f.delivered, e.delivered);
  // Only the ports on the flows' paths: leaf1 (ep2), leaf0 (ep0, ep1) and the spines.
  EXPECT_LT(size(flow, "trace.perfetto.json") * 3, size(all, "trace.perfetto.json"));
  for (const auto& [key, values] : f.counters) EXPECT_NE(key.process, "fabric.leaf3") << key.name;
  const TracedRun scope = run(dir, "scope", "--trace vcd --trace-scope 'fabric.leaf0*'");
  const auto vcd = parse_vcd(scope.out / "fabric.vcd");
  ASSERT_FALSE(vcd.empty());
  for (const auto& [name, values] : vcd) EXPECT_EQ(name.rfind("fabric.leaf0.", 0), 0U) << name;
}

TEST(FabricTrace, SizeLimitStopsAValidFile) {
  const auto dir = fabricsim::testing::test_temp_dir("trace");
  const TracedRun r = run(dir, "out", "--trace perfetto --trace vcd --trace-max-size 32KiB");
  for (const char* f : {"trace.perfetto.json", "fabric.vcd"}) EXPECT_LE(fs::file_size(r.out / f), 32U * 1024) << f;
  EXPECT_TRUE(r.results["trace"][0]["limit_reached"].get<bool>());
  EXPECT_TRUE(r.results["trace"][1]["limit_reached"].get<bool>());
  parse_perfetto(r.out / "trace.perfetto.json");  // still a whole JSON document
  EXPECT_FALSE(parse_vcd(r.out / "fabric.vcd").empty());
}

TEST(FabricTrace, SameBytesOnOneLaneAndTwo) {
  const auto dir = fabricsim::testing::test_temp_dir("trace");
  const TracedRun one = run(dir, "one", "--trace perfetto,vcd");
  const TracedRun two = run(dir, "two", "--trace perfetto,vcd --set simulation.threads=2");
  ASSERT_EQ(two.results["simulator"]["lanes"].get<int>(), 2);
  for (const char* f : {"trace.perfetto.json", "fabric.vcd"})
    EXPECT_TRUE(read_file(one.out / f) == read_file(two.out / f)) << f << " differs between 1 and 2 lanes";
}

// The events go out to the files as the time passes: a run of ten times the packets holds
// no more events at once (simulator.trace_events_held_max), on one lane and on two.
TEST(FabricTrace, LongerRunHoldsNoMoreEvents) {
  const auto dir = fabricsim::testing::test_temp_dir("trace");
  for (const std::string threads : {"1", "2"}) {
    const std::string args = "--trace perfetto,vcd --set simulation.threads=" + threads;
    const TracedRun brief = run(dir, "brief" + threads, args);
    const TracedRun longer = run(dir, "longer" + threads, args + " --set traffic.messages=400 --set simulation.duration=1ms");
    ASSERT_EQ(longer.results["packets"]["in_flight"].get<std::uint64_t>(), 0U) << "the fabric drains";
    const auto events = [](const TracedRun& r) { return r.results["trace"][0]["events"].get<std::uint64_t>(); };
    const auto held = [](const TracedRun& r) { return r.results["simulator"]["trace_events_held_max"].get<std::uint64_t>(); };
    EXPECT_GT(events(longer), 5 * events(brief)) << threads;
    EXPECT_LT(held(longer), events(longer) / 20) << threads;
    EXPECT_LE(held(longer), 2 * held(brief)) << threads;
  }
}

// A scope that names nothing in the fabric, and packet filters that keep no packet in
// scope, make nothing of the trace: a warning names them.
TEST(FabricTrace, FiltersThatMatchNothingWarn) {
  const auto dir = fabricsim::testing::test_temp_dir("trace");
  const fs::path config = fabricsim::testing::write_text(dir / "trace.yaml", kConfig);
  const std::string base = "run -q " + config.string() + " --out " + (dir / "out").string();
  // Endpoints 1 and 0 hang off leaf0: their packets never reach leaf3, nor endpoint 3
  // (a packet is kept when both filters keep it). Empty: no warning.
  const std::vector<std::pair<std::string, std::string>> cases{
      {" --trace vcd --trace-scope 'fabric.spine*' --trace-scope 'fabric.nosuch*'",
       "warning: output.trace_scope 'fabric.nosuch*' matches no switch, switch port or NIC of the fabric (e.g. "
       "fabric.leaf0, fabric.leaf0.port0, fabric.ep0)"},
      {" --trace perfetto --trace-flow 1:0 --trace-scope 'fabric.leaf3*'",
       "warning: output.trace_flow 1:0: no packet of theirs crossed a switch port or NIC in output.trace_scope; the "
       "trace holds no packet"},
      {" --trace perfetto --trace-flow 1:0 --trace-endpoint 3",
       "warning: output.trace_endpoint 3, output.trace_flow 1:0: no packet of theirs crossed a switch port or NIC in "
       "the run"},
      {" --trace perfetto --trace-flow 1:0", ""}};
  for (const auto& [args, warning] : cases) {
    const auto r = fabricsim::testing::run_command(base + args);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.output;
    if (warning.empty()) {
      EXPECT_THAT(r.output, ::testing::Not(HasSubstr("warning"))) << args;
      continue;
    }
    EXPECT_THAT(r.output, HasSubstr(warning)) << args;
    EXPECT_THAT(r.output, ::testing::Not(HasSubstr("'fabric.spine*'"))) << "a scope that matches is not named";
  }
}

// A ring AllReduce on lanes: a slice per transfer on its source endpoint's row, from its
// post to its landing, each rank with as many; the same bytes on one lane and on two.
TEST(FabricTrace, CollectiveStepsPerRank) {
  const auto dir = fabricsim::testing::test_temp_dir("trace");
  const std::string config = std::string(FABRICSIM_SOURCE_DIR) + "/examples/allreduce_leafspine_ib.yaml";
  std::string bytes[2];
  for (int threads : {1, 2}) {
    const fs::path out = dir / ("t" + std::to_string(threads));
    const auto c = fabricsim::testing::run_command("run -q " + config + " --out " + out.string() +
                                                   " --set 'collective.sizes=[64KiB]' --set simulation.threads=" +
                                                   std::to_string(threads) + " --trace perfetto");
    ASSERT_EQ(c.exit_code, 0) << c.output;
    bytes[threads - 1] = read_file(out / "trace.perfetto.json");
  }
  EXPECT_TRUE(bytes[0] == bytes[1]) << "the trace differs between 1 and 2 lanes";
  const nlohmann::json doc = nlohmann::json::parse(bytes[0]);
  std::map<int, int> steps_of_rank;
  double last_end = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "X" || e["cat"] != "collective") continue;
    ++steps_of_rank[e["args"]["src_rank"].get<int>()];
    EXPECT_GT(e["dur"].get<double>(), 0.0) << e.dump();
    last_end = std::max(last_end, e["ts"].get<double>() + e["dur"].get<double>());
  }
  const auto results = read_json(dir / "t1" / "results.json");
  const int ranks = static_cast<int>(results["collective"]["ranks"].size());  // the endpoint of each rank
  ASSERT_EQ(static_cast<int>(steps_of_rank.size()), ranks);
  for (const auto& [rank, steps] : steps_of_rank) EXPECT_EQ(steps, steps_of_rank.begin()->second) << "rank " << rank;
  EXPECT_GT(last_end, 0.0);
}

// A Chakra trace's sends and collectives run on the same engine: their transfers are steps too.
TEST(FabricTrace, ChakraTransfersAreSteps) {
  const auto dir = fabricsim::testing::test_temp_dir("trace");
  const auto c = fabricsim::testing::run_command("run -q " + std::string(FABRICSIM_SOURCE_DIR) +
                                                 "/examples/chakra_tiny.yaml --out " + (dir / "out").string() +
                                                 " --trace perfetto");
  ASSERT_EQ(c.exit_code, 0) << c.output;
  std::size_t steps = 0;
  const nlohmann::json doc = read_json(dir / "out" / "trace.perfetto.json");
  for (const auto& e : doc.at("traceEvents")) steps += e.at("ph") == "X" && e.at("cat") == "collective";
  EXPECT_GT(steps, 0U);
}

TEST(FabricTrace, CommandLineErrors) {
  const auto dir = fabricsim::testing::test_temp_dir("trace");
  const fs::path config = fabricsim::testing::write_text(dir / "trace.yaml", kConfig);
  const std::string base = "run -q " + config.string() + " --out " + (dir / "out").string();
  const std::vector<std::pair<std::string, std::string>> cases{
      {" --trace waves/", "--trace waves/: unknown trace kind 'waves/'; allowed: perfetto, vcd, rtl"},
      {" --trace-from 1us", "--trace-from 1us: output.trace_from: needs the fabric trace output.trace"},
      {" --trace perfetto --trace-endpoint 9", "output.trace_endpoint: '9' is not an endpoint (0..7)"},
      {" --trace vcd --trace-flow 3", "'3' is not a SRC:DST pair"},
      {" --trace vcd --trace-flow 2:2", "output.trace_flow: '2:2': a flow must go to another endpoint"},
      {" --trace vcd --trace-from 2us --trace-to 1us", "the trace window ends (1us) before it starts (output.trace_from 2us)"},
      {" --trace perfetto --trace-format vcd", "--trace-format vcd: the RTL waveforms' format needs --trace rtl"}};
  for (const auto& [args, error] : cases) {
    const auto r = fabricsim::testing::run_command(base + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(error)) << args;
  }
  EXPECT_FALSE(fs::exists(dir / "out" / "results.json"));
}

}  // namespace
