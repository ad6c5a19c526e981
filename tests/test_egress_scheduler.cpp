// hw/ cores: egress schedulers (IB VL arbitration, 802.1Q strict priority + DWRR).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "hw/egress_scheduler.h"

namespace {

using fabricsim::hw::EgressScheduler;
using fabricsim::hw::IbVlArbParams;
using fabricsim::hw::kNoClass;
using fabricsim::hw::make_ib_vl_arbiter;
using fabricsim::hw::make_tc_scheduler;
using fabricsim::hw::TcSchedulerParams;
using fabricsim::hw::VlArbEntry;
using ::testing::HasSubstr;

/// What a run served: class order and bytes per class.
struct Served {
  std::vector<int> order;
  std::vector<std::uint64_t> bytes;
  std::vector<std::uint64_t> packets;
};

/// Head-packet size of class c at transmission `step` (0 = nothing eligible).
using HeadFn = std::function<std::uint32_t(int c, int step)>;

/// Plays the egress unit: `steps` times, offer the heads, send the chosen class, commit.
Served run(EgressScheduler& s, int steps, const HeadFn& head) {
  Served out;
  out.bytes.assign(s.classes(), 0);
  out.packets.assign(s.classes(), 0);
  std::vector<std::uint32_t> heads(s.classes());
  for (int step = 0; step < steps; ++step) {
    for (int c = 0; c < s.classes(); ++c) heads[c] = head(c, step);
    const int c = s.select(heads);
    out.order.push_back(c);
    if (c == kNoClass) continue;
    s.update_state(c, heads[c]);
    out.bytes[c] += heads[c];
    ++out.packets[c];
  }
  return out;
}

HeadFn always(std::vector<std::uint32_t> sizes) {
  return [sizes](int c, int) { return sizes[c]; };
}

std::vector<int> first(const Served& s, std::size_t n) {
  return std::vector<int>(s.order.begin(), s.order.begin() + static_cast<long>(n));
}

std::string validation_error(const IbVlArbParams& p) {
  try {
    p.validate();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

std::string validation_error(const TcSchedulerParams& p) {
  try {
    p.validate();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

IbVlArbParams low_only(int vls, std::vector<VlArbEntry> low) {
  IbVlArbParams p;
  p.vls = vls;
  p.low = std::move(low);
  return p;
}

IbVlArbParams high_and_low(int high_limit) {
  IbVlArbParams p;
  p.vls = 2;
  p.high = {{0, 1}};
  p.low = {{1, 1}};
  p.high_limit = high_limit;
  return p;
}

// ---- InfiniBand VL arbitration (IBTA vol.1 §7.6.9) ---------------------------------------------

TEST(IbVlArbiter, WeightsShareSmallPackets1To3) {
  auto s = make_ib_vl_arbiter(low_only(2, {{0, 1}, {1, 3}}));
  const Served r = run(*s, 4000, always({64, 64}));
  // Weight 1 = one 64-B packet per turn, weight 3 = three.
  EXPECT_EQ(first(r, 8), (std::vector<int>{0, 1, 1, 1, 0, 1, 1, 1}));
  EXPECT_NEAR(static_cast<double>(r.bytes[1]) / r.bytes[0], 3.0, 0.03);
}

TEST(IbVlArbiter, LargePacketsOverdrawSoSharesFollowBytes) {
  // Weights count 64-B units: a 2048-B packet overdraws weight 1 or 3 alike, one packet per turn.
  auto small_weights = make_ib_vl_arbiter(low_only(2, {{0, 1}, {1, 3}}));
  const Served r1 = run(*small_weights, 1000, always({2048, 2048}));
  EXPECT_EQ(first(r1, 6), (std::vector<int>{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(r1.bytes[0], r1.bytes[1]);

  // Weights of 2 KiB and 6 KiB restore 1:3 for 2048-B packets.
  auto big_weights = make_ib_vl_arbiter(low_only(2, {{0, 32}, {1, 96}}));
  const Served r2 = run(*big_weights, 4000, always({2048, 2048}));
  EXPECT_NEAR(static_cast<double>(r2.bytes[1]) / r2.bytes[0], 3.0, 0.03);

  // Equal weights with unequal packet sizes share bytes, not packets.
  auto mixed = make_ib_vl_arbiter(low_only(2, {{0, 32}, {1, 32}}));
  const Served r3 = run(*mixed, 33000, always({2048, 64}));
  EXPECT_NEAR(static_cast<double>(r3.bytes[1]) / r3.bytes[0], 1.0, 0.01);
  EXPECT_NEAR(static_cast<double>(r3.packets[1]) / r3.packets[0], 32.0, 0.32);
}

TEST(IbVlArbiter, UnlimitedHighTableStarvesLow) {
  auto s = make_ib_vl_arbiter(high_and_low(255));
  const Served r = run(*s, 1000, always({4096, 64}));
  EXPECT_EQ(r.packets[0], 1000u);
  EXPECT_EQ(r.packets[1], 0u);
}

TEST(IbVlArbiter, HighLimitZeroLetsOneLowPacketAfterEachHighPacket) {
  auto s = make_ib_vl_arbiter(high_and_low(0));
  const Served r = run(*s, 8, always({64, 64}));
  EXPECT_EQ(r.order, (std::vector<int>{0, 1, 0, 1, 0, 1, 0, 1}));
  // Nothing owed while low has nothing ready: high keeps the link.
  const Served idle_low = run(*s, 5, always({64, 0}));
  EXPECT_EQ(idle_low.order, (std::vector<int>{0, 0, 0, 0, 0}));
}

TEST(IbVlArbiter, HighLimitCountsBytesInFourKiBUnitsLastPacketMayOverrun) {
  // Limit 1 = 4 KiB: a high packet may start while the count has not exceeded 4096 B.
  auto s4k = make_ib_vl_arbiter(high_and_low(1));
  EXPECT_EQ(run(*s4k, 9, always({4096, 64})).order,
            (std::vector<int>{0, 0, 1, 0, 0, 1, 0, 0, 1}));  // 4096 = limit, 8192 > limit
  auto s2k = make_ib_vl_arbiter(high_and_low(1));
  EXPECT_EQ(run(*s2k, 8, always({2048, 64})).order,
            (std::vector<int>{0, 0, 0, 1, 0, 0, 0, 1}));  // 2048, 4096, 6144 > 4096
}

TEST(IbVlArbiter, HighLimitCountsOnlyWhileLowIsWaiting) {
  auto s = make_ib_vl_arbiter(high_and_low(1));
  // Low idle for 10 high packets, then ready: it waits the full limit, not zero.
  const Served r = run(*s, 16, [](int c, int step) -> std::uint32_t {
    return c == 0 ? 4096 : (step < 10 ? 0 : 64);
  });
  EXPECT_EQ(std::vector<int>(r.order.begin() + 10, r.order.end()),
            (std::vector<int>{0, 0, 1, 0, 0, 1}));
}

TEST(IbVlArbiter, LowTableServesWhenHighHasNothingReady) {
  auto s = make_ib_vl_arbiter(high_and_low(255));
  EXPECT_EQ(run(*s, 3, always({0, 64})).order, (std::vector<int>{1, 1, 1}));
}

TEST(IbVlArbiter, VlWithNothingReadyIsSkippedAndServedNextPass) {
  auto s = make_ib_vl_arbiter(low_only(3, {{0, 1}, {1, 1}, {2, 1}}));
  // VL1 empty at its turn (step 1): VL2 goes, VL1 gets its entry again on the next pass.
  const Served r = run(*s, 5, [](int c, int step) -> std::uint32_t {
    return c == 1 && step == 1 ? 0 : 64;
  });
  EXPECT_EQ(r.order, (std::vector<int>{0, 2, 0, 1, 2}));
}

TEST(IbVlArbiter, EntryLeftWhileItsVlIsEmptyForfeitsTheRestOfItsWeight) {
  auto s = make_ib_vl_arbiter(low_only(2, {{0, 3}, {1, 1}}));
  // VL0 sends one of its three, runs dry, VL1 goes; back at VL0's entry the weight is full again.
  const Served r = run(*s, 6, [](int c, int step) -> std::uint32_t {
    return c == 0 && step == 1 ? 0 : 64;
  });
  EXPECT_EQ(r.order, (std::vector<int>{0, 1, 0, 0, 0, 1}));
}

TEST(IbVlArbiter, RepeatedVlEntriesAndUnusedEntries) {
  // VL0 twice in the table and an unused (weight 0) entry for VL2.
  auto s = make_ib_vl_arbiter(low_only(3, {{0, 1}, {1, 1}, {2, 0}, {0, 1}}));
  EXPECT_EQ(run(*s, 6, always({64, 64, 64})).order, (std::vector<int>{0, 1, 0, 0, 1, 0}));
}

TEST(IbVlArbiter, NothingReadyGivesNoClass) {
  auto s = make_ib_vl_arbiter(high_and_low(0));
  EXPECT_EQ(s->select({0, 0}), kNoClass);
  EXPECT_THROW(s->update_state(0, 64), std::logic_error);
}

TEST(IbVlArbiter, SelectIsPureAndCommitMustMatchIt) {
  auto s = make_ib_vl_arbiter(low_only(2, {{0, 1}, {1, 1}}));
  EXPECT_EQ(s->select({64, 64}), 0);
  EXPECT_EQ(s->select({64, 64}), 0);
  EXPECT_THROW(s->update_state(1, 64), std::logic_error);
  EXPECT_EQ(s->select({64, 64}), 0);
  s->update_state(0, 64);
  EXPECT_THROW(s->update_state(0, 64), std::logic_error);  // one commit per decision
  EXPECT_EQ(s->select({64, 64}), 1);
  EXPECT_THROW(s->select({64, 64, 64}), std::invalid_argument);
}

TEST(IbVlArbParams, ValidationNamesTheField) {
  IbVlArbParams ok = low_only(4, {{0, 1}, {3, 255}});
  EXPECT_EQ(validation_error(ok), "no error");

  IbVlArbParams p = ok;
  p.vls = 0;
  EXPECT_THAT(validation_error(p), HasSubstr("vls"));
  p.vls = 16;
  EXPECT_THAT(validation_error(p), HasSubstr("vls"));

  p = ok;
  p.low[1].weight = 256;
  EXPECT_THAT(validation_error(p), HasSubstr("low[1].weight"));
  p.low[1].weight = -1;
  EXPECT_THAT(validation_error(p), HasSubstr("low[1].weight"));

  p = ok;
  p.high = {{4, 1}};  // VL index == vls
  EXPECT_THAT(validation_error(p), HasSubstr("high[0].vl"));
  p.high = {{-1, 1}};
  EXPECT_THAT(validation_error(p), HasSubstr("high[0].vl"));

  p = ok;
  p.low.assign(65, VlArbEntry{0, 1});
  EXPECT_THAT(validation_error(p), HasSubstr("low"));

  p = ok;
  p.high_limit = 256;
  EXPECT_THAT(validation_error(p), HasSubstr("high_limit"));

  p = ok;
  p.low = {{0, 0}};  // no usable entry anywhere
  EXPECT_THAT(validation_error(p), HasSubstr("weight > 0"));

  EXPECT_THROW(make_ib_vl_arbiter(p), std::invalid_argument);
}

// ---- Ethernet transmission selection (802.1Q §8.6.8) ------------------------------------------

TEST(TcScheduler, StrictClassAlwaysWinsWhenReady) {
  TcSchedulerParams p;
  p.strict = {true, false, false, false, false, true, false, true};
  auto s = make_tc_scheduler(p);
  const Served r = run(*s, 200, always({1500, 64, 64, 64, 64, 1500, 64, 64}));
  EXPECT_EQ(r.packets[7], 200u);  // highest strict index first
  EXPECT_EQ(run(*s, 3, always({1500, 64, 64, 64, 64, 1500, 64, 0})).order,
            (std::vector<int>{5, 5, 5}));
  // A strict class beats any DWRR class, whatever their indices.
  EXPECT_EQ(run(*s, 3, always({1500, 64, 64, 64, 64, 0, 64, 0})).order,
            (std::vector<int>{0, 0, 0}));
  // Without strict traffic the DWRR classes take turns.
  const Served dwrr = run(*s, 60, always({0, 1500, 1500, 1500, 1500, 0, 1500, 0}));
  for (int c : {1, 2, 3, 4, 6}) EXPECT_EQ(dwrr.packets[c], 12u) << "class " << c;
}

TEST(TcScheduler, DwrrByteSharesFollowWeightsWithMixedPacketSizes) {
  TcSchedulerParams p;
  p.classes = 3;
  p.weights = {1, 2, 5};
  p.quantum_bytes = 1500;
  auto s = make_tc_scheduler(p);
  // Each class cycles through its own packet sizes, some above the quantum (jumbo frames).
  const std::vector<std::vector<std::uint32_t>> sizes{
      {64, 1500, 576, 9000}, {1500, 128, 4000}, {9000, 64, 700, 1500, 256}};
  std::vector<std::size_t> next(3, 0);
  std::vector<std::uint64_t> bytes(3, 0);
  for (int step = 0; step < 30000; ++step) {
    std::vector<std::uint32_t> heads(3);
    for (int c = 0; c < 3; ++c) heads[c] = sizes[c][next[c] % sizes[c].size()];
    const int c = s->select(heads);
    ASSERT_NE(c, kNoClass);
    s->update_state(c, heads[c]);
    bytes[c] += heads[c];
    ++next[c];
  }
  const double total = static_cast<double>(bytes[0] + bytes[1] + bytes[2]);
  EXPECT_NEAR(bytes[0] / total, 1.0 / 8, 0.02 / 8);
  EXPECT_NEAR(bytes[1] / total, 2.0 / 8, 0.02 * 2 / 8);
  EXPECT_NEAR(bytes[2] / total, 5.0 / 8, 0.02 * 5 / 8);
}

TEST(TcScheduler, EqualWeightsEqualPacketsAlternate) {
  TcSchedulerParams p;
  p.classes = 2;
  auto s = make_tc_scheduler(p);
  EXPECT_EQ(run(*s, 6, always({1500, 1500})).order, (std::vector<int>{0, 1, 0, 1, 0, 1}));
}

TEST(TcScheduler, EmptyClassDoesNotBankDeficit) {
  TcSchedulerParams p;
  p.classes = 2;
  p.quantum_bytes = 1500;
  // Class 0 sends one 1000-B packet (500 B of deficit left), then is empty for `idle_steps`
  // of class 1's 100-B packets, then returns with 100-B packets. Its first burst back must be
  // one quantum (1500/100 = 15): nothing kept from before it emptied (S&V), nothing gained while
  // idle. One idle step checks the reset when it empties mid-visit; 50 check idle rounds.
  for (int idle_steps : {1, 50}) {
    auto s = make_tc_scheduler(p);
    const Served r = run(*s, 200, [idle_steps](int c, int step) -> std::uint32_t {
      if (c == 1) return 100;
      if (step == 0) return 1000;
      return step <= idle_steps ? 0 : 100;
    });
    ASSERT_EQ(r.order[0], 0);
    int burst = 0;  // class 0's first run of packets once it is back
    const auto back = std::find(r.order.begin() + 1, r.order.end(), 0);
    for (auto it = back; it != r.order.end() && *it == 0; ++it) ++burst;
    EXPECT_EQ(burst, 15) << "idle for " << idle_steps << " steps";
  }
}

TEST(TcScheduler, ClassIneligibleWhenVisitedLosesItsLeftoverDeficit) {
  // A class that is blocked (e.g. PFC-paused) when the round reaches it is treated like an
  // empty one: its leftover deficit is dropped, so a pause cannot be used to save up credit.
  TcSchedulerParams p;
  p.classes = 2;
  p.quantum_bytes = 1500;
  auto s = make_tc_scheduler(p);
  // Step 0: class 0 sends 1000 B; 500 B are left and its next 1000-B packet does not fit, so
  // its visit ends (step 1, class 1). At step 2 the round passes class 0 while it is blocked.
  const Served r = run(*s, 7, [](int c, int step) -> std::uint32_t {
    if (c == 1) return 1500;
    return step == 2 ? 0 : 1000;
  });
  // With the 500 B kept, class 0 would send two packets at steps 3-4 (500 + 1500 = 2000 B).
  EXPECT_EQ(r.order, (std::vector<int>{0, 1, 1, 0, 1, 0, 0}));
}

/// Straight Shreedhar-Varghese DRR over index order, one visit at a time (reference model).
struct ReferenceDrr {
  std::vector<std::uint64_t> quantum;
  std::vector<std::uint64_t> deficit;
  int ptr = 0;
  bool in_visit = false;

  int send(const std::vector<std::uint32_t>& heads) {
    if (std::all_of(heads.begin(), heads.end(), [](std::uint32_t h) { return h == 0; }))
      return kNoClass;
    const int n = static_cast<int>(heads.size());
    for (;;) {
      const int i = ptr;
      if (heads[i] == 0) {
        deficit[i] = 0;
      } else {
        if (!in_visit) deficit[i] += quantum[i];
        in_visit = true;
        if (heads[i] <= deficit[i]) {
          deficit[i] -= heads[i];
          return i;
        }
      }
      ptr = (i + 1) % n;
      in_visit = false;
    }
  }
};

TEST(TcScheduler, MatchesReferenceDrrWithSkippedRounds) {
  // Quanta far below the packet sizes make the scheduler skip many idle rounds at once; the
  // skipped rounds must leave exactly the deficits the visit-by-visit model reaches.
  TcSchedulerParams p;
  p.classes = 4;
  p.weights = {1, 3, 2, 7};
  p.quantum_bytes = 50;
  auto s = make_tc_scheduler(p);
  ReferenceDrr ref{{50, 150, 100, 350}, {0, 0, 0, 0}};
  std::uint64_t lcg = 12345;
  auto next = [&lcg](std::uint64_t mod) {
    lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
    return (lcg >> 33) % mod;
  };
  std::vector<std::uint32_t> heads(4);
  for (auto& h : heads) h = static_cast<std::uint32_t>(64 + next(9000));
  for (int step = 0; step < 20000; ++step) {
    const int want = ref.send(heads);
    const int got = s->select(heads);
    ASSERT_EQ(got, want) << "step " << step;
    if (got == kNoClass) {
      for (auto& h : heads) h = static_cast<std::uint32_t>(64 + next(9000));
      continue;
    }
    s->update_state(got, heads[got]);
    // New head for the class that sent; now and then a class runs empty or refills.
    heads[got] = next(8) == 0 ? 0 : static_cast<std::uint32_t>(64 + next(9000));
    const auto c = static_cast<std::size_t>(next(4));
    if (next(16) == 0) heads[c] = heads[c] == 0 ? static_cast<std::uint32_t>(64 + next(9000)) : 0;
  }
}

TEST(TcScheduler, PacketsFarLargerThanQuantumNeedNoPerRoundWork) {
  TcSchedulerParams p;
  p.classes = 2;
  p.quantum_bytes = 1;
  auto s = make_tc_scheduler(p);
  // 3e9 rounds of 1-B quanta are skipped arithmetically; the smaller packet qualifies first.
  EXPECT_EQ(s->select({4000000000u, 3000000000u}), 1);
  s->update_state(1, 3000000000u);
  EXPECT_EQ(s->select({4000000000u, 3000000000u}), 0);
}

TEST(TcScheduler, NothingReadyGivesNoClass) {
  TcSchedulerParams p;
  p.classes = 4;
  p.strict = {false, true, false, true};
  auto s = make_tc_scheduler(p);
  EXPECT_EQ(s->select({0, 0, 0, 0}), kNoClass);
  EXPECT_THROW(s->update_state(0, 64), std::logic_error);
  EXPECT_THROW(s->select({0, 0}), std::invalid_argument);
}

// What the switch relies on to ask no scheduler on a one-VL output (Switch's
// constructor): with one class, every scheduler serves it whenever it has a head,
// whatever its tables, weights, limits and history.
TEST(EgressScheduler, OneClassIsServedWheneverReady) {
  std::vector<std::unique_ptr<EgressScheduler>> schedulers;
  schedulers.push_back(make_ib_vl_arbiter(low_only(1, {{0, 1}})));
  schedulers.push_back(make_ib_vl_arbiter(low_only(1, {{0, 0}, {0, 3}, {0, 0}, {0, 255}})));
  for (int high_limit : {0, 1, 255}) {
    IbVlArbParams p;
    p.vls = 1;
    p.high = {{0, 2}, {0, 0}};
    p.low = {{0, 1}};
    p.high_limit = high_limit;
    schedulers.push_back(make_ib_vl_arbiter(p));
  }
  for (bool strict : {false, true}) {
    TcSchedulerParams p;
    p.classes = 1;
    p.strict = {strict};
    p.weights = {3};
    p.quantum_bytes = 100;  // packets up to 9 KiB: many rounds per packet
    schedulers.push_back(make_tc_scheduler(p));
  }
  std::mt19937 rng(7);
  for (auto& s : schedulers) {
    ASSERT_EQ(s->classes(), 1);
    for (int step = 0; step < 5000; ++step) {
      const std::uint32_t head = rng() % 4 == 0 ? 0 : 1 + rng() % 9216;
      const int c = s->select({head});
      ASSERT_EQ(c, head > 0 ? 0 : kNoClass) << "step " << step;
      if (c == 0) s->update_state(0, head);
    }
  }
}

TEST(TcSchedulerParams, ValidationNamesTheField) {
  TcSchedulerParams ok;
  EXPECT_EQ(validation_error(ok), "no error");
  TcSchedulerParams p = ok;
  p.classes = 0;
  EXPECT_THAT(validation_error(p), HasSubstr("classes"));
  p.classes = 9;
  EXPECT_THAT(validation_error(p), HasSubstr("classes"));
  p = ok;
  p.strict = {true, false};
  EXPECT_THAT(validation_error(p), HasSubstr("strict"));
  p = ok;
  p.weights = {1, 1, 1};
  EXPECT_THAT(validation_error(p), HasSubstr("weights"));
  p.weights.assign(8, 1);
  p.weights[3] = 128;
  EXPECT_THAT(validation_error(p), HasSubstr("weights[3]"));
  p.weights[3] = 0;
  EXPECT_THAT(validation_error(p), HasSubstr("weights[3]"));
  p = ok;
  p.quantum_bytes = 0;
  EXPECT_THAT(validation_error(p), HasSubstr("quantum_bytes"));
  EXPECT_THROW(make_tc_scheduler(p), std::invalid_argument);
}

}  // namespace
