// Switch microarchitecture against results from the literature and closed
// forms: buffer organisations, allocators, VL/TC arbitration, PFC, ECN.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/child_run.h"
#include "sim/config.h"
#include "tests/config_error.h"
#include "tests/fabric_run.h"
#include "tests/validation.h"
#include "tlm/clock.h"
#include "tlm/sim_time.h"

namespace {

using fabricsim::sim::load_config;
using fabricsim::testing::expect_near;
using fabricsim::testing::expect_relative;
using fabricsim::testing::expect_within;
using fabricsim::testing::run_checked;
using fabricsim::testing::with;
using nlohmann::json;

const std::string kSingleSwitch = std::string(FABRICSIM_SOURCE_DIR) + "/examples/single_switch.yaml";

// Every run checks packet conservation (tests/fabric_run.h).
json run(const std::vector<std::string>& overrides) {
  return run_checked(load_config(kSingleSwitch, with(overrides, {"output.sample_interval=0s"})));
}

// Edge k of a core clock is k periods rounded to the kernel resolution, half away
// from zero (std::llround), however the rounding is computed.
TEST(ClockDomain, EdgesRoundLikeLlround) {
  const sc_core::sc_time tick = sc_core::sc_get_time_resolution();
  // 2000 GHz and 400 GHz: periods of 0.5 and 2.5 ticks, so odd edges sit exactly halfway.
  for (double ghz : {1.0, 1.5, 1.25, 1.3, 2.7, 0.3, 2000.0, 400.0}) {
    const fabricsim::tlm_fabric::ClockDomain clock(fabricsim::hw::Frequency::ghz(ghz));
    const double period_s = fabricsim::hw::Frequency::ghz(ghz).period().in_seconds();
    for (std::uint64_t k : {0ull, 1ull, 2ull, 3ull, 1000ull, 123457ull, 3000000001ull, 1ull << 40}) {
      const auto expected = tick * static_cast<double>(std::llround(static_cast<double>(k) * period_s / tick.to_seconds()));
      EXPECT_EQ(clock.at(k), expected) << ghz << " GHz, edge " << k;
    }
  }
}

// The inline time helpers give exactly what the SystemC library's calls give: a time of
// a tick count (sc_time::from_value) and a time in seconds (sc_time::to_seconds), over
// the range a run covers and beyond.
TEST(SimTime, FromTicksAndSecondsMatchTheLibrary) {
  for (std::uint64_t v : {0ull, 1ull, 2ull, 666ull, 667ull, 1000ull, 123456789ull, 300000000ull, 1ull << 40,
                          (1ull << 53) + 1, ~0ull >> 1}) {
    const sc_core::sc_time t = sc_core::sc_time::from_value(v);
    EXPECT_EQ(fabricsim::tlm_fabric::from_ticks(v), t) << v;
    EXPECT_EQ(fabricsim::tlm_fabric::from_ticks(v).value(), v) << v;
    EXPECT_EQ(fabricsim::tlm_fabric::seconds(t), t.to_seconds()) << v;  // bit for bit
  }
}

// A time in seconds (a rate limiter's gap, a reduction's time) as the library makes it,
// over gaps from a femtosecond to a second, at random and at the roundings' edges.
TEST(SimTime, FromSecondsMatchesTheLibrary) {
  std::mt19937_64 rng(7);
  // Around half a tick and a tick (1 ps), and gaps a run makes.
  std::vector<double> gaps = {0.0, 1e-15, 4e-13, 5e-13, 6e-13, 1e-12, 1.5e-12, 2.5e-12, 20.48e-9, 1e-6, 0.1, 1.0};
  std::uniform_real_distribution<double> exponent(-15, 0);
  for (int k = 0; k < 100000; ++k) gaps.push_back(std::pow(10.0, exponent(rng)));
  for (double s : gaps)
    EXPECT_EQ(fabricsim::tlm_fabric::from_seconds(s), sc_core::sc_time(s, sc_core::SC_SEC)) << s;
}

// The edge after a time is the next edge of the rounded sequence, also where the edges are
// unevenly spaced (1.5 GHz at 1 ps: 667, 666, 667 ps apart), so a switch that retries a
// head "on the next edge", and the every-edge wake-up reference, skip no edge. Before,
// both used t + period(), which jumped over every third edge at 1.5 GHz.
TEST(ClockDomain, EdgeAfterIsTheNextRoundedEdge) {
  const sc_core::sc_time tick = sc_core::sc_get_time_resolution();
  for (double ghz : {1.0, 1.5, 1.25, 1.3, 2.7, 0.3}) {
    const fabricsim::tlm_fabric::ClockDomain clock(fabricsim::hw::Frequency::ghz(ghz));
    for (std::uint64_t k : {0ull, 1ull, 2ull, 3ull, 4ull, 5ull, 1000ull, 1001ull, 123457ull, 3000000001ull}) {
      EXPECT_EQ(clock.edge_after(clock.at(k)), clock.at(k + 1)) << ghz << " GHz, edge " << k;
      // From between two edges, the later one.
      if (clock.at(k + 1) - clock.at(k) > tick) {
        EXPECT_EQ(clock.edge_after(clock.at(k) + tick), clock.at(k + 1)) << ghz << " GHz, edge " << k;
      }
    }
  }
}

// The first edge at or after any time, from every tick around a few edges, against a
// scan of the edge sequence (edges land on, just before and just after the time).
TEST(ClockDomain, EdgeAtOrAfterIsTheFirstRoundedEdgeNotBefore) {
  const sc_core::sc_time tick = sc_core::sc_get_time_resolution();
  for (double ghz : {1.0, 1.5, 1.25, 1.3, 2.7, 0.3, 2000.0}) {
    const fabricsim::tlm_fabric::ClockDomain clock(fabricsim::hw::Frequency::ghz(ghz));
    for (std::uint64_t k0 : {0ull, 7ull, 123457ull, 3000000001ull}) {
      std::uint64_t k = k0;
      for (sc_core::sc_time t = clock.at(k0); t <= clock.at(k0 + 4); t += tick) {
        while (clock.at(k) < t) ++k;
        EXPECT_EQ(clock.edge_at_or_after(t), clock.at(k)) << ghz << " GHz, " << t;
      }
    }
  }
}

double accepted(const json& r) { return r.at("throughput").at("accepted_load").get<double>(); }

// Saturation throughput of a 16x16 switch under uniform Bernoulli traffic with
// fixed-size packets (one MTU each), offered load 1.0.
const std::vector<std::string> kSaturated = {"traffic.load=1.0", "simulation.duration=80us"};

TEST(BufferOrganisation, InputFifoSaturatesAtKarolBound) {
  // Karol, Hluchyj, Morgan, "Input versus output queueing on a space-division
  // packet switch", IEEE Trans. Commun. 1987, Table I: HOL blocking limits a
  // 16x16 input-queued switch to 0.600 (2 - sqrt(2) = 0.586 as N grows).
  const json r = run(with(kSaturated, {"switch.buffer=input_fifo"}));
  expect_near({"Switch", "input FIFO 16 x 16, uniform Bernoulli, saturation throughput (HOL blocking)",
               "Karol, Hluchyj, Morgan, IEEE Trans. Commun. 1987, Table I: 0.600 for N = 16"},
              accepted(r), 0.600, 0.03, "of line rate");
}

TEST(BufferOrganisation, VoqWithIslipRecoversThroughput) {
  // McKeown, IEEE/ACM ToN 1999: VOQ with iSLIP sustains close to 100% under
  // uniform i.i.d. Bernoulli traffic, even with one iteration.
  const json r = run(with(kSaturated, {"switch.buffer=voq", "switch.allocator=islip"}));
  expect_within({"Switch", "VOQ + iSLIP (1 iteration) 16 x 16, uniform Bernoulli, saturation throughput",
                 "McKeown, IEEE/ACM ToN 7(2) 1999: ~100% under uniform i.i.d. traffic"},
                accepted(r), 1.0, -0.07, 0.0, "of line rate", "-7% (finite window and buffers), never above 1");
}

TEST(BufferOrganisation, OutputQueuedReachesFullThroughput) {
  // Karol et al. 1987: output queueing achieves the maximum throughput; only
  // finite buffers and the measurement window keep it below 1.
  const json r = run(with(kSaturated, {"switch.buffer=output_queued", "switch.speedup=16"}));
  expect_within({"Switch", "output-queued 16 x 16 (speedup 16), uniform Bernoulli, saturation throughput",
                 "Karol et al. 1987: output queueing reaches the maximum throughput"},
                accepted(r), 1.0, -0.04, 0.0, "of line rate", "-4% (finite window and buffers), never above 1");
}

TEST(BufferOrganisation, OutputQueuedNeedsCrossbarSpeedup) {
  // Output queueing behind a crossbar with speedup S < N is combined input-output
  // queueing: a packet whose output already takes S packets this cell time waits at its
  // input, with the packets behind it (Oie, Murata, Kubota, Miyahara, IEEE Trans. Commun.
  // 1992). At S = 1 that is head-of-line blocking: Karol et al. 1987's 0.600 for N = 16,
  // and never worse than input FIFOs of the same size. Mean of four seeds over 280 us,
  // where one seed's window is within +-0.004 of the mean.
  const std::vector<std::string> window = {"traffic.load=1.0", "simulation.duration=300us", "simulation.warmup=20us"};
  auto mean_accepted = [&](const std::vector<std::string>& overrides) {
    double sum = 0;
    for (int seed = 1; seed <= 4; ++seed)
      sum += accepted(run(with(with(window, overrides), {"simulation.seed=" + std::to_string(seed)})));
    return sum / 4;
  };
  const double fifo = mean_accepted({"switch.buffer=input_fifo"});
  const double s1 = mean_accepted({"switch.buffer=output_queued", "switch.speedup=1"});
  expect_near({"Switch", "output-queued 16 x 16, crossbar speedup 1, uniform Bernoulli, saturation throughput (HOL blocking)",
               "Karol, Hluchyj, Morgan, IEEE Trans. Commun. 1987, Table I: 0.600 for N = 16"},
              s1, 0.600, 0.03, "of line rate");
  EXPECT_GE(s1, fifo - 0.005) << "output queues at speedup 1 below input FIFOs (" << fifo << ")";
  // Each input and output moves two packets a cell time at S = 2: a blocked input catches
  // up, and the switch comes within the window's margin of output queueing.
  const double s2 = accepted(run(with(kSaturated, {"switch.buffer=output_queued", "switch.speedup=2"})));
  EXPECT_GT(s2, 0.96);
}

TEST(BufferOrganisation, CioqWithSpeedupTwoMatchesOutputQueueing) {
  // Chuang, Goel, McKeown, Prabhakar, "Matching output queueing with a combined
  // input/output-queued switch", IEEE JSAC 17(6) 1999: with VOQ inputs and speedup 2 a
  // CIOQ switch can behave exactly as an output-queued one. Exact emulation needs a
  // stable-marriage matching; the switch matches by iSLIP's rounds, so this checks the
  // practical consequence under uniform Bernoulli traffic: the throughput of output
  // queueing (speedup = radix) within 0.01, and at load 0.9 its mean latency within 2%.
  const double oq = accepted(run(with(kSaturated, {"switch.buffer=output_queued", "switch.speedup=16"})));
  const double cioq2 = accepted(run(with(kSaturated, {"switch.buffer=cioq", "switch.speedup=2"})));
  expect_near({"Switch", "CIOQ (VOQ inputs) 16 x 16, crossbar speedup 2, uniform Bernoulli, saturation throughput",
               "Chuang, Goel, McKeown, Prabhakar, IEEE JSAC 17(6) 1999: speedup 2 matches output queueing"},
              cioq2, oq, 0.01, "of line rate");
  const std::vector<std::string> loaded = {"traffic.load=0.9", "simulation.duration=60us"};
  auto mean_latency = [](const json& r) { return r.at("latency").at("network_latency_ns").at("mean").get<double>(); };
  const double oq_ns = mean_latency(run(with(loaded, {"switch.buffer=output_queued", "switch.speedup=16"})));
  const double cioq2_ns = mean_latency(run(with(loaded, {"switch.buffer=cioq", "switch.speedup=2"})));
  expect_relative({"Switch", "CIOQ (VOQ inputs) 16 x 16, crossbar speedup 2, uniform Bernoulli load 0.9, mean latency",
                   "Chuang, Goel, McKeown, Prabhakar, IEEE JSAC 17(6) 1999: speedup 2 matches output queueing"},
                  cioq2_ns, oq_ns, 0.02, "ns");
  // At speedup 1 a blocked head no longer holds up its input's packets for other outputs
  // (McKeown, IEEE/ACM ToN 1999): above head-of-line blocking's 2 - sqrt(2) = 0.586
  // (Karol et al. 1987) and above FIFO inputs at the same speedup.
  const double cioq1 = accepted(run(with(kSaturated, {"switch.buffer=cioq", "switch.speedup=1"})));
  const double fifo1 = accepted(run(with(kSaturated, {"switch.buffer=output_queued", "switch.speedup=1"})));
  expect_within({"Switch", "CIOQ (VOQ inputs) 16 x 16, crossbar speedup 1, uniform Bernoulli, saturation throughput",
                 "Karol, Hluchyj, Morgan, IEEE Trans. Commun. 1987: head-of-line blocking limits FIFO inputs to 0.586"},
                cioq1, 0.586, 0.05, 0.414, "of line rate", "at least 0.05 above the HOL limit");
  EXPECT_GT(cioq1, fifo1 + 0.05) << "VOQ inputs no better than FIFO inputs at speedup 1";
}

TEST(BufferOrganisation, SharedMemoryReachesFullThroughput) {
  const json r = run(with(kSaturated, {"switch.buffer=shared_memory"}));
  EXPECT_GT(accepted(r), 0.96);
}

TEST(BufferOrganisation, LowLoadIsAcceptedByEveryOrganisation) {
  for (const char* b : {"input_fifo", "voq", "output_queued", "cioq", "shared_memory"}) {
    const json r = run({"traffic.load=0.3", std::string("switch.buffer=") + b});
    EXPECT_NEAR(accepted(r), 0.3, 0.02) << b;
  }
}

// Incast: 8 senders into endpoint 0 at full rate.
const std::vector<std::string> kIncast = {"traffic.pattern=incast", "traffic.incast_target=0",
                                          "traffic.incast_senders=[1, 2, 3, 4, 5, 6, 7, 8]", "traffic.load=1.0",
                                          "simulation.duration=40us", "simulation.warmup=5us"};

std::uint64_t total(const json& r, const char* key) {
  std::uint64_t n = 0;
  for (const auto& port : r.at("ports"))
    for (const auto& vl : port.at("vls")) n += vl.at(key).get<std::uint64_t>();
  return n;
}

TEST(Pfc, IncastWithEnoughHeadroomIsLossless) {
  // Headroom covers the pause round trip: pause frame + cable + FEC + response
  // + one MTU frame in flight (IEEE 802.1Qbb; headroom rule of the NVIDIA mlxsw driver).
  const json r = run(with(kIncast, {"link.flow_control=pfc", "switch.pfc.xoff=32KiB", "switch.pfc.xon=16KiB",
                                    "switch.pfc.headroom=64KiB"}));
  expect_near({"Nic", "PFC 8:1 incast, headroom above the pause round trip: dropped packets",
               "IEEE 802.1Qbb; headroom rule of the NVIDIA mlxsw driver wiki (Quality of Service)"},
              r.at("packets").at("dropped").get<double>(), 0, 0, "packets");
  EXPECT_GT(total(r, "pause_sent"), 0u);
  // The congested egress still runs at line rate.
  EXPECT_GT(r.at("endpoints").at(0).at("accepted_load").get<double>(), 0.97);
}

TEST(Pfc, IncastWithTooLittleHeadroomDropsAndCounts) {
  const json r = run(with(kIncast, {"link.flow_control=pfc", "switch.pfc.xoff=8KiB", "switch.pfc.xon=4KiB",
                                    "switch.pfc.headroom=4160B"}));
  EXPECT_GT(r.at("packets").at("dropped").get<long>(), 0);
  EXPECT_EQ(r.at("packets").at("dropped").get<std::uint64_t>(), total(r, "drops"));
}

TEST(Lossy, IncastOverflowsASmallBufferAndCountsDrops) {
  const json r = run(with(kIncast, {"link.flow_control=none", "switch.input_buffer=16KiB"}));
  EXPECT_GT(r.at("packets").at("dropped").get<long>(), 0);
  EXPECT_EQ(total(r, "pause_sent"), 0u);
  EXPECT_GT(r.at("endpoints").at(0).at("accepted_load").get<double>(), 0.9);
}

TEST(Lossy, SharedMemoryDynamicThresholdDrops) {
  const json r = run(with(kIncast, {"link.flow_control=none", "switch.buffer=shared_memory",
                                    "switch.shared_buffer=128KiB", "switch.alpha=0.5"}));
  EXPECT_GT(r.at("packets").at("dropped").get<long>(), 0);
}

TEST(Ecn, MarksOnlyWhenTheQueueBuilds) {
  const std::vector<std::string> ecn = {"switch.ecn.enabled=true", "switch.ecn.kmin=20KiB", "switch.ecn.kmax=200KiB",
                                        "switch.ecn.pmax=0.2"};
  const json congested = run(with(with(kIncast, ecn), {"switch.buffer=output_queued", "switch.speedup=16"}));
  EXPECT_GT(total(congested, "ecn_marks"), 0u);
  const json light = run(with(ecn, {"traffic.load=0.2"}));
  EXPECT_EQ(total(light, "ecn_marks"), 0u);
}

// Two flows on different service levels into one egress: the egress
// scheduler's weights decide the split.
const std::vector<std::string> kTwoClasses = {
    "switch.vls=2", "switch.sl_to_vl=[0, 1]", "traffic.pattern=explicit", "simulation.duration=80us",
    "traffic.flows=[{src: 1, dst: 0, sl: 0, load: 1.0, message_size: 64KiB},"
    " {src: 2, dst: 0, sl: 1, load: 1.0, message_size: 64KiB}]"};

double share_of_second(const json& r) {
  const double a = r.at("endpoints").at(1).at("tx_packets"), b = r.at("endpoints").at(2).at("tx_packets");
  return b / (a + b);
}

TEST(VlArbitration, IbWeightsSetTheShares) {
  // IBTA vol.1 7.6.9: weights in 64-byte units; 64 and 192 give one and three
  // 4 KiB packets per table round, so VL1 gets 3/4 of the egress.
  const json r = run(with(kTwoClasses, {"link.framing=infiniband", "switch.egress_scheduler=ib_vl_arb",
                                        "switch.vl_arbitration.low=[{vl: 0, weight: 64}, {vl: 1, weight: 192}]"}));
  EXPECT_NEAR(share_of_second(r), 0.75, 0.02);
}

TEST(VlArbitration, IbHighPriorityTableWinsWithUnlimitedLimit) {
  const json r = run(with(kTwoClasses, {"link.framing=infiniband", "switch.egress_scheduler=ib_vl_arb",
                                        "switch.vl_arbitration.high=[{vl: 1, weight: 64}]",
                                        "switch.vl_arbitration.low=[{vl: 0, weight: 64}]",
                                        "switch.vl_arbitration.high_limit=255"}));
  // The low VL only gets the odd slot when the high VL's next packet is still in the pipeline.
  EXPECT_GT(share_of_second(r), 0.95);
}

TEST(VlArbitration, EthernetDwrrWeightsSetTheShares) {
  // Shreedhar & Varghese, SIGCOMM 1995: DWRR byte shares follow the weights.
  const json r = run(with(kTwoClasses, {"switch.egress_scheduler=tc_dwrr", "switch.tc_scheduler.weights=[1, 3]",
                                        "switch.tc_scheduler.quantum=4KiB"}));
  EXPECT_NEAR(share_of_second(r), 0.75, 0.02);
}

TEST(VlArbitration, EthernetStrictPriorityStarvesLowerClass) {
  const json r = run(with(kTwoClasses, {"switch.egress_scheduler=tc_dwrr", "switch.tc_scheduler.strict=[false, true]"}));
  EXPECT_GT(share_of_second(r), 0.95);
}

TEST(Forwarding, AdaptiveMatchesCutThroughAtZeroLoad) {
  const std::vector<std::string> one = {"traffic.pattern=explicit", "traffic.arrival=periodic", "simulation.warmup=0s",
                                        "traffic.flows=[{src: 0, dst: 1, messages: 1, message_size: 1000B}]"};
  const double ct = run(with(one, {"switch.forwarding=cut_through"})).at("latency").at("network_latency_ns").at("max");
  const double ad = run(with(one, {"switch.forwarding=adaptive"})).at("latency").at("network_latency_ns").at("max");
  const double saf = run(with(one, {"switch.forwarding=store_and_forward"})).at("latency").at("network_latency_ns").at("max");
  EXPECT_GT(ct, 0.0);
  EXPECT_DOUBLE_EQ(ad, ct);
  EXPECT_GT(saf, ct);
}

}  // namespace

namespace {

std::string error_of(const std::vector<std::string>& overrides) {
  return fabricsim::testing::file_error_of(kSingleSwitch, overrides);
}

TEST(SwitchConfig, ArchitecturalMistakesAreConfigErrors) {
  using ::testing::HasSubstr;
  EXPECT_THAT(error_of({"switch.vls=10"}), HasSubstr("tc_dwrr takes vls 1..8"));
  EXPECT_THAT(error_of({"link.framing=infiniband", "switch.vls=2", "switch.vl_arbitration.low=[{vl: 0, weight: 4}]"}),
              HasSubstr("VL 1 has no table entry with weight > 0"));
  EXPECT_THAT(error_of({"switch.ecn={enabled: true, kmin: 0B, kmax: 0B}"}), HasSubstr("switch.ecn.kmax: must be above 0 when enabled"));
  EXPECT_THAT(error_of({"switch.buffer=shared_memory", "switch.shared_buffer=2MiB"}),
              HasSubstr("shared pool must cover every input's credit allotment in cells"));
  EXPECT_THAT(error_of({"traffic.flows=[{src: 0, dst: 0}]", "traffic.pattern=explicit"}),
              HasSubstr("--set traffic.flows: traffic.flows[0].dst"));
}

}  // namespace
