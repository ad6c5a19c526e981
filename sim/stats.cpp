#include "sim/stats.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fabricsim::stats {

void Distribution::add(double v) {
  if (!samples_.empty() && v < samples_.back()) sorted_ = false;
  samples_.push_back(v);
  sum_ += v;
}

void Distribution::merge(const Distribution& other) {
  for (double v : other.samples_) add(v);
}

void Distribution::sort() const {
  if (!sorted_) {
    std::sort(samples_.begin(), samples_.end());
    sorted_ = true;
  }
}

double Distribution::mean() const { return samples_.empty() ? 0.0 : sum_ / samples_.size(); }

double Distribution::min() const {
  sort();
  return samples_.empty() ? 0.0 : samples_.front();
}

double Distribution::max() const {
  sort();
  return samples_.empty() ? 0.0 : samples_.back();
}

double Distribution::percentile(double q) const {
  if (samples_.empty()) return 0.0;
  sort();
  const double rank = std::ceil(q / 100.0 * static_cast<double>(samples_.size()));
  const std::size_t idx = rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1;
  return samples_[std::min(idx, samples_.size() - 1)];
}

nlohmann::json Distribution::summary() const {
  return {{"count", count()},         {"mean", mean()},           {"min", min()},
          {"p50", percentile(50)},    {"p99", percentile(99)},    {"p99.9", percentile(99.9)},
          {"max", max()}};
}

void Registry::claim(const std::string& name) {
  if (counters_.count(name) || distributions_.count(name))
    throw std::logic_error("statistic '" + name + "' registered twice");
}

Counter& Registry::counter(const std::string& name, const std::string& description,
                           const std::string& unit) {
  claim(name);
  auto& slot = counters_[name];
  slot.first = {name, description, unit};
  slot.second = std::make_unique<Counter>();
  return *slot.second;
}

Distribution& Registry::distribution(const std::string& name, const std::string& description,
                                     const std::string& unit) {
  claim(name);
  auto& slot = distributions_[name];
  slot.first = {name, description, unit};
  slot.second = std::make_unique<Distribution>();
  return *slot.second;
}

const Counter* Registry::find_counter(const std::string& name) const {
  auto it = counters_.find(name);
  return it == counters_.end() ? nullptr : it->second.second.get();
}

const Distribution* Registry::find_distribution(const std::string& name) const {
  auto it = distributions_.find(name);
  return it == distributions_.end() ? nullptr : it->second.second.get();
}

nlohmann::json Registry::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, entry] : counters_)
    out[name] = {{"unit", entry.first.unit}, {"description", entry.first.description},
                 {"value", entry.second->value()}};
  for (const auto& [name, entry] : distributions_)
    out[name] = {{"unit", entry.first.unit}, {"description", entry.first.description},
                 {"summary", entry.second->summary()}};
  return out;
}

}  // namespace fabricsim::stats
