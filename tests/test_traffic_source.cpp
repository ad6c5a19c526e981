// Traffic destinations (testbench/traffic_source.h): the uniform rule draws exactly
// what the weighted table of every other endpoint drew, so seeds keep their results.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "hw/seed.h"
#include "testbench/traffic_source.h"

namespace {

using fabricsim::testbench::Destinations;
using fabricsim::testbench::Weighted;
using fabricsim::testbench::weighted_index;

TEST(Destinations, AllButDrawsWhatTheEqualWeightTableDraws) {
  std::mt19937_64 rng(42);
  for (int n : {2, 3, 7, 64, 2048}) {
    for (int source : {0, n / 2, n - 1}) {
      std::vector<Weighted> table;  // the table the fabric used to build: every other endpoint, weight 1
      for (int x = 0; x < n; ++x)
        if (x != source) table.push_back({static_cast<std::uint64_t>(x), 1.0});
      const Destinations rule = Destinations::all_but(source, n);
      ASSERT_EQ(rule.size(), table.size());
      for (std::size_t i = 0; i < table.size(); ++i) ASSERT_EQ(rule.endpoint(i), static_cast<int>(table[i].value));
      std::vector<double> us = {0.0, std::nextafter(1.0, 0.0)};
      for (int k = 1; k < n - 1 && k < 50; ++k) {  // boundaries between choices and their neighbours
        const double b = static_cast<double>(k) / (n - 1);
        us.insert(us.end(), {b, std::nextafter(b, 0.0), std::nextafter(b, 1.0)});
      }
      for (int i = 0; i < 5000; ++i) us.push_back(fabricsim::hw::unit_interval(rng()));
      for (double u : us) ASSERT_EQ(rule.draw(u), weighted_index(table, u)) << "n " << n << " u " << u;
    }
  }
}

TEST(Destinations, WeightedListKeepsItsOrderAndWeights) {
  const Destinations d({{5, 1.0}, {9, 3.0}});
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d.endpoint(0), 5);
  EXPECT_EQ(d.endpoint(1), 9);
  EXPECT_EQ(d.draw(0.2), 0u);
  EXPECT_EQ(d.draw(0.3), 1u);
  EXPECT_EQ(Destinations::all_but(0, 1).size(), 0u);  // a lone endpoint has nowhere to send
}

}  // namespace
