// Cluster fabrics by size: the three_tier topology, the fabric fabric_for_size picks,
// its bill of materials and its price (sim/cluster_fabric.h). Large sizes are built as
// graphs only, never simulated.
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/cluster_fabric.h"
#include "sim/config.h"
#include "sim/config_reader.h"
#include "sim/topology.h"
#include "tests/config_error.h"

namespace {

using fabricsim::sim::bill_of_materials;
using fabricsim::sim::BillOfMaterials;
using fabricsim::sim::build_graph;
using fabricsim::sim::CableMedium;
using fabricsim::sim::CablingRule;
using fabricsim::sim::ClusterShape;
using fabricsim::sim::fabric_for_size;
using fabricsim::sim::HostLayout;
using fabricsim::sim::TopologyKind;
using fabricsim::sim::TopologyParams;
using fabricsim::testing::yaml_error_of;
using ::testing::HasSubstr;

BillOfMaterials bom_of(int endpoints, const ClusterShape& shape, const CablingRule& rule = {}) {
  return bill_of_materials(build_graph(fabric_for_size(endpoints, shape)), shape.radix, shape.layout, rule);
}

TEST(ThreeTier, FullTreeMatchesAlFares) {
  // Al-Fares et al., SIGCOMM 2008: a fat tree of radix-k switches has k^3/4 hosts,
  // k^2/2 edge (leaf), k^2/2 aggregation (spine) and k^2/4 core switches, and at 1:1
  // as many links in each tier as hosts.
  for (int k : {4, 8, 64}) {
    TopologyParams t;
    t.kind = TopologyKind::three_tier;
    t.three_tier.radix = k;
    const auto g = build_graph(t);
    ASSERT_EQ(g.endpoints(), k * k * k / 4) << k;
    const auto bom = bill_of_materials(g, k, HostLayout::leaf, {});
    ASSERT_EQ(bom.tiers, 3);
    EXPECT_EQ(bom.switches, (std::vector<std::uint64_t>{std::uint64_t(k * k / 2), std::uint64_t(k * k / 2),
                                                        std::uint64_t(k * k / 4)}));
    for (const auto& l : bom.links) EXPECT_EQ(l.links, std::uint64_t(k * k * k / 4)) << k << " " << l.name;
  }
}

TEST(ThreeTier, PartialTreeRoutesAndFullBisection) {
  // 3 pods of radix 8 at 1:1: 3 x 4 leaves x 4 hosts; 4 spines per pod; each spine's 4
  // uplinks over the 2 cores of its group (2 x 8 ports >= 3 pods x 4 uplinks), 2 cables each.
  TopologyParams t;
  t.kind = TopologyKind::three_tier;
  t.three_tier.radix = 8;
  t.three_tier.pods = 3;
  const auto g = build_graph(t);
  ASSERT_EQ(g.endpoints(), 48);
  ASSERT_EQ(g.switches.size(), 12u + 12u + 8u);
  fabricsim::sim::check_routes(g, fabricsim::sim::minimal_routes(g));
  // Full bisection at 1:1: every leaf and spine has as many links up as down.
  std::vector<int> up(g.switches.size(), 0), down(g.switches.size(), 0);
  for (int e = 0; e < g.endpoints(); ++e) ++down[g.host_switch[e]];
  for (const auto& c : g.cables) {
    const bool a_low = g.switches[c.a].level < g.switches[c.b].level;
    ++up[a_low ? c.a : c.b];
    ++down[a_low ? c.b : c.a];
  }
  for (std::size_t s = 0; s < g.switches.size(); ++s) {
    if (g.switches[s].level == 2) {
      EXPECT_EQ(down[s], 6) << g.switches[s].name << ": two cables per pod";
      continue;
    }
    EXPECT_EQ(up[s], down[s]) << g.switches[s].name;
  }
  // Another pod's endpoint: up over all 4 spines from a leaf.
  const auto routes = fabricsim::sim::minimal_routes(g);
  EXPECT_EQ(routes.ports(0, 47).size(), 4u);
}

TEST(ThreeTier, RailLayoutPutsEachGpuOnItsRail) {
  // Radix 8: 4 leaves per pod, 4 hosts per leaf; 2 GPUs per server -> 2 rails of 2
  // leaves per pod, 8 servers per pod.
  TopologyParams t;
  t.kind = TopologyKind::three_tier;
  t.three_tier.radix = 8;
  t.three_tier.pods = 2;
  t.three_tier.layout = HostLayout::rail;
  t.three_tier.gpus_per_server = 2;
  const auto g = build_graph(t);
  ASSERT_EQ(g.endpoints(), 32);
  EXPECT_EQ(g.host_switch[0], 0);             // server 0 GPU 0: pod 0, rail 0, first leaf
  EXPECT_EQ(g.host_switch[1], 2);             // server 0 GPU 1: rail 1
  EXPECT_EQ(g.host_switch[2 * 5 + 1], 3);     // server 5 GPU 1: rail 1, second leaf
  EXPECT_EQ(g.host_switch[2 * 8 + 0], 4);     // server 8: pod 1
  fabricsim::sim::check_routes(g, fabricsim::sim::minimal_routes(g));
}

TEST(ThreeTier, ConfigKeysAndErrors) {
  const auto c = fabricsim::sim::load_config_text("topology: {kind: three_tier, radix: 8, pods: 2, leaves_per_pod: 2}\n",
                                                  "t.yaml");
  EXPECT_EQ(c.topology.endpoint_count(), 16);
  EXPECT_THAT(yaml_error_of("topology: {kind: three_tier, radix: 10, pods: 11}\n"), HasSubstr("topology.pods: must be in 1..radix"));
  EXPECT_THAT(yaml_error_of("topology: {kind: three_tier, radix: 9}\n"), HasSubstr("topology.radix: must be even"));
  EXPECT_THAT(yaml_error_of("topology: {kind: three_tier, gpus_per_server: 2}\n"),
              HasSubstr("topology.gpus_per_server: applies to layout: rail only"));
  EXPECT_THAT(yaml_error_of("topology: {kind: three_tier, radix: 8, layout: rail, gpus_per_server: 3}\n"),
              HasSubstr("bad.yaml:1:71: topology.gpus_per_server: must divide leaves_per_pod (4)"));
  EXPECT_THAT(yaml_error_of("topology: {kind: three_tier, radix: 8, oversubscription: 0.5}\n"),
              HasSubstr("at most radix/2 uplinks"));
}

TEST(ClusterFabric, TierChoiceAtTheBoundaries) {
  const ClusterShape shape;  // radix 64, 1:1
  EXPECT_EQ(fabric_for_size(64, shape).kind, TopologyKind::single_switch);
  EXPECT_EQ(fabric_for_size(128, shape).kind, TopologyKind::leaf_spine);
  // radix^2/2 = 2048 is the largest 2-tier fabric; one more leaf needs a third tier.
  const auto two = fabric_for_size(2048, shape);
  EXPECT_EQ(two.kind, TopologyKind::leaf_spine);
  EXPECT_EQ(two.leaf_spine.leaves, 64);
  const auto three = fabric_for_size(2048 + 32, shape);
  ASSERT_EQ(three.kind, TopologyKind::three_tier);
  EXPECT_EQ(three.three_tier.pods * three.three_tier.leaves_per_pod, 65);
  // 32768 endpoints: 32 full pods of 32 leaves; radix^3/4 = 65536 is the largest.
  const auto big = fabric_for_size(32768, shape);
  EXPECT_EQ(big.three_tier.pods, 32);
  EXPECT_EQ(big.three_tier.leaves_per_pod, 32);
  EXPECT_EQ(fabric_for_size(65536, shape).three_tier.pods, 64);
  EXPECT_THROW(fabric_for_size(65536 + 32, shape), std::invalid_argument);
  EXPECT_THROW(fabric_for_size(100, shape), std::invalid_argument);  // not whole leaves of 32
}

TEST(ClusterFabric, BillOfMaterialsAtScale) {
  // 32768 endpoints at radix 64, 1:1: 1024 leaves, 1024 spines (32 pods x 32), and
  // 32768 spine uplinks on 64-port cores: 512 (32 groups of 16, 2 cables per spine and
  // core); 32768 links per tier; optics on the two switch tiers: 2 x 65536 transceivers.
  const auto bom = bom_of(32768, {});
  EXPECT_EQ(bom.switches, (std::vector<std::uint64_t>{1024, 1024, 512}));
  ASSERT_EQ(bom.links.size(), 3u);
  for (const auto& l : bom.links) EXPECT_EQ(l.links, 32768u) << l.name;
  EXPECT_EQ(bom.links[0].medium, CableMedium::dac);
  EXPECT_EQ(bom.links[0].copper, 32768u);
  EXPECT_EQ(bom.total_transceivers(), 4u * 32768u);
  EXPECT_EQ(bom.links[1].fibres, 32768u);
  // 2-tier at 1:1: N/32 leaves, 32 spines, N leaf-spine links.
  const auto two = bom_of(1024, {});
  EXPECT_EQ(two.switches, (std::vector<std::uint64_t>{32, 32}));
  EXPECT_EQ(two.links[1].links, 1024u);
}

TEST(ClusterFabric, OversubscriptionCounts) {
  // 3:1 at radix 64: 48 hosts and 16 uplinks per leaf; 2-tier up to 64 x 48 = 3072.
  ClusterShape shape;
  shape.oversubscription = 3;
  const auto two = bom_of(3072, shape);
  EXPECT_EQ(two.switches, (std::vector<std::uint64_t>{64, 16}));
  EXPECT_EQ(two.links[1].links, 64u * 16u);  // a third of the host links
  // 3-tier: 6144 endpoints = 128 leaves in 4 pods of 32, 16 spines per pod; 16 core
  // groups of 2 (2 x 64 ports take 4 pods x 32 uplinks).
  const auto three = bom_of(6144, shape);
  EXPECT_EQ(three.switches, (std::vector<std::uint64_t>{128, 64, 32}));
  EXPECT_EQ(three.links[1].links, 128u * 16u);
  EXPECT_EQ(three.links[2].links, 64u * 32u);
}

TEST(ClusterFabric, RailLayoutCounts) {
  ClusterShape shape;
  shape.layout = HostLayout::rail;
  // 256 servers x 8 GPUs: 8 rails x 8 leaves of 32 servers, 32 spines; the rail leaves
  // serve many racks, so host links are optical.
  const auto t = fabric_for_size(2048, shape);
  ASSERT_EQ(t.kind, TopologyKind::rail_optimized);
  const auto bom = bom_of(2048, shape);
  EXPECT_EQ(bom.switches, (std::vector<std::uint64_t>{64, 32}));
  EXPECT_EQ(bom.links[0].medium, CableMedium::optics);
  EXPECT_EQ(bom.links[0].transceivers, 2u * 2048u);
  // 8192 endpoints: 3-tier, pods of 32 leaves (4 per rail).
  const auto three = fabric_for_size(8192, shape);
  ASSERT_EQ(three.kind, TopologyKind::three_tier);
  EXPECT_EQ(three.three_tier.layout, HostLayout::rail);
  EXPECT_EQ(three.three_tier.pods, 8);
  EXPECT_THROW(fabric_for_size(2044, shape), std::invalid_argument);  // not whole 8-GPU servers
}

TEST(ClusterFabric, HostCableRule) {
  CablingRule rule;
  rule.host_cable = fabricsim::hw::Length::metres(5);  // beyond DAC reach, within AEC
  EXPECT_EQ(bom_of(128, {}, rule).links[0].medium, CableMedium::aec);
  rule.host_cable = fabricsim::hw::Length::metres(10);
  EXPECT_EQ(bom_of(128, {}, rule).links[0].medium, CableMedium::optics);
  rule.host = CableMedium::dac;
  EXPECT_EQ(bom_of(128, {}, rule).links[0].medium, CableMedium::dac);
}

// One file per test process: ctest runs the tests of this file in parallel.
std::string write_prices(const std::string& text) {
  const std::string file = ::testing::TempDir() + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                           std::to_string(::getpid()) + "_prices.yaml";
  std::ofstream(file) << text;
  return file;
}

const char* const kPrices =
    "currency: USD\n"
    "infiniband: {speed: 400Gb/s, switches: [{radix: 64, price: 20000}], transceiver: 1000, fibre: 50,\n"
    "             dac: 100, aec: 300, nic: 1500}\n"
    "gpu: 25000\n";

TEST(Prices, CostArithmetic) {
  const auto prices = fabricsim::sim::read_prices(write_prices(kPrices));
  // 128 endpoints, radix 64, 1:1: 4 leaves + 32 spines; 128 DAC host links, 128
  // leaf-spine links of 2 transceivers and a fibre.
  const auto bom = bom_of(128, {});
  const auto c = fabric_cost(bom, prices, true, fabricsim::hw::Bandwidth::gbps(400));
  EXPECT_DOUBLE_EQ(c.switches, 36 * 20000.0);
  EXPECT_DOUBLE_EQ(c.optics, 128 * (2 * 1000.0 + 50));
  EXPECT_DOUBLE_EQ(c.copper, 128 * 100.0);
  EXPECT_DOUBLE_EQ(c.nics, 128 * 1500.0);
  EXPECT_DOUBLE_EQ(c.gpus, 128 * 25000.0);
  EXPECT_DOUBLE_EQ(c.total(), c.fabric() + c.gpus);
}

TEST(Prices, ExampleFilePricesBothFamiliesAtRadix64) {
  const auto p = fabricsim::sim::read_prices(std::string(FABRICSIM_SOURCE_DIR) + "/examples/prices/400g.yaml");
  ASSERT_TRUE(p.infiniband && p.ethernet && p.gpu);
  const auto bom = bom_of(32768, {});
  for (bool ib : {true, false})
    EXPECT_GT(fabric_cost(bom, p, ib, fabricsim::hw::Bandwidth::gbps(400)).fabric(), 0) << ib;
}

TEST(Prices, ErrorsNameFileKeyAndLine) {
  using fabricsim::sim::read_prices;
  const auto err = [](const std::string& text) {
    return fabricsim::testing::config_error_of([&] { read_prices(write_prices(text)); });
  };
  EXPECT_THAT(err("infiniband: {speed: 400Gb/s, switches: [{radix: 64, price: -1}], transceiver: 1, fibre: 1, dac: 1, "
                  "aec: 1, nic: 1}\n"),
              HasSubstr("prices.yaml:1:60: infiniband.switches[0].price: must be"));
  EXPECT_THAT(err("ethernet: {speed: 400Gb/s, transceiver: 1}\n"), HasSubstr("ethernet.fibre: missing"));
  EXPECT_THAT(err("gpus: 3\n"), HasSubstr("gpus: unknown key"));
  EXPECT_THAT(err("currency: USD\n"), HasSubstr("needs an `infiniband` or an `ethernet` section"));
  const auto prices = read_prices(write_prices(kPrices));
  const auto bom = bom_of(128, {});
  EXPECT_THAT(fabricsim::testing::config_error_of(
                  [&] { fabric_cost(bom, prices, false, fabricsim::hw::Bandwidth::gbps(400)); }),
              HasSubstr("prices.yaml: ethernet: missing"));
  EXPECT_THAT(fabricsim::testing::config_error_of(
                  [&] { fabric_cost(bom, prices, true, fabricsim::hw::Bandwidth::gbps(800)); }),
              HasSubstr("prices.yaml:2:21: infiniband.speed: prices are for 400Gb/s ports"));
  EXPECT_THAT(fabricsim::testing::config_error_of(
                  [&] { fabric_cost(bom_of(128, {128}), prices, true, fabricsim::hw::Bandwidth::gbps(400)); }),
              HasSubstr("prices.yaml:2:40: infiniband.switches: no price for a switch of radix 128"));
}

}  // namespace
