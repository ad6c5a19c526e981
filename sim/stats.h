// One statistics registry for a run: counters and distributions registered
// once under their SystemC hierarchy name with a description and a unit. Hot
// paths keep the returned reference; nothing looks names up while simulating.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace fabricsim::stats {

/// What a statistic is, for reports: one line and a unit, both string literals (the
/// registry keeps the pointers).
struct StatInfo {
  const char* description;  ///< one line
  const char* unit;         ///< "packets", "B", "ns", ...
};

/// A monotonically increasing count.
class Counter {
 public:
  void add(std::uint64_t v = 1) { value_ += v; }
  /// Replaces the count with the whole run's, gathered from the processes of a distributed
  /// run onto the one that reports it.
  void set(std::uint64_t v) { value_ = v; }
  std::uint64_t value() const { return value_; }

 private:
  std::uint64_t value_ = 0;
};

/// A distribution of a non-negative quantity (latency, FCT, slowdown). Count, mean, min
/// and max are always exact. Up to kExactSamples samples are kept and percentiles are
/// exact (nearest rank); past that the samples move into a log-linear histogram
/// (HdrHistogram's layout, Tene) of kSubBuckets equal buckets per octave, and a
/// percentile is the midpoint of the bucket holding the nearest-rank sample, clamped to
/// [min, max]: within kRelativeError of the exact value. Memory: at most kExactSamples
/// doubles, then an 8-byte count per bucket between the smallest and largest sample.
class alignas(64) Distribution {
 public:
  static constexpr std::size_t kExactSamples = 1024;  ///< samples kept before binning
  static constexpr int kSubBuckets = 256;             ///< histogram buckets per octave (a power of two)
  /// Bound on |reported - exact| / exact of a binned percentile: half a bucket over its low edge.
  static constexpr double kRelativeError = 1.0 / (2 * kSubBuckets);

  /// Adds one sample; a negative or NaN value is a bug in the caller (std::invalid_argument).
  void add(double v) {
    if (!(v >= 0)) reject(v);
    min_ = count_ == 0 ? v : std::min(min_, v);
    max_ = count_ == 0 ? v : std::max(max_, v);
    ++count_;
    sum_ += v;
    if (binned_) bin(v);
    else keep(v);
  }
  std::uint64_t count() const { return count_; }
  double mean() const { return count_ == 0 ? 0.0 : sum_ / static_cast<double>(count_); }
  double min() const { return count_ == 0 ? 0.0 : min_; }
  double max() const { return count_ == 0 ? 0.0 : max_; }
  /// Nearest-rank percentile, q in [0, 100]; 0 when empty. Exact while count() <=
  /// kExactSamples, otherwise within kRelativeError.
  double percentile(double q) const;
  /// Adds every sample of `other` (fabric-wide summaries from per-block ones): the
  /// same figures as adding its samples one by one in ascending order, except the mean's
  /// rounding once `other` is binned (its sum is added as one term).
  void merge(const Distribution& other);
  /// count, mean, min, p50, p99, p99.9, max.
  nlohmann::json summary() const;
  /// True once the samples are in the histogram (percentiles no longer exact).
  bool binned() const { return binned_; }
  /// Appends the whole state to `out` (native byte order: for the processes of one run,
  /// gathering their statistics onto one): what load() reads back.
  void save(std::vector<unsigned char>& out) const;
  /// The distribution save() wrote at `in`, which moves past it: every later add, merge
  /// and percentile gives the bits the saved one would. A truncated or malformed buffer
  /// throws std::invalid_argument, leaves `in` where it was and reads nothing at `end` or after.
  static Distribution load(const unsigned char*& in, const unsigned char* end);

 private:
  // The histogram bucket of v > 0: e kSubBuckets + the sub-bucket, with v = m 2^e, m in
  // [0.5, 1), and (m - 0.5) 2 kSubBuckets (exact) the sub-bucket.
  static int bucket_of(double v) {
    int e = 0;
    const double m = std::frexp(v, &e);
    return e * kSubBuckets + static_cast<int>((m - 0.5) * (2 * kSubBuckets));
  }
  [[noreturn]] static void reject(double v);  // a negative or NaN sample
  void keep(double v);  // one sample into the exact samples
  static double bucket_middle(int bucket);
  void count_in(int bucket, std::uint64_t n);
  // One sample into the histogram.
  void bin(double v) {
    if (v == 0) {
      ++zeros_;
      return;
    }
    const int b = bucket_of(v);
    const auto i = static_cast<std::size_t>(b - first_);
    if (b >= first_ && i < counts_.size()) ++counts_[i];
    else count_in(b, 1);
  }
  void bin_samples();

  // What add() reads of a binned distribution first, in one cache line (the object is
  // aligned to one): a NIC adds to several for every packet it receives, cold each time.
  std::uint64_t count_ = 0;
  double sum_ = 0, min_ = 0, max_ = 0;
  bool binned_ = false;
  int first_ = 0;
  std::vector<std::uint64_t> counts_;    // counts_[i]: samples in bucket first_ + i
  std::uint64_t zeros_ = 0;              // binned samples equal to 0
  mutable std::vector<double> samples_;  // until binned
  mutable bool sorted_ = true;
};

/// One counter of a block's table (Registry::attach_table): its name after the block's
/// prefix, what it is, and the slot the block finds it by.
struct TableCounter {
  std::string name;
  StatInfo info;
  std::uint32_t slot;
};
/// A block's counters sorted by name: one layout serves every block of the same shape.
using CounterLayout = std::vector<TableCounter>;
/// A block's counter by its slot.
using CounterLookup = std::function<const Counter&(std::uint32_t slot)>;

/// The registry. Names are unique; registering a name twice is an error.
class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;  // its maps point into its own stores
  Registry& operator=(const Registry&) = delete;
  Registry(Registry&&) = default;      // a deque's elements stay where they are
  Registry& operator=(Registry&&) = default;
  /// A new statistic `name`; `description` and `unit` are string literals (kept as pointers).
  Counter& counter(const std::string& name, const char* description, const char* unit);
  /// A new counter `name` that the block keeps in its own data, beside what it writes
  /// with it on its hot path (a registry counter is a cache line of its own per update);
  /// `counter` must outlive every report of this registry.
  void attach(const std::string& name, const char* description, const char* unit, Counter& counter);
  Distribution& distribution(const std::string& name, const char* description, const char* unit);
  /// Every statistic under `prefix` (one block's: "fabric.sw3.", ending in '.'): the
  /// counters of `layout` (sorted by name), which the block keeps and `lookup` finds. No
  /// name is built until a report lists them: a radix-64 switch with 4 VLs has 1,345
  /// counters, and one map entry and string each would take 4 million of both in a
  /// 32,768-endpoint fat tree. A prefix holding, or held by, another name is an error.
  void attach_table(const std::string& prefix, std::shared_ptr<const CounterLayout> layout, CounterLookup lookup);
  class Scope;
  /// The statistics whose names start with `prefix` (one block's: "fabric.ep3."), found by
  /// the rest of their names: a report that reads a block's statistics looks the block up
  /// once, not each statistic among all the run's (a large fabric has hundreds of thousands).
  Scope scope(const std::string& prefix) const;
  /// Appends every statistic to `out` (native byte order, for the processes of one run:
  /// names, what each is and its value; a table as its layout, once per layout, and its
  /// counters' values): what merge() reads.
  void save(std::vector<unsigned char>& out) const;
  /// Adds the statistics save() wrote in [in, end): a counter this registry holds gets
  /// the saved value added, a distribution it holds without samples takes the saved one,
  /// and a statistic or table it lacks is made (its description and unit kept here). A
  /// distribution with samples in both, or a malformed buffer, is an error.
  void merge(const unsigned char* in, const unsigned char* end);
  /// Every statistic as {name: {unit, description, value | summary}}, sorted by name.
  nlohmann::json to_json() const;
  /// to_json() as `dump(2)` writes it when it is the value of a key at `depth` (1: a key of
  /// the top-level object), written one statistic at a time: at millions of statistics the
  /// tree would take gigabytes.
  void write_json(std::ostream& out, int depth) const;

 private:
  // A statistic: what it is, and either its counter or its distribution.
  struct Entry {
    StatInfo info;
    Counter* counter = nullptr;
    Distribution* distribution = nullptr;
  };
  // A block's table of counters (attach_table).
  struct Table {
    std::shared_ptr<const CounterLayout> layout;
    CounterLookup lookup;
    // The counter named `rest` after the prefix, or nullptr.
    const Counter* find(std::string_view rest) const;
  };
  // One statistic as to_json() lists it.
  static nlohmann::json entry_json(const Entry& e);
  // Calls emit(name, entry) for every statistic in name order.
  template <class Emit>
  void for_each(Emit&& emit) const;
  // The table whose prefix starts `name`, or tables_.end().
  std::map<std::string, Table, std::less<>>::const_iterator table_holding(std::string_view name) const;
  // Registers `name` (once: a second time throws std::logic_error).
  Entry& claim(const std::string& name, const char* description, const char* unit);
  // The statistics themselves, in registration order and side by side (a deque never
  // moves what it holds): a block's counters share cache lines, where one allocation each
  // put every counter a packet adds to on a line of its own.
  std::deque<Counter> counter_store_;
  std::deque<Distribution> distribution_store_;
  std::map<std::string, Entry> stats_;  // by name, as the report lists them
  std::map<std::string, Table, std::less<>> tables_;  // by prefix; no name in stats_ starts with one
  // What merge() made: the descriptions and units it read (a set's strings stay where
  // they are), and the counters of its tables, by slot.
  std::set<std::string, std::less<>> merged_texts_;
  std::deque<std::vector<Counter>> merged_tables_;
  const char* merged_text(std::string_view text);
};

/// Writes `text`, one JSON value as nlohmann's `dump(2)` writes it on its own, as the
/// value of a member at `depth` (1: of the top-level object) is written: every line after
/// its first shifted by 2 x `depth` spaces (strings in JSON hold no raw newline).
void write_nested_json(std::ostream& out, std::string_view text, int depth);

class Registry::Scope {
 public:
  /// Counter `prefix` + `rest`, or nullptr.
  const Counter* find_counter(std::string_view rest) const;
  /// Distribution `prefix` + `rest`, or nullptr.
  const Distribution* find_distribution(std::string_view rest) const;

 private:
  friend class Registry;
  using It = std::map<std::string, Entry>::const_iterator;
  const Entry* find(std::string_view rest) const;
  std::size_t prefix_ = 0;  // length of the prefix every name in [first_, last_) starts with
  It first_, last_;
  const Table* table_ = nullptr;  // the table holding the prefix, if one does
  std::string in_table_;          // the prefix after the table's own
};

}  // namespace fabricsim::stats
