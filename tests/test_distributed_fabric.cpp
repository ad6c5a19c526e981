// A fabric over the processes of a distributed run (part of test_distributed; under
// mpirun with 2 and 3 processes, tests/CMakeLists.txt): the S2 fabric with its switches'
// lanes split over the processes gives, once gathered into process 0, the statistics and
// link counters of the same run in one process; what does not run over processes is
// refused with its configuration key. Each test elaborates a model: one per invocation.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/config.h"
#include "sim/fabric.h"
#include "tlm/distributed.h"

namespace dist = fabricsim::tlm_fabric::distributed;

namespace {

const std::string kS2 = std::string(FABRICSIM_SOURCE_DIR) + "/bench/s2_kary_ntree.yaml";
// Long enough for thousands of packets between the processes' switches.
const std::vector<std::string> kSets = {"simulation.duration=20us", "simulation.warmup=5us", "simulation.threads=1"};

/// results.json of `fabricsim run` in one process (a clean environment: not one of mpirun's).
nlohmann::json one_process_results() {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("fabricsim_distributed_" + std::to_string(getpid()));
  std::string command = "env -i PATH=/usr/bin:/bin " + std::string(FABRICSIM_BINARY) + " run " + kS2;
  for (const auto& s : kSets) command += " --set " + s;
  command += " --out " + dir.string() + " >/dev/null 2>&1";
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
  std::ifstream in(dir / "results.json");
  nlohmann::json r = in ? nlohmann::json::parse(in) : nlohmann::json();
  std::filesystem::remove_all(dir);
  return r;
}

/// Fails with the first differences between `got` and `want`.
void expect_same(const nlohmann::json& got, const nlohmann::json& want, const std::string& what) {
  const auto diff = nlohmann::json::diff(want, got);
  for (std::size_t i = 0; i < diff.size() && i < 10; ++i)
    ADD_FAILURE() << what << " differs at " << diff[i]["path"] << ": " << diff[i].dump().substr(0, 200);
  EXPECT_TRUE(diff.empty()) << what << ": " << diff.size() << " differences";
}

}  // namespace

// Every counter and distribution of the statistics, every port's link packets and
// utilisation, and the tiers' utilisation: those of one process, bit for bit.
TEST(DistributedFabric, StatisticsAndLinksAsInOneProcess) {
  const nlohmann::json want = dist::rank() == 0 ? one_process_results() : nlohmann::json();
  const auto config = fabricsim::sim::load_config(kS2, kSets);
  const nlohmann::json got = fabricsim::sim::run_simulation(config);
  EXPECT_EQ(got["simulator"]["lanes"].get<int>(), dist::size());
  if (dist::size() > 1) {
    EXPECT_GT(got["simulator"]["parallel_windows"].get<std::uint64_t>(), 100u);
  }
  if (dist::rank() != 0) return;
  ASSERT_TRUE(want.contains("stats"));
  expect_same(got["stats"], want["stats"], "stats");
  expect_same(got["tiers"], want["tiers"], "tiers");
  ASSERT_EQ(got["ports"].size(), want["ports"].size());
  for (std::size_t p = 0; p < want["ports"].size(); ++p)
    for (const char* key : {"ingress_packets", "egress_packets", "ingress_utilisation", "egress_utilisation"})
      EXPECT_EQ(got["ports"][p][key], want["ports"][p][key]) << want["ports"][p]["name"] << " " << key;
  EXPECT_GT(want["stats"]["fabric.ep0.rx_packets"]["value"].get<std::uint64_t>(), 100u);
}

// A collective acts on several lanes at once: refused, naming it, in every process.
TEST(DistributedFabric, WhatDoesNotRunOverProcessesIsRefused) {
  if (dist::size() == 1) GTEST_SKIP() << "one process runs everything";
  const auto config =
      fabricsim::sim::load_config(std::string(FABRICSIM_SOURCE_DIR) + "/examples/allreduce_leafspine_ib.yaml");
  try {
    fabricsim::sim::run_simulation(config);
    ADD_FAILURE() << "the collective ran over " << dist::size() << " processes";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("collective: not run over several processes"), std::string::npos) << e.what();
  }
}
