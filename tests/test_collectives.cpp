// Collectives over RDMA against their closed forms (nccl-tests definitions).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/child_run.h"
#include "sim/config.h"
#include "sim/config_reader.h"
#include "testbench/collectives.h"
#include "tests/config_error.h"
#include "tests/fabric_run.h"
#include "tests/validation.h"

namespace {

using fabricsim::sim::load_config_text;
using fabricsim::sim::run_in_child;
using fabricsim::testing::expect_near;
using fabricsim::testing::expect_within;
using fabricsim::testing::run_checked;
using fabricsim::testing::with;
using nlohmann::json;

// Eight NDR NICs on one non-blocking switch (VOQ + iSLIP).
const char* kFabric = R"(
simulation: {seed: 2, duration: 200ms, warmup: 0us}
link: {framing: infiniband, lanes: 4, lane_rate: 106.25Gb/s, fec: rs544_514, fec_decoder_latency: 20ns, cable_length: 2m}
switch: {ports: 8, buffer: voq, allocator: islip}
topology: {kind: single_switch, endpoints: 8}
collective: {op: allreduce, algorithm: ring, sizes: [64MiB], iterations: 1}
output: {sample_interval: 0s}
)";

json run(const std::vector<std::string>& overrides, const char* yaml = kFabric) {
  return run_checked(load_config_text(yaml, "coll.yaml", overrides));
}

const json& size0(const json& r) { return r.at(r.contains("collective") ? "collective" : "perftest").at("sizes").at(0); }

// IB NDR payload goodput: 400 Gb/s x 4096 / 4122 = 397.5 Gb/s = 49.69 GB/s.
constexpr double kLinkGBps = 400.0 * 4096 / 4122 / 8;

TEST(RingAllReduce, LargeMessagesReachTheBandwidthOptimalBound) {
  // Patarasuk & Yuan 2009: t >= 2(n-1)/n * S/B, i.e. bus bandwidth <= B; the
  // per-step latency (2(n-1) steps) costs a few percent at 64 MiB.
  const json r = run({});
  EXPECT_TRUE(r.at("collective").at("finished").get<bool>());
  const double busbw = size0(r).at("busbw_GBps");
  expect_within({"Collectives",
                 "ring AllReduce 64 MiB, 8 ranks, one NDR switch: bus bandwidth vs link goodput B (t >= 2(n-1)/n S/B)",
                 "Patarasuk & Yuan, JPDC 2009 (bandwidth-optimal ring)"},
                busbw, kLinkGBps, -0.05 * kLinkGBps, 0.001 * kLinkGBps, "GB/s", "-5% (2(n-1) step latencies), +0.1%");
  expect_near({"Collectives", "AllReduce busbw / algbw for n = 8: 2(n-1)/n", "nccl-tests doc/PERFORMANCE.md"},
              busbw / size0(r).at("algbw_GBps").get<double>(), 2.0 * 7 / 8, 1e-9, "");
}

// A ring has no output contention but the ACKs: each rank's ACKs share its link with its
// data and meet the previous rank's data at the output they leave on. Output queues at
// crossbar speedup 1 hold an ACK at its input only while that output's write port is
// taken, as an input FIFO holds it for the output's wire: no slower than input FIFOs.
TEST(RingAllReduce, OutputQueuesAreNoSlowerThanInputFifos) {
  const double fifo = size0(run({"switch.buffer=input_fifo"})).at("time_us");
  const double oq = size0(run({"switch.buffer=output_queued", "switch.speedup=1"})).at("time_us");
  EXPECT_LE(oq, fifo);
}

TEST(RingAllReduce, SmallMessagesAreLatencyBound) {
  // t ~ 2(n-1) a: each step is one WRITE of S/n that must land before the next.
  const json coll = run({"collective.sizes=[8KiB]"});
  const json lat = run({"collective=null", "perftest={test: write_lat, sizes: [1KiB], iterations: 5}"});
  const double step_us = size0(lat).at("t_typical_us");
  EXPECT_NEAR(size0(coll).at("time_us").get<double>(), 14 * step_us, 0.15 * 14 * step_us);
}

TEST(Collectives, BusBandwidthDefinitionsAndBounds) {
  for (const char* op : {"reduce_scatter", "allgather", "alltoall"}) {
    const std::string algo = std::string(op) == "alltoall" ? "direct" : "ring";
    const json r = run({std::string("collective.op=") + op, "collective.algorithm=" + algo, "collective.sizes=[16MiB]"});
    const double algbw = size0(r).at("algbw_GBps"), busbw = size0(r).at("busbw_GBps");
    if (std::string(op) == "allgather")
      expect_near({"Collectives", "AllGather busbw / algbw for n = 8: (n-1)/n", "nccl-tests doc/PERFORMANCE.md"},
                  busbw / algbw, 7.0 / 8, 1e-9, "");
    else
      EXPECT_NEAR(busbw / algbw, 7.0 / 8, 1e-9) << op;  // (n-1)/n
    EXPECT_LE(busbw, kLinkGBps * 1.001) << op;
    EXPECT_GT(busbw, kLinkGBps * 0.8) << op;
  }
}

TEST(RingReduceScatter, ReducesAfterEachOfItsReceives) {
  // Ring ReduceScatter (Thakur, Rabenseifner and Gropp, IJHPCA 2005; Patarasuk & Yuan,
  // JPDC 2009): p-1 steps, each a receive of S/p and its reduction, the last included,
  // t = (p-1)(a + S/(pB)) + (p-1)(S/p)/R. The steps are serial, so a reduction rate R
  // adds (p-1)(S/p)/R to the time with R unlimited; tolerance 1%.
  const double p = 8, S = 16.0 * (1 << 20), R = 100e9 / 8;  // 100 Gb/s
  const std::vector<std::string> rs{"collective.op=reduce_scatter", "collective.sizes=[16MiB]"};
  auto with_rate = [&](const char* rate) {
    std::vector<std::string> o = rs;
    o.push_back(std::string("collective.reduce_bandwidth=") + rate);
    return size0(run(o)).at("time_us").get<double>();
  };
  const double reductions = with_rate("100Gb/s") - with_rate("1000000Gb/s");
  const double expected = (p - 1) * (S / p) / R * 1e6 - (p - 1) * (S / p) / (1e15 / 8) * 1e6;
  expect_near({"Collectives", "ring ReduceScatter 16 MiB, 8 ranks: time with R = 100 Gb/s minus R unlimited = (p-1)(S/p)/R",
               "Thakur, Rabenseifner & Gropp, IJHPCA 2005"},
              reductions, expected, 0.01 * expected, "us");
}

TEST(Collectives, NcclBusFactorsReduceScatterAlltoall) {
  using fabricsim::testbench::bus_factor;
  using fabricsim::testbench::CollectiveOp;
  expect_near({"Collectives", "ReduceScatter + AlltoAll bus factors for n = 64, each (n-1)/n: sum 2 x 63/64",
               "nccl-tests doc/PERFORMANCE.md"},
              bus_factor(CollectiveOp::reduce_scatter, 64) + bus_factor(CollectiveOp::alltoall, 64), 2 * 63.0 / 64,
              1e-12, "");
}

TEST(Collectives, HalvingDoublingAndDoubleBinaryTreeComplete) {
  for (const char* algo : {"halving_doubling", "double_binary_tree"}) {
    const json r = run({std::string("collective.algorithm=") + algo, "collective.sizes=[8KiB, 16MiB]"});
    EXPECT_TRUE(r.at("collective").at("finished").get<bool>()) << algo;
    const json& big = r.at("collective").at("sizes").at(1);
    EXPECT_LE(big.at("busbw_GBps").get<double>(), kLinkGBps * 1.001) << algo;
    EXPECT_GT(big.at("busbw_GBps").get<double>(), kLinkGBps * 0.5) << algo;
  }
  // Rabenseifner: 2 log2 p steps instead of 2(p-1): faster than the ring at small sizes.
  const double hd = size0(run({"collective.algorithm=halving_doubling", "collective.sizes=[8KiB]"})).at("time_us");
  const double ring = size0(run({"collective.sizes=[8KiB]"})).at("time_us");
  EXPECT_LT(hd, ring);
}

// Double binary tree: the busiest ranks send 2S (S/2 up and S down where they are inner
// nodes, S/2 up where they are leaves), so busbw <= 2(n-1)/n x S / (2S/B) = (n-1)/n x B.
// With 8 slots per edge (NCCL_STEPS) and without the bound (tree_slots = 1024: a leaf
// posts its whole half at once, and its NIC shares reads and port between its two trees'
// QPs) both come near it: 86% and 90%.
TEST(DoubleBinaryTree, PipelinedChunksApproachTheTwoTreeBound) {
  const double bound = kLinkGBps * 7 / 8;
  auto busbw = [&](const char* slots) {
    const json r = run({"collective.algorithm=double_binary_tree", std::string("collective.tree_slots=") + slots});
    EXPECT_TRUE(r.at("collective").at("finished").get<bool>());
    return size0(r).at("busbw_GBps").get<double>();
  };
  const double nccl = busbw("8"), unbounded = busbw("1024");
  EXPECT_LE(nccl, bound * 1.001);
  EXPECT_GE(nccl, bound * 0.84);
  EXPECT_LE(unbounded, bound * 1.001);
  EXPECT_GE(unbounded, bound * 0.84);
}

TEST(Schedule, StepCountsMatchTheAlgorithms) {
  using namespace fabricsim::testbench;
  CollectiveParams p;
  EXPECT_EQ(build_schedule(p, 8, 1 << 20).size(), 8u * 2 * 7);  // ring: n x 2(n-1)
  p.channels = 2;
  EXPECT_EQ(build_schedule(p, 8, 1 << 20).size(), 2u * 8 * 2 * 7);
  p.channels = 1;
  p.algorithm = CollectiveAlgorithm::halving_doubling;
  EXPECT_EQ(build_schedule(p, 8, 1 << 20).size(), 8u * 2 * 3);  // n x 2 log2 n
  EXPECT_THROW(build_schedule(p, 6, 1 << 20), std::invalid_argument);
  p.algorithm = CollectiveAlgorithm::direct;
  p.op = CollectiveOp::alltoall;
  EXPECT_EQ(build_schedule(p, 8, 1 << 20).size(), 8u * 7);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveOp::allreduce, 8), 2.0 * 7 / 8);
  // In-network, one switch (one node, the root): per chunk n ranks up, n copies down.
  p.op = CollectiveOp::allreduce;
  p.algorithm = CollectiveAlgorithm::sharp;
  p.tree_chunk = 256 * 1024;
  p.tree = {{0, 0, 0, 0}, {4, 5, 6, 7}, {-1}, {-1}, {-1}, {10, 11, 12, 13}};
  const auto one = build_schedule(p, 4, 1 << 20);
  ASSERT_EQ(one.size(), 4u * (4 + 4));
  EXPECT_EQ(one[0].dst, 4);                                    // rank 0 -> the port facing it
  EXPECT_EQ(one[4].src, 4);                                    // the root's copy back
  EXPECT_EQ(one[4].deps, (std::vector<int>{0, 1, 2, 3}));       // after every rank's chunk
  // Two leaves (nodes 1, 2: ranks 0-1 and 2-3) under a root (node 0): per chunk 4 up,
  // 2 leaf -> root, 2 root -> leaf, 4 down.
  p.tree = {{1, 1, 2, 2}, {4, 5, 6, 7}, {-1, 0, 0}, {-1, 8, 10}, {-1, 9, 11}, {}};
  EXPECT_EQ(build_schedule(p, 4, 1 << 20).size(), 4u * (4 + 2 + 2 + 4));
}

// Every schedule, a formula or stored: each dependency is an earlier transfer that lists
// the waiting one among its dependents, the dependents ascending, and the two lists hold
// the same edges; a ring's or halving-doubling's input is what landed at its source.
void expect_consistent(const fabricsim::testbench::Schedule& s, bool data_deps) {
  std::size_t deps = 0, dependents = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    for (int d : s.deps(i)) {
      ++deps;
      ASSERT_LT(static_cast<std::size_t>(d), i);
      const auto back = s.dependents(static_cast<std::size_t>(d));
      EXPECT_NE(std::find(back.begin(), back.end(), static_cast<int>(i)), back.end()) << i << " waits for " << d;
      if (data_deps) {
        EXPECT_EQ(s.step(static_cast<std::size_t>(d)).dst, s.step(i).src) << i;
      }
    }
    const auto w = s.dependents(i);
    dependents += w.size();
    EXPECT_TRUE(std::is_sorted(w.begin(), w.end()));
    for (int j : w) {
      const auto d = s.deps(static_cast<std::size_t>(j));
      EXPECT_NE(std::find(d.begin(), d.end(), static_cast<int>(i)), d.end()) << j << " listed for " << i;
    }
  }
  EXPECT_EQ(deps, dependents);
}

TEST(Schedule, DependenciesAndDependentsAgree) {
  using namespace fabricsim::testbench;
  CollectiveParams p;
  for (int n : {2, 3, 8}) {
    for (int channels : {1, 3}) {
      p.channels = channels;
      for (CollectiveOp op : {CollectiveOp::allreduce, CollectiveOp::reduce_scatter, CollectiveOp::allgather}) {
        p.op = op;
        SCOPED_TRACE(std::string(to_string(op)) + " n=" + std::to_string(n) + " channels=" + std::to_string(channels));
        expect_consistent(build_schedule(p, n, 1 << 20), true);
      }
    }
  }
  p = {};
  p.algorithm = CollectiveAlgorithm::halving_doubling;
  expect_consistent(build_schedule(p, 16, 1 << 20), true);
  p.algorithm = CollectiveAlgorithm::double_binary_tree;
  p.tree_chunk = 64 * 1024;
  p.tree_slots = 2;
  expect_consistent(build_schedule(p, 7, 1 << 20), false);
  p.algorithm = CollectiveAlgorithm::direct;
  p.op = CollectiveOp::alltoall;
  expect_consistent(build_schedule(p, 5, 1 << 20), false);
}

TEST(Schedule, RingAndHalvingDoublingByTheirDefinitions) {
  using namespace fabricsim::testbench;
  CollectiveParams p;
  p.channels = 2;
  // Ring AllReduce, 4 ranks, 2 channels: 6 steps of S / 8 per channel; transfer
  // ch * 24 + s * 4 + r goes r -> r + 1 after (ch, s - 1, r - 1); steps 1..3 reduce.
  const auto ring = build_schedule(p, 4, 8 << 10);
  ASSERT_EQ(ring.size(), 48u);
  const Transfer t = ring[24 + 1 * 4 + 0];  // channel 1, step 1, rank 0
  EXPECT_EQ(t.src, 0);
  EXPECT_EQ(t.dst, 1);
  EXPECT_EQ(t.channel, 1);
  EXPECT_EQ(t.bytes, 1024u);
  EXPECT_EQ(t.reduce_bytes, 1024u);
  EXPECT_EQ(t.deps, (std::vector<int>{24 + 0 * 4 + 3}));
  EXPECT_EQ(ring[24 + 4 * 4 + 2].reduce_bytes, 0u);  // allgather half: step 4
  EXPECT_EQ(ring[24 + 5 * 4 + 2].dst, 3);
  EXPECT_EQ(ring.dependents(24 + 5 * 4 + 2).size(), 0u);  // the last step
  EXPECT_TRUE(ring[3].deps.empty());
  EXPECT_THROW(ring[48], std::out_of_range);
  // Halving-doubling, 8 ranks: level 0 exchanges S/2 with r ^ 4, level 1 S/4 with r ^ 2,
  // level 2 S/8 with r ^ 1, then back up: S/8 with r ^ 1, S/4 with r ^ 2, S/2 with
  // r ^ 4; levels 1..3 first reduce what arrived the level before.
  p = {};
  p.algorithm = CollectiveAlgorithm::halving_doubling;
  const auto hd = build_schedule(p, 8, 8 << 10);
  const std::vector<std::pair<int, std::uint64_t>> levels = {{4, 4096}, {2, 2048}, {1, 1024},
                                                             {1, 1024}, {2, 2048}, {4, 4096}};
  for (std::size_t l = 0; l < levels.size(); ++l) {
    const Transfer h = hd[l * 8 + 5];
    EXPECT_EQ(h.dst, 5 ^ levels[l].first) << l;
    EXPECT_EQ(h.bytes, levels[l].second) << l;
    EXPECT_EQ(h.reduce_bytes, l >= 1 && l <= 3 ? levels[l].second : 0u) << l;
  }
}

TEST(Schedule, ARingKeepsNothingPerTransfer) {
  // 20,000 ranks: 800 million transfers, which a stored graph (about 48 bytes each)
  // could not hold; the formula answers for the last one at once.
  using namespace fabricsim::testbench;
  CollectiveParams p;
  const int n = 20000;
  const auto ring = build_schedule(p, n, std::uint64_t{1} << 30);
  const std::size_t m = 2ull * n * (n - 1);
  ASSERT_EQ(ring.size(), m);
  const Transfer last = ring[m - 1];
  EXPECT_EQ(last.src, n - 1);
  EXPECT_EQ(last.dst, 0);
  EXPECT_EQ(last.deps, (std::vector<int>{static_cast<int>(m - 1 - n - 1)}));
  p.channels = 64;  // 51 billion: past what a transfer's int index holds
  EXPECT_THROW(build_schedule(p, n, std::uint64_t{1} << 30), std::length_error);
}

// SHARP-like in-network AllReduce on the 8-port NDR switch of kFabric.
const std::vector<std::string> kSharp = {"switch.in_network_reduction=true", "collective.algorithm=sharp"};

TEST(SharpAllReduce, LargeMessagesApproachTheLinkRate) {
  // Every rank sends S once and receives S once: t -> S / B, against the ring's
  // 2(n-1)/n x S / B (Patarasuk and Yuan, JPDC 2009; Graham et al., COMHPC 2016).
  const json sharp = run(kSharp);
  ASSERT_TRUE(sharp.at("collective").at("finished").get<bool>());
  const double s_bytes = 64.0 * 1024 * 1024;
  const double ideal_us = s_bytes / (kLinkGBps * 1e9) * 1e6;
  const double t = size0(sharp).at("time_us");
  // Within 3% of S / B, so below 0.6 x the ring's 1.75 S/B (that bound is held by
  // RingAllReduce.LargeMessagesReachTheBandwidthOptimalBound on this fabric).
  EXPECT_GE(t, ideal_us);
  EXPECT_LE(t, ideal_us * 1.03);
  // nccl-tests busbw keeps the 2(n-1)/n factor, so SHARP reports above the link rate.
  EXPECT_NEAR(size0(sharp).at("busbw_GBps").get<double>(), size0(sharp).at("algbw_GBps").get<double>() * 2 * 7 / 8, 1e-9);
  EXPECT_NE(sharp.at("collective").at("table").get<std::string>().find("(sharp, 8 ranks"), std::string::npos);
  EXPECT_EQ(sharp.at("topology").at("aggregation_ports"), 8);
}

TEST(SharpAllReduce, TwoLevelTreeOnALeafSpine) {
  // 16 ranks on 4 leaves of 4 hosts and 4 spines: leaves reduce their ranks, one spine
  // reduces across leaves and the result comes back down.
  const std::vector<std::string> ls = {"topology={kind: leaf_spine, radix: 8, leaves: 4}",
                                       "switch={buffer: voq, allocator: islip}", "collective.sizes=[64KiB, 16MiB]"};
  const json sharp = run(with(ls, kSharp));
  const json ring = run(ls);
  ASSERT_TRUE(sharp.at("collective").at("finished").get<bool>());
  const json& small = sharp.at("collective").at("sizes").at(0);
  const json& big = sharp.at("collective").at("sizes").at(1);
  EXPECT_GT(big.at("algbw_GBps").get<double>(), 0.88 * kLinkGBps);  // 512 KiB chunks through a 4-deep pipeline
  EXPECT_LE(big.at("algbw_GBps").get<double>(), kLinkGBps);
  // Small sizes: 4 hops of the tree instead of 30 ring steps.
  EXPECT_LT(small.at("time_us").get<double>() * 4, ring.at("collective").at("sizes").at(0).at("time_us").get<double>());
  EXPECT_TRUE(sharp.at("tiers").contains("aggregation"));
  EXPECT_TRUE(sharp.at("scoreboard").at("ok").get<bool>());
}

TEST(SharpAllReduce, ResultsAreVisibleAfterTheHostsWriteAndPoll) {
  // The result lands in each rank's memory: visible the memory's write latency and the
  // poll latency after its last byte, as an RDMA WRITE's (nic.md), so the collective's
  // time moves by exactly what those move by.
  const auto time_us = [](std::vector<std::string> sets) {
    sets.push_back("collective.sizes=[4KiB]");
    return size0(run(with(sets, kSharp))).at("time_us").get<double>();
  };
  const double base = time_us({});
  EXPECT_NEAR(time_us({"nic.poll_latency=550ns"}) - base, 0.5, 1e-6);
  EXPECT_NEAR(time_us({"nic.memory=gpu"}) - base, 0.1, 1e-6);  // GPU 400 ns against host 300 ns
  EXPECT_NEAR(time_us({"nic.pcie.host_write_latency=0ns", "nic.poll_latency=0ns"}) - base, -0.35, 1e-6);
}

TEST(SharpAllReduce, RefusedWhereSwitchesCannotReduce) {
  using fabricsim::testing::file_error_of;
  const std::string roce = std::string(FABRICSIM_SOURCE_DIR) + "/presets/roce_400g.yaml";
  EXPECT_NE(file_error_of(roce, {"switch.in_network_reduction=true"})
                .find("switch.in_network_reduction: in-network reduction (SHARP) is an InfiniBand switch capability; "
                      "link.framing is roce_v2"),
            std::string::npos);
  const std::string ib = std::string(FABRICSIM_SOURCE_DIR) + "/presets/ib_ndr.yaml";
  EXPECT_NE(file_error_of(ib, {"collective={algorithm: sharp}"}).find("it needs switch.in_network_reduction: true"),
            std::string::npos);
  EXPECT_EQ(file_error_of(ib, {"collective={algorithm: sharp}", "switch.in_network_reduction=true"}), "<no error>");
  EXPECT_NE(file_error_of(ib, {"collective={algorithm: sharp, op: allgather}", "switch.in_network_reduction=true"})
                .find("sharp is an allreduce algorithm"),
            std::string::npos);
  EXPECT_NE(file_error_of(ib, {"collective={algorithm: sharp}", "switch.in_network_reduction=true", "link.ber=1e-12"})
                .find("not retransmitted"),
            std::string::npos);
  // A leaf of 100 ranks needs 101 aggregation ports: past the 256-port switch limit.
  const json big = run_in_child(load_config_text(
      kFabric, "coll.yaml",
      {"topology={kind: leaf_spine, radix: 200, leaves: 2}", "switch={in_network_reduction: true}",
       "collective.algorithm=sharp", "collective.sizes=[4KiB]"}));
  EXPECT_NE(big.value("error", "").find("switch leaf0 needs 101 aggregation ports on top of its radix 200"),
            std::string::npos)
      << big.dump().substr(0, 300);
}

}  // namespace

namespace {

TEST(TrainingStep, OverlapHidesCommunicationBehindTheBackwardPass) {
  const std::vector<std::string> base = {"collective=null",
                                         "training={forward: 200us, backward: 400us, optimizer: 50us,"
                                         " gradient_size: 16MiB, bucket_size: 4MiB, steps: 1}"};
  auto with = [&](const char* overlap) {
    std::vector<std::string> o = base;
    o.push_back(std::string("training.overlap=") + overlap);
    return run(o).at("training").at("steps").at(0);
  };
  const json serial = with("false"), overlapped = with("true");
  // Without overlap every AllReduce is exposed: step = compute + communication.
  EXPECT_NEAR(serial.at("step_time_us").get<double>(),
              serial.at("compute_us").get<double>() + serial.at("communication_us").get<double>(), 0.01);
  EXPECT_DOUBLE_EQ(serial.at("compute_us").get<double>(), 650.0);
  // Overlap: faster, but never faster than compute or the communication itself.
  const double step = overlapped.at("step_time_us");
  EXPECT_LT(step, serial.at("step_time_us").get<double>());
  EXPECT_GE(step, 650.0);
  EXPECT_GE(step, overlapped.at("communication_us").get<double>());
  EXPECT_NEAR(overlapped.at("communication_fraction").get<double>(),
              (step - 650.0) / step, 1e-9);
}

}  // namespace
