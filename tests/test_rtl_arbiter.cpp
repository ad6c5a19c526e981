// The round-robin arbiter's RTL twin inside a running fabric (tlm/rtl_arbiter.h,
// docs/cosim.md "Arbiters"): the output_queued switch's write-port arbiters
// (switch.write_arbiter_impl) and the NIC's VL arbiter (nic.vl_arbiter_impl) give the same
// results as rtl as tlm, pass lockstep, and lockstep stops the deliberately broken twin
// (rtl/models/rr_arbiter_stuck.cmake: an injected fault, added to this process's table) with the arbiter's
// hierarchy name; the block alone against the core; configuration errors.
// Every fabric run is a forked child (SystemC elaborates once per process).
#include <filesystem>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hw/arbiter.h"
#include "sim/child_run.h"
#include "sim/config.h"
#include "sim/config_reader.h"
#include "tests/same_results.h"
#include "tlm/rtl_arbiter.h"
#include "tlm/rtl_model.h"

namespace {

namespace fs = std::filesystem;
using fabricsim::sim::load_config;
using fabricsim::sim::run_in_child;
using fabricsim::tlm_fabric::AllocatorImpl;
using nlohmann::json;
using ::testing::HasSubstr;

const std::string kExample = std::string(FABRICSIM_SOURCE_DIR) + "/examples/single_switch.yaml";

[[maybe_unused]] const bool kBrokenAdded = [] {
  fabricsim::tlm_fabric::add_rtl_models(fabricsim::tlm_fabric::test_only_rtl_models());  // rtl/models/*, TEST_ONLY
  return true;
}();

/// The write-port arbiters' fabric: the example (16 ports) with output queues.
std::vector<std::string> output_queued(std::vector<std::string> more = {}) {
  std::vector<std::string> o{"switch.buffer=output_queued"};
  o.insert(o.end(), more.begin(), more.end());
  return o;
}

/// The VL arbiter's fabric: 4 VLs, every source's messages round robin over SLs 0..3,
/// multi-packet messages, so a NIC often holds segments on several VLs at once.
std::vector<std::string> four_vls(std::vector<std::string> more = {}) {
  std::vector<std::string> o{"switch.vls=4", "traffic.sl=[0,1,2,3]", "traffic.message_size=16KiB", "traffic.load=0.95"};
  o.insert(o.end(), more.begin(), more.end());
  return o;
}

json run(const std::vector<std::string>& overrides) { return run_in_child(load_config(kExample, overrides)); }

/// The keys that select the implementation.
const std::vector<std::string> kImplKeys{"switch.write_arbiter_impl", "switch.write_arbiter_rtl_variant",
                                         "switch.rtl_trace", "nic.vl_arbiter_impl", "nic.vl_arbiter_rtl_variant"};

void expect_same_results(const json& a, const json& b) { fabricsim::testing::expect_same_results(a, b, kImplKeys); }

std::uint64_t delivered(const json& r) { return r.at("packets").at("delivered").get<std::uint64_t>(); }

fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("fabricsim_test_rtl_arbiter_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// ---------------------------------------------------------------------------------------------
// The switch's write-port arbiters.

TEST(RtlArbiter, RtlWriteArbitersGiveTheSameResultsAsTlm) {
  const json tlm = run(output_queued());
  const json rtl = run(output_queued({"switch.write_arbiter_impl=rtl"}));
  ASSERT_FALSE(tlm.contains("error")) << tlm.dump();
  ASSERT_FALSE(rtl.contains("error")) << rtl.dump();
  EXPECT_GT(delivered(tlm), 5000u);
  expect_same_results(tlm, rtl);
}

TEST(RtlArbiter, LockstepPassesOnTheWriteArbiters) {
  const json tlm = run(output_queued());
  const json lockstep = run(output_queued({"switch.write_arbiter_impl=lockstep"}));
  ASSERT_FALSE(lockstep.contains("error")) << lockstep["error"];
  expect_same_results(tlm, lockstep);
}

// VOQ inputs: the write ports' grants and the inputs' accepts (rounds whose refused
// grants commit nothing) on the twin, compared every round.
TEST(RtlArbiter, LockstepPassesOnTheCioqWriteAndAcceptArbiters) {
  const std::vector<std::string> cioq = {"switch.buffer=cioq", "switch.speedup=2", "traffic.load=1.0"};
  const json tlm = run(cioq);
  auto with_impl = cioq;
  with_impl.push_back("switch.write_arbiter_impl=lockstep");
  const json lockstep = run(with_impl);
  ASSERT_FALSE(tlm.contains("error")) << tlm.dump();
  ASSERT_FALSE(lockstep.contains("error")) << lockstep["error"];
  EXPECT_GT(delivered(tlm), 5000u);
  expect_same_results(tlm, lockstep);
}

TEST(RtlArbiter, LockstepCatchesTheBrokenWriteArbiter) {
  const fs::path dir = scratch("broken");
  const json r = run(output_queued({"switch.write_arbiter_impl=lockstep", "switch.write_arbiter_rtl_variant=rr_arbiter_stuck",
                                    "switch.rtl_trace=" + dir.string()}));
  ASSERT_TRUE(r.contains("error")) << "the broken arbiter went unnoticed";
  const std::string e = r["error"].get<std::string>();
  // The pointer stays on the winner: the state check stops it at the first committing edge
  // of some output's arbiter, named by its hierarchy.
  EXPECT_THAT(e, ::testing::ContainsRegex("lockstep state divergence in fabric\\.sw0\\.port[0-9]+\\.write_arbiter at "
                                          "core-clock cycle [0-9]+ \\(t = [0-9.]+ ns\\), arbitration round 1:"));
  EXPECT_THAT(e, HasSubstr("hw core 'round_robin' and RTL rr_arbiter_stuck (top rr_arbiter, 16 requesters)"));
  EXPECT_THAT(e, ::testing::ContainsRegex("state: +ptr\\[0\\]: hw core ([0-9]+), RTL ([0-9]+) \\(debug port ptr_o\\)"));
  EXPECT_THAT(e, ::testing::ContainsRegex("requests: +\\{[0-9,]+\\}"));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(e, m, std::regex("up to the mismatch: (\\S+)"))) << e;
  EXPECT_EQ(fs::path(m[1].str()).parent_path(), dir);
  EXPECT_GT(fs::file_size(m[1].str()), 100u);
}

TEST(RtlArbiter, BrokenWriteArbiterAloneChangesTheResults) {
  // Without lockstep the broken block runs and quietly changes the outcome (it is in use).
  const json tlm = run(output_queued());
  const json broken =
      run(output_queued({"switch.write_arbiter_impl=rtl", "switch.write_arbiter_rtl_variant=rr_arbiter_stuck"}));
  ASSERT_FALSE(broken.contains("error")) << broken["error"];
  using fabricsim::testing::comparable_results;
  EXPECT_FALSE(json::diff(comparable_results(tlm, kImplKeys), comparable_results(broken, kImplKeys)).empty());
}

// ---------------------------------------------------------------------------------------------
// The NIC's VL arbiter.

TEST(RtlArbiter, RtlVlArbiterGivesTheSameResultsAsTlm) {
  const json tlm = run(four_vls());
  const json rtl = run(four_vls({"nic.vl_arbiter_impl=rtl"}));
  const json lockstep = run(four_vls({"nic.vl_arbiter_impl=lockstep"}));
  ASSERT_FALSE(tlm.contains("error")) << tlm.dump();
  ASSERT_FALSE(rtl.contains("error")) << rtl["error"];
  ASSERT_FALSE(lockstep.contains("error")) << lockstep["error"];
  EXPECT_GT(delivered(tlm), 5000u);
  expect_same_results(tlm, rtl);
  expect_same_results(tlm, lockstep);
}

TEST(RtlArbiter, TraceWritesAnFstPerArbiter) {
  const fs::path dir = scratch("trace");
  const json r = run(four_vls({"switch.buffer=output_queued", "switch.write_arbiter_impl=rtl", "nic.vl_arbiter_impl=rtl",
                               "simulation.duration=5us", "simulation.warmup=1us", "switch.rtl_trace=" + dir.string()}));
  ASSERT_FALSE(r.contains("error")) << r["error"];
  for (const char* f : {"fabric.sw0.port3.write_arbiter.rr_arbiter.fst", "fabric.ep0.vl_arbiter.rr_arbiter.fst"}) {
    ASSERT_TRUE(fs::exists(dir / f)) << f;
    EXPECT_GT(fs::file_size(dir / f), 100u) << f;
  }
}

// ---------------------------------------------------------------------------------------------
// The block alone.

fabricsim::tlm_fabric::ArbiterSpec rtl_spec(const std::string& variant, int n) {
  fabricsim::tlm_fabric::ArbiterSpec spec;
  spec.hierarchy = "unit.arbiter";
  spec.requesters = n;
  spec.impl = AllocatorImpl::rtl;
  spec.rtl_variant = variant;
  return spec;
}

/// Random rounds on the block and the core; some never committed, some with nobody asking.
/// Returns the first round whose grant or pointer differs, or -1.
int first_difference(const std::string& variant, int n, int rounds) {
  auto rtl = fabricsim::tlm_fabric::make_arbiter_block(rtl_spec(variant, n));
  fabricsim::hw::RoundRobinArbiter core(n);
  std::mt19937 rng(7);
  for (int round = 0; round < rounds; ++round) {
    rtl->clear();
    core.clear();
    for (int i = 0; i < n; ++i)
      if (rng() % 3 == 0) {
        rtl->add_request({i});
        core.add_request({i});
      }
    const int g = core.arbitrate();
    if (rtl->arbitrate() != g || rtl->request_count() != core.request_count()) return round;
    if (rng() % 4 == 0) continue;  // not committed
    rtl->update_state(g);
    core.update_state(g);
  }
  return -1;
}

TEST(RtlArbiter, BlockMatchesTheCoreRoundByRound) {
  for (const auto& m : fabricsim::tlm_fabric::rtl_arbiter_models()) {
    SCOPED_TRACE(m.name + " " + std::to_string(m.requesters));
    const int diff = first_difference(m.name, m.requesters, 3000);
    if (m.test_only)  // the deliberately broken twin
      EXPECT_GE(diff, 0) << "the broken block matched the core on every round";
    else
      EXPECT_EQ(diff, -1) << "first mismatch in round " << diff;
  }
}

TEST(RtlArbiter, BlockCommitsOnlyItsOwnGrant) {
  auto rtl = fabricsim::tlm_fabric::make_arbiter_block(rtl_spec("rr_arbiter", 4));
  EXPECT_THROW(rtl->add_request({4}), std::out_of_range);
  rtl->add_request({1});
  rtl->add_request({2});
  ASSERT_EQ(rtl->arbitrate(), 1);
  EXPECT_THROW(rtl->update_state(2), std::logic_error);
}

TEST(RtlArbiter, ModelTableListsTheBuilds) {
  std::vector<std::string> builds;
  for (const auto& m : fabricsim::tlm_fabric::rtl_arbiter_models())
    builds.push_back(m.name + ":" + std::to_string(m.requesters) + (m.test_only ? "*" : ""));
  EXPECT_THAT(builds, ::testing::UnorderedElementsAre("rr_arbiter:4", "rr_arbiter:16", "rr_arbiter_stuck:16*"));
}

// ---------------------------------------------------------------------------------------------
// Configuration errors.

std::string config_error(const std::vector<std::string>& overrides) {
  try {
    load_config(kExample, overrides);
  } catch (const fabricsim::sim::ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(RtlArbiter, ConfigErrorsListTheRtlBuilds) {
  EXPECT_THAT(config_error(output_queued({"switch.write_arbiter_impl=rtl", "switch.ports=12", "topology.endpoints=12"})),
              ::testing::AllOf(HasSubstr("switch.ports"), HasSubstr("no RTL build of rr_arbiter for 12 requesters"),
                               HasSubstr("this build has: 4, 16")));
  EXPECT_THAT(config_error(output_queued({"switch.write_arbiter_impl=lockstep", "switch.write_arbiter_rtl_variant=mine"})),
              ::testing::AllOf(HasSubstr("switch.write_arbiter_rtl_variant"), HasSubstr("no RTL arbiter 'mine'"),
                               HasSubstr("rr_arbiter, rr_arbiter_stuck (test only)")));
  EXPECT_THAT(config_error(output_queued({"switch.write_arbiter_rtl_variant=islip_allocator",
                                          "switch.write_arbiter_impl=rtl"})),
              HasSubstr("no RTL arbiter 'islip_allocator'"));
  EXPECT_THAT(config_error({"switch.write_arbiter_impl=verilog"}),
              ::testing::AllOf(HasSubstr("switch.write_arbiter_impl"), HasSubstr("tlm, rtl, lockstep")));
  EXPECT_THAT(config_error({"nic.vl_arbiter_impl=rtl", "switch.vls=3"}),
              ::testing::AllOf(HasSubstr("nic.vl_arbiter_impl"), HasSubstr("switch.vls"),
                               HasSubstr("no RTL build of rr_arbiter for 3 requesters")));
  EXPECT_THAT(config_error({"nic.vl_arbiter_impl=rtl", "nic.vl_arbiter_rtl_variant=mine"}),
              HasSubstr("nic.vl_arbiter_rtl_variant"));
  EXPECT_EQ(config_error(output_queued({"switch.write_arbiter_impl=rtl"})), "");
  EXPECT_EQ(config_error(four_vls({"nic.vl_arbiter_impl=lockstep"})), "");
}

TEST(RtlArbiter, SwitchWithoutAnRtlBuildOfItsRadixStopsAtElaboration) {
  const json r = run_in_child(fabricsim::sim::load_config_text(R"(
simulation: {seed: 1, duration: 1us, warmup: 0us}
switch: {buffer: output_queued, write_arbiter_impl: rtl}
topology: {kind: leaf_spine, radix: 8}
traffic: {pattern: uniform, load: 0.1, message_size: 1KiB}
)", "leaf_spine.yaml"));
  ASSERT_TRUE(r.contains("error"));
  EXPECT_THAT(r["error"].get<std::string>(),
              ::testing::AllOf(HasSubstr("leaf0.port0.write_arbiter: switch.write_arbiter_impl rtl"),
                               HasSubstr("no RTL build of rr_arbiter for 8 requesters")));
}

}  // namespace
