#include "sim/stats.h"

#include <ostream>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>

namespace fabricsim::stats {

void Distribution::reject(double v) {
  throw std::invalid_argument("distribution sample " + std::to_string(v) + " is negative or NaN");
}

void Distribution::keep(double v) {
  if (!samples_.empty() && v < samples_.back()) sorted_ = false;
  samples_.push_back(v);
  if (samples_.size() > kExactSamples) bin_samples();
}

void Distribution::bin_samples() {
  for (double v : samples_) bin(v);
  std::vector<double>().swap(samples_);  // give the memory back
  binned_ = true;
}

double Distribution::bucket_middle(int bucket) {
  const int e = bucket >= 0 ? bucket / kSubBuckets : -((kSubBuckets - 1 - bucket) / kSubBuckets);  // floor
  const int sub = bucket - e * kSubBuckets;
  return std::ldexp(0.5 + (sub + 0.5) / (2 * kSubBuckets), e);
}

void Distribution::count_in(int bucket, std::uint64_t n) {
  if (counts_.empty()) {
    first_ = bucket;
  } else if (bucket < first_) {
    counts_.insert(counts_.begin(), static_cast<std::size_t>(first_ - bucket), 0);
    first_ = bucket;
  }
  const auto i = static_cast<std::size_t>(bucket - first_);
  if (i >= counts_.size()) counts_.resize(i + 1, 0);
  counts_[i] += n;
}

void Distribution::merge(const Distribution& other) {
  if (!other.binned_) {
    // In ascending order, whatever reads of `other` sorted its samples before: the sum,
    // and so the mean, does not depend on them (a distribution gathered from another
    // process has had none).
    if (!other.sorted_) {
      std::sort(other.samples_.begin(), other.samples_.end());
      other.sorted_ = true;
    }
    for (double v : other.samples_) add(v);
    return;
  }
  if (other.count_ == 0) return;
  if (!binned_) bin_samples();
  min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
  max_ = count_ == 0 ? other.max_ : std::max(max_, other.max_);
  count_ += other.count_;
  sum_ += other.sum_;
  zeros_ += other.zeros_;
  for (std::size_t i = 0; i < other.counts_.size(); ++i)
    if (other.counts_[i] != 0) count_in(other.first_ + static_cast<int>(i), other.counts_[i]);
}

double Distribution::percentile(double q) const {
  if (count_ == 0) return 0.0;
  const double rank = std::ceil(q / 100.0 * static_cast<double>(count_));
  const std::uint64_t idx = std::min<std::uint64_t>(rank < 1 ? 0 : static_cast<std::uint64_t>(rank) - 1, count_ - 1);
  if (!binned_) {
    if (!sorted_) {
      std::sort(samples_.begin(), samples_.end());
      sorted_ = true;
    }
    return samples_[idx];
  }
  if (idx < zeros_) return 0.0;
  std::uint64_t below = zeros_;
  for (std::size_t i = 0; i < counts_.size(); ++i) {
    below += counts_[i];
    if (idx < below) return std::clamp(bucket_middle(first_ + static_cast<int>(i)), min_, max_);
  }
  return max_;  // not reached: the counts add up to count_
}

namespace {

// save()'s layout: each field's bytes in turn, a vector as its length (u64) then its elements.
template <class T>
void put(std::vector<unsigned char>& out, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&v);
  out.insert(out.end(), bytes, bytes + sizeof v);
}

template <class T>
void put_vector(std::vector<unsigned char>& out, const std::vector<T>& v) {
  put<std::uint64_t>(out, v.size());
  const auto* bytes = reinterpret_cast<const unsigned char*>(v.data());
  out.insert(out.end(), bytes, bytes + v.size() * sizeof(T));
}

// Reads save()'s layout between `at` and `end`, never past `end`.
struct Reader {
  const unsigned char* at;
  const unsigned char* end;

  [[noreturn]] static void malformed(const char* what) {
    throw std::invalid_argument(std::string("saved statistics: ") + what);
  }
  void take(void* to, std::size_t n) {
    if (static_cast<std::size_t>(end - at) < n) malformed("truncated");
    if (n != 0) std::memcpy(to, at, n);
    at += n;
  }
  template <class T>
  T get() {
    T v;
    take(&v, sizeof v);
    return v;
  }
  bool get_flag() {
    const auto b = get<unsigned char>();
    if (b > 1) malformed("flag neither 0 nor 1");
    return b == 1;
  }
  template <class T>
  std::vector<T> get_vector() {
    const auto n = get<std::uint64_t>();
    if (n > static_cast<std::uint64_t>(end - at) / sizeof(T)) malformed("truncated");
    std::vector<T> v(static_cast<std::size_t>(n));
    take(v.data(), v.size() * sizeof(T));
    return v;
  }
};

}  // namespace

void Distribution::save(std::vector<unsigned char>& out) const {
  put(out, count_);
  put(out, sum_);
  put(out, min_);
  put(out, max_);
  put<unsigned char>(out, binned_);
  put(out, first_);
  put(out, zeros_);
  put<unsigned char>(out, sorted_);
  put_vector(out, counts_);
  put_vector(out, samples_);
}

Distribution Distribution::load(const unsigned char*& in, const unsigned char* end) {
  if (end < in) Reader::malformed("buffer ends before it starts");
  Reader r{in, end};
  Distribution d;
  d.count_ = r.get<std::uint64_t>();
  d.sum_ = r.get<double>();
  d.min_ = r.get<double>();
  d.max_ = r.get<double>();
  d.binned_ = r.get_flag();
  d.first_ = r.get<int>();
  d.zeros_ = r.get<std::uint64_t>();
  d.sorted_ = r.get_flag();
  d.counts_ = r.get_vector<std::uint64_t>();
  d.samples_ = r.get_vector<double>();
  // What percentile() and merge() rely on: the exact samples are the count (and index
  // samples_ by rank), or the buckets are, within the buckets a double can fall in.
  for (double v : d.samples_)
    if (!(v >= 0)) Reader::malformed("negative or NaN sample");
  if (d.sorted_ && !std::is_sorted(d.samples_.begin(), d.samples_.end())) Reader::malformed("samples out of order");
  if (!d.binned_) {
    if (d.samples_.size() != d.count_ || d.count_ > kExactSamples || d.zeros_ != 0 || !d.counts_.empty())
      Reader::malformed("exact samples do not match the count");
  } else {
    std::uint64_t binned = d.zeros_;
    for (std::uint64_t n : d.counts_) {
      if (n > d.count_ - std::min(binned, d.count_)) Reader::malformed("bucket counts do not match the count");
      binned += n;
    }
    if (!d.samples_.empty() || binned != d.count_) Reader::malformed("bucket counts do not match the count");
    if (!d.counts_.empty() &&
        (d.first_ < bucket_of(std::numeric_limits<double>::denorm_min()) ||
         static_cast<std::int64_t>(d.first_) + static_cast<std::int64_t>(d.counts_.size()) - 1 >
             bucket_of(std::numeric_limits<double>::max())))
      Reader::malformed("buckets outside the range of a double");
  }
  in = r.at;
  return d;
}

nlohmann::json Distribution::summary() const {
  // Straight into the object's map (an initializer list builds and copies a pair per field).
  nlohmann::json s = nlohmann::json::object();
  auto& fields = s.get_ref<nlohmann::json::object_t&>();
  fields.emplace("count", count());
  fields.emplace("mean", mean());
  fields.emplace("min", min());
  fields.emplace("p50", percentile(50));
  fields.emplace("p99", percentile(99));
  fields.emplace("p99.9", percentile(99.9));
  fields.emplace("max", max());
  return s;
}

std::map<std::string, Registry::Table, std::less<>>::const_iterator Registry::table_holding(
    std::string_view name) const {
  auto it = tables_.upper_bound(name);
  if (it == tables_.begin()) return tables_.end();
  --it;
  return name.substr(0, it->first.size()) == it->first ? it : tables_.end();
}

Registry::Entry& Registry::claim(const std::string& name, const char* description, const char* unit) {
  if (table_holding(name) != tables_.end())
    throw std::logic_error("statistic '" + name + "' inside the table of '" + table_holding(name)->first + "'");
  const auto [it, added] = stats_.try_emplace(name);
  if (!added) throw std::logic_error("statistic '" + name + "' registered twice");
  it->second.info = {description, unit};
  return it->second;
}

Counter& Registry::counter(const std::string& name, const char* description, const char* unit) {
  Entry& e = claim(name, description, unit);
  Counter& c = counter_store_.emplace_back();
  e.counter = &c;
  return c;
}

void Registry::attach(const std::string& name, const char* description, const char* unit, Counter& counter) {
  claim(name, description, unit).counter = &counter;
}

Distribution& Registry::distribution(const std::string& name, const char* description, const char* unit) {
  Entry& e = claim(name, description, unit);
  e.distribution = &distribution_store_.emplace_back();
  return *e.distribution;
}

void Registry::attach_table(const std::string& prefix, std::shared_ptr<const CounterLayout> layout,
                            CounterLookup lookup) {
  if (prefix.empty() || prefix.back() != '.') throw std::logic_error("table prefix '" + prefix + "' must end in '.'");
  const auto next = tables_.lower_bound(prefix);
  const auto holds = [&](const std::string& name) { return name.compare(0, prefix.size(), prefix) == 0; };
  const auto inside = stats_.lower_bound(prefix);
  if (table_holding(prefix) != tables_.end() || (next != tables_.end() && holds(next->first)) ||
      (inside != stats_.end() && holds(inside->first)))
    throw std::logic_error("statistics table '" + prefix + "' overlaps other statistics");
  tables_.emplace_hint(next, prefix, Table{std::move(layout), std::move(lookup)});
}

const Counter* Registry::Table::find(std::string_view rest) const {
  const auto it = std::lower_bound(layout->begin(), layout->end(), rest,
                                   [](const TableCounter& c, std::string_view n) { return c.name < n; });
  return it != layout->end() && it->name == rest ? &lookup(it->slot) : nullptr;
}

template <class Emit>
void Registry::for_each(Emit&& emit) const {
  // No name in stats_ starts with a table's prefix, so each table's names sort together,
  // right where its prefix does.
  auto stat = stats_.begin();
  std::string name;
  for (const auto& [prefix, table] : tables_) {
    for (; stat != stats_.end() && stat->first < prefix; ++stat) emit(stat->first, stat->second);
    for (const TableCounter& c : *table.layout) {
      name.assign(prefix).append(c.name);
      // The lookup hands out const references to the block's own counters, which are
      // not const objects: a distributed run writes gathered totals back into them.
      emit(name, Entry{c.info, const_cast<Counter*>(&table.lookup(c.slot)), nullptr});
    }
  }
  for (; stat != stats_.end(); ++stat) emit(stat->first, stat->second);
}

namespace {

void put_text(std::vector<unsigned char>& out, std::string_view text) {
  put<std::uint64_t>(out, text.size());
  out.insert(out.end(), text.begin(), text.end());
}

std::string_view get_text(Reader& r) {
  const auto n = r.get<std::uint64_t>();
  if (n > static_cast<std::uint64_t>(r.end - r.at)) Reader::malformed("truncated");
  const std::string_view text(reinterpret_cast<const char*>(r.at), static_cast<std::size_t>(n));
  r.at += n;
  return text;
}

}  // namespace

const char* Registry::merged_text(std::string_view text) {
  auto it = merged_texts_.find(text);
  if (it == merged_texts_.end()) it = merged_texts_.emplace(text).first;
  return it->c_str();
}

void Registry::save(std::vector<unsigned char>& out) const {
  // The layouts the tables use, each once; then the tables, their values in layout order;
  // then the other statistics.
  std::map<const CounterLayout*, std::uint64_t> layout_index;
  std::vector<const CounterLayout*> layouts;
  for (const auto& [prefix, table] : tables_)
    if (layout_index.try_emplace(table.layout.get(), layouts.size()).second) layouts.push_back(table.layout.get());
  put<std::uint64_t>(out, layouts.size());
  for (const CounterLayout* layout : layouts) {
    put<std::uint64_t>(out, layout->size());
    for (const TableCounter& c : *layout) {
      put_text(out, c.name);
      put_text(out, c.info.description);
      put_text(out, c.info.unit);
      put(out, c.slot);
    }
  }
  put<std::uint64_t>(out, tables_.size());
  for (const auto& [prefix, table] : tables_) {
    put_text(out, prefix);
    put(out, layout_index.at(table.layout.get()));
    for (const TableCounter& c : *table.layout) put(out, table.lookup(c.slot).value());
  }
  put<std::uint64_t>(out, stats_.size());
  for (const auto& [name, e] : stats_) {
    put_text(out, name);
    put_text(out, e.info.description);
    put_text(out, e.info.unit);
    put<unsigned char>(out, e.counter ? 0 : 1);
    if (e.counter) put(out, e.counter->value());
    else e.distribution->save(out);
  }
}

void Registry::merge(const unsigned char* in, const unsigned char* end) {
  Reader r{in, end};
  std::vector<std::shared_ptr<const CounterLayout>> layouts;
  const auto layout_count = r.get<std::uint64_t>();
  for (std::uint64_t k = 0; k < layout_count; ++k) {
    auto layout = std::make_shared<CounterLayout>();
    const auto entries = r.get<std::uint64_t>();
    for (std::uint64_t i = 0; i < entries; ++i) {
      const std::string name(get_text(r));
      const char* description = merged_text(get_text(r));
      const char* unit = merged_text(get_text(r));
      layout->push_back({name, {description, unit}, r.get<std::uint32_t>()});
    }
    layouts.push_back(std::move(layout));
  }
  const auto tables = r.get<std::uint64_t>();
  for (std::uint64_t k = 0; k < tables; ++k) {
    const std::string prefix(get_text(r));
    const auto at = r.get<std::uint64_t>();
    if (at >= layouts.size()) Reader::malformed("table of an unknown layout");
    const std::shared_ptr<const CounterLayout>& layout = layouts[static_cast<std::size_t>(at)];
    const auto held = tables_.find(prefix);
    if (held != tables_.end()) {  // its counters by name: the saved values added
      for (const TableCounter& c : *layout) {
        const Counter* mine = held->second.find(c.name);
        if (!mine) throw std::logic_error("merging statistics: table '" + prefix + "' has no counter '" + c.name + "'");
        const_cast<Counter*>(mine)->add(r.get<std::uint64_t>());
      }
      continue;
    }
    std::uint32_t slots = 0;
    for (const TableCounter& c : *layout) slots = std::max(slots, c.slot + 1);
    std::vector<Counter>& counters = merged_tables_.emplace_back(slots);
    for (const TableCounter& c : *layout) counters[c.slot].set(r.get<std::uint64_t>());
    attach_table(prefix, layout, [&counters](std::uint32_t slot) -> const Counter& { return counters[slot]; });
  }
  const auto stats = r.get<std::uint64_t>();
  for (std::uint64_t k = 0; k < stats; ++k) {
    const std::string name(get_text(r));
    const std::string_view description = get_text(r), unit = get_text(r);
    const bool counter = !r.get_flag();
    const auto held = stats_.find(name);
    if (held != stats_.end() && (held->second.counter != nullptr) != counter)
      throw std::logic_error("merging statistics: '" + name + "' is a counter in one registry, a distribution in the other");
    if (counter) {
      const auto value = r.get<std::uint64_t>();
      Counter& c = held != stats_.end() ? *held->second.counter
                                        : this->counter(name, merged_text(description), merged_text(unit));
      c.add(value);
      continue;
    }
    Distribution theirs = Distribution::load(r.at, r.end);
    if (held == stats_.end()) {
      distribution(name, merged_text(description), merged_text(unit)) = std::move(theirs);
    } else if (theirs.count() > 0) {
      if (held->second.distribution->count() > 0)
        throw std::logic_error("merging statistics: distribution '" + name + "' has samples in both registries");
      *held->second.distribution = std::move(theirs);
    }
  }
  if (r.at != r.end) Reader::malformed("bytes after the statistics");
}

Registry::Scope Registry::scope(const std::string& prefix) const {
  Scope s;
  if (const auto t = table_holding(prefix); t != tables_.end()) {
    s.table_ = &t->second;
    s.in_table_ = prefix.substr(t->first.size());
    return s;
  }
  s.prefix_ = prefix.size();
  s.first_ = stats_.lower_bound(prefix);
  s.last_ = s.first_;
  while (s.last_ != stats_.end() && s.last_->first.compare(0, prefix.size(), prefix) == 0) ++s.last_;
  return s;
}

const Registry::Entry* Registry::Scope::find(std::string_view rest) const {
  for (It it = first_; it != last_; ++it)
    if (std::string_view(it->first).substr(prefix_) == rest) return &it->second;
  return nullptr;
}

const Counter* Registry::Scope::find_counter(std::string_view rest) const {
  if (table_) return table_->find(in_table_ + std::string(rest));
  const Entry* e = find(rest);
  return e ? e->counter : nullptr;
}

const Distribution* Registry::Scope::find_distribution(std::string_view rest) const {
  if (table_) return nullptr;  // tables hold counters only
  const Entry* e = find(rest);
  return e ? e->distribution : nullptr;
}

namespace {

// {unit, description, `key`: value} of one statistic.
nlohmann::json stat_json(const StatInfo& info, const char* key, nlohmann::json value) {
  nlohmann::json stat = nlohmann::json::object();
  auto& fields = stat.get_ref<nlohmann::json::object_t&>();
  fields.emplace("unit", info.unit);
  fields.emplace("description", info.description);
  fields.emplace(key, std::move(value));
  return stat;
}

}  // namespace

nlohmann::json Registry::entry_json(const Entry& e) {
  return e.counter ? stat_json(e.info, "value", e.counter->value())
                   : stat_json(e.info, "summary", e.distribution->summary());
}

nlohmann::json Registry::to_json() const {
  // Sorted by name, as the JSON object is: each statistic goes in at the end.
  nlohmann::json out = nlohmann::json::object();
  auto& stats = out.get_ref<nlohmann::json::object_t&>();
  for_each([&](const std::string& name, const Entry& e) { stats.emplace_hint(stats.end(), name, entry_json(e)); });
  return out;
}

void write_nested_json(std::ostream& out, std::string_view text, int depth) {
  const std::string shift(static_cast<std::size_t>(2 * depth), ' ');
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t line_end = std::min(text.find('\n', at), text.size());
    out.write(text.data() + at, static_cast<std::streamsize>(line_end - at));
    if (line_end == text.size()) break;
    out << '\n' << shift;
    at = line_end + 1;
  }
}

void Registry::write_json(std::ostream& out, int depth) const {
  if (stats_.empty() && tables_.empty()) {
    out << "{}";
    return;
  }
  // nlohmann's layout for indent 2: each member on its own line, one level deeper than its object.
  const std::string member_indent(static_cast<std::size_t>(2 * (depth + 1)), ' ');
  const char* separator = "{";
  for_each([&](const std::string& name, const Entry& e) {
    out << separator << '\n' << member_indent << nlohmann::json(name).dump() << ": ";
    write_nested_json(out, entry_json(e).dump(2), depth + 1);
    separator = ",";
  });
  out << '\n' << std::string(static_cast<std::size_t>(2 * depth), ' ') << '}';
}

}  // namespace fabricsim::stats
