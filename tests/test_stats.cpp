// stats::Distribution: exact figures up to kExactSamples, then the log-linear
// histogram's percentiles against the exact nearest-rank values of the same data; its
// saved state read back. stats::Registry: names, tables, JSON and visiting in name order.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "sim/stats.h"

namespace {

using fabricsim::stats::Distribution;

// Nearest-rank percentile of sorted data: the definition the exact mode implements.
double nearest_rank(const std::vector<double>& sorted, double q) {
  const double rank = std::ceil(q / 100.0 * static_cast<double>(sorted.size()));
  const std::size_t idx = rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1;
  return sorted[std::min(idx, sorted.size() - 1)];
}

const std::vector<double> kQuantiles = {0, 0.1, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100};

// Latency-like data over several octaves (ns), a cluster of equal values, sub-unit values and zeros.
std::vector<double> mixed_samples(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> latency(std::log(800.0), 1.2);
  std::uniform_real_distribution<double> small(0.0, 1.0);
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i) {
    switch (i % 10) {
      case 0: v.push_back(250.125); break;  // zero-load latency: many identical samples
      case 1: v.push_back(small(rng)); break;
      case 2: v.push_back(i % 100 == 2 ? 0.0 : latency(rng)); break;
      default: v.push_back(latency(rng));
    }
  }
  return v;
}

TEST(Distribution, ExactUpToKExactSamples) {
  std::vector<double> v = mixed_samples(Distribution::kExactSamples, 3);
  Distribution d;
  for (double x : v) d.add(x);
  ASSERT_FALSE(d.binned());
  std::sort(v.begin(), v.end());
  for (double q : kQuantiles) EXPECT_EQ(d.percentile(q), nearest_rank(v, q)) << "p" << q;
  EXPECT_EQ(d.min(), v.front());
  EXPECT_EQ(d.max(), v.back());
}

TEST(Distribution, BinnedPercentilesWithinTheRelativeErrorBound) {
  for (std::uint64_t seed : {1, 2, 7}) {
    std::vector<double> v = mixed_samples(200000, seed);
    Distribution d;
    double sum = 0;
    for (double x : v) {
      d.add(x);
      sum += x;
    }
    ASSERT_TRUE(d.binned());
    std::sort(v.begin(), v.end());
    EXPECT_EQ(d.count(), v.size());
    EXPECT_EQ(d.min(), v.front());
    EXPECT_EQ(d.max(), v.back());
    EXPECT_EQ(d.mean(), sum / static_cast<double>(v.size()));  // same additions in the same order
    double worst = 0;
    for (double q : kQuantiles) {
      const double exact = nearest_rank(v, q), got = d.percentile(q);
      EXPECT_LE(std::abs(got - exact), exact * Distribution::kRelativeError) << "seed " << seed << " p" << q;
      if (exact > 0) worst = std::max(worst, std::abs(got - exact) / exact);
    }
    // The bound is not slack by orders of magnitude: some percentile is off by more than a tenth of it.
    EXPECT_GT(worst, Distribution::kRelativeError / 10) << "seed " << seed;
  }
}

// The bucket a binned sample falls in, as std::frexp defines it: v = m 2^e, m in [0.5, 1),
// for normal and subnormal samples alike.
double frexp_bucket_middle(double v) {
  int e = 0;
  const double m = std::frexp(v, &e);
  const int sub = static_cast<int>((m - 0.5) * (2 * Distribution::kSubBuckets));
  return std::ldexp(0.5 + (sub + 0.5) / (2 * Distribution::kSubBuckets), e);
}

TEST(Distribution, BinnedSamplesFallInTheBucketFrexpGives) {
  // A binned distribution of v (one sample) and copies of a larger value: its lowest
  // percentile is the middle of v's bucket, clamped to [v, the larger value].
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> mantissa(0.5, 1.0);
  std::uniform_int_distribution<int> exponent(-1070, 1000);
  std::vector<double> values = {1.0, 0.5, 0.75, 1.5, 1000.0, 250.125, 743.8, 1e-300, 4.9e-324, 1e-310, 2.2250738585072014e-308,
                                1.7976931348623157e308 / 4, std::nextafter(1.0, 0.0), std::nextafter(1.0, 2.0)};
  for (int i = 0; i < 2000; ++i) values.push_back(std::ldexp(mantissa(rng), exponent(rng)));
  for (double v : values) {
    Distribution d;
    d.add(v);
    const double top = std::max(v, 1.0) * 4;
    for (std::size_t i = 0; i < Distribution::kExactSamples; ++i) d.add(top);
    ASSERT_TRUE(d.binned());
    EXPECT_EQ(d.percentile(0), std::clamp(frexp_bucket_middle(v), v, top)) << v;
  }
}

TEST(Registry, ScopeFindsOneBlocksStatisticsByTheRestOfTheirNames) {
  fabricsim::stats::Registry r;
  r.counter("fabric.ep1.rx_packets", "d", "packets").add(1);
  r.counter("fabric.ep10.rx_packets", "d", "packets").add(10);
  r.counter("fabric.ep1.rdma.completions", "d", "completions").add(3);
  r.distribution("fabric.ep1.packet_latency", "d", "ns").add(7.5);
  r.counter("fabric.ep2.rx_packets", "d", "packets").add(2);
  r.counter("fabric.ep0.tx_packets", "d", "packets").add(4);
  const auto ep1 = r.scope("fabric.ep1.");
  ASSERT_NE(ep1.find_counter("rx_packets"), nullptr);
  EXPECT_EQ(ep1.find_counter("rx_packets")->value(), 1u);  // not ep10's, which sorts right after
  EXPECT_EQ(ep1.find_counter("rdma.completions")->value(), 3u);
  EXPECT_EQ(ep1.find_distribution("packet_latency")->max(), 7.5);
  EXPECT_EQ(ep1.find_counter("packet_latency"), nullptr);  // a distribution, not a counter
  EXPECT_EQ(ep1.find_counter("tx_packets"), nullptr);
  EXPECT_EQ(r.scope("fabric.ep10.").find_counter("rx_packets")->value(), 10u);
  EXPECT_EQ(r.scope("fabric.ep3.").find_counter("rx_packets"), nullptr);  // no such block
  EXPECT_EQ(r.scope("fabric.ep0.").find_counter("rx_packets"), nullptr);  // ep1's is not ep0's
  EXPECT_EQ(r.scope("fabric.ep0.").find_counter("tx_packets")->value(), 4u);
  EXPECT_THROW(r.counter("fabric.ep1.packet_latency", "d", "packets"), std::logic_error);
}

// A counter a block keeps in its own data reports what the block adds to it, under its
// name, after it was attached, and its name is taken like any other.
TEST(Registry, AttachedCounterReportsTheBlocksOwnValue) {
  fabricsim::stats::Registry r;
  fabricsim::stats::Counter kept;
  r.attach("fabric.s0.port1.egress_packets", "d", "packets", kept);
  kept.add(5);
  kept.add();
  const auto* found = r.scope("fabric.s0.port1.").find_counter("egress_packets");
  ASSERT_EQ(found, &kept);
  EXPECT_EQ(r.to_json().at("fabric.s0.port1.egress_packets").at("value").get<std::uint64_t>(), 6u);
  EXPECT_THROW(r.counter("fabric.s0.port1.egress_packets", "d", "packets"), std::logic_error);
  EXPECT_THROW(r.attach("fabric.s0.port1.egress_packets", "d", "packets", kept), std::logic_error);
}

// results.json's "stats" section streamed from the registry is byte for byte what the
// tree's dump(2) writes, nested at depth 1 and 2 and empty.
TEST(Registry, WriteJsonGivesTheTreesDumpBytes) {
  fabricsim::stats::Registry r;
  auto nested = [&](int depth) {
    std::ostringstream out;
    out << "[";
    for (int d = 1; d < depth; ++d) out << "\n" << std::string(2 * d, ' ') << "[";
    out << "\n" << std::string(2 * depth, ' ');
    r.write_json(out, depth);
    for (int d = depth - 1; d >= 0; --d) out << "\n" << std::string(2 * d, ' ') << "]";
    nlohmann::json tree = r.to_json();
    for (int d = 0; d < depth; ++d) tree = nlohmann::json::array({tree});
    return std::pair{out.str(), tree.dump(2)};
  };
  const auto [empty, empty_tree] = nested(1);
  EXPECT_EQ(empty, empty_tree);
  r.counter("fabric.ep1.rx_packets", "packets \"received\"\tin all", "packets").add(3);
  r.distribution("fabric.ep1.packet_latency", "d", "ns").add(7.5);
  r.counter("fabric.sw\u00e9.x", "d", "packets");
  for (int depth : {1, 2}) {
    const auto [streamed, tree] = nested(depth);
    EXPECT_EQ(streamed, tree) << "depth " << depth;
  }
}

// A block's table of counters reads as the same counters registered one by one: the
// same listing in name order among the names around its prefix, the same streamed
// bytes, the same scope lookups; a name inside a table's prefix is refused.
TEST(Registry, CounterTableListsAsNamedCounters) {
  using fabricsim::stats::CounterLayout;
  using fabricsim::stats::Counter;
  fabricsim::stats::Registry named, tabled;
  const std::vector<std::string> rest{"port0.x", "port1.vl0.y", "port1.x", "port10.x", "forwarded", "port2.x"};
  std::vector<Counter> kept(rest.size());
  auto layout = std::make_shared<CounterLayout>();
  for (std::size_t i = 0; i < rest.size(); ++i) {
    kept[i].add(10 + i);
    named.attach("fabric.s1." + rest[i], "d", "packets", kept[i]);
    layout->push_back({rest[i], {"d", "packets"}, static_cast<std::uint32_t>(i)});
  }
  std::sort(layout->begin(), layout->end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  tabled.attach_table("fabric.s1.", layout, [&](std::uint32_t slot) -> const Counter& { return kept[slot]; });
  for (auto* r : {&named, &tabled})  // around the prefix: before, after and between its names
    for (const char* name : {"fabric.s0.a", "fabric.s1-", "fabric.s10.a", "fabric.s1/", "fabric.s2"}) r->counter(name, "d", "B").add(1);
  EXPECT_EQ(tabled.to_json().dump(), named.to_json().dump());
  std::ostringstream a, b;
  named.write_json(a, 1);
  tabled.write_json(b, 1);
  EXPECT_EQ(b.str(), a.str());
  EXPECT_EQ(tabled.scope("fabric.s1.port1.").find_counter("x"), &kept[2]);
  EXPECT_EQ(tabled.scope("fabric.s1.").find_counter("port10.x"), &kept[3]);
  EXPECT_EQ(tabled.scope("fabric.s1.port1.").find_counter("z"), nullptr);
  EXPECT_EQ(tabled.scope("fabric.s1.").find_distribution("forwarded"), nullptr);
  EXPECT_EQ(tabled.scope("fabric.s0.").find_counter("a")->value(), 1u);
  EXPECT_THROW(tabled.counter("fabric.s1.port3.x", "d", "B"), std::logic_error);
  EXPECT_THROW(tabled.attach_table("fabric.s1.port3.", layout, nullptr), std::logic_error);
  EXPECT_THROW(tabled.attach_table("fabric.", layout, nullptr), std::logic_error);
  EXPECT_THROW(tabled.attach_table("fabric.s0.", layout, nullptr), std::logic_error);  // holds fabric.s0.a
  EXPECT_THROW(tabled.attach_table("fabric.s3", layout, nullptr), std::logic_error);   // no '.' at the end
}

// Registries of the blocks of a run split over processes, merged into one by name, list
// what one registry of every block lists: tables (made where missing, added to where
// held), counters and distributions; a distribution with samples on both sides, or
// truncated bytes, is refused.
TEST(Registry, MergedRegistriesListAsOne) {
  using fabricsim::stats::CounterLayout;
  using fabricsim::stats::Counter;
  using fabricsim::stats::Registry;
  auto layout = std::make_shared<CounterLayout>();
  layout->push_back({"a", {"first", "packets"}, 1});
  layout->push_back({"b", {"second", "B"}, 0});
  std::vector<Counter> s0(2), s1(2), s0_again(2);
  s0[0].add(3);
  s0[1].add(4);
  s1[1].add(7);
  s0_again[0].add(1);
  auto fill = [&](Registry& r, bool first, bool second) {
    if (first) {
      r.attach_table("fabric.s0.", layout, [&](std::uint32_t slot) -> const Counter& { return s0[slot]; });
      r.counter("fabric.ep0.rx", "received", "packets").add(5);
      r.distribution("fabric.ep0.latency", "latency", "ns").add(2.5);
    }
    if (second) {
      r.attach_table("fabric.s1.", layout, [&](std::uint32_t slot) -> const Counter& { return s1[slot]; });
      r.counter("fabric.ep1.rx", "received", "packets").add(6);
    }
    Distribution& latency = r.distribution("fabric.ep1.latency", "latency", "ns");  // samples where `second`
    if (second) latency.add(9);
  };
  Registry whole, zero, one;
  fill(whole, true, true);
  fill(zero, true, false);
  fill(one, false, true);
  std::vector<unsigned char> bytes;
  one.save(bytes);
  zero.merge(bytes.data(), bytes.data() + bytes.size());
  EXPECT_EQ(zero.to_json().dump(), whole.to_json().dump());
  // A table and a counter held on both sides add up.
  Registry again;
  again.attach_table("fabric.s0.", layout, [&](std::uint32_t slot) -> const Counter& { return s0_again[slot]; });
  again.counter("fabric.ep0.rx", "received", "packets").add(1);
  bytes.clear();
  again.save(bytes);
  zero.merge(bytes.data(), bytes.data() + bytes.size());
  EXPECT_EQ(zero.scope("fabric.s0.").find_counter("b")->value(), 4u);  // slot 0
  EXPECT_EQ(zero.scope("fabric.ep0.").find_counter("rx")->value(), 6u);
  bytes.clear();
  one.save(bytes);
  EXPECT_THROW(zero.merge(bytes.data(), bytes.data() + bytes.size()), std::logic_error);  // ep1.latency twice
  Registry fresh;
  EXPECT_THROW(fresh.merge(bytes.data(), bytes.data() + bytes.size() - 1), std::invalid_argument);
}

TEST(Distribution, EqualSamplesGiveTheExactValue) {
  Distribution d;
  for (int i = 0; i < 5000; ++i) d.add(743.8);
  ASSERT_TRUE(d.binned());
  for (double q : kQuantiles) EXPECT_EQ(d.percentile(q), 743.8);
}

TEST(Distribution, MergeEqualsAddingEverySample) {
  const std::vector<double> a = mixed_samples(30000, 11), b = mixed_samples(500, 12), c = mixed_samples(9000, 13);
  Distribution da, db, dc, all, merged;
  for (double x : a) da.add(x), all.add(x);
  for (double x : b) db.add(x), all.add(x);
  for (double x : c) dc.add(x), all.add(x);
  merged.merge(db);  // exact into empty, then binned into exact, then binned into binned
  merged.merge(da);
  merged.merge(dc);
  EXPECT_EQ(merged.count(), all.count());
  EXPECT_EQ(merged.min(), all.min());
  EXPECT_EQ(merged.max(), all.max());
  EXPECT_NEAR(merged.mean(), all.mean(), 1e-12 * all.mean());
  for (double q : kQuantiles) EXPECT_EQ(merged.percentile(q), all.percentile(q)) << "p" << q;
}

TEST(Distribution, EmptyAndBadSamples) {
  Distribution d;
  EXPECT_EQ(d.count(), 0u);
  EXPECT_EQ(d.percentile(50), 0.0);
  EXPECT_EQ(d.min(), 0.0);
  EXPECT_EQ(d.mean(), 0.0);
  EXPECT_THROW(d.add(-1.0), std::invalid_argument);
  EXPECT_THROW(d.add(std::nan("")), std::invalid_argument);
  EXPECT_EQ(d.count(), 0u);
}

std::vector<unsigned char> saved(const Distribution& d) {
  std::vector<unsigned char> out;
  d.save(out);
  return out;
}

// What save() wrote, read back by load(), which must consume exactly those bytes.
Distribution reloaded(const Distribution& d) {
  const std::vector<unsigned char> bytes = saved(d);
  const unsigned char* in = bytes.data();
  Distribution out = Distribution::load(in, bytes.data() + bytes.size());
  EXPECT_EQ(in, bytes.data() + bytes.size());
  return out;
}

// The same operations on a distribution and on its reloaded copy give the same bits:
// the state, every percentile and the summary, before and after adding and merging.
void expect_same_after_the_same_operations(Distribution a, Distribution b) {
  EXPECT_EQ(saved(a), saved(b));
  const Distribution exact = [] {
    Distribution d;
    for (double x : mixed_samples(300, 21)) d.add(x);
    return d;
  }();
  const Distribution binned = [] {
    Distribution d;
    for (double x : mixed_samples(5000, 22)) d.add(x);
    return d;
  }();
  for (Distribution* d : {&a, &b}) {
    for (double x : mixed_samples(700, 23)) d->add(x);
    d->merge(exact);
    d->merge(binned);
  }
  for (double q : kQuantiles) EXPECT_EQ(a.percentile(q), b.percentile(q)) << "p" << q;
  EXPECT_EQ(a.summary().dump(), b.summary().dump());
  EXPECT_EQ(a.mean(), b.mean());
  EXPECT_EQ(saved(a), saved(b));
}

TEST(Distribution, SaveLoadKeepsExactUnsortedSamples) {
  Distribution d;
  for (double x : {5.0, 1.0, 3.0, 0.0, 2.5}) d.add(x);
  const Distribution copy = reloaded(d);
  EXPECT_EQ(copy.count(), 5u);
  EXPECT_FALSE(copy.binned());
  EXPECT_EQ(copy.summary().dump(), d.summary().dump());
  expect_same_after_the_same_operations(d, copy);
}

TEST(Distribution, SaveLoadKeepsTheHistogram) {
  Distribution d;
  for (double x : mixed_samples(200000, 5)) d.add(x);
  ASSERT_TRUE(d.binned());
  const Distribution copy = reloaded(d);
  EXPECT_TRUE(copy.binned());
  for (double q : kQuantiles) EXPECT_EQ(copy.percentile(q), d.percentile(q)) << "p" << q;
  expect_same_after_the_same_operations(d, copy);
}

TEST(Distribution, SaveLoadEmpty) {
  const Distribution copy = reloaded(Distribution());
  EXPECT_EQ(copy.count(), 0u);
  EXPECT_EQ(copy.summary().dump(), Distribution().summary().dump());
  expect_same_after_the_same_operations(Distribution(), copy);
}

// A gather concatenates the distributions of a process: each load reads its own bytes.
TEST(Distribution, LoadReadsOneDistributionAtATime) {
  Distribution a, b;
  for (double x : mixed_samples(3000, 8)) a.add(x);
  b.add(4.25);
  std::vector<unsigned char> bytes;
  a.save(bytes);
  b.save(bytes);
  const unsigned char* in = bytes.data();
  const unsigned char* end = bytes.data() + bytes.size();
  EXPECT_EQ(saved(Distribution::load(in, end)), saved(a));
  EXPECT_EQ(saved(Distribution::load(in, end)), saved(b));
  EXPECT_EQ(in, end);
}

// Every truncation of a saved distribution is refused without reading past its end
// (each prefix sits in a buffer of its own size, where the sanitizer build sees an
// overrun), and `in` stays where it was.
TEST(Distribution, LoadRefusesATruncatedBuffer) {
  Distribution exact, binned;
  for (double x : mixed_samples(40, 9)) exact.add(x);
  for (double x : mixed_samples(2000, 10)) binned.add(x);
  for (const Distribution* d : {&exact, &binned}) {
    const std::vector<unsigned char> bytes = saved(*d);
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      const std::vector<unsigned char> prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
      const unsigned char* in = prefix.data();
      EXPECT_THROW(Distribution::load(in, prefix.data() + prefix.size()), std::invalid_argument) << n;
      EXPECT_EQ(in, prefix.data());
    }
  }
}

// save()'s layout: count (u64) at 0, sum, min, max, binned (u8) at 32, first bucket (i32),
// zeros (u64), sorted (u8) at 45, then the bucket counts' length (u64) at 46.
TEST(Distribution, LoadRefusesAMalformedBuffer) {
  Distribution d;
  for (double x : {5.0, 1.0, 3.0}) d.add(x);
  const auto refused = [](std::vector<unsigned char> bytes, std::size_t at, std::uint64_t value, std::size_t size) {
    std::memcpy(bytes.data() + at, &value, size);
    const unsigned char* in = bytes.data();
    EXPECT_THROW(Distribution::load(in, bytes.data() + bytes.size()), std::invalid_argument) << at;
  };
  refused(saved(d), 0, 4, 8);            // a count the samples do not make
  refused(saved(d), 32, 2, 1);           // binned neither 0 nor 1
  refused(saved(d), 32, 1, 1);           // binned with the samples still exact
  refused(saved(d), 45, 1, 1);           // sorted, and not
  refused(saved(d), 46, 1ull << 60, 8);  // more bucket counts than bytes
}

}  // namespace
