// Chakra traces run on the fabric (testbench/chakra/executor.h): against the built-in
// collective, closed forms for compute, send/receive chains and the scale-up ports,
// the deadlock and configuration errors, and thread-count independence.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/child_run.h"
#include "sim/config.h"
#include "testbench/chakra/writer.h"
#include "tests/chakra_nodes.h"
#include "tests/config_error.h"
#include "tests/fabric_run.h"
#include "tests/fabrics.h"

namespace {

namespace fs = std::filesystem;
namespace pb = ChakraProtoMsg;

// A compute node of `micros` after `deps`; a send or receive (tag 0) after `deps`.
pb::Node work(std::uint64_t id, std::uint64_t micros, const std::vector<std::uint64_t>& deps = {}) {
  return fabricsim::testing::comp(id, deps, micros);
}
pb::Node p2p(std::uint64_t id, bool send, int peer, std::int64_t bytes, const std::vector<std::uint64_t>& deps = {}) {
  return fabricsim::testing::after(fabricsim::testing::p2p(id, send, peer, bytes, 0), deps);
}
pb::Node coll(std::uint64_t id, pb::CollectiveCommType type, std::int64_t bytes) {
  return fabricsim::testing::coll(id, type, bytes);
}
using fabricsim::sim::load_config;
using fabricsim::sim::load_config_text;
using fabricsim::sim::run_in_child;
using fabricsim::testing::attr;
using fabricsim::testing::run_checked;
using fabricsim::testing::yaml_error_of;
using nlohmann::json;
using ::testing::AllOf;
using ::testing::HasSubstr;

// A fresh folder for one test's trace files.
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("fabricsim_chakra_run_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Writes PREFIX.r.et for each rank's nodes; returns PREFIX.
std::string write_trace(const std::string& name, const std::vector<std::vector<pb::Node>>& ranks) {
  const fs::path prefix = scratch(name) / "t";
  pb::GlobalMetadata meta;
  meta.set_version("0.0.4");
  for (std::size_t r = 0; r < ranks.size(); ++r)
    fabricsim::chakra::write_rank_file(prefix.string() + "." + std::to_string(r) + ".et", meta, ranks[r]);
  return prefix.string();
}

// Eight NDR NICs on one non-blocking switch.
std::string fabric(int endpoints = 8) { return fabricsim::testing::ndr_single_switch(endpoints, "50ms"); }

json run_trace(const std::string& prefix, const std::string& extra = "", int endpoints = 8,
               const std::vector<std::string>& overrides = {}) {
  const json r =
      run_checked(load_config_text(fabric(endpoints) + "chakra: {trace: " + prefix + extra + "}\n", "chakra.yaml", overrides));
  return r.at("chakra");
}

std::vector<std::vector<pb::Node>> one_collective(int n, pb::CollectiveCommType type, std::int64_t bytes) {
  return std::vector<std::vector<pb::Node>>(static_cast<std::size_t>(n), {coll(1, type, bytes)});
}

TEST(ChakraRun, TinyExampleRunsToTheEnd) {
  const json r = run_checked(load_config(std::string(FABRICSIM_SOURCE_DIR) + "/examples/chakra_tiny.yaml"));
  const json& c = r.at("chakra");
  EXPECT_TRUE(c.at("finished").get<bool>());
  ASSERT_EQ(c.at("per_rank").size(), 4u);
  // forward 120 us + optimizer 30 us on every rank, one AllReduce of 1 MiB after the forward pass.
  for (const json& rank : c.at("per_rank")) EXPECT_DOUBLE_EQ(rank.at("compute_us").get<double>(), 150.0);
  ASSERT_EQ(c.at("collectives").size(), 1u);
  const json& ar = c.at("collectives").at(0);
  EXPECT_EQ(ar.at("type"), "ALL_REDUCE");
  EXPECT_DOUBLE_EQ(ar.at("start_us").get<double>(), 120.0);
  EXPECT_NEAR(c.at("iteration_time_us").get<double>(), ar.at("end_us").get<double>() + 30.0, 1e-6);
  EXPECT_EQ(r.at("simulator").at("lanes"), 1);
}

// RDMA traffic beside the trace lands on its own QPs: the trace still completes, its
// AllReduce slowed by the shared links.
TEST(ChakraRun, BackgroundRdmaTrafficSharesTheLinks) {
  const std::string example = std::string(FABRICSIM_SOURCE_DIR) + "/examples/chakra_tiny.yaml";
  const json alone = run_checked(load_config(example)).at("chakra");
  const json shared = run_checked(load_config(
      example, {"traffic={pattern: uniform, load: 0.3, message_size: 16KiB, transport: rdma}"})).at("chakra");
  ASSERT_TRUE(shared.at("finished").get<bool>());
  EXPECT_GT(shared.at("collectives").at(0).at("time_us").get<double>(),
            alone.at("collectives").at(0).at("time_us").get<double>());
}

// One ring AllReduce node on every rank runs the same transfer graph, posted in the same
// order at the same times, as `collective:` with that size: the same time exactly.
TEST(ChakraRun, AllReduceMatchesTheCollectiveRun) {
  constexpr std::int64_t kBytes = 4 << 20;
  for (int n : {4, 8}) {
    const std::string prefix = write_trace("allreduce" + std::to_string(n), one_collective(n, pb::ALL_REDUCE, kBytes));
    const json chakra = run_trace(prefix, ", channels: 2", 8);
    const json builtin = run_checked(load_config_text(
        fabric(8) + "collective: {op: allreduce, algorithm: ring, channels: 2, sizes: [4MiB], ranks: " + std::to_string(n) +
            "}\n",
        "coll.yaml"));
    ASSERT_TRUE(chakra.at("finished").get<bool>());
    const double expected = builtin.at("collective").at("sizes").at(0).at("time_us").get<double>();
    EXPECT_EQ(chakra.at("collectives").at(0).at("time_us").get<double>(), expected) << n << " ranks";
    EXPECT_EQ(chakra.at("iteration_time_us").get<double>(), expected);
    EXPECT_NEAR(chakra.at("collectives").at(0).at("busbw_GBps").get<double>(),
                builtin.at("collective").at("sizes").at(0).at("busbw_GBps").get<double>(), 1e-9);
    // Every rank waits for the AllReduce and computes nothing: all of it is exposed.
    for (const json& rank : chakra.at("per_rank"))
      EXPECT_DOUBLE_EQ(rank.at("exposed_communication_us").get<double>(), expected);
  }
}

// Compute only: one stream per rank, nodes one at a time in ready order, so a rank ends
// at the sum of its nodes' times; the GPU model gives max(ops / (peak x eff), bytes / bw).
// comm_size is one rank's input (docs/workloads.md): an AllGather of S / n per rank is
// nccl-tests' AllGather of S, a ReduceScatter or all-to-all of S is that of S. Each runs
// the built-in collective's graph: the same time exactly.
TEST(ChakraRun, CommSizeFollowsTheInputConvention) {
  constexpr int kRanks = 4;
  struct Case {
    pb::CollectiveCommType type;
    std::int64_t comm_size;
    const char* op;
  };
  for (const Case& c : {Case{pb::ALL_GATHER, (4 << 20) / kRanks, "allgather"}, Case{pb::REDUCE_SCATTER, 4 << 20, "reduce_scatter"},
                        Case{pb::ALL_TO_ALL, 4 << 20, "alltoall"}}) {
    const json chakra = run_trace(write_trace(c.op, one_collective(kRanks, c.type, c.comm_size)), "", kRanks);
    const json builtin = run_checked(load_config_text(
        fabric(kRanks) + "collective: {op: " + c.op + ", sizes: [4MiB]}\n", "coll.yaml"));
    const json& size = builtin.at("collective").at("sizes").at(0);
    EXPECT_EQ(chakra.at("collectives").at(0).at("bytes").get<std::uint64_t>(), 4u << 20) << c.op;
    EXPECT_EQ(chakra.at("collectives").at(0).at("time_us").get<double>(), size.at("time_us").get<double>()) << c.op;
    EXPECT_NEAR(chakra.at("collectives").at(0).at("busbw_GBps").get<double>(), size.at("busbw_GBps").get<double>(), 1e-9)
        << c.op;
  }
}

TEST(ChakraRun, ComputeOnlyDagGivesTheCriticalPath) {
  pb::Node model = work(5, 0, {4});  // 1e7 ops at 1e12 x 0.5 FLOP/s = 20 us; 4 MB at 100 GB/s = 40 us
  attr(model, "num_ops")->set_int64_val(10'000'000);
  attr(model, "tensor_size")->set_int64_val(4'000'000);
  pb::Node flops = work(6, 0, {5});  // 1e8 ops: 200 us; 1 MB: 10 us
  attr(flops, "num_ops")->set_int64_val(100'000'000);
  attr(flops, "tensor_size")->set_int64_val(1'000'000);
  pb::Node meta;
  meta.set_id(7);
  meta.set_type(pb::METADATA_NODE);
  meta.add_ctrl_deps(6);
  // Rank 0: a diamond 10 -> {20, 5} -> 7 then the modelled nodes; rank 1: a chain 10, 30.
  const std::string prefix = write_trace(
      "compute", {{work(1, 10), work(2, 20, {1}), work(3, 5, {1}), work(4, 7, {2, 3}), model, flops, meta},
                  {work(1, 10), work(2, 30, {1})}});
  const json c = run_trace(prefix, ", gpu: {peak: 1, efficiency: 0.5, memory_bandwidth: 0.1}", 2);
  ASSERT_TRUE(c.at("finished").get<bool>());
  const double rank0 = 10 + 20 + 5 + 7 + 40 + 200;
  EXPECT_NEAR(c.at("per_rank").at(0).at("compute_us").get<double>(), rank0, 1e-6);
  EXPECT_NEAR(c.at("per_rank").at(0).at("end_us").get<double>(), rank0, 1e-6);
  EXPECT_NEAR(c.at("per_rank").at(1).at("end_us").get<double>(), 40.0, 1e-6);
  EXPECT_NEAR(c.at("per_rank").at(1).at("idle_us").get<double>(), rank0 - 40.0, 1e-6);
  EXPECT_NEAR(c.at("iteration_time_us").get<double>(), rank0, 1e-6);
}

// A chain of k sends (rank i receives from i - 1, then sends to i + 1): each hop starts
// when the previous one is visible, over the same switch and cables, so k hops take k
// times one. Tolerance 1 ns per hop: times round to the kernel's resolution.
TEST(ChakraRun, SendReceiveChainTakesKTransfers) {
  constexpr std::int64_t kBytes = 256 << 10;
  auto chain = [&](int k) {
    std::vector<std::vector<pb::Node>> ranks(static_cast<std::size_t>(k + 1));
    ranks[0] = {p2p(1, true, 1, kBytes)};
    for (int i = 1; i < k; ++i) ranks[static_cast<std::size_t>(i)] = {p2p(1, false, i - 1, kBytes), p2p(2, true, i + 1, kBytes, {1})};
    ranks[static_cast<std::size_t>(k)] = {p2p(1, false, k - 1, kBytes)};
    return run_trace(write_trace("chain" + std::to_string(k), ranks), "", 8);
  };
  const double one = chain(1).at("iteration_time_us").get<double>();
  EXPECT_GT(one, kBytes * 8.0 / 400e9 * 1e6);  // at least the payload at 400 Gb/s
  for (int k : {3, 7}) {
    const json c = chain(k);
    ASSERT_TRUE(c.at("finished").get<bool>());
    EXPECT_NEAR(c.at("iteration_time_us").get<double>(), k * one, k * 1e-3) << k << " hops";
  }
}

TEST(ChakraRun, CrossRankDeadlockStopsWithTheWaitingNodes) {
  // Both ranks receive first, then send what the other waits for.
  const std::string prefix = write_trace(
      "deadlock", {{p2p(1, false, 1, 4096), p2p(2, true, 1, 4096, {1})}, {p2p(1, false, 0, 4096), p2p(2, true, 0, 4096, {1})}});
  const json c = run_trace(prefix, "", 2);
  EXPECT_FALSE(c.at("finished").get<bool>());
  EXPECT_THAT(c.at("error").get<std::string>(),
              AllOf(HasSubstr("deadlock"), HasSubstr("rank 0 (" + prefix + ".0.et) waits in node 1, a receive from rank 1"),
                    HasSubstr("rank 1 (" + prefix + ".1.et) waits in node 1, a receive from rank 0")));
}

TEST(ChakraRun, UnfinishedAtTheDurationIsReported) {
  const std::string prefix = write_trace("long", {{work(1, 100)}, {work(1, 100)}});
  const json c = run_trace(prefix, "", 2, {"simulation.duration=50us"});
  EXPECT_FALSE(c.at("finished").get<bool>());
  EXPECT_THAT(c.at("error").get<std::string>(), HasSubstr("simulation.duration"));
}

TEST(ChakraRun, SameResultsOnOneAndTwoThreads) {
  // A leaf-spine: two leaves, so two threads make two lanes; a server of four GPUs spans
  // both, so its scale-up transfers are released from either lane.
  const std::string yaml = std::string(
      "simulation: {seed: 3, duration: 5ms, warmup: 0us}\n"
      "link: {framing: infiniband, lanes: 4, lane_rate: 106.25Gb/s, fec: rs544_514, cable_length: 2m}\n"
      "switch: {buffer: voq, allocator: islip}\n"
      "topology: {kind: leaf_spine, leaves: 2, radix: 4}\n"
      "output: {sample_interval: 0s}\n"
      "chakra: {trace: ") + FABRICSIM_SOURCE_DIR + "/examples/chakra/tiny, placement: spread}\n";
  for (const std::string& scale_up : std::vector<std::string>{"", "server={gpus: 4, scale_up: {bandwidth: 1600Gb/s, latency: 2us}}"}) {
    std::vector<std::string> sets{"simulation.threads=1"};
    if (!scale_up.empty()) sets.push_back(scale_up);
    json one = run_checked(load_config_text(yaml, "lanes.yaml", sets));
    sets[0] = "simulation.threads=2";
    json two = run_checked(load_config_text(yaml, "lanes.yaml", sets));
    EXPECT_EQ(two.at("simulator").at("lanes"), 2);
    ASSERT_TRUE(two.at("chakra").at("finished").get<bool>()) << scale_up;
    EXPECT_EQ(one.at("chakra"), two.at("chakra")) << scale_up;
    EXPECT_EQ(one.at("endpoints"), two.at("endpoints")) << scale_up;
  }
}

TEST(ChakraRun, BroadcastAndBarrierRun) {
  // Broadcast of one chunk: a chain of n - 1 transfers, each after the one before landed.
  const json b = run_trace(write_trace("bcast", one_collective(4, pb::BROADCAST, 64 << 10)), "", 4);
  const json p = run_trace(write_trace("pair", {{p2p(1, true, 1, 64 << 10)}, {p2p(1, false, 0, 64 << 10)}}), "", 4);
  ASSERT_TRUE(b.at("finished").get<bool>());
  EXPECT_NEAR(b.at("iteration_time_us").get<double>(), 3 * p.at("iteration_time_us").get<double>(), 3e-3);
  const json bar = run_trace(write_trace("barrier", one_collective(5, pb::BARRIER, 0)), "", 8);
  ASSERT_TRUE(bar.at("finished").get<bool>());
  EXPECT_TRUE(bar.at("collectives").at(0).at("busbw_GBps").is_null());
  EXPECT_GT(bar.at("iteration_time_us").get<double>(), 0.0);
}

// Inside a server the scale-up ports carry a transfer in latency + bytes / bandwidth;
// two sends from one GPU share its port one after the other.
TEST(ChakraRun, ScaleUpTransfersFollowTheClosedForm) {
  constexpr std::int64_t kBytes = 1 << 20;
  const std::string prefix = write_trace(
      "scaleup", {{p2p(1, true, 1, kBytes), p2p(2, true, 2, kBytes)}, {p2p(1, false, 0, kBytes)}, {p2p(1, false, 0, kBytes)}});
  const json c = run_trace(prefix, "", 4, {"server={gpus: 4, scale_up: {bandwidth: 1600Gb/s, latency: 2us}}"});
  ASSERT_TRUE(c.at("finished").get<bool>());
  const double wire_us = kBytes * 8.0 / 1600e9 * 1e6;
  EXPECT_NEAR(c.at("per_rank").at(1).at("end_us").get<double>(), 2.0 + wire_us, 1e-6);
  EXPECT_NEAR(c.at("per_rank").at(2).at("end_us").get<double>(), 2.0 + 2 * wire_us, 1e-6);
}

// A ring AllReduce of S bytes over the n GPUs of one server runs on the scale-up ports:
// 2(n-1) steps of latency L + (S/n)/B each, Patarasuk and Yuan's (JPDC 69(2), 2009)
// t = 2(n-1)a + 2(n-1)/n S/B with a = L; within 0.1 us (the reduction waits of S/n at
// 1000 Tb/s, 8.4 ns a step).
TEST(ChakraRun, RingAllReduceInsideAServerFollowsTheClosedForm) {
  constexpr int kRanks = 4;
  constexpr std::int64_t kBytes = 4 << 20;
  const json c = run_trace(write_trace("ring_up", one_collective(kRanks, pb::ALL_REDUCE, kBytes)),
                           ", reduce_bandwidth: 1000Tb/s", kRanks,
                           {"server={gpus: 4, scale_up: {bandwidth: 1600Gb/s, latency: 2us}}"});
  ASSERT_TRUE(c.at("finished").get<bool>());
  const double step_us = 2.0 + static_cast<double>(kBytes) / kRanks * 8.0 / 1600e9 * 1e6;
  EXPECT_NEAR(c.at("collectives").at(0).at("time_us").get<double>(), 2 * (kRanks - 1) * step_us, 0.1);
}

// `server:`: a rail layout's size is the topology's; the scale-up domain's defaults are
// the table's; a domain no workload uses, and the old chakra.scale_up key, are named.
TEST(ChakraRun, ServerSectionIsCheckedAndWarned) {
  const std::string rail = "topology: {kind: rail_optimized, servers: 2, gpus_per_server: 4, radix: 4}\n";
  EXPECT_EQ(load_config_text(rail, "rail.yaml").server.gpus, 4);
  EXPECT_THAT(yaml_error_of(rail + "server: {gpus: 8}\n"),
              HasSubstr("bad.yaml:2:16: server.gpus: must be the topology's gpus_per_server (4)"));
  EXPECT_EQ(load_config_text(fabric(4), "one.yaml").server.gpus, 1);

  const std::string trace = write_trace("server", one_collective(4, pb::ALL_REDUCE, 1024));
  EXPECT_THAT(yaml_error_of(fabric(4) + "chakra: {trace: " + trace + ", scale_up: {gpus_per_server: 4}}\n"),
              HasSubstr("chakra.scale_up: unknown key"));
  const auto on = load_config_text(fabric(4) + "chakra: {trace: " + trace + "}\nserver: {gpus: 4, scale_up: {}}\n", "on.yaml");
  EXPECT_TRUE(on.warnings.empty()) << on.warnings.front();
  EXPECT_EQ(on.chakra.params.scale_up.gpus_per_server, 4);
  EXPECT_EQ(on.chakra.params.scale_up.bandwidth_bps, fabricsim::chakra::ScaleUp{}.bandwidth_bps);
  EXPECT_EQ(on.chakra.params.scale_up.latency, fabricsim::chakra::ScaleUp{}.latency);

  auto warnings = [](const std::string& yaml) {
    std::string all;
    for (const std::string& w : load_config_text(yaml, "w.yaml").warnings) all += w + "\n";
    return all;
  };
  EXPECT_THAT(warnings(fabric(4) + "collective: {op: allreduce}\nserver: {gpus: 4, scale_up: {latency: 1us}}\n"),
              HasSubstr("w.yaml:7:29: server.scale_up: has no effect: only a Chakra trace or a generated training job"));
  EXPECT_THAT(warnings(fabric(4) + "chakra: {trace: " + trace + "}\nserver: {scale_up: {}}\n"),
              HasSubstr("server.scale_up: has no effect: a server of one GPU"));
  EXPECT_THAT(warnings(fabric(4) + "chakra: {trace: " + trace + "}\nserver: {gpus: 4}\n"),
              HasSubstr("server.gpus: has no effect without server.scale_up"));
}

// A generated job's tp groups (consecutive ranks) and ep groups under packed placement:
// inside servers when tp (tp x ep) divides server.gpus; a group across servers is warned about. With tp =
// server.gpus = the ranks, every transfer takes the scale-up domain: no packet enters
// the fabric.
TEST(ChakraRun, TensorParallelGroupsStayInServers) {
  const std::string job = "training: {model: {layers: 1, hidden: 256, heads: 4, seq: 128, vocab: 1000}, "
                          "parallelism: {tp: 4}, global_batch: 2, micro_batch: 1}\n";
  auto warnings = [&](int endpoints, int gpus) {
    std::string all;
    const auto c = load_config_text(fabric(endpoints) + job + "server: {gpus: " + std::to_string(gpus) + ", scale_up: {}}\n",
                                    "job.yaml");
    for (const std::string& w : c.warnings) all += w + "\n";
    return all;
  };
  EXPECT_EQ(warnings(8, 4), "");
  EXPECT_EQ(warnings(8, 8), "");
  EXPECT_THAT(warnings(8, 6), HasSubstr("training.parallelism.tp: 1 of 2 tp groups straddle servers of 6 GPUs"));
  // Expert parallel 2 over tp 2: an ep group is ranks {t + 2 (2g), t + 2 (2g + 1)}, in one
  // server of 4 GPUs, across two of 2.
  const std::string moe = fabric(8) + "training: {model: {layers: 1, hidden: 256, heads: 4, seq: 128, vocab: 1000, "
                          "experts: 4, top_k: 1}, parallelism: {tp: 2, ep: 2}, global_batch: 4, micro_batch: 1}\n";
  auto moe_warnings = [&](int gpus) {
    std::string all;
    for (const std::string& w :
         load_config_text(moe + "server: {gpus: " + std::to_string(gpus) + ", scale_up: {}}\n", "moe.yaml").warnings)
      all += w + "\n";
    return all;
  };
  EXPECT_EQ(moe_warnings(4), "");
  EXPECT_THAT(moe_warnings(2), HasSubstr("training.parallelism.ep: 4 of 4 ep groups straddle servers of 2 GPUs"));

  const std::string four = fabric(4) + job;
  const json up = run_checked(load_config_text(four + "server: {gpus: 4, scale_up: {}}\n", "up.yaml"));
  const json nics = run_checked(load_config_text(four, "nics.yaml"));
  ASSERT_TRUE(up.at("chakra").at("finished").get<bool>());
  ASSERT_TRUE(nics.at("chakra").at("finished").get<bool>());
  EXPECT_EQ(up.at("packets").at("injected"), 0);
  EXPECT_GT(nics.at("packets").at("injected").get<std::uint64_t>(), 0u);
}

// Two process groups of two ranks each run their AllReduce at once, each on its own
// ranks' cables: each takes what it takes alone.
TEST(ChakraRun, CollectivesOfTwoGroupsRunAtOnce) {
  auto group = [](const char* pg) { return fabricsim::testing::coll(1, pb::ALL_REDUCE, 1 << 20, pg); };
  const json both = run_trace(write_trace("groups", {{group("a")}, {group("a")}, {group("b")}, {group("b")}}), "", 4);
  const json alone = run_trace(write_trace("alone", one_collective(2, pb::ALL_REDUCE, 1 << 20)), "", 4);
  ASSERT_TRUE(both.at("finished").get<bool>());
  ASSERT_EQ(both.at("collectives").size(), 2u);
  const double t = alone.at("collectives").at(0).at("time_us").get<double>();
  for (const json& c : both.at("collectives")) {
    EXPECT_EQ(c.at("ranks"), 2);
    EXPECT_DOUBLE_EQ(c.at("start_us").get<double>(), 0.0);
    EXPECT_NEAR(c.at("time_us").get<double>(), t, 1e-3) << c.at("group");
  }
}

TEST(ChakraRun, ConfigurationErrors) {
  const std::string good = write_trace("good", one_collective(4, pb::ALL_REDUCE, 1024));
  // A dependency on a node not in the file: the config key, the file and the node.
  const std::string bad = write_trace("bad", {{work(1, 1)}, {work(1, 1), work(2, 1, {9})}});
  EXPECT_THAT(yaml_error_of(fabric(4) + "chakra: {trace: " + bad + "}\n"),
              AllOf(HasSubstr("chakra.trace"), HasSubstr(bad + ".1.et"), HasSubstr("node 2")));
  EXPECT_THAT(yaml_error_of(fabric(4) + "chakra: {trace: /nonexistent/t}\n"), HasSubstr("chakra.trace"));
  EXPECT_THAT(yaml_error_of(fabric(2) + "chakra: {trace: " + good + "}\n"),
              AllOf(HasSubstr("chakra.trace"), HasSubstr("4 ranks, more than the topology's 2 endpoints")));
  EXPECT_THAT(yaml_error_of(fabric(4) + "chakra: {trace: " + good + "}\ncollective: {op: allreduce}\n"),
              HasSubstr("run either a chakra trace or a collective"));
  const std::string reduce = write_trace("reduce", one_collective(2, pb::REDUCE, 1024));
  EXPECT_THAT(yaml_error_of(fabric(4) + "chakra: {trace: " + reduce + "}\n"),
              AllOf(HasSubstr("chakra.trace"), HasSubstr(reduce + ".0.et: node 1"), HasSubstr("REDUCE")));
  const std::string three = write_trace("three", one_collective(3, pb::ALL_REDUCE, 1024));
  EXPECT_THAT(yaml_error_of(fabric(4) + "chakra: {trace: " + three + ", algorithm: halving_doubling}\n"),
              AllOf(HasSubstr("chakra.algorithm"), HasSubstr("power-of-two")));
  EXPECT_THAT(yaml_error_of(fabric(4) + "chakra: {algorithm: ring}\n"), HasSubstr("chakra.trace: is required"));
}

}  // namespace
