// Configuration reading: every bad input must be reported as
//   FILE:LINE:COL: KEY.PATH: what is wrong and what is allowed
// (or "--set PATH" for command-line overrides), and good input must give the
// typed values a user expects. Line and column numbers are counted by hand in
// the YAML literals below: one string literal per YAML line, line 1 first.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hw/phy.h"
#include "hw/units.h"
#include "sim/config.h"
#include "sim/config_reader.h"
#include "sim/child_run.h"
#include "tests/command.h"
#include "tests/config_error.h"
#include "tlm/rtl_allocator.h"
#include "tlm/waveform_options.h"

namespace {

using fabricsim::hw::PhyTiming;
using fabricsim::hw::to_string;
using fabricsim::sim::ConfigError;
using fabricsim::sim::FabricConfig;
using fabricsim::sim::load_config;
using fabricsim::sim::load_config_text;
using fabricsim::sim::TrafficPattern;
using fabricsim::testing::file_error_of;
using fabricsim::testing::run_command;
using fabricsim::testing::yaml_error_of;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kQuickstart = std::string(FABRICSIM_SOURCE_DIR) + "/examples/quickstart.yaml";

// Writes `text` to a fresh file under the test temp folder, named after the test.
std::string write_temp(const std::string& text) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string path = ::testing::TempDir() + "fabricsim_" + info->test_suite_name() + "_" + info->name() + ".yaml";
  std::ofstream(path) << text;
  return path;
}

// ---------------------------------------------------------------------------
// Parallel lanes (simulation.threads)

// simulation.threads is how many lanes the fabric may use; a workload the lanes cannot
// split runs on one (Determinism.WorkloadsActingOnNicsAtOnceRunOnOneLane), not an error.
TEST(ConfigErrors, ThreadsAtLeastOne) {
  EXPECT_THAT(file_error_of(kQuickstart, {"simulation.threads=0"}), HasSubstr("simulation.threads"));
  EXPECT_EQ(file_error_of(kQuickstart, {"simulation.threads=2"}), "<no error>");
  EXPECT_EQ(file_error_of(kQuickstart, {"simulation.threads=2", "output.packet_csv=true"}), "<no error>");
  const std::string perftest = std::string(FABRICSIM_SOURCE_DIR) + "/examples/perftest_ib_b2b.yaml";
  EXPECT_EQ(file_error_of(perftest, {"simulation.threads=2"}), "<no error>");
}

// simulation.engine: wheel or kernel; the kernel engine runs on one lane, so more
// threads with it is an error naming both keys.
TEST(ConfigErrors, KernelEngineRunsOnOneThread) {
  EXPECT_EQ(file_error_of(kQuickstart, {"simulation.engine=kernel"}), "<no error>");
  EXPECT_EQ(file_error_of(kQuickstart, {"simulation.engine=wheel", "simulation.threads=2"}), "<no error>");
  const std::string e = file_error_of(kQuickstart, {"simulation.engine=kernel", "simulation.threads=2"});
  EXPECT_THAT(e, HasSubstr("simulation.threads"));
  EXPECT_THAT(e, HasSubstr("simulation.engine: kernel"));
  EXPECT_THAT(file_error_of(kQuickstart, {"simulation.engine=sc"}), HasSubstr("simulation.engine"));
}

// ---------------------------------------------------------------------------
// Unknown keys and sections

TEST(ConfigErrors, UnknownKeySuggestsClosestAndListsAllowed) {
  const std::string e = yaml_error_of(
      "switch:\n"
      "  prots: 4\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:2:3: switch.prots: unknown key"));
  EXPECT_THAT(e, HasSubstr("allowed keys here: allocator, allocator_impl, allocator_iterations, alpha, buffer, cell_size, "
                           "core_clock, credit_return_latency, ecn, egress_scheduler, forwarding, in_network_reduction, "
                           "input_buffer, input_fifo_impl, input_fifo_rtl_variant, instances, output_buffer, pfc, "
                           "pipeline, port_forwarding, ports, reduction_bandwidth, reduction_latency,"));
  EXPECT_THAT(e, HasSubstr("did you mean 'ports'?"));
}

TEST(ConfigErrors, UnknownTopLevelSection) {
  const std::string e = yaml_error_of(
      "simulation:\n"
      "  seed: 3\n"
      "swich:\n"
      "  ports: 4\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:3:1: swich: unknown key"));
  EXPECT_THAT(e, HasSubstr("allowed keys here: chakra, collective, link, nic, output, perftest, routing, server, simulation, switch, topology, traffic"));
  EXPECT_THAT(e, HasSubstr("did you mean 'switch'?"));
}

TEST(ConfigErrors, UnknownKeyWithoutCloseMatchHasNoSuggestion) {
  const std::string e = yaml_error_of(
      "nic:\n"
      "  mtu: 4KiB\n"
      "  doorbell_batching: 16\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:3:3: nic.doorbell_batching: unknown key; allowed keys here: "
                           "blueflame, congestion_control, credit_return_latency, inline_threshold, memory, mtu, "
                           "pcie, poll_latency, rx_buffer, transport"));
  EXPECT_THAT(e, Not(HasSubstr("did you mean")));
}

TEST(ConfigErrors, UnknownKeyInsideAFlow) {
  const std::string e = yaml_error_of(
      "traffic:\n"
      "  pattern: explicit\n"
      "  flows:\n"
      "    - src: 0\n"
      "      dst: 1\n"
      "      lod: 0.5\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:6:7: traffic.flows[0].lod: unknown key"));
  EXPECT_THAT(e, HasSubstr("allowed keys here: dst, load, message_size, messages, sl, src, start"));
  EXPECT_THAT(e, HasSubstr("did you mean 'load'?"));
}

// ---------------------------------------------------------------------------
// Units

TEST(ConfigErrors, UnitOfAnotherQuantity) {
  const std::string e = yaml_error_of(
      "link:\n"
      "  lane_rate: 53.125GHz\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:2:14: link.lane_rate: expected a bandwidth"));
  EXPECT_THAT(e, HasSubstr("units: b/s, Kb/s, Mb/s, Gb/s, Tb/s, B/s, KB/s, MB/s, GB/s, TB/s"));
  EXPECT_THAT(e, HasSubstr("got '53.125GHz': unknown unit 'GHz'"));
}

TEST(ConfigErrors, MissingUnit) {
  const std::string e = yaml_error_of(
      "simulation:\n"
      "  duration: 100\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:2:13: simulation.duration: expected a time such as '2.5ns'"));
  EXPECT_THAT(e, HasSubstr("units: fs, ps, ns, us, ms, s"));
  EXPECT_THAT(e, HasSubstr("got '100': missing unit"));
}

TEST(ConfigErrors, UnknownUnit) {
  const std::string e = yaml_error_of(
      "link:\n"
      "  lanes: 8\n"
      "  cable_length: 3 furlongs\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:3:17: link.cable_length: expected a length"));
  EXPECT_THAT(e, HasSubstr("units: mm, cm, m, km"));
  EXPECT_THAT(e, HasSubstr("unknown unit 'furlongs'"));
}

TEST(ConfigErrors, SizeNotWholeBytes) {
  const std::string e = yaml_error_of(
      "nic:\n"
      "  mtu: 1.5B\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:2:8: nic.mtu: expected a size"));
  EXPECT_THAT(e, HasSubstr("not a whole number of bytes"));
}

TEST(ConfigErrors, QuantityOutOfRangeShowsRangeInUnits) {
  const std::string e = yaml_error_of(
      "nic:\n"
      "  mtu: 10000B\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:2:8: nic.mtu: must be a size in 64B..9KiB, got '10000B'"));
}

// ---------------------------------------------------------------------------
// Numbers, booleans and names

TEST(ConfigErrors, IntegerOutOfRange) {
  const std::string e = yaml_error_of(
      "switch:\n"
      "  ports: 1\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:2:10: switch.ports: must be an integer in 2..256, got '1'"));
}

TEST(ConfigErrors, NotAnInteger) {
  const std::string e = yaml_error_of(
      "switch:\n"
      "  ports: four\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:2:10: switch.ports: expected an integer in 2..256, got 'four'"));
}

TEST(ConfigErrors, NegativeSeed) {
  const std::string e = yaml_error_of(
      "simulation:\n"
      "  seed: -1\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:2:9: simulation.seed: must be an integer in 0..9223372036854775807, got '-1'"));
}

TEST(ConfigErrors, LoadAboveOne) {
  const std::string e = yaml_error_of(
      "traffic:\n"
      "  load: 1.5\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:2:9: traffic.load: must be a number in [1e-06, 1], got '1.5'"));
}

TEST(ConfigErrors, ServiceLevelListEntryOutOfRange) {
  const std::string e = yaml_error_of(
      "traffic:\n"
      "  sl: [0, 1, 16]\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:2:14: traffic.sl[2]: must be an integer in 0..15, got '16'"));
}

TEST(ConfigErrors, ServiceLevelListEmpty) {
  const std::string e = yaml_error_of(
      "traffic:\n"
      "  sl: []\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:2:7: traffic.sl: needs at least one service level, e.g. 0 or [0, 1, 2, 3]"));
}

TEST(ConfigErrors, ServiceLevelNotAnInteger) {
  EXPECT_THAT(yaml_error_of("traffic:\n  sl: high\n"), HasSubstr("bad.yaml:2:7: traffic.sl: expected an integer in 0..15, got 'high'"));
  EXPECT_THAT(yaml_error_of("traffic:\n  sl: {a: 1}\n"), HasSubstr("traffic.sl"));
}

TEST(Config, ServiceLevelsOneOrAList) {
  EXPECT_EQ(load_config_text("traffic: {sl: 3}\n", "t.yaml").traffic.sls, std::vector<int>{3});
  EXPECT_EQ(load_config_text("traffic: {sl: [0, 1, 2, 3]}\n", "t.yaml").traffic.sls, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(load_config_text("{}\n", "t.yaml").traffic.sls, std::vector<int>{0});
  // A flow inherits traffic.sl unless it names its own.
  const auto c = load_config_text(
      "traffic: {pattern: explicit, sl: [1, 2], flows: [{src: 0, dst: 1}, {src: 1, dst: 0, sl: 5}]}\n", "t.yaml");
  EXPECT_EQ(c.traffic.flows.at(0).sls, (std::vector<int>{1, 2}));
  EXPECT_EQ(c.traffic.flows.at(1).sls, std::vector<int>{5});
}

TEST(ConfigErrors, BooleanMustBeTrueOrFalse) {
  const std::string e = yaml_error_of(
      "output:\n"
      "  packet_csv: yes\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:2:15: output.packet_csv: expected true or false, got 'yes'"));
}

TEST(ConfigErrors, UnknownFecListsAllowed) {
  const std::string e = yaml_error_of(
      "link:\n"
      "  fec: rs999\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:2:8: link.fec: unknown value 'rs999'; "
                           "allowed: none, rs528_514, rs544_514, rs272_257"));
}

TEST(ConfigErrors, UnknownForwardingListsAllowed) {
  const std::string e = yaml_error_of(
      "switch:\n"
      "  forwarding: wormhole\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:2:15: switch.forwarding: unknown value 'wormhole'; "
                           "allowed: cut_through, store_and_forward, adaptive, fast_to_slow"));
}

TEST(ConfigErrors, PortForwardingNamesThePortAndTheMode) {
  EXPECT_THAT(yaml_error_of("switch:\n  port_forwarding: {1: wormhole}\n"),
              HasSubstr("bad.yaml:2:24: switch.port_forwarding.1: unknown value 'wormhole'; allowed: cut_through, "
                        "store_and_forward, adaptive, fast_to_slow"));
  EXPECT_THAT(yaml_error_of("switch:\n  port_forwarding: {p1: cut_through}\n"),
              HasSubstr("switch.port_forwarding.p1: unknown port 'p1': keys are switch port numbers 0..255"));
  EXPECT_THAT(yaml_error_of("switch:\n  ports: 4\n  port_forwarding: {4: store_and_forward}\n"),
              HasSubstr("switch.port_forwarding.4: unknown port 4: the switch has ports 0..3"));
  EXPECT_THAT(yaml_error_of("switch:\n  port_forwarding: [cut_through]\n"),
              HasSubstr("switch.port_forwarding: expected a mapping"));
  const auto c = fabricsim::sim::load_config_text("switch:\n  port_forwarding: {3: fast_to_slow}\n", "ok.yaml");
  EXPECT_EQ(c.switch_params.forwarding_of(3), fabricsim::tlm_fabric::ForwardingMode::fast_to_slow);
  EXPECT_EQ(c.switch_params.forwarding_of(2), fabricsim::tlm_fabric::ForwardingMode::cut_through);
}

TEST(ConfigErrors, UnknownArbiterListsRegistry) {
  const std::string e = yaml_error_of(
      "switch:\n"
      "  allocator: foo\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:2:14: switch.allocator: unknown value 'foo'; allowed: round_robin, islip, "
                           "pim, oldest_first, strict_priority"));
}

TEST(ConfigErrors, MisspeltEnumValueSuggestsClosest) {
  const std::string e = yaml_error_of(
      "link:\n"
      "  framing: roce_v3\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:2:12: link.framing: unknown value 'roce_v3'; "
                           "allowed: infiniband, roce_v2, ethernet (did you mean 'roce_v2'?)"));
}

// ---------------------------------------------------------------------------
// Shape of the document

TEST(ConfigErrors, SectionGivenAsScalar) {
  const std::string e = yaml_error_of("switch: 4\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:1:9: switch: expected a mapping of keys to values"));
}

TEST(ConfigErrors, ListWhereScalarExpected) {
  const std::string e = yaml_error_of(
      "switch:\n"
      "  ports: [4, 8]\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:2:10: switch.ports: expected an integer, got a list"));
}

TEST(ConfigErrors, TopLevelNotAMapping) {
  const std::string e = yaml_error_of("- switch\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:1:1: (top level): expected a mapping of keys to values"));
}

TEST(ConfigErrors, DuplicateKey) {
  const std::string e = yaml_error_of(
      "switch:\n"
      "  ports: 4\n"
      "  ports: 8\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:3:3: switch.ports: key appears twice"));
}

TEST(ConfigErrors, DuplicateSection) {
  const std::string e = yaml_error_of(
      "switch:\n"
      "  ports: 4\n"
      "switch:\n"
      "  ports: 8\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:3:1: switch: key appears twice"));
}

TEST(ConfigErrors, YamlSyntaxErrorGivesLine) {
  // Line 3 is indented deeper than its sibling on line 2.
  const std::string e = yaml_error_of(
      "switch:\n"
      "  ports: 4\n"
      "   allocator: round_robin\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:3:"));
  EXPECT_THAT(e, HasSubstr("YAML syntax error"));
}

// A key with no value is empty on its own line; the error must point there,
// not at the next key.
TEST(ConfigErrors, EmptyValueReportedOnItsOwnLine) {
  const std::string e = yaml_error_of(
      "switch:\n"
      "  ports:\n"
      "  allocator: round_robin\n");
  EXPECT_THAT(e, HasSubstr("switch.ports: expected an integer, got a null value"));
  EXPECT_THAT(e, HasSubstr("bad.yaml:2:"));
}

// ---------------------------------------------------------------------------
// Cross-key checks

TEST(ConfigErrors, EndpointsExceedPorts) {
  const std::string e = yaml_error_of(
      "switch:\n"
      "  ports: 4\n"
      "topology:\n"
      "  endpoints: 8\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:4:14: topology.endpoints: a single switch with switch.ports = 4 "
                           "can attach at most 4 endpoints, got 8"));
}

// The default topology.endpoints (4) does not fit a 2-port switch. The key at
// fault in the file is switch.ports; the error should still carry a line.
TEST(ConfigErrors, DefaultEndpointsExceedPortsGivesALine) {
  const std::string e = yaml_error_of(
      "switch:\n"
      "  ports: 2\n");
  EXPECT_THAT(e, HasSubstr("can attach at most 2 endpoints, got 4"));
  EXPECT_THAT(e, HasSubstr("bad.yaml:2:"));
}

TEST(ConfigErrors, WarmupNotShorterThanDuration) {
  const std::string e = yaml_error_of(
      "simulation:\n"
      "  duration: 10us\n"
      "  warmup: 10us\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:3:11: simulation.warmup: must be shorter than simulation.duration (10us)"));
}

TEST(ConfigErrors, InputBufferSmallerThanCreditBlock) {
  const std::string e = yaml_error_of(
      "link:\n"
      "  credit_block: 512B\n"
      "switch:\n"
      "  input_buffer: 256B\n");
  // The buffer cannot hold one 512 B credit block, let alone a 4 KiB MTU frame.
  EXPECT_THAT(e, HasSubstr("bad.yaml:4:17: switch.input_buffer: must hold one 4KiB MTU frame"));
  EXPECT_THAT(e, HasSubstr("512B credit blocks"));
}

// The NIC needs the same check as the switch: NicParams::validate() rejects this
// at run time, so `validate` must reject it too, with a location.
TEST(ConfigErrors, RxBufferSmallerThanCreditBlock) {
  const std::string e = yaml_error_of(
      "link:\n"
      "  credit_block: 128B\n"
      "nic:\n"
      "  rx_buffer: 64B\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:4:14: nic.rx_buffer:"));
}

// A receive buffer that cannot hold one MTU frame never grants the credits for
// it: the run deadlocks silently (zero packets). 4KiB MTU + RoCEv2 headers =
// 4158B > 1KiB.
TEST(ConfigErrors, InputBufferSmallerThanOneMtuFrame) {
  const std::string e = yaml_error_of(
      "switch:\n"
      "  input_buffer: 1KiB\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:2:17: switch.input_buffer:"));
}

// ---------------------------------------------------------------------------
// Flow control a link cannot carry out (an error) or that does nothing or too little (a
// warning, in FabricConfig::warnings, worded and located as an error)

// InfiniBand framing has no PAUSE frame (IBTA vol. 1 sec. 7.9: IB links use credits).
TEST(ConfigErrors, PfcOnInfinibandFraming) {
  EXPECT_THAT(yaml_error_of("link:\n"
                            "  framing: infiniband\n"
                            "  flow_control: pfc\n"),
              HasSubstr("bad.yaml:3:17: link.flow_control: pfc sends Ethernet PAUSE frames (IEEE 802.1Qbb), which "
                        "infiniband framing does not have"));
  const std::string ib_ndr = std::string(FABRICSIM_SOURCE_DIR) + "/presets/ib_ndr.yaml";
  EXPECT_THAT(file_error_of(ib_ndr, {"link.flow_control=pfc"}), HasSubstr("--set link.flow_control: link.flow_control:"));
  EXPECT_EQ(yaml_error_of("link: {framing: roce_v2, flow_control: pfc}\n"), "<no error>");
}

// WRED drops only on lossy links: enabled on a credit or PFC link it has no effect.
TEST(ConfigWarnings, WredOnALosslessLink) {
  for (const char* fc : {"credit", "pfc"}) {
    const FabricConfig c = load_config_text(std::string("link: {flow_control: ") + fc + "}\n"
                                            "switch:\n"
                                            "  wred: {enabled: true}\n", "w.yaml");
    ASSERT_EQ(c.warnings.size(), 1u) << fc;
    EXPECT_THAT(c.warnings[0], HasSubstr(std::string("w.yaml:3:19: switch.wred.enabled: WRED drops only on lossy links "
                                                     "(link.flow_control: none); on ") + fc + " links"));
  }
  EXPECT_TRUE(load_config_text("link: {flow_control: none}\nswitch: {wred: {enabled: true}}\n", "w.yaml").warnings.empty());
}

// PFC headroom below what arrives after a PAUSE on the longest cable: the lossless class
// drops (counted, exit 0). Accepted, with a warning at switch.pfc.headroom naming the bytes
// needed. 400 Gb/s = 50 B/ns; 100 m = 500 ns; FEC 2 x 5440 b / 425 Gb/s + 20 ns = 45.6 ns;
// response 100 ns; RoCEv2 4 KiB frame 4158 B = 4160 B in 64 B cells:
// 2 x 545.6 x 50 + 100 x 50 + 2 x 4160 = 54560 + 5000 + 8320 = 67880 B.
const std::string kRoce400g = "include: " + std::string(FABRICSIM_SOURCE_DIR) + "/presets/roce_400g.yaml\n";
const std::string kShortHeadroom = kRoce400g +
                                   "link: {cable_length: 100m}\n"
                                   "switch:\n"
                                   "  pfc: {xoff: 64KiB, xon: 32KiB, headroom: 4200B}\n";

TEST(ConfigWarnings, PfcHeadroomBelowWhatTheCableNeeds) {
  const FabricConfig c = load_config_text(kShortHeadroom, "h.yaml");
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_THAT(c.warnings[0], HasSubstr("h.yaml:4:44: switch.pfc.headroom: 4200B is below the 67880B a port needs for its "
                                       "longest cable (100m at 400Gb/s"));
  EXPECT_TRUE(load_config_text(kShortHeadroom, "h.yaml", {"switch.pfc.headroom=67880B"}).warnings.empty());
  EXPECT_EQ(load_config_text(kShortHeadroom, "h.yaml", {"switch.pfc.headroom=67879B"}).warnings.size(), 1u);
  // A longer switch-switch cable is the one that counts.
  const FabricConfig ls =
      load_config_text(kRoce400g + "topology: {kind: leaf_spine, radix: 4, fabric_link: {cable_length: 300m}}\n", "h.yaml");
  ASSERT_EQ(ls.warnings.size(), 1u);
  EXPECT_THAT(ls.warnings[0], HasSubstr("longest cable (300m at 400Gb/s"));
}

// ---------------------------------------------------------------------------
// Traffic flows

TEST(ConfigErrors, FlowMissingSrc) {
  const std::string e = yaml_error_of(
      "traffic:\n"
      "  pattern: explicit\n"
      "  flows:\n"
      "    - dst: 1\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:4:7: traffic.flows[0]: missing required key 'src'"));
}

TEST(ConfigErrors, FlowMissingDst) {
  const std::string e = yaml_error_of(
      "traffic:\n"
      "  pattern: explicit\n"
      "  flows:\n"
      "    - src: 0\n"
      "      dst: 1\n"
      "    - src: 2\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:6:7: traffic.flows[1]: missing required key 'dst'"));
}

TEST(ConfigErrors, FlowToItself) {
  const std::string e = yaml_error_of(
      "traffic:\n"
      "  pattern: explicit\n"
      "  flows:\n"
      "    - src: 2\n"
      "      dst: 2\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:5:12: traffic.flows[0].dst: a flow must go to another endpoint "
                           "(src = dst = 2)"));
}

TEST(ConfigErrors, FlowDstBeyondEndpoints) {
  const std::string e = yaml_error_of(
      "topology:\n"
      "  endpoints: 4\n"
      "traffic:\n"
      "  pattern: explicit\n"
      "  flows:\n"
      "    - src: 0\n"
      "      dst: 4\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:7:12: traffic.flows[0].dst: must be an integer in 0..3, got '4'"));
}

TEST(ConfigErrors, FlowStartAfterEnd) {
  const std::string e = yaml_error_of(
      "simulation:\n"
      "  duration: 10us\n"
      "  warmup: 0us\n"
      "traffic:\n"
      "  pattern: explicit\n"
      "  flows:\n"
      "    - src: 0\n"
      "      dst: 1\n"
      "      start: 20us\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:9:14: traffic.flows[0].start: must be before simulation.duration (10us)"));
}

TEST(ConfigErrors, FlowThatIsNotAMapping) {
  const std::string e = yaml_error_of(
      "traffic:\n"
      "  pattern: explicit\n"
      "  flows:\n"
      "    - 0 -> 1\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:4:7: traffic.flows[0]: expected a mapping of keys to values"));
}

TEST(ConfigErrors, FlowsWithoutExplicitPattern) {
  const std::string e = yaml_error_of(
      "traffic:\n"
      "  pattern: uniform\n"
      "  flows:\n"
      "    - src: 0\n"
      "      dst: 1\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:4:5: traffic.flows: flows are only read with pattern: explicit"));
}

TEST(ConfigErrors, ExplicitPatternWithoutFlows) {
  const std::string e = yaml_error_of(
      "traffic:\n"
      "  pattern: explicit\n");
  EXPECT_THAT(e, HasSubstr("bad.yaml:2:12: traffic.pattern: pattern: explicit needs a non-empty 'flows' list"));
}

// ---------------------------------------------------------------------------
// Command-line overrides

const char* kSmall =
    "switch:\n"
    "  ports: 4\n";

TEST(ConfigErrors, SetUnknownKeyNamesTheCommandLine) {
  const std::string e = yaml_error_of(kSmall, {"switch.prots=8"});
  EXPECT_THAT(e, HasSubstr("--set switch.prots: switch.prots: unknown key"));
  EXPECT_THAT(e, HasSubstr("did you mean 'ports'?"));
  EXPECT_THAT(e, Not(HasSubstr("bad.yaml")));
}

TEST(ConfigErrors, SetWithoutEquals) {
  const std::string e = yaml_error_of(kSmall, {"switch.ports"});
  EXPECT_THAT(e, HasSubstr("--set switch.ports: expected path.to.key=value"));
}

TEST(ConfigErrors, SetWithEmptyPathComponent) {
  const std::string e = yaml_error_of(kSmall, {"switch..ports=8"});
  EXPECT_THAT(e, HasSubstr("--set switch..ports=8: switch..ports: empty key in path"));
}

TEST(ConfigErrors, SetBadUnit) {
  const std::string e = yaml_error_of(kSmall, {"link.lane_rate=53GHz"});
  EXPECT_THAT(e, HasSubstr("--set link.lane_rate: link.lane_rate: expected a bandwidth"));
  EXPECT_THAT(e, HasSubstr("unknown unit 'GHz'"));
}

TEST(ConfigErrors, SetValueOverridesFileAndIsBlamedForIt) {
  // The file's ports: 4 is fine; the override's 1 is not, and the error says so.
  const std::string e = yaml_error_of(kSmall, {"switch.ports=1"});
  EXPECT_THAT(e, HasSubstr("--set switch.ports: switch.ports: must be an integer in 2..256, got '1'"));
}

TEST(ConfigErrors, SetListElementIsBlamedOnTheOption) {
  // The element's mark is inside the option's text ("[1, 9]"), not the file's line 1.
  const std::string e = yaml_error_of(kSmall, {"traffic.pattern=hotspot", "traffic.hotspots=[1, 9]"});
  EXPECT_THAT(e, HasSubstr("--set traffic.hotspots: traffic.hotspots[1]: must be an integer in 0.."));
  EXPECT_THAT(e, Not(HasSubstr("bad.yaml")));
}

TEST(ConfigErrors, SetThroughAScalar) {
  const std::string e = yaml_error_of(kSmall, {"switch.ports.max=8"});
  EXPECT_THAT(e, HasSubstr("--set switch.ports.max=8: switch.ports.max: 'ports' is not a mapping"));
}

// ---------------------------------------------------------------------------
// Files

TEST(ConfigErrors, NonexistentFile) {
  const std::string missing = ::testing::TempDir() + "fabricsim_no_such_config.yaml";
  const std::string e = file_error_of(missing);
  EXPECT_THAT(e, HasSubstr(missing + ": the configuration file cannot be opened: No such file or directory"));
}

// A folder given instead of a file is a usage error (exit 2), not a simulation error.
TEST(ConfigErrors, DirectoryInsteadOfFile) {
  const std::string e = file_error_of(::testing::TempDir());
  EXPECT_THAT(e, HasSubstr(::testing::TempDir()));
  EXPECT_THAT(e, Not(HasSubstr("<not a ConfigError")));
}

// A file over 64 MiB is refused from its size, unread (a configuration holds at most
// 1,000,000 values). The test file is sparse: it takes no disk space.
TEST(ConfigErrors, FileLargerThan64MiBIsRefusedUnread) {
  const std::string path = write_temp("");
  std::filesystem::resize_file(path, (std::uintmax_t{64} << 20) + 1);
  EXPECT_THAT(file_error_of(path), HasSubstr(path + ": the configuration file is larger than 64 MiB"));
  std::filesystem::remove(path);
}

// Flows listed one by one past the limit on values: refused at the flow where the count
// crosses it, before the rest of the document is read (the syntax error at its end is
// never reached), with the pattern that expresses many flows instead.
TEST(ConfigErrors, TooManyFlowsAreRefusedWhereTheLimitIsCrossed) {
  std::string yaml = "traffic:\n  pattern: explicit\n  flows:\n";
  for (int i = 0; i < 210000; ++i) yaml += "    - {src: 0, dst: 1}\n";
  yaml += "  load: [\n";  // never closed
  const std::string e = yaml_error_of(yaml);
  // 7 values before the first flow (the top map, traffic, its map, pattern, explicit, flows,
  // the list), 5 per flow (its map, src, 0, dst, 1): value 1,000,001 is flow 199998's dst.
  EXPECT_THAT(e, HasSubstr("bad.yaml:200002:16: traffic.flows[199998].dst: more than 1000000 values"));
  EXPECT_THAT(e, HasSubstr("use traffic.pattern uniform, permutation, hotspot or incast"));
  EXPECT_THAT(e, Not(HasSubstr("alias")));
}

// Nesting past yaml-cpp's own depth limit (about 500) gets the same message as 65 levels,
// at the first value 65 levels down (the top mapping is level 0), in block and flow style
// and in a --set value.
TEST(ConfigErrors, NestingDeeperThanTheParserAllowsNamesTheLimit) {
  std::string block = "switch:\n  sl_to_vl:\n";
  for (int i = 0; i < 1000; ++i) block += std::string(2 * i + 4, ' ') + "-\n";
  EXPECT_THAT(yaml_error_of(block), HasSubstr("bad.yaml:66:131: switch.sl_to_vl[0][0][0][0]...: nested more than 64 deep"));
  const std::string flow = std::string(1000, '[') + std::string(1000, ']');
  EXPECT_THAT(yaml_error_of("{}", {"switch.sl_to_vl=" + flow}),
              HasSubstr("--set switch.sl_to_vl:1:66: [0][0][0][0][0][0]...: nested more than 64 deep"));
}

TEST(ConfigErrors, FileErrorsNameTheFile) {
  const std::string path = write_temp(
      "link:\n"
      "  lanes: 8\n"
      "  fec: rs999\n");
  EXPECT_THAT(file_error_of(path), HasSubstr(path + ":3:8: link.fec: unknown value 'rs999'"));
}

// ---------------------------------------------------------------------------
// Good input

TEST(Config, QuickstartExampleLoads) {
  const FabricConfig c = load_config(kQuickstart);
  EXPECT_EQ(c.file, kQuickstart);
  EXPECT_EQ(to_string(c.simulation.duration), "50us");
  EXPECT_EQ(to_string(c.simulation.warmup), "5us");
  EXPECT_EQ(c.link.phy.lanes, 8);
  EXPECT_EQ(c.link.phy.fec, fabricsim::hw::FecKind::rs544_514);
  EXPECT_EQ(to_string(c.link.phy.cable_length), "3m");
  EXPECT_EQ(c.switch_params.ports, 4);
  EXPECT_EQ(c.switch_params.credit_block_bytes, 64u);
  EXPECT_EQ(c.nic.credit_block_bytes, 64u);
  EXPECT_EQ(to_string(c.switch_params.input_buffer), "256KiB");
  EXPECT_EQ(c.topology.endpoints, 4);
  EXPECT_EQ(c.traffic.pattern, TrafficPattern::uniform);
  EXPECT_DOUBLE_EQ(c.traffic.load, 0.5);
  EXPECT_EQ(c.output.directory, "results/quickstart");
}

TEST(Config, EmptyDocumentGivesDefaults) {
  const FabricConfig c = load_config_text("", "empty.yaml");
  EXPECT_EQ(c.simulation.seed, 1u);
  EXPECT_EQ(to_string(c.simulation.duration), "100us");
  EXPECT_EQ(to_string(c.simulation.warmup), "10us");
  // Default link: 8 x 53.125 Gb/s, 256b/257b, RS(544,514) -> 400 Gb/s of data.
  EXPECT_EQ(c.link.phy.lanes, 8);
  EXPECT_EQ(to_string(c.link.phy.lane_rate), "53.125Gb/s");
  EXPECT_NEAR(PhyTiming(c.link.phy).data_rate().in_gbps(), 400.0, 1e-9);
  EXPECT_EQ(c.link.phy.framing, fabricsim::hw::Framing::roce_v2);
  EXPECT_EQ(c.link.flow_control_bytes, 8u);
  EXPECT_EQ(c.switch_params.ports, 4);
  EXPECT_EQ(to_string(c.switch_params.core_clock), "1.5GHz");
  EXPECT_EQ(c.switch_params.pipeline.to_allocator(), 90);
  EXPECT_EQ(c.switch_params.pipeline.grant_to_wire(), 110);
  EXPECT_EQ(c.switch_params.allocator, "round_robin");
  EXPECT_EQ(c.switch_params.credit_block_bytes, 64u);
  EXPECT_EQ(to_string(c.nic.mtu), "4KiB");
  EXPECT_EQ(c.topology.endpoints, 4);
  EXPECT_EQ(c.traffic.pattern, TrafficPattern::uniform);
  EXPECT_DOUBLE_EQ(c.traffic.load, 0.5);
  EXPECT_EQ(c.traffic.messages, 0u);
  EXPECT_EQ(c.output.directory, "results");
  EXPECT_FALSE(c.output.packet_csv);
}

TEST(Config, AbsentKeysInAPresentSectionKeepDefaults) {
  const FabricConfig c = load_config_text(
      "switch:\n"
      "  ports: 8\n"
      "link:\n"
      "  fec: none\n",
      "partial.yaml");
  EXPECT_EQ(c.switch_params.ports, 8);
  EXPECT_EQ(to_string(c.switch_params.input_buffer), "256KiB");
  EXPECT_EQ(to_string(c.switch_params.credit_return_latency), "10ns");
  // Without FEC only 256b/257b remains: 425 x 256/257 Gb/s.
  EXPECT_NEAR(PhyTiming(c.link.phy).data_rate().in_gbps(), 425.0 * 256 / 257, 1e-9);
}

TEST(Config, FlowsInheritTrafficDefaults) {
  const FabricConfig c = load_config_text(
      "traffic:\n"
      "  pattern: explicit\n"
      "  load: 0.25\n"
      "  message_size: 8KiB\n"
      "  messages: 10\n"
      "  flows:\n"
      "    - src: 0\n"
      "      dst: 3\n"
      "    - src: 1\n"
      "      dst: 2\n"
      "      load: 1\n"
      "      start: 2us\n",
      "flows.yaml");
  ASSERT_EQ(c.traffic.flows.size(), 2u);
  EXPECT_DOUBLE_EQ(c.traffic.flows[0].load, 0.25);
  EXPECT_EQ(to_string(c.traffic.flows[0].message_size), "8KiB");
  EXPECT_EQ(c.traffic.flows[0].messages, 10u);
  EXPECT_EQ(c.traffic.flows[1].src, 1);
  EXPECT_EQ(c.traffic.flows[1].dst, 2);
  EXPECT_DOUBLE_EQ(c.traffic.flows[1].load, 1.0);
  EXPECT_EQ(to_string(c.traffic.flows[1].start), "2us");
}

TEST(Config, UnitSpellingsAreEquivalent) {
  const FabricConfig c = load_config_text(
      "link:\n"
      "  lane_rate: 6.640625 GB/s\n"
      "  cable_length: 250cm\n"
      "nic:\n"
      "  rx_buffer: 0.25MiB\n",
      "units.yaml");
  EXPECT_EQ(to_string(c.link.phy.lane_rate), "53.125Gb/s");
  EXPECT_EQ(to_string(c.link.phy.cable_length), "2.5m");
  EXPECT_EQ(c.nic.rx_buffer.in_bytes(), 256u * 1024u);
}

TEST(Config, SetOverridesNestedValue) {
  const FabricConfig c = load_config_text(
      "switch:\n"
      "  ports: 4\n"
      "  allocator: round_robin\n",
      "base.yaml", {"switch.ports=8", "link.lane_rate=106.25Gb/s"});
  EXPECT_EQ(c.switch_params.ports, 8);
  EXPECT_EQ(c.switch_params.allocator, "round_robin");
  EXPECT_EQ(to_string(c.link.phy.lane_rate), "106.25Gb/s");
}

TEST(Config, SetCreatesMissingSection) {
  const FabricConfig c = load_config_text(kSmall, "base.yaml", {"nic.mtu=2KiB", "output.packet_csv=true"});
  EXPECT_EQ(to_string(c.nic.mtu), "2KiB");
  EXPECT_EQ(to_string(c.nic.rx_buffer), "256KiB");
  EXPECT_TRUE(c.output.packet_csv);
  EXPECT_EQ(c.switch_params.ports, 4);
}

TEST(Config, LaterSetWins) {
  const FabricConfig c = load_config_text(kSmall, "base.yaml", {"switch.ports=8", "switch.ports=16"});
  EXPECT_EQ(c.switch_params.ports, 16);
}

TEST(Config, SetAcceptsYamlValues) {
  const FabricConfig c = load_config_text(
      "", "base.yaml", {"traffic.pattern=explicit", "traffic.flows=[{src: 0, dst: 1}, {src: 1, dst: 0, load: 0.1}]"});
  ASSERT_EQ(c.traffic.flows.size(), 2u);
  EXPECT_EQ(c.traffic.flows[1].src, 1);
  EXPECT_DOUBLE_EQ(c.traffic.flows[1].load, 0.1);
}

TEST(Config, EchoReflectsOverrides) {
  const FabricConfig c = load_config(kQuickstart, {"switch.ports=8", "nic.credit_return_latency=20ns"});
  ASSERT_TRUE(c.echo.is_object());
  EXPECT_EQ(c.echo["switch"]["ports"], "8");
  EXPECT_EQ(c.echo["nic"]["credit_return_latency"], "20ns");
  // Untouched keys keep the file's text.
  EXPECT_EQ(c.echo["link"]["lane_rate"], "53.125Gb/s");
  EXPECT_EQ(c.echo["output"]["directory"], "results/quickstart");
}

// ---------------------------------------------------------------------------
// The fabricsim command

TEST(ConfigCli, ValidateQuickstart) {
  const auto r = run_command("validate " + kQuickstart);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr(kQuickstart + ": valid"));
}

TEST(ConfigCli, ValidateQuickstartWithOverride) {
  const auto r = run_command("validate " + kQuickstart + " --set switch.ports=8 --set topology.endpoints=8");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(ConfigCli, ValidateBadFileExitsTwoWithLocation) {
  const std::string path = write_temp(
      "simulation:\n"
      "  duration: 20us\n"
      "switch:\n"
      "  ports: 1\n");
  const auto r = run_command("validate " + path);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("fabricsim: error: " + path + ":4:10: switch.ports: must be an integer in 2..256"));
}

TEST(ConfigCli, ValidateMissingFileExitsTwo) {
  const auto r = run_command("validate " + ::testing::TempDir() + "fabricsim_no_such_config.yaml");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("the configuration file cannot be opened: No such file or directory"));
}

TEST(ConfigCli, RunWithBadSetExitsTwoBeforeSimulating) {
  const std::string out = ::testing::TempDir() + "fabricsim_ConfigCli_bad_set_out";
  std::filesystem::remove_all(out);
  const auto r = run_command("run " + kQuickstart + " --set link.fec=rs999 --out " + out);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("fabricsim: error: --set link.fec: link.fec: unknown value 'rs999'"));
  EXPECT_FALSE(std::filesystem::exists(out + "/results.json"));
}

// An empty folder option is refused before anything runs (it would fall back to the
// configuration's output.directory, or write into the current folder).
TEST(ConfigCli, EmptyFolderOptionsAreRefused) {
  const std::string out = ::testing::TempDir() + "fabricsim_ConfigCli_empty_out";
  std::filesystem::remove_all(out);
  const std::string config = kQuickstart + " --quiet --set simulation.duration=10us --set output.directory=" + out;
  for (const std::string& args : {"run " + config + " --out ''", "run " + config + " --trace ''",
                                  "sweep " + config + " --loads 0.5 --out ''", "compare " + kQuickstart + " --out ''"}) {
    const auto r = run_command(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(": must not be empty")) << args;
  }
  EXPECT_FALSE(std::filesystem::exists(out));
  std::filesystem::remove_all(out);
}

// The headroom warning (ConfigWarnings.PfcHeadroomBelowWhatTheCableNeeds) reaches the user
// from validate and run, and results.json keeps it; the run itself succeeds.
TEST(ConfigCli, WarningsArePrintedAndKeptInResults) {
  const std::string path = write_temp(kShortHeadroom + "simulation: {duration: 20us, warmup: 0us}\n");
  const auto v = run_command("validate " + path);
  EXPECT_EQ(v.exit_code, 0) << v.output;
  EXPECT_THAT(v.output, HasSubstr("fabricsim: warning: " + path + ":4:44: switch.pfc.headroom: 4200B is below the 67880B"));
  const std::string out = ::testing::TempDir() + "fabricsim_ConfigCli_warnings_out";
  std::filesystem::remove_all(out);
  const auto r = run_command("run " + path + " --quiet --out " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(out + "/results.json");
  const auto results = nlohmann::json::parse(in);
  ASSERT_EQ(results.at("warnings").size(), 1u);
  EXPECT_THAT(results.at("warnings").at(0).get<std::string>(), HasSubstr("switch.pfc.headroom: 4200B is below the 67880B"));
}

TEST(ConfigCli, UnknownSubcommandFails) {
  const auto r = run_command("simulate " + kQuickstart);
  EXPECT_NE(r.exit_code, 0) << r.output;
}

}  // namespace

// ---------------------------------------------------------------------------
// Document structure (the corpus has the failing cases: multiple_documents,
// syntax_unterminated_quote); here the inputs next to them that must still work.
namespace {

TEST(Config, TrailingDocumentMarkerIsNotASecondDocument) {
  EXPECT_EQ(yaml_error_of("simulation:\n  seed: 3\n---\n"), "<no error>");
  EXPECT_EQ(load_config_text("---\nsimulation:\n  seed: 3\n---\n# nothing\n", "ok.yaml").simulation.seed, 3u);
}

TEST(Config, QuotedValuesWithEscapedQuotesAreClosed) {
  EXPECT_EQ(load_config_text("output:\n  directory: \"a\\\"b\"\n", "ok.yaml").output.directory, "a\"b");
  EXPECT_EQ(load_config_text("output:\n  directory: 'it''s'\n", "ok.yaml").output.directory, "it's");
  EXPECT_EQ(load_config_text("output:\n  directory: \"two\n    lines\"\n", "ok.yaml").output.directory, "two lines");
}

TEST(ConfigErrors, UnclosedSingleQuoteAndSecondDocumentInText) {
  EXPECT_THAT(yaml_error_of("output:\n  directory: 'it''s\n"), HasSubstr("bad.yaml:2:14: output.directory: "));
  EXPECT_THAT(yaml_error_of("output:\n  directory: 'it''s\n"), HasSubstr("never closed (missing ')"));
  EXPECT_THAT(yaml_error_of("simulation:\n  seed: 3\n---\nswitch:\n  ports: 8\n"),
              HasSubstr("bad.yaml:4:1: a second YAML document starts here"));
}

}  // namespace

// A fabric that cannot fit is refused before its forwarding tables are built, with the
// estimate (estimated_run_bytes) against simulation.max_memory (or the machine's
// available memory); one that fits is read as usual.
TEST(ConfigErrors, ATopologyOverTheMemoryLimitIsRefusedWithTheEstimate) {
  const std::string huge = "topology: {kind: kary_ntree, k: 16, n: 4}\n";
  EXPECT_THAT(yaml_error_of(huge, {"simulation.max_memory=8GiB"}),
              HasSubstr("bad.yaml:1:33: topology.k: kary_ntree of 16384 switches and 65536 endpoints needs an "
                        "estimated 8.8 GiB, more than the 8.0 GiB of simulation.max_memory"));
  const std::string moderate = "topology: {kind: kary_ntree, k: 16, n: 3}\n";
  EXPECT_EQ(yaml_error_of(moderate, {"simulation.max_memory=2GiB"}), "<no error>");
  EXPECT_THAT(yaml_error_of(moderate, {"simulation.max_memory=100MiB"}), HasSubstr("needs an estimated 0.4 GiB, more than the 0.1 GiB"));
}

// ---------------------------------------------------------------------------
// RTL waveform options (switch.rtl_trace*, `fabricsim run --trace rtl --trace-*`): which blocks a scope
// selects, and the refusals that hold in every build (test_rtl_waveform has the rest).
namespace {

using fabricsim::tlm_fabric::WaveformOptions;

TEST(WaveformOptions, ScopesAreGlobsOnTheHierarchyNameOrModelNames) {
  WaveformOptions w;
  EXPECT_TRUE(w.wants("fabric.sw0.allocator", "islip_allocator")) << "no scope: every block";
  w.scopes = {"fabric.leaf*.allocator"};
  EXPECT_TRUE(w.wants("fabric.leaf0.allocator", "islip_allocator"));
  EXPECT_TRUE(w.wants("fabric.leaf12.allocator", "islip_allocator"));
  EXPECT_FALSE(w.wants("fabric.spine0.allocator", "islip_allocator"));
  EXPECT_FALSE(w.wants("fabric.leaf0.allocator.x", "islip_allocator")) << "the glob matches the whole name";
  w.scopes = {"fabric.sw?.allocator", "fabric.sw[1-2]?.allocator"};
  EXPECT_TRUE(w.wants("fabric.sw3.allocator", "m"));
  EXPECT_TRUE(w.wants("fabric.sw17.allocator", "m"));
  EXPECT_FALSE(w.wants("fabric.sw31.allocator", "m"));
  w.scopes = {"islip_allocator_alt"};  // a model name: every instance, exactly that model
  EXPECT_TRUE(w.wants("fabric.sw0.allocator", "islip_allocator_alt"));
  EXPECT_FALSE(w.wants("fabric.sw0.allocator", "islip_allocator"));
}

TEST(ConfigErrors, WaveformOptionsNeedTheFolderAndAnRtlBlock) {
  EXPECT_THAT(file_error_of(kQuickstart, {"switch.rtl_trace_from=1us"}),
              HasSubstr("switch.rtl_trace_from: needs the waveform folder switch.rtl_trace (fabricsim run --trace rtl)"));
  const std::string no_rtl = file_error_of(kQuickstart, {"switch.rtl_trace=/tmp/w", "switch.rtl_trace_format=vcd"});
  if (fabricsim::tlm_fabric::rtl_allocator_models().empty()) {
    EXPECT_THAT(no_rtl, HasSubstr("switch.rtl_trace_format: this build has no RTL twins; rebuild with -DFABRICSIM_RTL=ON"));
  } else {
    EXPECT_THAT(no_rtl, HasSubstr("switch.rtl_trace_format: no RTL block to record: every `*_impl` key"));
  }
  // The folder alone stays accepted with the C++ allocator (`run --trace rtl` says nothing is written).
  EXPECT_EQ(file_error_of(kQuickstart, {"switch.rtl_trace=/tmp/w"}), "<no error>");
}

TEST(ConfigCli, TraceFlagsAreRefusedWithoutAnRtlBlockNamingTheFlag) {
  const std::string out = ::testing::TempDir() + "fabricsim_ConfigCli_trace_flags";
  std::filesystem::remove_all(out);
  const auto r = run_command("run " + kQuickstart + " --quiet --out " + out + " --trace rtl --trace-to 2us");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("fabricsim: error: --trace-to 2us: switch.rtl_trace_to: "));
  EXPECT_THAT(r.output, ::testing::AnyOf(HasSubstr("no RTL block to record"), HasSubstr("no RTL twins")));
  const auto no_dir = run_command("run " + kQuickstart + " --quiet --out " + out + " --trace-scope 'fabric.*'");
  EXPECT_EQ(no_dir.exit_code, 2) << no_dir.output;
  EXPECT_THAT(no_dir.output,
              HasSubstr("--trace-scope fabric.*: output.trace_scope: needs the fabric trace output.trace"));
  EXPECT_FALSE(std::filesystem::exists(out + "/results.json"));
  std::filesystem::remove_all(out);
}

}  // namespace
