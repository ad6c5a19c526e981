// tlm/min_tree.h: the least value after every change, against a scan of every slot.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "tlm/min_tree.h"

namespace {

using fabricsim::tlm_fabric::MinTree;

constexpr std::uint64_t kNone = ~std::uint64_t{0};

std::uint64_t scan(const std::vector<std::uint64_t>& v) { return v.empty() ? kNone : *std::min_element(v.begin(), v.end()); }

TEST(MinTree, EmptyAndNewSlotsHoldNone) {
  MinTree<std::uint64_t> t(kNone);
  EXPECT_EQ(t.min(), kNone);
  t.resize(1);
  EXPECT_EQ(t.min(), kNone);
  t.set(0, 7);
  EXPECT_EQ(t.min(), 7u);
  t.resize(5);  // grows past its leaves: the set slot stays, the new ones hold none
  EXPECT_EQ(t.get(0), 7u);
  for (std::size_t i = 1; i < 5; ++i) EXPECT_EQ(t.get(i), kNone);
  EXPECT_EQ(t.min(), 7u);
  t.set(0, kNone);
  EXPECT_EQ(t.min(), kNone);
}

TEST(MinTree, LeastAfterEveryChangeMatchesAScan) {
  std::mt19937_64 rng(3);
  for (std::size_t n : {1u, 2u, 3u, 7u, 64u, 1000u}) {
    MinTree<std::uint64_t> t(kNone);
    std::vector<std::uint64_t> v;
    // Grown one slot at a time (as QPs are made), then changed at random: raised,
    // lowered, cleared, and set to what a slot holds already.
    for (std::size_t i = 0; i < n; ++i) {
      t.resize(i + 1);
      v.push_back(kNone);
      const std::uint64_t x = rng() % 1000;
      t.set(i, x);
      v[i] = x;
      ASSERT_EQ(t.min(), scan(v)) << "n " << n << " grow " << i;
    }
    for (int k = 0; k < 20000; ++k) {
      const std::size_t i = rng() % n;
      const std::uint64_t r = rng() % 10;
      const std::uint64_t x = r == 0 ? kNone : r == 1 ? v[i] : rng() % 1000;
      t.set(i, x);
      v[i] = x;
      ASSERT_EQ(t.min(), scan(v)) << "n " << n << " change " << k;
    }
    t.resize(n / 2);  // the slots dropped no longer count
    v.resize(n / 2);
    EXPECT_EQ(t.min(), scan(v)) << "n " << n << " shrunk";
  }
}

}  // namespace
