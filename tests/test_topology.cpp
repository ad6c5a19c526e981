// Topology graphs, minimal-path routes and multi-switch runs.
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hw/routing.h"
#include "sim/child_run.h"
#include "sim/config.h"
#include "sim/config_reader.h"
#include "sim/fabric.h"
#include "sim/topology.h"
#include "tests/config_error.h"
#include "tests/fabric_run.h"
#include "tests/fabrics.h"

namespace {

using fabricsim::sim::build_graph;
using fabricsim::sim::load_config_text;
using fabricsim::sim::minimal_routes;
using fabricsim::sim::TopologyKind;
using fabricsim::sim::TopologyParams;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

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
  EXPECT_EQ(routes.ports(0, 0).size(), 1u);
  EXPECT_EQ(routes.ports(0, 5).size(), 2u);
  // An aggregation switch reaches another pod through both of its cores.
  EXPECT_EQ(routes.ports(8, 15).size(), 2u);
}

TEST(Topology, KaryNtreeK4N3MatchesBookSimFattree) {
  // Petrini and Vanneschi's k-ary n-tree, BookSim2 `fattree` k=4 n=3: k^n = 64
  // endpoints, n k^(n-1) = 48 switches of radix 2k = 8, the top level using only
  // its k down ports.
  TopologyParams t;
  t.kind = TopologyKind::kary_ntree;
  t.kary_ntree = {4, 3};
  const auto g = build_graph(t);
  ASSERT_EQ(g.endpoints(), 64);
  ASSERT_EQ(t.endpoint_count(), 64);
  ASSERT_EQ(g.switches.size(), 48u);
  std::vector<int> used(g.switches.size(), 0);
  for (int e = 0; e < g.endpoints(); ++e) ++used[g.host_switch[e]];
  for (const auto& c : g.cables) {
    ++used[c.a];
    ++used[c.b];
    EXPECT_EQ(g.switches[c.b].level, g.switches[c.a].level + 1);
  }
  for (std::size_t s = 0; s < g.switches.size(); ++s) {
    EXPECT_EQ(g.switches[s].radix, 8) << g.switches[s].name;
    EXPECT_EQ(used[s], g.switches[s].level == 2 ? 4 : 8) << g.switches[s].name;
  }
  EXPECT_EQ(g.cables.size(), 2u * 16 * 4);
  // Follow every route: every pair reachable, through 2l+1 switches where l is the
  // nearest common ancestor level (1, 3 or 5 = 2n-1); up over any of the k up
  // ports while below it, then a single deterministic down port.
  const auto routes = minimal_routes(g);
  std::vector<std::vector<std::pair<int, int>>> peer(g.switches.size(), std::vector<std::pair<int, int>>(8, {-1, -1}));
  for (const auto& c : g.cables) {
    peer[c.a][c.a_port] = {c.b, c.b_port};
    peer[c.b][c.b_port] = {c.a, c.a_port};
  }
  std::set<int> hop_counts;
  for (int src = 0; src < 64; ++src)
    for (int dst = 0; dst < 64; ++dst) {
      int nca = 0;
      while ((src >> (2 * (nca + 1))) != (dst >> (2 * (nca + 1)))) ++nca;  // base-4 digits above the host digit
      int sw = g.host_switch[src], switches = 1;
      bool climbing = true;
      for (; sw != g.host_switch[dst]; ++switches) {
        const auto& ports = routes.ports(sw, dst);
        ASSERT_FALSE(ports.empty()) << src << "->" << dst;
        const bool up = climbing && g.switches[sw].level < nca;
        climbing = up;
        EXPECT_EQ(ports.size(), up ? 4u : 1u) << g.switches[sw].name << " -> ep" << dst;
        for (int p : ports) EXPECT_EQ(p >= 4, up);
        sw = peer[sw][ports.front()].first;
        ASSERT_GE(sw, 0);
        ASSERT_LE(switches, 5);
      }
      EXPECT_EQ(routes.ports(sw, dst), std::vector<int>{g.host_port[dst]});
      EXPECT_EQ(switches, 2 * nca + 1) << src << "->" << dst;
      hop_counts.insert(switches);
    }
  EXPECT_EQ(hop_counts, (std::set<int>{1, 3, 5}));
  t.kary_ntree = {2, 1};  // one switch, two hosts
  EXPECT_EQ(build_graph(t).switches.size(), 1u);
}

TEST(Topology, DModKOnAKaryNtreeGivesEveryDestinationItsOwnRoot) {
  // Zahavi et al.: on a k-ary n-tree, D-mod-k reads one base-k digit of the
  // destination per level, so all traffic to a destination climbs to one top switch
  // and the k^n destinations are spread evenly, k per top switch (4-ary 3-tree: 64
  // destinations over 16 top switches). A level-blind dst mod k would use only 4.
  TopologyParams t;
  t.kind = TopologyKind::kary_ntree;
  t.kary_ntree = {4, 3};
  const auto g = build_graph(t);
  const auto routes = minimal_routes(g);
  const auto divisor = fabricsim::sim::d_mod_k_divisors(g);
  std::vector<std::vector<int>> peer(g.switches.size(), std::vector<int>(8, -1));
  for (const auto& c : g.cables) {
    peer[c.a][c.a_port] = c.b;
    peer[c.b][c.b_port] = c.a;
  }
  for (std::size_t s = 0; s < g.switches.size(); ++s)
    EXPECT_EQ(divisor[s], g.switches[s].level == 0 ? 1u : g.switches[s].level == 1 ? 4u : 16u) << g.switches[s].name;
  std::map<int, std::set<int>> destinations_of_root;
  for (int dst = 0; dst < 64; ++dst) {
    std::set<int> roots;
    for (int src = 0; src < 64; ++src) {
      int sw = g.host_switch[src];
      for (int hops = 0; sw != g.host_switch[dst] && hops < 5; ++hops) {
        fabricsim::hw::RoutingParams rp;
        rp.algorithm = fabricsim::hw::RoutingAlgorithm::d_mod_k;
        rp.d_mod_k_divisor = divisor[sw];
        fabricsim::hw::RoutePolicy policy(rp, 1);
        if (g.switches[sw].level == 2) roots.insert(sw);
        sw = peer[sw][policy.select({src, dst, 0}, routes.ports(sw, dst), std::vector<std::uint64_t>(8, 0), 0)];
      }
      ASSERT_EQ(sw, g.host_switch[dst]) << src << "->" << dst;
    }
    ASSERT_EQ(roots.size(), 1u) << "ep" << dst;
    destinations_of_root[*roots.begin()].insert(dst);
  }
  EXPECT_EQ(destinations_of_root.size(), 16u);
  for (const auto& [root, dsts] : destinations_of_root) EXPECT_EQ(dsts.size(), 4u) << g.switches[root].name;
}

TEST(Topology, LeafSpineRoutesSpreadOverEverySpine) {
  TopologyParams t;
  t.kind = TopologyKind::leaf_spine;
  t.leaf_spine.radix = 8;
  const auto routes = minimal_routes(build_graph(t));
  EXPECT_EQ(routes.ports(0, 1).size(), 1u);  // same leaf
  EXPECT_EQ(routes.ports(0, 31).size(), 4u); // any spine
  EXPECT_EQ(routes.ports(8, 0).size(), 1u);  // spine -> leaf 0
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
  loop.set(0, 2, {port(0, 1)});  // sw0 sends ep2 traffic to sw1 ...
  loop.set(1, 2, {port(1, 0)});  // ... and sw1 sends it back
  expect_invalid([&] { fabricsim::sim::check_routes(g, loop); }, "route to ep2: routing loop (path sw0 -> sw1 -> sw0)");
  auto dead_end = good;
  dead_end.set(0, 2, {g.host_port[0]});  // into ep0's NIC
  expect_invalid([&] { fabricsim::sim::check_routes(g, dead_end); },
                 "switch sw0 port " + std::to_string(g.host_port[0]) + " leads to no switch (a dead end)");
  auto hole = good;
  hole.set(1, 0, {});
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

TEST(Routing, RandomSprayIsUniformIndependentAndSeeded) {
  using fabricsim::hw::RoutePolicy;
  using fabricsim::hw::RoutingAlgorithm;
  const std::vector<int> ports{4, 5, 6, 7};
  const std::vector<std::uint64_t> queued(8, 0);
  RoutePolicy a({RoutingAlgorithm::random_spray, 0, true, 1e-6}, 1);
  constexpr int kDraws = 40000;
  std::map<int, int> count;
  int repeats = 0, last = -1;
  std::vector<int> first;
  for (int i = 0; i < kDraws; ++i) {
    const int p = a.select({0, 9, 3}, ports, queued, 0);
    ++count[p];
    repeats += p == last;
    last = p;
    if (i < 64) first.push_back(p);
  }
  // Uniform: each port 1/4 of the draws, within 5 binomial standard deviations (sigma =
  // sqrt(n p (1-p)) = 86.6); independent: the same port twice in a row 1/4 of the time
  // (a round robin never repeats).
  ASSERT_EQ(count.size(), 4u);
  for (const auto& [port, n] : count) EXPECT_NEAR(n, kDraws / 4, 5 * 86.6) << "port " << port;
  EXPECT_NEAR(repeats, kDraws / 4, 5 * 86.6);
  // Same switch seed, same draws; another switch, other draws.
  RoutePolicy same({RoutingAlgorithm::random_spray, 0, true, 1e-6}, 1), other({RoutingAlgorithm::random_spray, 0, true, 1e-6}, 2);
  std::vector<int> again, elsewhere;
  for (int i = 0; i < 64; ++i) {
    again.push_back(same.select({0, 9, 3}, ports, queued, 0));
    elsewhere.push_back(other.select({0, 9, 3}, ports, queued, 0));
  }
  EXPECT_EQ(again, first);
  EXPECT_NE(elsewhere, first);
}

using fabricsim::testing::kLeafSpineRadix4;
using fabricsim::testing::with;
using fabricsim::testing::yaml_error_of;
const char* const kLeafSpine = kLeafSpineRadix4;

json run(const std::vector<std::string>& overrides, const char* yaml = kLeafSpine) {
  return fabricsim::testing::run_checked(load_config_text(yaml, "test.yaml", overrides));
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

TEST(LeafSpine, TierAndSwitchParametersApplyWhereTheyAreSet) {
  // The closed form above with 100 more allocation cycles at the spine (1 GHz: 100 ns on
  // the one spine hop of the path); a switch's own keys win over its tier's.
  double start = 0;
  for (int hop = 0; hop < 3; ++hop) start = std::ceil(start + 1.24 + 47.8 - 1e-9) + 100 + (hop == 1 ? 100 : 0);
  const auto latency = [](const json& r) {
    return r.at("endpoints").at(7).at("network_latency_ns").at("max").get<double>();
  };
  const std::string slow_spines = "switch.tiers={spine: {pipeline: {switch_allocation: 110}}}";
  EXPECT_NEAR(latency(run({slow_spines})), start + 21.4 + 47.8, 0.002);
  EXPECT_NEAR(latency(run({slow_spines, "switch.instances={spine0: {pipeline: {switch_allocation: 10}}, "
                                        "spine1: {pipeline: {switch_allocation: 10}}}"})),
              latency(run({})), 1e-9);
  const auto c = load_config_text(kLeafSpine, "test.yaml", {slow_spines, "switch.instances={leaf3: {buffer: voq}}"});
  EXPECT_EQ(c.switch_params_for("spine1", 1).pipeline.switch_allocation, 110);
  EXPECT_EQ(c.switch_params_for("leaf0", 0).pipeline.switch_allocation, 10);
  EXPECT_EQ(c.switch_params_for("leaf3", 0).buffer, fabricsim::tlm_fabric::BufferOrganisation::voq);
  EXPECT_EQ(c.switch_overrides["switch.tiers.spine"]["keys"]["pipeline.switch_allocation"]["value"], "110");
  EXPECT_EQ(c.switch_overrides["switch.instances.leaf3"]["switches"], json::array({"leaf3"}));
}

TEST(LeafSpine, TierAndSwitchOverrideErrorsNameTheKey) {
  const auto error = [](const std::string& o) { return yaml_error_of(kLeafSpine, {o}); };
  EXPECT_THAT(error("switch.tiers={spine: {vls: 2}}"),
              HasSubstr("switch.tiers.spine.vls: is fabric-wide: set it in the switch section"));
  EXPECT_THAT(error("switch.tiers={spin: {buffer: voq}}"), HasSubstr("switch.tiers.spin: unknown key"));
  EXPECT_THAT(error("switch.tiers={core: {buffer: voq}}"),
              HasSubstr("switch.tiers.core: the leaf_spine topology has no core switches"));
  EXPECT_THAT(error("switch.tiers={spine: {bufer: voq}}"), HasSubstr("switch.tiers.spine.bufer: unknown key"));
  EXPECT_THAT(error("switch.tiers={spine: {input_buffer: 100B}}"),
              HasSubstr("switch.tiers.spine.input_buffer: must hold one"));
  EXPECT_THAT(error("switch.tiers={spine: voq}"), HasSubstr("switch.tiers.spine: expected a mapping of switch keys"));
  EXPECT_THAT(error("switch.instances={leaf0: {port_forwarding: {4: cut_through}}}"),
              HasSubstr("switch.instances.leaf0.port_forwarding.4: unknown port 4: switch leaf0 has ports 0..3"));
  EXPECT_THAT(error("switch.instances={spine9: {buffer: voq}}"),
              HasSubstr("switch.instances.spine9: no switch of that name in the leaf_spine topology"));
  EXPECT_THAT(yaml_error_of(kLeafSpine, {"topology={kind: single_switch}", "switch.tiers={leaf: {buffer: voq}}"}),
              HasSubstr("switch.tiers: the single_switch topology has one switch or none"));
}

TEST(LeafSpine, TierAndSwitchParametersAreListedPerSwitch) {
  const std::vector<std::string> overrides = {"switch.tiers={spine: {pipeline: {switch_allocation: 110}}}",
                                              "switch.instances={leaf3: {buffer: voq}, spine1: {alpha: 2}}"};
  const auto c = load_config_text(kLeafSpine, "test.yaml", overrides);
  const json sw = fabricsim::sim::overridden_switches(c);
  EXPECT_EQ(sw.size(), 3u);  // spine0 (its tier), spine1 (its own, over its tier), leaf3
  EXPECT_EQ(sw["spine0"]["override"], "switch.tiers.spine");
  EXPECT_EQ(sw["spine0"]["keys"], json::parse(R"({"pipeline.switch_allocation": {"value": "110", "switch": "10"}})"));
  EXPECT_EQ(sw["spine1"]["override"], "switch.instances.spine1");
  EXPECT_EQ(sw["spine1"]["keys"]["pipeline.switch_allocation"]["value"], "110");
  EXPECT_EQ(sw["spine1"]["keys"]["alpha"], json::parse(R"({"value": "2", "switch": null})"));
  EXPECT_EQ(sw["leaf3"]["keys"], json::parse(R"({"buffer": {"value": "voq", "switch": null}})"));
  // fabricsim routes: under each overridden switch, its keys that differ; none under the others.
  const std::string tables = fabricsim::sim::route_tables(c);
  EXPECT_THAT(tables, HasSubstr("spine1 (radix 4)\n  switch.instances.spine1: alpha = 2 (switch section: default)\n"
                                "  switch.instances.spine1: pipeline.switch_allocation = 110 (switch section: 10)\n  ep0 ->"));
  EXPECT_THAT(tables, HasSubstr("leaf3 (radix 4)\n  switch.instances.leaf3: buffer = voq (switch section: default)\n  ep0 ->"));
  EXPECT_THAT(tables, HasSubstr("leaf0 (radix 4)\n  ep0 ->"));
  // results.json lists the same.
  EXPECT_EQ(run(overrides).at("switch_parameters"), sw);
  EXPECT_EQ(run({}).at("switch_parameters"), json::object());
}

TEST(LeafSpine, PortForwardingMergesPortByPortInOverrides) {
  using fabricsim::tlm_fabric::ForwardingMode;
  const auto c = load_config_text(kLeafSpine, "test.yaml",
                                  {"switch.port_forwarding={0: store_and_forward}",
                                   "switch.tiers={spine: {port_forwarding: {1: fast_to_slow}}}"});
  const auto& spine = c.switch_params_for("spine0", 1);
  EXPECT_EQ(spine.forwarding_of(0), ForwardingMode::store_and_forward);
  EXPECT_EQ(spine.forwarding_of(1), ForwardingMode::fast_to_slow);
  EXPECT_EQ(spine.forwarding_of(2), ForwardingMode::cut_through);
  EXPECT_EQ(c.switch_params_for("leaf0", 0).forwarding_of(1), ForwardingMode::cut_through);
}

TEST(LeafSpine, OverridesGetTheFlowControlChecksOfTheSwitchSection) {
  // The 3 m 400G cables need 18100 B of PFC headroom: the switch section's default
  // has it, the spines' 9000 B does not. Only what an override changes warns under its key.
  const std::vector<std::string> pfc = {"link.flow_control=pfc"};
  auto warnings = [&](const std::vector<std::string>& more) {
    return json(load_config_text(kLeafSpine, "test.yaml", with(pfc, more)).warnings).dump();
  };
  EXPECT_EQ(warnings({"switch.instances={leaf0: {buffer: voq}}"}), "[]");
  const std::string short_spines = warnings({"switch.tiers={spine: {pfc: {headroom: 9000B}}}"});
  EXPECT_THAT(short_spines, HasSubstr("switch.tiers.spine.pfc.headroom: 9000B is below the "));
  EXPECT_THAT(short_spines, Not(HasSubstr("switch.pfc.headroom")));
  EXPECT_THAT(warnings({"switch.instances={spine0: {wred: {enabled: true}}}"}),
              HasSubstr("switch.instances.spine0.wred.enabled: WRED drops only on lossy links"));
}

// Few large flows between leaves: ECMP hashes some onto the same uplink.
const std::vector<std::string> kFewLargeFlows = {
    "topology.radix=8", "traffic.pattern=permutation", "traffic.load=1.0", "traffic.message_size=1MiB",
    "traffic.flows=null", "simulation.duration=60us", "simulation.warmup=10us", "switch.buffer=voq",
    "switch.allocator=islip"};

TEST(LeafSpine, EcmpCollisionsAreRecoveredBySprayingAndAdaptiveRouting) {
  const json ecmp = run(with(kFewLargeFlows, {"routing.algorithm=ecmp"}));
  const json spray = run(with(kFewLargeFlows, {"routing.algorithm=spray"}));
  const json adaptive = run(with(kFewLargeFlows, {"routing.algorithm=adaptive"}));
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

TEST(LeafSpine, RandomSprayingQueuesMoreThanRoundRobinSpraying) {
  // Uniform traffic at load 0.8 over 8 uplinks per leaf: a round robin splits each leaf's
  // packets exactly evenly over its uplinks; a random split lets short-term imbalances
  // build queues (Dixit et al., INFOCOM 2013), so the mean latency rises (about 12% here,
  // checked at 5%), while both carry the offered load.
  const std::vector<std::string> uniform = {
      "topology.radix=8", "traffic.pattern=uniform", "traffic.arrival=poisson", "traffic.load=0.8",
      "traffic.message_size=4KiB", "traffic.flows=null", "simulation.duration=20us", "simulation.warmup=5us",
      "switch.buffer=voq", "switch.allocator=islip"};
  const json rr = run(with(uniform, {"routing.algorithm=spray"}));
  const json random = run(with(uniform, {"routing.algorithm=random_spray"}));
  const auto mean = [](const json& r) { return r.at("latency").at("network_latency_ns").at("mean").get<double>(); };
  const auto accepted = [](const json& r) { return r.at("throughput").at("accepted_load").get<double>(); };
  EXPECT_NEAR(accepted(rr), 0.8, 0.03);
  EXPECT_NEAR(accepted(random), 0.8, 0.03);
  EXPECT_GT(mean(random), 1.05 * mean(rr));
}

TEST(FatTree, UniformTrafficIsDeliveredAtLowLoad) {
  const json r = run({"topology={kind: fat_tree, k: 4}", "traffic.pattern=uniform", "traffic.load=0.3",
                      "traffic.message_size=4KiB", "traffic.flows=null", "simulation.duration=40us",
                      "simulation.warmup=5us", "traffic.arrival=poisson"});
  EXPECT_EQ(r.at("topology").at("switches"), 20);
  EXPECT_NEAR(r.at("throughput").at("accepted_load").get<double>(), 0.3, 0.03);
}


TEST(TopologyConfig, Errors) {
  EXPECT_THAT(yaml_error_of("topology: {kind: leaf_spine, radix: 8}\nswitch: {ports: 8}\n"),
              HasSubstr("bad.yaml:2:17: switch.ports: is set by the topology"));
  EXPECT_THAT(yaml_error_of("topology: {kind: fat_tree, k: 5}\n"), HasSubstr("topology.k: must be even"));
  EXPECT_THAT(yaml_error_of("topology: {kind: kary_ntree, k: 16, n: 5}\n"), HasSubstr("topology.n: k^n must be at most 65536"));
  EXPECT_THAT(yaml_error_of("topology: {kind: explicit, switches: 1, endpoints: 2, cables: [[ep0, sw0], [ep1, sw9]]}\n"),
              HasSubstr("unknown node 'sw9'"));
  EXPECT_THAT(yaml_error_of("topology: {kind: explicit, switches: 2, endpoints: 2, cables: [[ep0, sw0], [ep1, sw1]]}\n"),
              HasSubstr("unreachable"));
  EXPECT_THAT(yaml_error_of("topology: {kind: leaf_spine, radix: 8, endpoints: 4}\n"),
              HasSubstr("topology.endpoints: unknown key"));
  EXPECT_THAT(yaml_error_of("routing: {algorithm: valiant}\n"), HasSubstr("allowed: d_mod_k, ecmp, flowlet, spray, random_spray, adaptive"));
}

// Rail-optimised cluster: 4 servers x 8 GPUs, rail leaves of radix 8 at 1:1 (4 servers
// and 4 spine uplinks per rail leaf, one rail leaf per rail), 4 spines of radix 8.
fabricsim::sim::TopologyGraph rail_graph(const fabricsim::sim::RailParams& rail) {
  TopologyParams t;
  t.kind = TopologyKind::rail_optimized;
  t.rail = rail;
  return build_graph(t);
}

TEST(RailOptimized, ShapeAndRoutes) {
  const auto g = rail_graph({4, 8, 8, 1});
  ASSERT_EQ(g.endpoints(), 32);
  ASSERT_EQ(g.switches.size(), 12u);
  EXPECT_EQ(g.cables.size(), 32u);  // 8 rail leaves x 4 spines
  for (const auto& s : g.switches) EXPECT_EQ(s.radix, 8) << s.name;
  EXPECT_EQ(g.switches[3].name, "rail3_leaf0");
  EXPECT_EQ(g.switches[8].name, "spine0");
  for (int e = 0; e < 32; ++e) {
    EXPECT_EQ(g.host_switch[e], e % 8) << "NIC g of every server sits on rail leaf g";
    EXPECT_EQ(g.host_port[e], e / 8) << "server s on port s of its rail leaf";
  }
  const auto routes = minimal_routes(g);
  // Same rail (GPU 2 of server 0 -> GPU 2 of server 3): one switch hop, out of a host port.
  EXPECT_EQ(routes.ports(2, 3 * 8 + 2), std::vector<int>{3});
  // Cross rail (GPU 2 -> GPU 5 of the same server): up to any of the 4 spines, which
  // each have exactly one port down to rail leaf 5.
  EXPECT_EQ(routes.ports(2, 5), (std::vector<int>{4, 5, 6, 7}));
  for (int s = 8; s < 12; ++s) EXPECT_EQ(routes.ports(s, 5), std::vector<int>{5}) << g.switches[s].name;
}

TEST(RailOptimized, RailGroupsOfSeveralLeaves) {
  // 8 servers on rail leaves of 4 servers: 2 leaves per rail, 4 rails -> 8 leaves of
  // radix 8 (4 hosts + 4 uplinks), 4 spines of radix 8.
  const auto g = rail_graph({8, 4, 8, 1});
  ASSERT_EQ(g.endpoints(), 32);
  ASSERT_EQ(g.switches.size(), 12u);
  EXPECT_EQ(g.switches[1].name, "rail0_leaf1");
  EXPECT_EQ(g.host_switch[5 * 4 + 0], 1);  // server 5, GPU 0: rail 0, second leaf
  EXPECT_EQ(g.host_switch[5 * 4 + 3], 7);  // server 5, GPU 3: rail 3, second leaf
  const auto routes = minimal_routes(g);
  EXPECT_EQ(routes.ports(0, 1 * 4).size(), 1u);  // server 0 -> 1 on rail 0: same leaf
  EXPECT_EQ(routes.ports(0, 5 * 4).size(), 4u);  // server 0 -> 5 on rail 0: other leaf of the rail, via a spine
  // Oversubscribed 3:1 rail leaves of radix 8: 6 servers and 2 spines per leaf.
  const auto o = rail_graph({12, 2, 8, 3});
  EXPECT_EQ(o.endpoints(), 24);
  EXPECT_EQ(o.switches.size(), 4u + 2u);
}

TEST(RailOptimized, ConfigKeysAndErrors) {
  const auto c = load_config_text("topology: {kind: rail_optimized, servers: 2, gpus_per_server: 4, radix: 4}\n", "r.yaml");
  EXPECT_EQ(c.topology.endpoint_count(), 8);
  EXPECT_THAT(yaml_error_of("topology: {kind: rail_optimized, radix: 2, oversubscription: 16}\n"),
              HasSubstr("topology.radix: rail_optimized radix 2 with oversubscription 16"));
  EXPECT_THAT(yaml_error_of("topology: {kind: rail_optimized, servers: 4096, gpus_per_server: 64}\n"),
              HasSubstr("more than a spine's 256 ports"));
  EXPECT_THAT(yaml_error_of("topology: {kind: rail_optimized, k: 4}\n"), HasSubstr("topology.k: unknown key"));
  EXPECT_THAT(yaml_error_of("topology: {kind: leaf_spine}\ncollective: {placement: rail}\n"),
              HasSubstr("bad.yaml:2:25: collective.placement: rail placement orders ranks rail by rail and needs "
                        "topology.kind rail_optimized, got leaf_spine"));
  // fabricsim routes: one block per rail leaf and spine.
  const std::string tables = fabricsim::sim::route_tables(c);
  EXPECT_THAT(tables, HasSubstr("# topology rail_optimized: 6 switches, 8 endpoints"));
  EXPECT_THAT(tables, HasSubstr("rail3_leaf0 (radix 4)\n  ep0 -> p2 p3\n"));
  EXPECT_THAT(tables, HasSubstr("spine1 (radix 4)\n  ep0 -> p0\n  ep1 -> p1\n"));
}

TEST(RailOptimized, SameRailTakesOneSwitchHopCrossRailThree) {
  // 2 servers x 4 GPUs, radix-4 rail leaves (2 servers + 2 spines each). ep0 -> ep4 is
  // GPU 0 of server 0 -> GPU 0 of server 1 (rail 0); ep0 -> ep1 crosses to rail 1.
  const auto latency = [](int dst) {
    const json r = run({"topology={kind: rail_optimized, servers: 2, gpus_per_server: 4, radix: 4}",
                        "traffic.flows=[{src: 0, dst: " + std::to_string(dst) + ", messages: 1, message_size: 1000B}]"});
    return r.at("endpoints").at(dst).at("network_latency_ns").at("max").get<double>();
  };
  // The closed form of LeafSpine.ZeroLoadLatencyOverThreeSwitchHopsIsClosedForm per hop.
  const auto expected = [](int hops) {
    double start = 0;
    for (int hop = 0; hop < hops; ++hop) start = std::ceil(start + 1.24 + 47.8 - 1e-9) + 100;
    return start + 21.4 + 47.8;
  };
  EXPECT_NEAR(latency(4), expected(1), 0.002);
  EXPECT_NEAR(latency(1), expected(3), 0.002);
}

TEST(RailOptimized, RailPlacementKeepsTheRingOnTheRails) {
  // Ring AllReduce over 4 servers x 4 GPUs (radix-8 rail leaves, 1:1). Packed ranks
  // (server by server) make every ring hop cross rails, so all 16 cross a spine; rail
  // placement orders the ring rail by rail: only the 4 hops from one rail to the next do.
  const char* yaml = R"(
simulation: {seed: 1, duration: 20ms, warmup: 0us}
link: {framing: infiniband, lanes: 4, lane_rate: 106.25Gb/s, fec_decoder_latency: 20ns, cable_length: 3m}
switch: {buffer: voq, allocator: islip}
topology: {kind: rail_optimized, servers: 4, gpus_per_server: 4, radix: 8}
collective: {sizes: [1MiB], placement: packed}
output: {sample_interval: 0s}
)";
  const auto spine_packets = [](const json& r) {
    std::uint64_t n = 0;
    for (const auto& p : r.at("ports"))
      if (p.at("tier") == "leaf-spine") n += p.at("egress_packets").get<std::uint64_t>();
    return n;
  };
  const json packed = run({}, yaml);
  const json rail = run({"collective.placement=rail"}, yaml);
  ASSERT_TRUE(packed.at("collective").at("finished").get<bool>());
  ASSERT_TRUE(rail.at("collective").at("finished").get<bool>());
  EXPECT_EQ(rail.at("collective").at("ranks"), json({0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15}));
  // Each cross-rail hop crosses two leaf-spine links (up and down): packets in the same ratio 4 : 16.
  EXPECT_NEAR(static_cast<double>(spine_packets(rail)) / static_cast<double>(spine_packets(packed)), 4.0 / 16.0, 0.02);
  EXPECT_GE(rail.at("collective").at("sizes").at(0).at("busbw_GBps").get<double>(),
            packed.at("collective").at("sizes").at(0).at("busbw_GBps").get<double>());
}

// Packed placement (rank r on endpoint r) on a rail layout puts rank r's GPU r mod G on
// rail r mod G: every leaf's ranks share one GPU index, for rail_optimized (rail g's
// leaves named rail<g>_leaf<k>) and for three_tier with layout: rail.
TEST(RailOptimized, PackedPlacementPutsGpuGOnRailG) {
  const std::string base = "simulation: {duration: 5ms, warmup: 0us}\ncollective: {sizes: [64B]}\noutput: {sample_interval: 0s}\n";
  for (const std::string topology : {"{kind: rail_optimized, servers: 4, gpus_per_server: 4, radix: 8}",
                                     "{kind: three_tier, radix: 8, pods: 2, layout: rail, gpus_per_server: 2}"}) {
    const std::string yaml = base + "topology: " + topology + "\n";
    const auto c = load_config_text(yaml, "rail.yaml");
    const int g = c.server.gpus;
    const json r = fabricsim::testing::run_checked(c);
    const json& ranks = r.at("collective").at("ranks");
    const auto graph = build_graph(c.topology);
    ASSERT_EQ(ranks.size(), static_cast<std::size_t>(graph.endpoints())) << topology;
    std::map<int, std::set<int>> rails_of_leaf;
    for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
      const int e = ranks[rank].get<int>();
      EXPECT_EQ(e, static_cast<int>(rank)) << topology;
      const int leaf = graph.host_switch[static_cast<std::size_t>(e)];
      rails_of_leaf[leaf].insert(static_cast<int>(rank) % g);
      if (c.topology.kind == fabricsim::sim::TopologyKind::rail_optimized) {
        EXPECT_THAT(graph.switches[static_cast<std::size_t>(leaf)].name,
                    ::testing::StartsWith("rail" + std::to_string(rank % g) + "_leaf"));
      }
    }
    for (const auto& [leaf, rails] : rails_of_leaf) EXPECT_EQ(rails.size(), 1u) << topology << " leaf " << leaf;
    EXPECT_EQ(rails_of_leaf.size() % static_cast<std::size_t>(g), 0u) << topology;
  }
}

}  // namespace
