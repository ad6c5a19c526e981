// The validation suite (ctest -L validation): each test reproduces a closed form or a
// published result, states its source and tolerance, and records the measured and
// expected values as test properties. scripts/validation_report.sh runs this binary
// with --gtest_output=json and regenerates docs/validation.md from those properties.
//
// The scenarios are the ones the tier tests use (tests/test_phy.cpp, test_fabric.cpp,
// test_switch.cpp, test_collectives.cpp, test_nic.cpp), which are labelled
// `validation` too (tests/validation_labels.cmake); here each check also reports its
// numbers. A check whose measured value leaves the tolerance fails.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hw/phy.h"
#include "sim/child_run.h"
#include "sim/config.h"
#include "testbench/collectives.h"

namespace {

using fabricsim::hw::Bandwidth;
using fabricsim::hw::PhyParams;
using fabricsim::hw::PhyTiming;
using fabricsim::sim::load_config;
using fabricsim::sim::load_config_text;
using fabricsim::sim::run_in_child;
using nlohmann::json;

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

/// One validation check: records what the report prints, then asserts
/// expected + low <= measured <= expected + high.
void check(const std::string& what, const std::string& source, double measured, double expected, double low,
           double high, const std::string& unit, const std::string& tolerance) {
  ::testing::Test::RecordProperty("check", what);
  ::testing::Test::RecordProperty("source", source);
  ::testing::Test::RecordProperty("measured", num(measured));
  ::testing::Test::RecordProperty("expected", num(expected));
  ::testing::Test::RecordProperty("unit", unit);
  ::testing::Test::RecordProperty("tolerance", tolerance);
  EXPECT_GE(measured, expected + low) << what << " (" << source << ")";
  EXPECT_LE(measured, expected + high) << what << " (" << source << ")";
}

void check_near(const std::string& what, const std::string& source, double measured, double expected, double tol,
                const std::string& unit) {
  check(what, source, measured, expected, -tol, tol, unit, "+/- " + num(tol) + (unit.empty() ? "" : " " + unit));
}

void check_relative(const std::string& what, const std::string& source, double measured, double expected,
                    double rel, const std::string& unit) {
  const double t = std::abs(expected) * rel;
  check(what, source, measured, expected, -t, t, unit, rel < 1e-6 ? "exact (1e-9 relative)" : "+/- " + num(100 * rel) + "%");
}

json run(const fabricsim::sim::FabricConfig& c) {
  const json r = run_in_child(c);
  EXPECT_FALSE(r.contains("error")) << r.dump().substr(0, 400);
  return r;
}

// ------------------------------------------------------------------ PHY (hw/phy.h)

PhyParams phy(int lanes, double lane_gbps, fabricsim::hw::FecKind fec = fabricsim::hw::FecKind::rs544_514) {
  PhyParams p;
  p.lanes = lanes;
  p.lane_rate = Bandwidth::gbps(lane_gbps);
  p.fec = fec;
  return p;
}

TEST(ValidationPhy, Ethernet400GDataRate) {
  // 8 x 53.125 Gb/s = 425 Gb/s on the wire / (257/256 x 544/514) = 400 Gb/s.
  check_relative("400GbE data rate (8 x 53.125G PAM4, 256b/257b, RS(544,514))", "IEEE 802.3bs cl. 119",
                 PhyTiming(phy(8, 53.125)).data_rate().in_gbps(), 400.0, 1e-9, "Gb/s");
}

TEST(ValidationPhy, InfinibandNdrDataRate) {
  PhyParams p = phy(4, 106.25);
  p.framing = fabricsim::hw::Framing::infiniband;
  check_relative("IB NDR data rate (4 x 106.25G PAM4)", "IBTA vol. 2 rel. 1.5 (NDR 4x = 400 Gb/s)",
                 PhyTiming(p).data_rate().in_gbps(), 400.0, 1e-9, "Gb/s");
}

TEST(ValidationPhy, Ethernet100GKr4DataRate) {
  PhyParams p = phy(4, 25.78125, fabricsim::hw::FecKind::rs528_514);
  check_relative("100GBASE-KR4 data rate (4 x 25.78125G NRZ, RS(528,514))", "IEEE 802.3bj cl. 91",
                 PhyTiming(p).data_rate().in_gbps(), 100.0, 1e-9, "Gb/s");
}

TEST(ValidationPhy, Serialization9216BAt400G) {
  check_near("serialization of 9216 B at 400 Gb/s (L/B)", "DOMAIN.md (derived): 184 ns",
             PhyTiming(phy(8, 53.125)).serialization(9216).in_ns(), 9216 * 8 / 400.0, 1e-6, "ns");
}

TEST(ValidationPhy, Serialization1500BAt100G) {
  check_near("serialization of 1500 B at 100 Gb/s (L/B)", "DOMAIN.md (derived): 120 ns",
             PhyTiming(phy(4, 25.78125, fabricsim::hw::FecKind::rs528_514)).serialization(1500).in_ns(), 120.0, 1e-6,
             "ns");
}

TEST(ValidationPhy, Kp4CodewordOnOneLane) {
  check_near("RS(544,514) codeword accumulation on one 106.25G lane (5440 b / 106.25 Gb/s)",
             "IEEE 802.3 cl. 91/119 codeword; DOMAIN.md (derived): 51 ns",
             PhyTiming(phy(1, 106.25)).fec_accumulation().in_ns(), 5440 / 106.25, 1e-6, "ns");
}

TEST(ValidationPhy, Kr4CodewordOnFourLanes) {
  check_near("RS(528,514) codeword accumulation on 4 x 25.78125G (5280 b / 103.125 Gb/s)", "IEEE 802.3bj cl. 91",
             PhyTiming(phy(4, 25.78125, fabricsim::hw::FecKind::rs528_514)).fec_accumulation().in_ns(),
             5280 / 103.125, 1e-6, "ns");
}

TEST(ValidationPhy, LowLatencyFecHalvesAccumulation) {
  check_near("RS(272,257+1) accumulation on one 106.25G lane (2720 b: half of RS(544,514))",
             "IEEE 802.3ck / 802.3df low-latency FEC; DOMAIN.md",
             PhyTiming(phy(1, 106.25, fabricsim::hw::FecKind::rs272_257)).fec_accumulation().in_ns(), 2720 / 106.25,
             1e-6, "ns");
}

TEST(ValidationPhy, InterleavedFecPlusDecoder) {
  PhyParams p = phy(4, 106.25);
  p.fec_interleave = 2;
  p.fec_decoder_latency = fabricsim::hw::Time::ns(20);
  check_near("FEC latency, 400G over 4 x 106.25G, 2 codewords interleaved + 20 ns decoder (2 x 5440 b / 425 Gb/s + 20 ns)",
             "IEEE 802.3bs cl. 119 (2-way interleave); decoder latency is a parameter",
             PhyTiming(p).fec_latency().in_ns(), 2 * 5440 / 425.0 + 20, 1e-6, "ns");
}

// --------------------------------------------------- zero-load latency (one switch)

// tests/test_fabric.cpp's fabric: 400GbE, 3 m, 20 ns decoder, RoCEv2, 1 GHz core, 100-cycle pipeline.
const char* kOneSwitch = R"(
simulation: {seed: 7, duration: 20us, warmup: 0us}
link: {framing: roce_v2, lanes: 8, lane_rate: 53.125Gb/s, encoding: 256b/257b, fec: rs544_514,
       fec_decoder_latency: 20ns, cable_length: 3m}
switch:
  ports: 4
  core_clock: 1GHz
  pipeline: {parse: 10, route_lookup: 30, vl_mapping: 5, buffer_admission: 15,
             switch_allocation: 10, crossbar: 20, egress_scheduling: 10}
  input_buffer: 256KiB
nic: {mtu: 4KiB, rx_buffer: 256KiB}
topology: {endpoints: 4}
traffic:
  pattern: explicit
  arrival: periodic
  flows:
    - {src: 0, dst: 1, messages: 1, message_size: 1000B}
output: {sample_interval: 0s}
)";

// P + F = 15 + 12.8 + 20 ns; header (8 + 54 B) 1.24 ns; frame (8 + 1062 B) 21.4 ns;
// the switch acts on the first 1 ns edge after the header (CT) or tail (SAF), 100 cycles later sends.
double zero_load(bool cut_through) {
  const double pf = 47.8, header = 1.24, tail = 21.4;
  return std::ceil((cut_through ? header : tail) + pf) + 100 + tail + pf;
}

double one_packet_latency(const std::string& forwarding) {
  const json r = run(load_config_text(kOneSwitch, "validation.yaml", {"switch.forwarding=" + forwarding}));
  return r.at("endpoints").at(1).at("network_latency_ns").at("max").get<double>();
}

TEST(ValidationFabric, ZeroLoadCutThrough) {
  check_near("zero-load latency, one 1000 B packet, one cut-through switch: E(header + P + F) + pipeline + frame + P + F",
             "docs/switch.md closed form; DOMAIN.md (cut-through at packet granularity)",
             one_packet_latency("cut_through"), zero_load(true), 0.002, "ns");
}

TEST(ValidationFabric, ZeroLoadStoreAndForward) {
  check_near("zero-load latency, one 1000 B packet, one store-and-forward switch: E(frame + P + F) + pipeline + frame + P + F",
             "docs/switch.md closed form; SAF adds one serialization per hop (DOMAIN.md)",
             one_packet_latency("store_and_forward"), zero_load(false), 0.002, "ns");
}

TEST(ValidationFabric, CreditLoopRate) {
  // Credits for one 4 KiB frame: one packet per credit round trip (291.0 ns, see test_fabric.cpp).
  const json r = run(load_config_text(kOneSwitch, "validation.yaml",
                                      {"simulation.duration=100us", "simulation.warmup=10us", "switch.input_buffer=4160B",
                                       "traffic.flows=[{src: 0, dst: 1, load: 1.0, message_size: 64KiB}]"}));
  check_relative("credit loop: goodput with credits for one 4 KiB frame = 4096 B x 8 / 291.0 ns round trip",
                 "IBTA vol. 1 sec. 7.9 (rate = credits / credit round-trip time)",
                 r.at("endpoints").at(1).at("rx_throughput_gbps").get<double>(), 4096 * 8 / 291.0, 0.01, "Gb/s");
}

// ---------------------------------------------------- switch throughput (16 x 16)

double saturation(const std::string& buffer, const std::vector<std::string>& extra) {
  std::vector<std::string> o{"traffic.load=1.0", "simulation.duration=80us", "output.sample_interval=0s",
                             "switch.buffer=" + buffer};
  o.insert(o.end(), extra.begin(), extra.end());
  const json r = run(load_config(std::string(FABRICSIM_SOURCE_DIR) + "/examples/single_switch.yaml", o));
  return r.at("throughput").at("accepted_load").get<double>();
}

TEST(ValidationSwitch, KarolInputQueueing) {
  check_near("input FIFO 16 x 16, uniform Bernoulli, saturation throughput (HOL blocking)",
             "Karol, Hluchyj, Morgan, IEEE Trans. Commun. 1987, Table I: 0.600 for N = 16",
             saturation("input_fifo", {}), 0.600, 0.03, "of line rate");
}

TEST(ValidationSwitch, IslipVoq) {
  check("VOQ + iSLIP (1 iteration) 16 x 16, uniform Bernoulli, saturation throughput",
        "McKeown, IEEE/ACM ToN 7(2) 1999: ~100% under uniform i.i.d. traffic", saturation("voq", {"switch.allocator=islip"}),
        1.0, -0.07, 0.0, "of line rate", "-7% (finite window and buffers), never above 1");
}

TEST(ValidationSwitch, OutputQueued) {
  check("output-queued 16 x 16 (speedup 16), uniform Bernoulli, saturation throughput",
        "Karol et al. 1987: output queueing reaches the maximum throughput", saturation("output_queued", {"switch.speedup=16"}),
        1.0, -0.04, 0.0, "of line rate", "-4% (finite window and buffers), never above 1");
}

// ------------------------------------------------------------------- collectives

const char* kCollective = R"(
simulation: {seed: 2, duration: 200ms, warmup: 0us}
link: {framing: infiniband, lanes: 4, lane_rate: 106.25Gb/s, fec: rs544_514, fec_decoder_latency: 20ns, cable_length: 2m}
switch: {ports: 8, buffer: voq, allocator: islip}
topology: {kind: single_switch, endpoints: 8}
collective: {op: allreduce, algorithm: ring, sizes: [64MiB], iterations: 1}
output: {sample_interval: 0s}
)";

// IB NDR payload goodput: 400 Gb/s x 4096 / 4122 in GB/s.
constexpr double kNdrGBps = 400.0 * 4096 / 4122 / 8;

TEST(ValidationCollectives, RingAllReduceBandwidthBound) {
  const json r = run(load_config_text(kCollective, "validation.yaml"));
  const json& s = r.at("collective").at("sizes").at(0);
  check("ring AllReduce 64 MiB, 8 ranks, one NDR switch: bus bandwidth vs link goodput B (t >= 2(n-1)/n S/B)",
        "Patarasuk & Yuan, JPDC 2009 (bandwidth-optimal ring)", s.at("busbw_GBps").get<double>(), kNdrGBps,
        -0.05 * kNdrGBps, 0.001 * kNdrGBps, "GB/s", "-5% (2(n-1) step latencies), +0.1%");
}

TEST(ValidationCollectives, NcclBusBandwidthAllReduce) {
  const json r = run(load_config_text(kCollective, "validation.yaml", {"collective.sizes=[4MiB]"}));
  const json& s = r.at("collective").at("sizes").at(0);
  check_near("AllReduce busbw / algbw for n = 8: 2(n-1)/n", "nccl-tests doc/PERFORMANCE.md",
             s.at("busbw_GBps").get<double>() / s.at("algbw_GBps").get<double>(), 2.0 * 7 / 8, 1e-9, "");
}

TEST(ValidationCollectives, NcclBusBandwidthAllGather) {
  const json r = run(load_config_text(kCollective, "validation.yaml",
                                      {"collective.op=allgather", "collective.sizes=[4MiB]"}));
  const json& s = r.at("collective").at("sizes").at(0);
  check_near("AllGather busbw / algbw for n = 8: (n-1)/n", "nccl-tests doc/PERFORMANCE.md",
             s.at("busbw_GBps").get<double>() / s.at("algbw_GBps").get<double>(), 7.0 / 8, 1e-9, "");
}

TEST(ValidationCollectives, NcclBusFactorsReduceScatterAlltoall) {
  using fabricsim::testbench::CollectiveOp;
  check_near("ReduceScatter + AlltoAll bus factors for n = 64, each (n-1)/n: sum 2 x 63/64", "nccl-tests doc/PERFORMANCE.md",
             fabricsim::testbench::bus_factor(CollectiveOp::reduce_scatter, 64) +
                 fabricsim::testbench::bus_factor(CollectiveOp::alltoall, 64),
             2 * 63.0 / 64, 1e-12, "");
}

// --------------------------------------------------------------------------- NIC

const char* kBackToBack = R"(
simulation: {seed: 5, duration: 20ms, warmup: 0us}
link: {framing: infiniband, lanes: 4, lane_rate: 106.25Gb/s, fec: rs544_514, fec_decoder_latency: 20ns, cable_length: 2m}
topology: {kind: back_to_back}
perftest: {test: write_lat, sizes: [2B], iterations: 20}
output: {sample_interval: 0s}
)";

TEST(ValidationNic, WriteLatencyIsTheSumOfItsComponents) {
  // doorbell 250 + processing 100 + wire (0.56 + 10 + 12.8 + 20) + PCIe write of 2 B ((2 + 24) B at
  // 504.12 Gb/s) + 300 + poll 50 ns.
  const double expected = 250 + 100 + (0.56 + 10 + 12.8 + 20) + (2 + 24) * 8 / 504.1230769 + 300 + 50;
  const json r = run(load_config_text(kBackToBack, "validation.yaml"));
  check_near("ib_write_lat 2 B back to back (NDR, Gen5 x16): half round trip = sum of host, NIC, PCIe and wire parts",
             "perftest ib_write_lat convention; docs/nic.md component values",
             r.at("perftest").at("sizes").at(0).at("t_typical_us").get<double>() * 1000, expected, 0.01, "ns");
}

// DCQCN: two RDMA flows into one 400GbE port (PFC lossless, ECN marking).
const char* kDcqcn = R"(
simulation: {seed: 1, duration: 2ms, warmup: 500us}
link: {framing: roce_v2, cable_length: 3m, fec_decoder_latency: 20ns, flow_control: pfc}
switch:
  ports: 4
  buffer: shared_memory
  shared_buffer: 8MiB
  pfc: {xoff: 512KiB, xon: 256KiB, headroom: 128KiB}
  ecn: {enabled: true, kmin: 5KB, kmax: 200KB, pmax: 0.01}
nic: {congestion_control: {kind: dcqcn}}
topology: {endpoints: 3}
traffic:
  pattern: explicit
  transport: rdma
  arrival: periodic
  flows:
    - {src: 1, dst: 0, load: 1.0, message_size: 1MiB}
    - {src: 2, dst: 0, load: 1.0, message_size: 1MiB}
output: {sample_interval: 0s}
)";

TEST(ValidationNic, DcqcnConvergesToFairShare) {
  const json r = run(load_config_text(kDcqcn, "validation.yaml"));
  auto goodput = [&](int e) {
    return r.at("endpoints").at(e).at("rdma").at("qps").at(0).at("goodput_gbps").get<double>();
  };
  check_near("DCQCN, two flows into one 400G port: goodput ratio of the flows", "Zhu et al., SIGCOMM 2015, Fig. 12 (fair share)",
             goodput(1) / goodput(2), 1.0, 0.15, "");
}

TEST(ValidationNic, PfcIncastWithHeadroomIsLossless) {
  const json r = run(load_config(std::string(FABRICSIM_SOURCE_DIR) + "/examples/single_switch.yaml",
                                 {"traffic.pattern=incast", "traffic.incast_target=0",
                                  "traffic.incast_senders=[1, 2, 3, 4, 5, 6, 7, 8]", "traffic.load=1.0",
                                  "simulation.duration=40us", "simulation.warmup=5us", "output.sample_interval=0s",
                                  "link.flow_control=pfc", "switch.pfc.xoff=32KiB", "switch.pfc.xon=16KiB",
                                  "switch.pfc.headroom=64KiB"}));
  check_near("PFC 8:1 incast, headroom above the pause round trip: dropped packets",
             "IEEE 802.1Qbb; headroom rule of NVIDIA mlxsw (DOMAIN.md)", r.at("packets").at("dropped").get<double>(), 0,
             0, "packets");
}

}  // namespace
