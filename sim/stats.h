// One statistics registry for a run: counters and distributions registered
// once under their SystemC hierarchy name with a description and a unit. Hot
// paths keep the returned reference; nothing looks names up while simulating.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fabricsim::stats {

/// What a statistic is, for reports.
struct StatInfo {
  std::string name;         ///< hierarchical name, e.g. "fabric.sw0.port1.egress_packets"
  std::string description;  ///< one line
  std::string unit;         ///< "packets", "B", "ns", ...
};

/// A monotonically increasing count.
class Counter {
 public:
  void add(std::uint64_t v = 1) { value_ += v; }
  std::uint64_t value() const { return value_; }

 private:
  std::uint64_t value_ = 0;
};

/// All samples of a quantity, for exact percentiles (nearest-rank).
class Distribution {
 public:
  void add(double v);
  std::size_t count() const { return samples_.size(); }
  double mean() const;
  double min() const;
  double max() const;
  /// Nearest-rank percentile, q in [0, 100]; 0 when empty.
  double percentile(double q) const;
  /// Adds every sample of `other` (fabric-wide summaries from per-block ones).
  void merge(const Distribution& other);
  /// count, mean, min, p50, p99, p99.9, max.
  nlohmann::json summary() const;

 private:
  void sort() const;
  mutable std::vector<double> samples_;
  mutable bool sorted_ = true;
  double sum_ = 0;
};

/// The registry. Names are unique; registering a name twice is an error.
class Registry {
 public:
  Counter& counter(const std::string& name, const std::string& description, const std::string& unit);
  Distribution& distribution(const std::string& name, const std::string& description,
                             const std::string& unit);
  /// Counter by name, or nullptr (for reports, not hot paths).
  const Counter* find_counter(const std::string& name) const;
  const Distribution* find_distribution(const std::string& name) const;
  /// Every statistic as {name: {unit, description, value | summary}}, sorted by name.
  nlohmann::json to_json() const;

 private:
  void claim(const std::string& name);
  std::map<std::string, std::pair<StatInfo, std::unique_ptr<Counter>>> counters_;
  std::map<std::string, std::pair<StatInfo, std::unique_ptr<Distribution>>> distributions_;
};

}  // namespace fabricsim::stats
