// The RTL IB VL arbiter inside a running fabric (tlm/rtl_vl_arbiter.h, docs/cosim.md):
// an InfiniBand single switch with 4 VLs, a high and a low table and a high limit gives
// the same results with switch.vl_arbiter_impl rtl as with tlm; lockstep passes (the
// selection every decision, the table positions and the high-limit count after every
// commit) and catches a mis-wired twin (its table pins crossed, rtl/models/
// vl_arbiter_crossed.cmake, TEST_ONLY) naming the output's hierarchy name; the transactor
// alone against the core; configuration errors. Every fabric run is a forked child.
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hw/egress_scheduler.h"
#include "sim/child_run.h"
#include "sim/config.h"
#include "sim/config_reader.h"
#include "tests/same_results.h"
#include "tlm/rtl_model.h"
#include "tlm/rtl_vl_arbiter.h"

namespace {

namespace fs = std::filesystem;
using fabricsim::sim::load_config;
using fabricsim::sim::run_in_child;
using fabricsim::tlm_fabric::AllocatorImpl;
using nlohmann::json;
using ::testing::HasSubstr;

const std::string kExample = std::string(FABRICSIM_SOURCE_DIR) + "/examples/single_switch.yaml";

[[maybe_unused]] const bool kCrossedAdded = [] {
  fabricsim::tlm_fabric::add_rtl_models(fabricsim::tlm_fabric::test_only_rtl_models());  // rtl/models/*, TEST_ONLY
  return true;
}();

/// The example as an InfiniBand switch with 4 VLs, messages on all four SLs, VL 3 in the
/// high table, VLs 0..2 in a 5-row low table of unequal weights, and a high limit of one
/// packet: every part of the arbiter decides.
const std::vector<std::string> kIb{
    "link.framing=infiniband",
    "switch.vls=4",
    "traffic.sl=[0, 1, 2, 3]",
    "traffic.load=0.9",
    "traffic.message_size=2KiB",
    "simulation.duration=30us",
    "switch.vl_arbitration={high: [{vl: 3, weight: 8}], low: [{vl: 0, weight: 4}, {vl: 1, weight: 40}, "
    "{vl: 2, weight: 2}, {vl: 0, weight: 0}, {vl: 1, weight: 9}], high_limit: 0}"};

std::vector<std::string> ib(std::vector<std::string> more = {}) {
  std::vector<std::string> o = kIb;
  o.insert(o.end(), more.begin(), more.end());
  return o;
}

json run(const std::vector<std::string>& overrides) { return run_in_child(load_config(kExample, overrides)); }

void expect_same_results(const json& a, const json& b) {
  fabricsim::testing::expect_same_results(a, b, {"switch.vl_arbiter_impl", "switch.vl_arbiter_rtl_variant", "switch.rtl_trace"});
}

TEST(RtlVlArbiter, RtlGivesTheSameResultsAsTlm) {
  const json tlm = run(ib());
  const json rtl = run(ib({"switch.vl_arbiter_impl=rtl"}));
  ASSERT_FALSE(tlm.contains("error")) << tlm.dump();
  ASSERT_FALSE(rtl.contains("error")) << rtl.dump();
  EXPECT_GT(tlm["packets"]["delivered"].get<std::uint64_t>(), 2000u);
  expect_same_results(tlm, rtl);
  // The arbiter decides something in this run: other tables give other results.
  auto other = ib({"switch.vl_arbitration={low: [{vl: 0, weight: 1}, {vl: 1, weight: 1}, {vl: 2, weight: 1}, "
                   "{vl: 3, weight: 1}]}"});
  const json plain = run(other);
  ASSERT_FALSE(plain.contains("error")) << plain.dump();
  EXPECT_NE(plain["latency"], tlm["latency"]);
}

TEST(RtlVlArbiter, LockstepPasses) {
  const json tlm = run(ib());
  const json lock = run(ib({"switch.vl_arbiter_impl=lockstep"}));
  ASSERT_FALSE(lock.contains("error")) << lock["error"];
  expect_same_results(tlm, lock);
}

TEST(RtlVlArbiter, LockstepCatchesTheCrossedTwin) {
  const fs::path dir = fs::temp_directory_path() / "fabricsim_test_rtl_vl_arbiter_crossed";
  fs::remove_all(dir);
  const json r = run(ib({"switch.vl_arbiter_impl=lockstep", "switch.vl_arbiter_rtl_variant=vl_arbiter_crossed",
                         "switch.rtl_trace=" + dir.string()}));
  ASSERT_TRUE(r.contains("error")) << "the crossed twin went unnoticed";
  const std::string e = r["error"].get<std::string>();
  EXPECT_THAT(e, ::testing::ContainsRegex("lockstep (mismatch|state divergence) in fabric\\.sw0\\.port[0-9]+\\.vl_arbiter "
                                          "at core-clock cycle [0-9]+ \\(t = [0-9.]+ ns\\), arbitration round [0-9]+"));
  EXPECT_THAT(e, HasSubstr("hw core 'ib_vl_arbiter' and RTL vl_arbiter_crossed (top vl_arbiter, 4 VLs, 8 table rows)"));
  EXPECT_THAT(e, ::testing::ContainsRegex("head bytes: vl0 [0-9]+, vl1 [0-9]+, vl2 [0-9]+, vl3 [0-9]+"));
  EXPECT_THAT(e, ::testing::ContainsRegex("up to the mismatch: \\S+\\.vl_arbiter\\.vl_arbiter_crossed\\.lockstep_mismatch\\.fst"));
  // One --trace waveform per output port: every output of the switch runs the twin.
  for (int port : {0, 15})
    EXPECT_TRUE(fs::exists(dir / ("fabric.sw0.port" + std::to_string(port) + ".vl_arbiter.vl_arbiter_crossed.fst")))
        << port;
}

TEST(RtlVlArbiter, CrossedTwinIsNotInTheFabricsimBinary) {
  const auto problem = fabricsim::tlm_fabric::check_rtl_vl_arbiter("vl_arbiter_crossed", 4, 5);
  EXPECT_EQ(problem.what, "");  // this process added it
  bool builtin = false;
  for (const auto& m : fabricsim::tlm_fabric::builtin_rtl_models()) builtin = builtin || m.info.name == "vl_arbiter_crossed";
  EXPECT_FALSE(builtin);
}

// The transactor alone: every decision of the RTL equals the core's on random heads, some
// rounds never committed, the sent packet's size sometimes another head's of that VL.
TEST(RtlVlArbiter, TransactorMatchesTheCoreDecisionByDecision) {
  fabricsim::hw::IbVlArbParams p;
  p.vls = 4;
  p.high = {{3, 2}, {1, 1}};
  p.low = {{0, 3}, {2, 1}, {1, 0}, {2, 5}, {0, 1}, {1, 2}, {3, 1}};
  p.high_limit = 1;
  auto core = fabricsim::hw::make_ib_vl_arbiter(p);
  fabricsim::tlm_fabric::VlArbiterSpec spec;
  spec.hierarchy = "t.port0.vl_arbiter";
  spec.params = p;
  spec.impl = AllocatorImpl::rtl;
  auto rtl = fabricsim::tlm_fabric::make_vl_arbiter(spec);
  spec.impl = AllocatorImpl::lockstep;
  auto lock = fabricsim::tlm_fabric::make_vl_arbiter(spec);
  std::mt19937 rng(7);
  std::vector<std::uint32_t> heads(4);
  int sent = 0;
  for (int round = 0; round < 20000; ++round) {
    for (auto& h : heads) h = rng() % 3 == 0 ? 0 : 1 + rng() % 4200;
    const int c = core->select(heads);
    ASSERT_EQ(rtl->select(heads), c) << "round " << round;
    ASSERT_EQ(lock->select(heads), c) << "round " << round;
    if (c < 0 || rng() % 5 == 0) continue;
    const std::uint32_t bytes = rng() % 4 == 0 ? 1 + rng() % 4200 : heads[static_cast<std::size_t>(c)];
    core->update_state(c, bytes);
    rtl->update_state(c, bytes);
    lock->update_state(c, bytes);
    ++sent;
  }
  EXPECT_GT(sent, 10000);
  EXPECT_THROW(rtl->update_state(0, 64), std::logic_error);  // nothing selected since the last commit
}

TEST(RtlVlArbiter, ConfigErrorsListTheRtlBuilds) {
  try {
    load_config(kExample, ib({"switch.vl_arbiter_impl=rtl", "switch.vl_arbiter_rtl_variant=nope"}));
    ADD_FAILURE() << "unknown variant accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("switch.vl_arbiter_rtl_variant: no RTL VL arbiter 'nope' in this build; valid: vl_arbiter"));
  }
  try {
    load_config(kExample, ib({"switch.vl_arbiter_impl=rtl", "switch.vls=3", "traffic.sl=[0, 1, 2]",
                              "switch.vl_arbitration={low: [{vl: 0, weight: 1}, {vl: 1, weight: 1}, {vl: 2, weight: 1}]}"}));
    ADD_FAILURE() << "unbuilt size accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("no RTL build of vl_arbiter for 3 VLs with tables of 3 entries"));
    EXPECT_THAT(e.what(), HasSubstr("this build has: 4 VLs x 8 rows. Add the size to SIZES in rtl/models/vl_arbiter.cmake"));
  }
  try {
    load_config(kExample, {"switch.vl_arbiter_impl=lockstep", "switch.vls=4"});  // RoCE: tc_dwrr
    ADD_FAILURE() << "vl_arbiter_impl accepted without ib_vl_arb";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("the RTL VL arbiter twins ib_vl_arb; switch.egress_scheduler is tc_dwrr"));
  }
}

}  // namespace
