// Steady-state fast-forward (`simulation.fast_forward`, testbench/engine_fast_forward.cpp):
// the collective times and flow completion times it gives are within 1% of the full
// packet-level run's (the bound docs/performance.md states), it skips most transfers of a
// bulk ring AllReduce and counts their packets where they would have gone, the
// conservation checks hold, its results are the same on any
// number of lanes, and where it cannot apply it changes nothing and says why.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/command.h"
#include "tests/same_results.h"
#include "tests/sanitizer.h"
#include "tests/temp_files.h"

namespace {

namespace fs = std::filesystem;

nlohmann::json run(const std::string& args, const fs::path& out) {
  const auto c = fabricsim::testing::run_command("run -q " + args + " --out " + out.string());
  EXPECT_EQ(c.exit_code, 0) << c.output;
  nlohmann::json r;
  if (c.exit_code == 0) std::ifstream(out / "results.json") >> r;
  return r;
}

std::string example(const std::string& name) { return (fs::path(FABRICSIM_SOURCE_DIR) / "examples" / name).string(); }

double relative(double a, double b) { return std::abs(a - b) / b; }

struct Both {
  nlohmann::json full, fast;  // packet level, fast-forward
};

// The example (allreduce_leafspine_ib.yaml unless named) with `sets`, without and with
// fast-forward.
Both run_both(const std::string& sets, const std::string& name = "allreduce_leafspine_ib.yaml") {
  const fs::path dir = fabricsim::testing::test_temp_dir("ff");
  const std::string base = example(name) + " " + sets;
  Both b{run(base, dir / "full"), run(base + " --set simulation.fast_forward=true", dir / "fast")};
  EXPECT_FALSE(b.full.is_null());
  EXPECT_FALSE(b.fast.is_null());
  return b;
}

double total(const nlohmann::json& endpoints, const char* counter) {
  double sum = 0;
  for (const auto& e : endpoints) sum += e["rdma"][counter].get<double>();
  return sum;
}

// The skipped transfers' packets count at the NICs and on the links, within 1% of the
// packet-level run's counts.
void expect_packets_counted(const nlohmann::json& full, const nlohmann::json& fast) {
  for (const char* k : {"injected", "delivered"})
    EXPECT_LT(relative(fast["packets"][k].get<double>(), full["packets"][k].get<double>()), 0.01)
        << k << ": " << fast["packets"][k] << " against " << full["packets"][k];
  EXPECT_LT(relative(fast["simulator"]["packet_hops"].get<double>(), full["simulator"]["packet_hops"].get<double>()), 0.01)
      << fast["simulator"]["packet_hops"] << " packet hops against " << full["simulator"]["packet_hops"];
  for (const char* k : {"acks_sent", "completions"})
    EXPECT_LT(relative(total(fast["endpoints"], k), total(full["endpoints"], k)), 0.01) << k;
  for (const auto& [tier, u] : full["tiers"].items())
    EXPECT_LT(relative(fast["tiers"][tier]["mean_utilisation"].get<double>(), u["mean_utilisation"].get<double>()), 0.01)
        << tier << ": " << fast["tiers"][tier].dump() << " against " << u.dump();
}

// Every transfer is a flow, skipped or not: as many, and their FCT mean, median and 99th
// percentile within 1%.
void expect_flows_within_one_percent(const nlohmann::json& full, const nlohmann::json& fast) {
  EXPECT_EQ(fast["flows"]["count"], full["flows"]["count"]);
  for (const char* p : {"p50", "p99", "mean"})
    EXPECT_LT(relative(fast["flows"]["fct_us"][p].get<double>(), full["flows"]["fct_us"][p].get<double>()), 0.01)
        << p << ": " << fast["flows"]["fct_us"][p] << " us against " << full["flows"]["fct_us"][p] << " us";
}

// A ring AllReduce of `size` per rank on the example's leaf-spine (radix 8 unless given):
// full packet level against fast-forward.
void expect_within_one_percent(const std::string& sets, const std::string& tag) {
  const auto [full, fast] = run_both(sets);
  if (full.is_null() || fast.is_null()) return;
  SCOPED_TRACE(tag);
  EXPECT_TRUE(fast["fast_forward"]["applied"].get<bool>()) << fast["fast_forward"].dump();
  EXPECT_TRUE(fast["collective"]["finished"].get<bool>());
  EXPECT_TRUE(fast["scoreboard"]["ok"].get<bool>()) << fast["scoreboard"].dump();
  const auto& sizes_full = full["collective"]["sizes"];
  const auto& sizes_fast = fast["collective"]["sizes"];
  ASSERT_EQ(sizes_full.size(), sizes_fast.size());
  for (std::size_t k = 0; k < sizes_full.size(); ++k)
    EXPECT_LT(relative(sizes_fast[k]["time_us"].get<double>(), sizes_full[k]["time_us"].get<double>()), 0.01)
        << sizes_fast[k]["time_us"] << " us against " << sizes_full[k]["time_us"] << " us";
  expect_flows_within_one_percent(full, fast);
  // Most of a bulk ring's transfers skip their packets, which still count.
  const double skipped = fast["fast_forward"]["transfers_skipped"].get<double>();
  EXPECT_GT(skipped, 0.5 * full["flows"]["count"].get<double>());
  EXPECT_LT(fast["simulator"]["process_activations"].get<double>(),
            0.5 * full["simulator"]["process_activations"].get<double>());
  expect_packets_counted(full, fast);
}

TEST(FastForward, RingAllReduceOn32RanksWithinOnePercent) {
  expect_within_one_percent("--set collective.sizes=[16MiB]", "32 ranks, 16 MiB");
}

TEST(FastForward, RingAllReduceOn16RanksWithinOnePercent) {
  expect_within_one_percent("--set collective.sizes=[16MiB] --set collective.ranks=16", "16 ranks, 16 MiB");
}

// With ECMP each flow keeps one path: the skipped packets count on the very links their
// flows took, every port's packets and bytes as in the packet-level run (within 1%).
TEST(FastForward, SkippedPacketsCountOnTheLinksTheirFlowsTake) {
  const auto [full, fast] = run_both("--set collective.sizes=[16MiB] --set routing.algorithm=ecmp");
  if (full.is_null() || fast.is_null()) return;
  ASSERT_GT(fast["fast_forward"]["transfers_skipped"].get<double>(), 0.5 * full["flows"]["count"].get<double>());
  EXPECT_TRUE(fast["scoreboard"]["ok"].get<bool>()) << fast["scoreboard"].dump();
  expect_packets_counted(full, fast);
  ASSERT_EQ(full["ports"].size(), fast["ports"].size());
  for (std::size_t p = 0; p < full["ports"].size(); ++p) {
    const auto &a = full["ports"][p], &b = fast["ports"][p];
    for (const char* k : {"egress_packets", "ingress_packets", "egress_utilisation"})
      EXPECT_LE(std::abs(b[k].get<double>() - a[k].get<double>()), 0.01 * a[k].get<double>() + 1) << a["name"] << " " << k;
    const std::string sent = a["name"].get<std::string>() + ".egress_payload_bytes";
    EXPECT_LE(std::abs(fast["stats"][sent]["value"].get<double>() - full["stats"][sent]["value"].get<double>()),
              0.01 * full["stats"][sent]["value"].get<double>() + 4096)
        << sent;
  }
}

// Two rings on one NIC hold one steady state through the reduce-scatter, then fall in and
// out of step after the change to the allgather in the packet-level run itself: fast-
// forward skips the first and runs the second packet by packet, the collective time
// within 1%.
TEST(FastForward, TwoChannelsLeaveTheSteadyStateAtTheAllGather) {
  const auto [full, fast] =
      run_both("--set collective.sizes=[16MiB] --set collective.ranks=16 --set collective.channels=2");
  if (full.is_null() || fast.is_null()) return;
  EXPECT_GT(fast["fast_forward"]["transfers_skipped"].get<int>(), 0);
  EXPECT_GE(fast["fast_forward"]["resumed"].get<int>(), 1);
  EXPECT_LT(relative(fast["collective"]["sizes"][0]["time_us"].get<double>(),
                     full["collective"]["sizes"][0]["time_us"].get<double>()),
            0.01);
}

TEST(FastForward, RingAllReduceOn128RanksWithinOnePercent) {
  expect_within_one_percent("--set topology.radix=16 --set collective.sizes=[8MiB]", "128 ranks, 8 MiB");
}

// 512 ranks on a radix-32 leaf-spine; chunks of 64 KiB, 16 packets, as at 128 ranks (in
// the sanitizer build, several times slower, of 16 KiB).
TEST(FastForward, RingAllReduceOn512RanksWithinOnePercent) {
  const std::string size = fabricsim::test::kAddressSanitizer ? "8MiB" : "32MiB";
  expect_within_one_percent("--set topology.radix=32 --set collective.sizes=[" + size + "]", "512 ranks, " + size);
}

// A generated training iteration (examples/training/gpt_small.yaml: tp 4 in the servers,
// pp 2, dp the rest) on the fabric `sets` gives: the data-parallel groups' ring AllReduces
// settle side by side; the iteration time, its communication and the flows within 1%.
void expect_training_within_one_percent(const std::string& sets, const std::string& tag) {
  const auto [full, fast] = run_both(sets, "training/gpt_small.yaml");
  if (full.is_null() || fast.is_null()) return;
  SCOPED_TRACE(tag);
  EXPECT_TRUE(fast["fast_forward"]["applied"].get<bool>()) << fast["fast_forward"].dump();
  EXPECT_GT(fast["fast_forward"]["transfers_skipped"].get<int>(), 0);
  EXPECT_TRUE(fast["chakra"]["finished"].get<bool>());
  EXPECT_TRUE(fast["scoreboard"]["ok"].get<bool>()) << fast["scoreboard"].dump();
  for (const char* key : {"iteration_time_us", "exposed_communication_mean_us"})
    EXPECT_LT(relative(fast["chakra"][key].get<double>(), full["chakra"][key].get<double>()), 0.01)
        << key << ": " << fast["chakra"][key] << " us against " << full["chakra"][key] << " us";
  expect_flows_within_one_percent(full, fast);
  expect_packets_counted(full, fast);
}

// 128 GPUs on a k=8 fat tree: dp 16.
TEST(FastForward, GeneratedTrainingIterationWithinOnePercent) {
  expect_training_within_one_percent("--set topology.k=8", "128 GPUs");
}

// 512 GPUs on a radix-16 three-tier fat tree of 8 pods (no fat_tree k gives 512 hosts):
// dp 64, a global batch of 128 for two micro-batches per replica, as at 128 GPUs.
// The sanitizer build runs the same code at 128 GPUs above; this one would take minutes there.
TEST(FastForward, GeneratedTrainingIterationOn512GpusWithinOnePercent) {
  if (fabricsim::test::kAddressSanitizer) GTEST_SKIP() << "long under AddressSanitizer: the Release pass runs it";
  expect_training_within_one_percent("--set 'topology={kind: three_tier, radix: 16, pods: 8}' --set training.global_batch=128",
                                     "512 GPUs");
}

// collective.iterations repeats each size on an idle fabric: the first iteration's time
// and flows stand for the others (memoised), within 1% of running them.
TEST(FastForward, RepeatedIterationsReplayTheFirst) {
  const auto [full, fast] = run_both("--set collective.sizes=[1MiB,16MiB] --set collective.iterations=4");
  if (full.is_null() || fast.is_null()) return;
  EXPECT_EQ(fast["fast_forward"]["iterations_replayed"], 6);
  for (std::size_t k = 0; k < 2; ++k)
    EXPECT_LT(relative(fast["collective"]["sizes"][k]["time_us"].get<double>(),
                       full["collective"]["sizes"][k]["time_us"].get<double>()),
              0.01);
  EXPECT_EQ(fast["flows"]["count"], full["flows"]["count"]);
  for (const char* p : {"p50", "p99", "mean"})
    EXPECT_LT(relative(fast["flows"]["fct_us"][p].get<double>(), full["flows"]["fct_us"][p].get<double>()), 0.01) << p;
  EXPECT_LT(fast["simulator"]["process_activations"].get<double>(),
            0.25 * full["simulator"]["process_activations"].get<double>());
  expect_packets_counted(full, fast);
}

TEST(FastForward, SameResultsOnAnyNumberOfLanes) {
  const fs::path dir = fabricsim::testing::test_temp_dir("ff");
  const std::string base = example("allreduce_leafspine_ib.yaml") +
                           " --set collective.sizes=[1MiB,4MiB] --set collective.iterations=2 --set simulation.fast_forward=true";
  const nlohmann::json one = run(base + " --set simulation.threads=1", dir / "one");
  const nlohmann::json three = run(base + " --set simulation.threads=3", dir / "three");
  ASSERT_FALSE(one.is_null());
  EXPECT_GT(three["simulator"]["lanes"].get<int>(), 1);
  EXPECT_TRUE(one["fast_forward"]["applied"].get<bool>());
  fabricsim::testing::expect_same_results(one, three, {"simulation.threads", "output.directory"});
}

// Halving-doubling changes peer and size every step: no stream repeats, nothing skips,
// and the results are those of the packet-level run.
TEST(FastForward, NoSteadyStateChangesNothingAndSaysSo) {
  auto [full, fast] = run_both("--set collective.sizes=[1MiB] --set collective.algorithm=halving_doubling");
  if (full.is_null() || fast.is_null()) return;
  EXPECT_FALSE(fast["fast_forward"]["applied"].get<bool>());
  EXPECT_NE(fast["fast_forward"]["reason"].get<std::string>().find("steady"), std::string::npos);
  fast.erase("fast_forward");
  fabricsim::testing::expect_same_results(full, fast, {"simulation.fast_forward", "output.directory"});
}

// Lossy links and background traffic turn it off with a warning naming the key.
TEST(FastForward, LossyLinksTurnItOffWithAWarning) {
  const fs::path dir = fabricsim::testing::test_temp_dir("ff");
  const auto c = fabricsim::testing::run_command(
      "run -q " + example("allreduce_leafspine_ib.yaml") +
      " --set collective.sizes=[64KiB] --set link.drop_rate=1e-4 --set simulation.fast_forward=true --out " +
      (dir / "lossy").string());
  ASSERT_EQ(c.exit_code, 0) << c.output;
  nlohmann::json r;
  std::ifstream(dir / "lossy" / "results.json") >> r;
  EXPECT_FALSE(r["fast_forward"]["applied"].get<bool>());
  EXPECT_NE(r["fast_forward"]["reason"].get<std::string>().find("drop_rate"), std::string::npos);
  EXPECT_NE(r["warnings"].dump().find("fast_forward"), std::string::npos) << r["warnings"].dump();
}

TEST(FastForward, SyntheticTrafficTurnsItOff) {
  const fs::path dir = fabricsim::testing::test_temp_dir("ff");
  const nlohmann::json r =
      run(example("single_switch.yaml") + " --set simulation.fast_forward=true --set simulation.duration=20us", dir / "r");
  ASSERT_FALSE(r.is_null());
  EXPECT_FALSE(r["fast_forward"]["applied"].get<bool>());
  EXPECT_EQ(r["fast_forward"]["transfers_skipped"], 0);
  EXPECT_NE(r["warnings"].dump().find("fast_forward"), std::string::npos);
}

}  // namespace
