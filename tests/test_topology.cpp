// Topology graphs, minimal-path routes and multi-switch runs.
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hw/routing.h"
#include "sim/child_run.h"
#include "sim/config.h"
#include "sim/config_reader.h"
#include "sim/topology.h"

namespace {

using fabricsim::sim::build_graph;
using fabricsim::sim::load_config_text;
using fabricsim::sim::minimal_routes;
using fabricsim::sim::run_in_child;
using fabricsim::sim::TopologyKind;
using fabricsim::sim::TopologyParams;
using nlohmann::json;
using ::testing::HasSubstr;

TEST(Topology, LeafSpineFromRadixAndOversubscription) {
  TopologyParams t;
  t.kind = TopologyKind::leaf_spine;
  t.leaf_spine.radix = 8;
  t.leaf_spine.oversubscription = 1;
  const auto g = build_graph(t);
  // radix 8, 1:1 -> 4 hosts and 4 uplinks per leaf, 4 spines, 8 leaves (a full spine).
  EXPECT_EQ(g.endpoints(), 32);
  EXPECT_EQ(g.switches.size(), 12u);
  EXPECT_EQ(g.cables.size(), 32u);
  for (const auto& s : g.switches) EXPECT_EQ(s.radix, 8) << s.name;
  t.leaf_spine.oversubscription = 3;  // 6 hosts : 2 uplinks
  EXPECT_EQ(build_graph(t).endpoints(), 48);
}

TEST(Topology, FatTreeK4MatchesAlFares) {
  // Al-Fares et al., SIGCOMM 2008: k pods of k/2 edge + k/2 aggregation switches,
  // (k/2)^2 cores, k^3/4 hosts, every switch of radix k.
  TopologyParams t;
  t.kind = TopologyKind::fat_tree;
  t.fat_tree_k = 4;
  const auto g = build_graph(t);
  EXPECT_EQ(g.endpoints(), 16);
  EXPECT_EQ(g.switches.size(), 20u);
  for (const auto& s : g.switches) EXPECT_EQ(s.radix, 4) << s.name;
  const auto routes = minimal_routes(g);
  // Edge switch 0: local hosts 0,1 direct; others over both aggregation up-links.
  EXPECT_EQ(routes[0][0].size(), 1u);
  EXPECT_EQ(routes[0][5].size(), 2u);
  // An aggregation switch reaches another pod through both of its cores.
  EXPECT_EQ(routes[8][15].size(), 2u);
}

TEST(Topology, LeafSpineRoutesSpreadOverEverySpine) {
  TopologyParams t;
  t.kind = TopologyKind::leaf_spine;
  t.leaf_spine.radix = 8;
  const auto routes = minimal_routes(build_graph(t));
  EXPECT_EQ(routes[0][1].size(), 1u);  // same leaf
  EXPECT_EQ(routes[0][31].size(), 4u); // any spine
  EXPECT_EQ(routes[8][0].size(), 1u);  // spine -> leaf 0
}

TEST(Topology, ExplicitGraphErrors) {
  TopologyParams t;
  t.kind = TopologyKind::explicit_graph;
  t.explicit_graph = {2, 2, {{"ep0", "sw0"}, {"ep1", "sw1"}}};
  EXPECT_THROW(
      {
        try {
          minimal_routes(build_graph(t));
        } catch (const std::invalid_argument& e) {
          EXPECT_THAT(e.what(), HasSubstr("unreachable"));
          throw;
        }
      },
      std::invalid_argument);
  t.explicit_graph = {1, 2, {{"ep0", "sw0"}, {"ep7", "sw0"}}};
  EXPECT_THROW(build_graph(t), std::invalid_argument);
  t.explicit_graph = {1, 2, {{"ep0", "sw0"}}};
  EXPECT_THROW(build_graph(t), std::invalid_argument);  // ep1 has no cable
}

// Expects `f` to throw std::invalid_argument whose message contains `what`.
template <class F>
void expect_invalid(F f, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << "no error, expected: " << what;
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr(what));
  }
}

TEST(Topology, ExplicitSwitchesMustBeRealAsics) {
  TopologyParams t;
  t.kind = TopologyKind::explicit_graph;
  t.explicit_graph = {3, 2, {{"ep0", "sw0"}, {"ep1", "sw1"}, {"sw0", "sw1"}}};
  expect_invalid([&] { build_graph(t); }, "switch sw2 has no cable (a disconnected node)");
  // 257 cables between two switches: more ports than any switch has.
  t.explicit_graph = {2, 2, {{"ep0", "sw0"}, {"ep1", "sw1"}}};
  for (int i = 0; i < 256; ++i) t.explicit_graph.cables.push_back({"sw0", "sw1"});
  expect_invalid([&] { build_graph(t); }, "switch sw0 has 257 cables, more ports than the 256");
}

TEST(Topology, RouteCheckFindsLoopsDeadEndsAndHoles) {
  // Ring sw0 - sw1 - sw2 - sw0, epN on swN (port 0); minimal routes pass.
  TopologyParams t;
  t.kind = TopologyKind::explicit_graph;
  t.explicit_graph = {3, 3, {{"ep0", "sw0"}, {"ep1", "sw1"}, {"ep2", "sw2"}, {"sw0", "sw1"}, {"sw1", "sw2"}, {"sw2", "sw0"}}};
  const auto g = build_graph(t);
  const auto good = minimal_routes(g);
  EXPECT_NO_THROW(fabricsim::sim::check_routes(g, good));
  // Port of swS toward swT.
  auto port = [&](int s, int to) {
    for (const auto& c : g.cables) {
      if (c.a == s && c.b == to) return c.a_port;
      if (c.b == s && c.a == to) return c.b_port;
    }
    return -1;
  };
  auto loop = good;
  loop[0][2] = {port(0, 1)};  // sw0 sends ep2 traffic to sw1 ...
  loop[1][2] = {port(1, 0)};  // ... and sw1 sends it back
  expect_invalid([&] { fabricsim::sim::check_routes(g, loop); }, "route to ep2: routing loop (path sw0 -> sw1 -> sw0)");
  auto dead_end = good;
  dead_end[0][2] = {g.host_port[0]};  // into ep0's NIC
  expect_invalid([&] { fabricsim::sim::check_routes(g, dead_end); },
                 "switch sw0 port " + std::to_string(g.host_port[0]) + " leads to no switch (a dead end)");
  auto hole = good;
  hole[1][0].clear();
  expect_invalid([&] { fabricsim::sim::check_routes(g, hole); }, "switch sw1 has no route (unreachable destination)");
}

TEST(Routing, PoliciesPickAmongCandidates) {
  using fabricsim::hw::RoutePolicy;
  using fabricsim::hw::RoutingAlgorithm;
  const std::vector<int> ports{4, 5, 6, 7};
  std::vector<std::uint64_t> queued(8, 0);
  RoutePolicy ecmp({RoutingAlgorithm::ecmp, 0, true, 1e-6}, 1);
  const int first = ecmp.select({0, 9, 3}, ports, queued, 0);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(ecmp.select({0, 9, 3}, ports, queued, i * 1e-6), first);  // per-flow stable
  RoutePolicy spray({RoutingAlgorithm::spray, 0, true, 1e-6}, 1);
  std::set<int> seen;
  for (int i = 0; i < 4; ++i) seen.insert(spray.select({0, 9, 3}, ports, queued, 0));
  EXPECT_EQ(seen.size(), 4u);
  RoutePolicy adaptive({RoutingAlgorithm::adaptive, 0, true, 1e-6}, 1);
  queued = {0, 0, 0, 0, 900, 800, 100, 700};
  EXPECT_EQ(adaptive.select({0, 9, 3}, ports, queued, 0), 6);
  RoutePolicy dmodk({RoutingAlgorithm::d_mod_k, 0, true, 1e-6}, 1);
  EXPECT_EQ(dmodk.select({0, 9, 3}, ports, queued, 0), 5);  // 9 mod 4 = 1
  // Flowlet: a new path only after an idle gap longer than the timeout.
  RoutePolicy flowlet({RoutingAlgorithm::flowlet, 0, true, 1e-6}, 1);
  const int f0 = flowlet.select({0, 9, 3}, ports, queued, 0);
  EXPECT_EQ(flowlet.select({0, 9, 3}, ports, queued, 0.5e-6), f0);
  std::set<int> after;
  for (int i = 1; i <= 20; ++i) after.insert(flowlet.select({0, 9, 3}, ports, queued, i * 10e-6));
  EXPECT_GT(after.size(), 1u);
}

// A 1 GHz core and a 100-cycle pipeline (60 to the allocator, 40 grant to wire),
// RoCEv2 400GbE with 3 m cables, as in test_fabric.cpp.
const char* kLeafSpine = R"(
simulation: {seed: 3, duration: 20us, warmup: 0us}
link: {framing: roce_v2, lanes: 8, lane_rate: 53.125Gb/s, fec: rs544_514, fec_decoder_latency: 20ns, cable_length: 3m}
switch:
  core_clock: 1GHz
  pipeline: {parse: 10, route_lookup: 30, vl_mapping: 5, buffer_admission: 15,
             switch_allocation: 10, crossbar: 20, egress_scheduling: 10}
topology: {kind: leaf_spine, radix: 4, oversubscription: 1}
traffic:
  pattern: explicit
  arrival: periodic
  flows: [{src: 0, dst: 7, messages: 1, message_size: 1000B}]
output: {sample_interval: 0s}
)";

json run(const std::vector<std::string>& overrides, const char* yaml = kLeafSpine) {
  const json r = run_in_child(load_config_text(yaml, "test.yaml", overrides));
  EXPECT_FALSE(r.contains("error")) << r.dump();
  const json& p = r.at("packets");
  EXPECT_EQ(p.at("injected").get<long>(),
            p.at("delivered").get<long>() + p.at("dropped").get<long>() + p.at("in_flight").get<long>());
  return r;
}

TEST(LeafSpine, ZeroLoadLatencyOverThreeSwitchHopsIsClosedForm) {
  // Per hop: header ready (1.24 ns) + P + F (47.8 ns) at the next switch, up to
  // the next 1 ns edge, plus 100 cycles; the last hop delivers the tail (21.4 ns).
  double start = 0;
  for (int hop = 0; hop < 3; ++hop) start = std::ceil(start + 1.24 + 47.8 - 1e-9) + 100;
  const double expected = start + 21.4 + 47.8;
  const json r = run({});
  EXPECT_EQ(r.at("topology").at("switches"), 6);
  EXPECT_NEAR(r.at("endpoints").at(7).at("network_latency_ns").at("max").get<double>(), expected, 0.002);
}

// Few large flows between leaves: ECMP hashes some onto the same uplink.
const std::vector<std::string> kFewLargeFlows = {
    "topology.radix=8", "traffic.pattern=permutation", "traffic.load=1.0", "traffic.message_size=1MiB",
    "traffic.flows=null", "simulation.duration=60us", "simulation.warmup=10us", "switch.buffer=voq",
    "switch.allocator=islip"};

std::vector<std::string> plus(std::vector<std::string> a, const std::string& b) {
  a.push_back(b);
  return a;
}

TEST(LeafSpine, EcmpCollisionsAreRecoveredBySprayingAndAdaptiveRouting) {
  const json ecmp = run(plus(kFewLargeFlows, "routing.algorithm=ecmp"));
  const json spray = run(plus(kFewLargeFlows, "routing.algorithm=spray"));
  const json adaptive = run(plus(kFewLargeFlows, "routing.algorithm=adaptive"));
  const auto accepted = [](const json& r) { return r.at("throughput").at("accepted_load").get<double>(); };
  const auto imbalance = [](const json& r) { return r.at("tiers").at("leaf-spine").at("imbalance").get<double>(); };
  EXPECT_LT(accepted(ecmp), 0.85);  // hash collisions leave bandwidth unused
  EXPECT_GT(accepted(spray), accepted(ecmp) + 0.05);
  EXPECT_GT(accepted(adaptive), accepted(ecmp) + 0.05);
  EXPECT_LT(imbalance(spray), imbalance(ecmp));
  // Spraying reorders packets within a flow; ECMP keeps each flow on one path.
  std::uint64_t ooo_ecmp = 0, ooo_spray = 0;
  for (const auto& e : ecmp.at("endpoints")) ooo_ecmp += e.at("rx_out_of_order").get<std::uint64_t>();
  for (const auto& e : spray.at("endpoints")) ooo_spray += e.at("rx_out_of_order").get<std::uint64_t>();
  EXPECT_EQ(ooo_ecmp, 0u);
  EXPECT_GT(ooo_spray, 0u);
}

TEST(FatTree, UniformTrafficIsDeliveredAtLowLoad) {
  const json r = run({"topology={kind: fat_tree, k: 4}", "traffic.pattern=uniform", "traffic.load=0.3",
                      "traffic.message_size=4KiB", "traffic.flows=null", "simulation.duration=40us",
                      "simulation.warmup=5us", "traffic.arrival=poisson"});
  EXPECT_EQ(r.at("topology").at("switches"), 20);
  EXPECT_NEAR(r.at("throughput").at("accepted_load").get<double>(), 0.3, 0.03);
}

TEST(TopologyConfig, Errors) {
  auto error_of = [](const std::string& yaml) {
    try {
      load_config_text(yaml, "bad.yaml");
    } catch (const fabricsim::sim::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(error_of("topology: {kind: leaf_spine, radix: 8}\nswitch: {ports: 8}\n"),
              HasSubstr("bad.yaml:2:17: switch.ports: is set by the topology"));
  EXPECT_THAT(error_of("topology: {kind: fat_tree, k: 5}\n"), HasSubstr("topology.k: must be even"));
  EXPECT_THAT(error_of("topology: {kind: explicit, switches: 1, endpoints: 2, cables: [[ep0, sw0], [ep1, sw9]]}\n"),
              HasSubstr("unknown node 'sw9'"));
  EXPECT_THAT(error_of("topology: {kind: explicit, switches: 2, endpoints: 2, cables: [[ep0, sw0], [ep1, sw1]]}\n"),
              HasSubstr("unreachable"));
  EXPECT_THAT(error_of("topology: {kind: leaf_spine, radix: 8, endpoints: 4}\n"),
              HasSubstr("topology.endpoints: unknown key"));
  EXPECT_THAT(error_of("routing: {algorithm: valiant}\n"), HasSubstr("allowed: d_mod_k, ecmp, flowlet, spray, adaptive"));
}

}  // namespace
