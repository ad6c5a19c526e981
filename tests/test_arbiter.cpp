// hw/ cores: arbiters and credit accounting.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hw/arbiter.h"
#include "hw/credit.h"

namespace {

using fabricsim::hw::ArbiterRequest;
using fabricsim::hw::CreditCounter;
using fabricsim::hw::kNoGrant;
using fabricsim::hw::make_arbiter;
using ::testing::HasSubstr;

TEST(RoundRobinArbiter, NoRequestNoGrant) {
  auto a = make_arbiter("round_robin", 4);
  EXPECT_EQ(a->arbitrate(), kNoGrant);
}

TEST(RoundRobinArbiter, RotatesAmongPersistentRequesters) {
  auto a = make_arbiter("round_robin", 4);
  std::vector<int> grants;
  for (int round = 0; round < 6; ++round) {
    a->clear();
    for (int i : {0, 2, 3}) a->add_request(ArbiterRequest{i, 0, 0});
    const int w = a->arbitrate();
    a->update_state(w);
    grants.push_back(w);
  }
  EXPECT_EQ(grants, (std::vector<int>{0, 2, 3, 0, 2, 3}));
}

TEST(RoundRobinArbiter, ArbitrateDoesNotChangeState) {
  auto a = make_arbiter("round_robin", 3);
  a->add_request({1, 0, 0});
  a->add_request({2, 0, 0});
  EXPECT_EQ(a->arbitrate(), 1);
  EXPECT_EQ(a->arbitrate(), 1);
  a->update_state(1);
  EXPECT_EQ(a->arbitrate(), 2);
}

TEST(RoundRobinArbiter, DebugStateIsThePointerInTheRtlWidth) {
  // rtl/rr_arbiter.sv's ptr_o: $clog2(NumReq) bits, at least 1.
  for (const auto& [inputs, bits] : std::vector<std::pair<int, int>>{{1, 1}, {2, 1}, {4, 2}, {5, 3}, {16, 4}}) {
    auto a = make_arbiter("round_robin", inputs);
    a->add_request({inputs - 1, 0, 0});
    a->update_state(a->arbitrate());
    std::vector<fabricsim::hw::StateVector> state;
    a->debug_state(state);
    ASSERT_EQ(state.size(), 1u);
    EXPECT_EQ(state[0].name, "ptr");
    EXPECT_EQ(state[0].bits, bits) << inputs << " inputs";
    EXPECT_EQ(state[0].values, std::vector<std::uint64_t>{0}) << "after the last input wins, the pointer wraps";
  }
  auto a = make_arbiter("round_robin", 4);
  a->add_request({1, 0, 0});
  a->update_state(a->arbitrate());
  std::vector<fabricsim::hw::StateVector> state;
  a->debug_state(state);
  EXPECT_EQ(state.at(0).values, std::vector<std::uint64_t>{2});
}

TEST(RoundRobinArbiter, RejectsRequestOutsideInputs) {
  auto a = make_arbiter("round_robin", 2);
  EXPECT_THROW(a->add_request({2, 0, 0}), std::out_of_range);
}

TEST(ArbiterRegistry, UnknownNameListsValidOnes) {
  try {
    make_arbiter("islip9", 4);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown arbiter 'islip9'"));
    EXPECT_THAT(e.what(), HasSubstr("round_robin"));
  }
}

TEST(CreditCounter, CountsIn64ByteBlocks) {
  CreditCounter c(64, 10);
  EXPECT_EQ(c.blocks_for(1), 1u);
  EXPECT_EQ(c.blocks_for(64), 1u);
  EXPECT_EQ(c.blocks_for(65), 2u);
  EXPECT_TRUE(c.can_send(640));
  EXPECT_FALSE(c.can_send(641));
  c.consume(600);  // 10 blocks
  EXPECT_EQ(c.available(), 0u);
  EXPECT_FALSE(c.can_send(1));
  c.restore(3);
  EXPECT_TRUE(c.can_send(192));
}

TEST(CreditCounter, ConservationViolationsThrow) {
  CreditCounter c(64, 2);
  EXPECT_THROW(c.consume(129), std::logic_error);
  EXPECT_THROW(c.restore(1), std::logic_error);
}

TEST(CreditLedger, HoldsPerVlUntilGivenBack) {
  fabricsim::hw::CreditLedger held(2);
  held.hold(1, 65);
  held.hold(1, 3);
  EXPECT_EQ(held.held(0), 0u);
  EXPECT_EQ(held.held(1), 68u);
  held.give_back(1, 65);
  EXPECT_EQ(held.held(1), 3u);
  // Returning credits for blocks never held would create credits out of nothing.
  EXPECT_THROW(held.give_back(1, 4), std::logic_error);
  EXPECT_THROW(held.give_back(0, 1), std::logic_error);
  EXPECT_THROW(held.hold(2, 1), std::out_of_range);
  EXPECT_THROW(held.hold(-1, 1), std::out_of_range);
  EXPECT_THROW(fabricsim::hw::CreditLedger(fabricsim::hw::kMaxDataVls + 1), std::invalid_argument);
  fabricsim::hw::CreditLedger all(fabricsim::hw::kMaxDataVls);
  all.hold(fabricsim::hw::kMaxDataVls - 1, 7);
  EXPECT_EQ(all.held(fabricsim::hw::kMaxDataVls - 1), 7u);
}

}  // namespace
