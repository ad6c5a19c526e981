// Collectives over RDMA against their closed forms (nccl-tests definitions).
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/child_run.h"
#include "sim/config.h"
#include "testbench/collectives.h"

namespace {

using fabricsim::sim::load_config_text;
using fabricsim::sim::run_in_child;
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
  const json r = run_in_child(load_config_text(yaml, "coll.yaml", overrides));
  EXPECT_FALSE(r.contains("error")) << r.dump().substr(0, 300);
  return r;
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
  EXPECT_LE(busbw, kLinkGBps * 1.001);
  EXPECT_GE(busbw, kLinkGBps * 0.95);
  // nccl-tests: busbw = algbw x 2(n-1)/n.
  EXPECT_NEAR(busbw, size0(r).at("algbw_GBps").get<double>() * 2 * 7 / 8, 1e-9);
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
    EXPECT_NEAR(busbw, algbw * 7 / 8, 1e-9) << op;  // (n-1)/n
    EXPECT_LE(busbw, kLinkGBps * 1.001) << op;
    EXPECT_GT(busbw, kLinkGBps * 0.8) << op;
  }
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
// Without per-edge slots (tree_slots = 1024) leaves flood their uplinks: 79% of it.
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
  EXPECT_GT(nccl, unbounded * 1.05);
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
