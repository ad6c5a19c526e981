// tlm/timing_wheel.h on its own: entries come out in (time, id) order across slots, the
// wheel's wrap-around and its overflow heap, against a sorted reference.
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "tlm/timing_wheel.h"

namespace {

using fabricsim::tlm_fabric::TimingWheel;
using Taken = std::vector<std::pair<std::uint64_t, int>>;

constexpr unsigned kShift = 7;  // a slot of 128 ticks
constexpr std::uint64_t kSpan = TimingWheel::kSlots << kShift;

// Everything in the wheel, earliest first, as (time, id).
Taken drain(TimingWheel& w) {
  Taken out;
  std::uint64_t at = 0;
  std::vector<int> ids;
  while (w.earliest(at)) {
    ids.clear();
    w.take_due(at, ids);
    EXPECT_FALSE(ids.empty()) << "earliest " << at << " but nothing due";
    if (ids.empty()) break;
    for (int id : ids) out.emplace_back(at, id);
  }
  return out;
}

TEST(TimingWheel, EmptyHasNoEarliest) {
  TimingWheel w(kShift);
  w.fit(4);
  std::uint64_t at = 0;
  EXPECT_FALSE(w.earliest(at));
  EXPECT_FALSE(w.pending(0));
}

TEST(TimingWheel, OneInstantRunsInIdOrder) {
  // Many ids at one instant (the bitmap) and a few (the sort), scheduled out of order.
  for (int n : {2, 5, 40}) {
    TimingWheel w(kShift);
    w.fit(64);
    for (int k = n - 1; k >= 0; --k) w.schedule(static_cast<std::uint32_t>(k * 64 / n), 1000);
    const Taken got = drain(w);
    ASSERT_EQ(got.size(), static_cast<std::size_t>(n));
    for (int k = 0; k < n; ++k)
      EXPECT_EQ(got[static_cast<std::size_t>(k)], std::make_pair(std::uint64_t{1000}, k * 64 / n));
  }
}

TEST(TimingWheel, SameSlotDifferentTimesTakeOnlyWhatIsDue) {
  TimingWheel w(kShift);
  w.fit(3);
  w.schedule(0, 300);  // one slot: 256 .. 383
  w.schedule(1, 260);
  w.schedule(2, 383);
  std::uint64_t at = 0;
  ASSERT_TRUE(w.earliest(at));
  EXPECT_EQ(at, 260u);
  std::vector<int> ids;
  w.take_due(at, ids);
  EXPECT_EQ(ids, std::vector<int>{1});
  EXPECT_TRUE(w.pending(0));
  EXPECT_EQ(drain(w), (Taken{{300, 0}, {383, 2}}));
}

TEST(TimingWheel, FarFutureWaitsInOverflowAndWrapsAround) {
  // Entries several spans ahead move into the wheel as its base comes near; the slot
  // index wraps around the wheel several times.
  TimingWheel w(kShift);
  w.fit(4);
  w.schedule(0, 5 * kSpan + 17);
  w.schedule(1, kSpan - 1);  // the wheel's last slot
  w.schedule(2, 2 * kSpan + 3);
  w.schedule(3, 5 * kSpan + 17);  // the same time as id 0, both from the overflow heap
  EXPECT_EQ(w.when(2), 2 * kSpan + 3);
  EXPECT_EQ(drain(w), (Taken{{kSpan - 1, 1}, {2 * kSpan + 3, 2}, {5 * kSpan + 17, 0}, {5 * kSpan + 17, 3}}));
}

TEST(TimingWheel, CancelAndRescheduleInWheelAndOverflow) {
  TimingWheel w(kShift);
  w.fit(3);
  w.schedule(0, 500);
  w.schedule(1, 3 * kSpan);
  w.schedule(2, 500);
  w.cancel(0);  // from a wheel slot shared with id 2
  w.cancel(1);  // from the overflow heap
  EXPECT_FALSE(w.pending(0));
  EXPECT_FALSE(w.pending(1));
  w.cancel(1);               // nothing pending: nothing happens
  w.schedule(1, 400);        // earlier than before, into the wheel
  w.schedule(0, 2 * kSpan);  // later than before, into the overflow heap
  EXPECT_EQ(drain(w), (Taken{{400, 1}, {500, 2}, {2 * kSpan, 0}}));
}

TEST(TimingWheel, DetachedEntryStaysDueBesideANewOne) {
  // A detached entry still comes out at its time; its id may be scheduled again, even
  // for the same instant (the id then comes out twice).
  for (std::uint64_t far : {std::uint64_t{0}, 4 * kSpan}) {
    TimingWheel w(kShift);
    w.fit(2);
    w.schedule(0, far + 100);
    w.detach(0);
    EXPECT_FALSE(w.pending(0));
    w.schedule(0, far + 900);
    w.schedule(1, far + 100);
    EXPECT_EQ(drain(w), (Taken{{far + 100, 0}, {far + 100, 1}, {far + 900, 0}})) << "far " << far;
  }
}

TEST(TimingWheel, RandomScheduleMatchesASortedReference) {
  // Ids scheduled, cancelled or moved at random while time advances to the earliest
  // entry, over several spans: the wheel gives what a sorted map of (time, id) gives.
  std::mt19937_64 rng(11);
  constexpr int kIds = 300;
  TimingWheel w(kShift);
  w.fit(kIds);
  std::map<std::pair<std::uint64_t, int>, bool> ref;
  std::vector<std::uint64_t> at_of(kIds, 0);
  std::vector<bool> pending(kIds, false);
  std::uint64_t now = 0;
  std::vector<int> ids;
  for (int step = 0; step < 20000; ++step) {
    const int id = static_cast<int>(rng() % kIds);
    const auto u = static_cast<std::uint32_t>(id);
    if (pending[id]) {
      w.cancel(u);
      ref.erase({at_of[id], id});
      pending[id] = false;
    }
    if (rng() % 4 != 0) {
      const std::uint64_t ahead = rng() % 8 == 0 ? rng() % (6 * kSpan) : rng() % 2000;
      at_of[id] = now + 1 + ahead;
      w.schedule(u, at_of[id]);
      ref[{at_of[id], id}] = true;
      pending[id] = true;
    }
    ASSERT_EQ(w.pending(u), pending[id]);
    if (step % 7 == 0 && !ref.empty()) {
      std::uint64_t at = 0;
      ASSERT_TRUE(w.earliest(at));
      ASSERT_EQ(at, ref.begin()->first.first);
      ids.clear();
      w.take_due(at, ids);
      std::vector<int> expect;
      while (!ref.empty() && ref.begin()->first.first == at) {
        expect.push_back(ref.begin()->first.second);
        pending[static_cast<std::size_t>(ref.begin()->first.second)] = false;
        ref.erase(ref.begin());
      }
      ASSERT_EQ(ids, expect) << "at " << at;
      now = at;
    }
  }
  Taken rest;
  for (const auto& entry : ref) rest.push_back(entry.first);
  EXPECT_EQ(drain(w), rest);
}

}  // namespace
