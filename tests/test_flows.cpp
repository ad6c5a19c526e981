// Per-flow completion time and slowdown (sim/flow_completion.h) against closed forms.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/child_run.h"
#include "sim/config.h"
#include "sim/flow_completion.h"
#include "sim/topology.h"
#include "tests/fabric_run.h"
#include "tests/fabrics.h"

namespace {

using fabricsim::sim::load_config_text;
using nlohmann::json;

using fabricsim::testing::kLeafSpineRadix4;
using fabricsim::testing::run_checked;
using fabricsim::testing::with;

// On the radix-4 leaf-spine (ep0 -> ep7 crosses three switches), two flows that never
// meet: 1000 B from ep0 to ep7, then 1 MiB from ep1 to ep6.
const std::vector<std::string> kTwoFlows = {
    "simulation.duration=200us",
    "traffic.flows=[{src: 0, dst: 7, messages: 1, message_size: 1000B}, "
    "{src: 1, dst: 6, messages: 1, message_size: 1MiB, start: 1us}]"};

json flows_of(const char* yaml, const std::vector<std::string>& overrides) {
  return run_checked(load_config_text(yaml, "flows.yaml", overrides)).at("flows");
}

const json& bucket(const json& flows, const std::string& name) {
  for (const auto& b : flows.at("by_size"))
    if (b.at("bucket") == name) return b;
  throw std::runtime_error("no bucket " + name);
}

// The means are float sums: flows completing at one instant on different NICs reach
// FlowStats in the kernel's order of same-time processes, which a change in wake-ups
// may alter. They are added in one order whatever the order they came in.
TEST(FlowCompletion, SameTimeCompletionsAddUpInOneOrder) {
  using fabricsim::sim::FlowStats;
  using fabricsim::sim::IdealFct;
  using fabricsim::tlm_fabric::FlowRecord;
  using sc_core::sc_time;
  using sc_core::SC_NS;
  const auto config = load_config_text(kLeafSpineRadix4, "flows.yaml", {});
  const auto graph = fabricsim::sim::build_graph(config.topology);
  const IdealFct ideal(graph, std::vector<fabricsim::hw::PhyTiming>(graph.endpoints(), fabricsim::hw::PhyTiming(config.link.phy)),
                       fabricsim::hw::PhyTiming(config.topology.fabric_link.phy), {config.switch_params},
                       config.nic.mtu.in_bytes());
  // FCTs whose float sum depends on the order (0.1 + 0.2 + 0.3 us next to 1 ms).
  std::vector<FlowRecord> flows;
  const double fct_ns[] = {100, 200, 300, 1e6, 7, 1e-3 * 333};
  for (int i = 0; i < 6; ++i)
    flows.push_back({i % 4, 4 + i % 4, 1000u + 97u * i, static_cast<std::uint32_t>(i), sc_time(2e6 - fct_ns[i], SC_NS),
                     sc_time(2e6, SC_NS)});
  flows.push_back({0, 7, 1 << 20, 9, sc_time(1, SC_NS), sc_time(2e6 + 1, SC_NS)});  // the next instant, another bucket
  FlowStats in_order(ideal), reversed(ideal);
  for (const FlowRecord& f : flows) in_order.add(f);
  std::reverse(flows.begin(), flows.end() - 1);
  for (const FlowRecord& f : flows) reversed.add(f);
  EXPECT_EQ(in_order.to_json().dump(), reversed.to_json().dump());
  EXPECT_EQ(in_order.to_json().at("count"), 7);
}

// IdealFct remembers its answers in a direct-mapped memo: more (src, dst, size) triples
// than slots, asked in two orders, must each get the answer a fresh IdealFct gives.
TEST(FlowCompletion, IdealFctMemoNeverMixesAnswersUp) {
  using fabricsim::sim::IdealFct;
  const auto config = load_config_text(kLeafSpineRadix4, "flows.yaml", {});
  const auto graph = fabricsim::sim::build_graph(config.topology);
  const auto make = [&] {
    return IdealFct(graph, std::vector<fabricsim::hw::PhyTiming>(graph.endpoints(), fabricsim::hw::PhyTiming(config.link.phy)),
                    fabricsim::hw::PhyTiming(config.topology.fabric_link.phy), {config.switch_params},
                    config.nic.mtu.in_bytes());
  };
  struct Query {
    int src, dst;
    std::uint64_t bytes;
  };
  std::vector<Query> queries;
  for (int src = 0; src < graph.endpoints(); ++src)
    for (int dst = 0; dst < graph.endpoints(); ++dst)
      for (std::uint64_t bytes = 1; bytes <= 300 * 997; bytes += 997) queries.push_back({src, dst, bytes});
  ASSERT_GT(queries.size(), 3 * 4096u);
  const IdealFct forward = make(), backward = make();
  std::vector<double> first;
  for (const Query& q : queries) first.push_back(forward.seconds(q.src, q.dst, q.bytes));
  for (std::size_t i = queries.size(); i-- > 0;) {
    const Query& q = queries[i];
    ASSERT_EQ(backward.seconds(q.src, q.dst, q.bytes), first[i]) << q.src << " -> " << q.dst << ", " << q.bytes << " B";
    ASSERT_EQ(forward.seconds(q.src, q.dst, q.bytes), first[i]) << q.src << " -> " << q.dst << ", " << q.bytes << " B";
  }
  // Sizes differ in their answers (a memo keyed on the pair alone would fail above).
  EXPECT_LT(first[0], first[1]);
}

TEST(FlowCompletion, SingleFlowAtZeroLoadHasSlowdownOne) {
  for (const std::string transport : {"raw", "rdma"}) {
    const json f = flows_of(kLeafSpineRadix4, with(kTwoFlows, {"traffic.transport=" + transport}));
    ASSERT_EQ(f.at("count"), 2) << transport;
    const json& small = bucket(f, "<=4KiB");
    const json& large = bucket(f, "64KiB-1MiB");
    // Slowdown >= 1 and within the switches' clock-edge rounding (< 1 ns a hop here).
    for (const json* b : {&small, &large}) {
      EXPECT_GE(b->at("slowdown").at("min").get<double>(), 1.0) << transport;
      EXPECT_LT(b->at("slowdown").at("max").get<double>(), 1.01) << transport;
    }
    // The ideal of the 1000 B flow is the three-hop closed form of
    // LeafSpine.ZeroLoadLatencyOverThreeSwitchHopsIsClosedForm without edge rounding:
    // 3 x (header 1.24 + P + F 47.8 + 100 cycles) + tail 21.4 + 47.8 ns.
    const double ideal_ns = 1e3 * small.at("fct_us").at("max").get<double>() / small.at("slowdown").at("max").get<double>();
    EXPECT_NEAR(ideal_ns, 3 * (1.24 + 47.8 + 100) + 21.4 + 47.8, 0.05) << transport;
  }
  // Store-and-forward waits for each tail: a longer ideal, still met at zero load.
  const json saf = flows_of(kLeafSpineRadix4, with(kTwoFlows, {"switch.forwarding=store_and_forward"}));
  EXPECT_GE(saf.at("slowdown").at("min").get<double>(), 1.0);
  EXPECT_LT(saf.at("slowdown").at("max").get<double>(), 1.01);
}

TEST(FlowCompletion, IncastSlowsEveryFlowDownByTheFanIn) {
  // 7 senders write 256 KiB each at once into one NDR port: sharing the port, they all
  // finish after about 7 ideal times, so the slowdown is close to the fan-in 7.
  const char* incast = R"(
simulation: {seed: 3, duration: 500us, warmup: 0us}
link: {framing: infiniband, lanes: 4, lane_rate: 106.25Gb/s, fec: rs544_514, fec_decoder_latency: 20ns, cable_length: 3m}
switch: {ports: 8, buffer: voq, allocator: islip}
topology: {kind: single_switch, endpoints: 8}
traffic: {pattern: incast, incast_target: 0, message_size: 256KiB, messages: 1, arrival: periodic, load: 1.0, transport: rdma}
output: {sample_interval: 0s}
)";
  for (const std::string transport : {"rdma", "raw"}) {
    const json f = flows_of(incast, {"traffic.transport=" + transport});
    ASSERT_EQ(f.at("count"), 7) << transport;
    EXPECT_GT(f.at("slowdown").at("min").get<double>(), 0.85 * 7) << transport;
    EXPECT_LE(f.at("slowdown").at("max").get<double>(), 7.0) << transport;
  }
  // One sender alone: no slowdown.
  const json alone = flows_of(incast, {"traffic.incast_senders=[3]"});
  ASSERT_EQ(alone.at("count"), 1);
  EXPECT_LT(alone.at("slowdown").at("max").get<double>(), 1.01);
}

TEST(FlowCompletion, CollectiveTransfersAreFlows) {
  // Ring AllReduce on 4 ranks: 2(n-1) steps of n WRITEs = 24 flows of 16 KiB / 4 = 4 KiB.
  const char* ring = R"(
simulation: {seed: 1, duration: 10ms, warmup: 0us}
link: {framing: infiniband, lanes: 4, lane_rate: 106.25Gb/s}
switch: {ports: 4}
topology: {kind: single_switch, endpoints: 4}
collective: {sizes: [16KiB]}
output: {sample_interval: 0s}
)";
  const json f = flows_of(ring, {});
  EXPECT_EQ(f.at("count"), 24);
  EXPECT_EQ(bucket(f, "<=4KiB").at("fct_us").at("count"), 24);
  // One transfer per link at a time: each at zero load.
  EXPECT_LT(f.at("slowdown").at("max").get<double>(), 1.01);
}

}  // namespace
