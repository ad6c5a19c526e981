// The RTL credit manager (rtl/credit_manager.sv) as every link transmitter's credit
// accounting (tlm/rtl_credit_manager.h, link.credit_manager_impl): the same results as
// the hw core on an IB leaf-spine (1 and 2 VLs) and back-to-back NICs; lockstep passes
// and catches the broken twin (rtl/models/credit_manager_broken.cmake, an injected fault, added to this process's
// table only) with the port's hierarchy name; the block alone against hw::CreditCounter;
// configuration errors. Every fabric run is a forked child.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hw/credit.h"
#include "sim/child_run.h"
#include "sim/config.h"
#include "sim/config_reader.h"
#include "tests/command.h"
#include "tests/config_error.h"
#include "tests/same_results.h"
#include "tlm/rtl_credit_manager.h"

namespace {

namespace fs = std::filesystem;
namespace tf = fabricsim::tlm_fabric;
using fabricsim::sim::load_config;
using fabricsim::sim::run_in_child;
using fabricsim::testing::file_error_of;
using nlohmann::json;
using ::testing::HasSubstr;

const std::string kLeafSpine = std::string(FABRICSIM_SOURCE_DIR) + "/examples/allreduce_leafspine_ib.yaml";
const std::string kB2b = std::string(FABRICSIM_SOURCE_DIR) + "/examples/perftest_ib_b2b.yaml";

[[maybe_unused]] const bool kBrokenAdded = [] {
  tf::add_rtl_credit_manager_models(tf::test_only_rtl_models());  // rtl/models/*, TEST_ONLY
  return true;
}();

json run(const std::string& file, const std::vector<std::string>& overrides) {
  return run_in_child(load_config(file, overrides));
}

void expect_same(const std::string& file, const std::vector<std::string>& more) {
  std::vector<std::string> rtl = more;
  rtl.push_back("link.credit_manager_impl=rtl");
  const json a = run(file, more), b = run(file, rtl);
  ASSERT_FALSE(a.contains("error")) << a.dump().substr(0, 500);
  ASSERT_FALSE(b.contains("error")) << b["error"];
  EXPECT_GT(a["packets"]["delivered"].get<std::uint64_t>(), 1000u);
  fabricsim::testing::expect_same_results(a, b, {"link.credit_manager_impl", "link.credit_manager_rtl_variant"});
}

TEST(RtlCreditManager, RtlGivesTheSameResultsAsTlmOnSwitchesAndNics) { expect_same(kLeafSpine, {}); }

TEST(RtlCreditManager, RtlGivesTheSameResultsWithTwoVls) { expect_same(kLeafSpine, {"switch.vls=2"}); }

TEST(RtlCreditManager, RtlGivesTheSameResultsBackToBack) { expect_same(kB2b, {}); }

TEST(RtlCreditManager, LockstepPasses) {
  for (const char* vls : {"switch.vls=1", "switch.vls=2"}) {
    const json r = run(kLeafSpine, {vls, "link.credit_manager_impl=lockstep"});
    ASSERT_FALSE(r.contains("error")) << r["error"];
    EXPECT_GT(r["packets"]["delivered"].get<std::uint64_t>(), 1000u);
  }
}

TEST(RtlCreditManager, LockstepCatchesTheBrokenRtl) {
  const json r = run(kLeafSpine, {"link.credit_manager_impl=lockstep", "link.credit_manager_rtl_variant=credit_manager_broken"});
  ASSERT_TRUE(r.contains("error")) << "the broken credit manager went unnoticed";
  const std::string e = r["error"].get<std::string>();
  RecordProperty("error", e);  // the message, in --gtest_output=xml
  EXPECT_THAT(e, ::testing::ContainsRegex("lockstep mismatch in fabric\\.[a-z_0-9]+\\.port[0-9]+\\.credit_manager at edge "
                                          "[0-9]+ \\(call [0-9]+, t = [0-9.]+ ns\\)"));
  EXPECT_THAT(e, HasSubstr("credit_manager_broken (top credit_manager, 1 VL, 64 B blocks) disagree"));
  EXPECT_THAT(e, ::testing::ContainsRegex("inputs: +(can_send|consume|restore)\\(VL 0, [0-9]+ (blocks|bytes)\\)"));
  EXPECT_THAT(e, ::testing::ContainsRegex("hw core [0-9]+, RTL [0-9]+"));
  EXPECT_THAT(e, HasSubstr("up to the mismatch: "));
  EXPECT_THAT(e, ::testing::Not(HasSubstr("no mismatch waveform")));
}

TEST(RtlCreditManager, BrokenRtlIsNotInTheFabricsimBinary) {
  const auto r = fabricsim::testing::run_command("validate " + kB2b + " --set link.credit_manager_impl=rtl"
                                                 " --set link.credit_manager_rtl_variant=credit_manager_broken");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("link.credit_manager_rtl_variant: no RTL credit manager 'credit_manager_broken' in "
                                  "this build; valid: credit_manager"));
}

TEST(RtlCreditManager, TraceWritesAnFstPerTransmitter) {
  const fs::path dir = fs::temp_directory_path() / "fabricsim_test_rtl_credit_manager_trace";
  fs::remove_all(dir);
  const auto r = fabricsim::testing::run_command("run -q " + kB2b + " --set link.credit_manager_impl=rtl --trace rtl --out " +
                                                 (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* nic : {"ep0", "ep1"}) {
    const fs::path f = dir / "out" / "waveforms" / (std::string("fabric.") + nic + ".port0.credit_manager.credit_manager.fst");
    ASSERT_TRUE(fs::exists(f)) << f;
    EXPECT_GT(fs::file_size(f), 1000u) << f;
  }
}

tf::CreditManagerSpec spec(tf::AllocatorImpl impl, int vls, std::uint64_t capacity) {
  tf::CreditManagerSpec s;
  s.hierarchy = "unit.port0.credit_manager";
  s.impl = impl;
  s.vls = vls;
  s.capacity_blocks = capacity;
  return s;
}

TEST(RtlCreditManager, BlockAgreesWithTheCounterCallByCall) {
  // A 2-VL transmitter against hw::CreditCounter: sends while credits last, returns out of order.
  auto block = tf::make_credit_manager(spec(tf::AllocatorImpl::rtl, 2, 20));
  ASSERT_NE(block, nullptr);
  std::vector<fabricsim::hw::CreditCounter> core(2, fabricsim::hw::CreditCounter(64, 20));
  std::uint64_t checks = 0;
  for (int step = 0; step < 400; ++step) {
    const int vl = step % 2;
    const std::uint64_t bytes = 1 + static_cast<std::uint64_t>(step * 97 % 700);
    const std::uint64_t blocks = core[vl].blocks_for(bytes);
    ASSERT_EQ(block->can_send(vl, blocks), core[vl].can_send(bytes)) << "step " << step;
    ++checks;
    if (core[vl].can_send(bytes)) {
      block->consume(vl, bytes);
      core[vl].consume(bytes);
    } else {
      const std::uint64_t back = core[vl].capacity() - core[vl].available();
      block->restore(vl, back / 2 + 1);
      core[vl].restore(back / 2 + 1);
    }
  }
  EXPECT_EQ(checks, 400u);
}

TEST(RtlCreditManager, LockstepBlockRefusesWhatTheCounterRefuses) {
  auto lock = tf::make_credit_manager(spec(tf::AllocatorImpl::lockstep, 1, 4));
  lock->consume(0, 200);                            // 4 blocks: all of them
  EXPECT_FALSE(lock->can_send(0, 1));
  EXPECT_THROW(lock->consume(0, 1), std::logic_error);  // the core's underflow, agreed by the RTL
  EXPECT_THROW(lock->restore(0, 5), std::logic_error);  // more than lent
  lock->restore(0, 4);
  EXPECT_TRUE(lock->can_send(0, 4));

  auto rtl = tf::make_credit_manager(spec(tf::AllocatorImpl::rtl, 1, 4));
  try {
    rtl->consume(0, 300);  // 5 blocks of 4
    FAIL() << "the RTL consume of more than held went through";
  } catch (const tf::RtlCreditManagerMismatch& e) {
    EXPECT_THAT(e.what(), HasSubstr("unit.port0.credit_manager: RTL credit manager credit_manager refused the consume "
                                    "(can_send_o low for the packet) at edge 1"));
  }
}

TEST(RtlCreditManager, ConfigErrorsListTheRtlBuilds) {
  EXPECT_THAT(file_error_of(kLeafSpine, {"link.credit_manager_impl=rtl", "switch.vls=4"}),
              HasSubstr("switch.vls: link.credit_manager_impl rtl: no RTL build of credit_manager for 4 VLs (Verilator "
                        "fixes parameters at build time); this build has: 1 VL of 64 B blocks, 2 VLs of 64 B blocks"));
  EXPECT_THAT(file_error_of(kLeafSpine, {"link.credit_manager_impl=lockstep", "link.credit_block=128B"}),
              HasSubstr("link.credit_block: no RTL build of credit_manager for 128 B credit blocks"));
  EXPECT_THAT(file_error_of(kLeafSpine, {"link.credit_manager_impl=rtl", "link.credit_manager_rtl_variant=mine"}),
              HasSubstr("link.credit_manager_rtl_variant: no RTL credit manager 'mine' in this build; valid: "
                        "credit_manager, credit_manager_broken (test only)"));
  EXPECT_THAT(file_error_of(kLeafSpine, {"link.credit_manager_impl=verilog"}), HasSubstr("link.credit_manager_impl"));
  EXPECT_THAT(file_error_of(kLeafSpine, {"link.credit_manager_impl=rtl", "link.flow_control=none"}),
              HasSubstr("link.credit_manager_impl: the credit manager counts link credits: it needs flow_control "
                        "credit, got none"));
}

TEST(RtlCreditManager, CapacityBeyondTheCountersIsRefused) {
  try {
    tf::make_credit_manager(spec(tf::AllocatorImpl::rtl, 1, 70000));
    FAIL() << "a 70000-block buffer was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("unit.port0.credit_manager: link.credit_manager_impl rtl: a receive buffer of 70000 "
                                    "blocks per VL exceeds the RTL credit manager's 16-bit counters (at most 65535)"));
  }
}

}  // namespace
