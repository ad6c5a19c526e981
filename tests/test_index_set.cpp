// IndexSet (tlm/index_set.h): the walk from any start around to it, against a plain
// walk over every index.
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "tlm/index_set.h"

namespace {

using fabricsim::tlm_fabric::IndexSet;

std::vector<std::size_t> walk(const IndexSet& s, std::size_t from, std::size_t stop_after = ~std::size_t{0}) {
  std::vector<std::size_t> seen;
  s.cycle_from(from, [&](std::size_t i) {
    seen.push_back(i);
    return seen.size() == stop_after;
  });
  return seen;
}

TEST(IndexSet, WalksFromAnyStartAroundToIt) {
  // Sizes around word boundaries, random members, every start: the members in the
  // order from, from + 1, ..., size - 1, 0, ..., from - 1.
  std::mt19937 rng(7);
  for (std::size_t size : {1u, 5u, 63u, 64u, 65u, 130u, 200u}) {
    for (double density : {0.0, 0.1, 0.5, 1.0}) {
      IndexSet s;
      s.resize(size);
      std::vector<bool> in(size);
      for (std::size_t i = 0; i < size; ++i)
        if (std::uniform_real_distribution<double>(0, 1)(rng) < density) {
          s.insert(i);
          in[i] = true;
        }
      for (std::size_t from = 0; from < size; ++from) {
        std::vector<std::size_t> want;
        for (std::size_t k = 0; k < size; ++k)
          if (in[(from + k) % size]) want.push_back((from + k) % size);
        EXPECT_EQ(walk(s, from), want) << "size " << size << " density " << density << " from " << from;
      }
    }
  }
}

TEST(IndexSet, StopsWhereAskedAndTakesErasesOnTheWay) {
  IndexSet s;
  s.resize(100);
  for (std::size_t i : {3u, 40u, 64u, 70u, 99u}) s.insert(i);
  EXPECT_EQ(walk(s, 65, 2), (std::vector<std::size_t>{70, 99}));
  EXPECT_EQ(walk(s, 99, 3), (std::vector<std::size_t>{99, 3, 40}));
  // Erasing the member being visited: the walk goes on to the next.
  std::vector<std::size_t> seen;
  s.cycle_from(40, [&](std::size_t i) {
    seen.push_back(i);
    s.erase(i);
    return false;
  });
  EXPECT_EQ(seen, (std::vector<std::size_t>{40, 64, 70, 99, 3}));
  EXPECT_TRUE(walk(s, 0).empty());
  EXPECT_FALSE(s.contains(64));
  s.resize(200);  // growing keeps members
  s.insert(150);
  s.insert(2);
  EXPECT_TRUE(s.contains(150));
  EXPECT_EQ(walk(s, 151), (std::vector<std::size_t>{2, 150}));
  IndexSet empty;
  EXPECT_TRUE(walk(empty, 0).empty());
}

}  // namespace
