// Reading a sweep file into points (sim/sweep.h). Every axis value becomes an override
// that remembers its line in the sweep file, so a bad key or value is reported there.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <set>

#include <yaml-cpp/yaml.h>

#include "sim/config_reader.h"
#include "sim/sweep.h"

namespace fabricsim::sim {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxPoints = 100000;
constexpr std::size_t kMaxAxisValues = 10000;
constexpr std::int64_t kMaxProcesses = 4096;  // as --processes

/// One swept value: as written (table), as override text (YAML), where it is.
struct AxisValue {
  std::string text;
  std::string yaml;
  std::string origin;
};

struct Axis {
  std::string key;
  std::vector<AxisValue> values;
};

/// An entry of `axes:`: one axis, or several zipped (advancing together).
using AxisGroup = std::vector<Axis>;

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.12g", v);
  return buf;
}

std::string flow_yaml(const YAML::Node& n) {
  YAML::Emitter e;
  e << YAML::Flow << n;
  return e.c_str();
}

// A dotted configuration key such as switch.buffer (the configuration itself checks that it exists).
void check_key(ConfigMap& m, const std::string& field, const std::string& key) {
  if (key.empty() || key.front() == '.' || key.back() == '.' || key.find("..") != std::string::npos ||
      key.find('=') != std::string::npos || key.find(' ') != std::string::npos)
    m.fail(field, "expected a dotted configuration key such as traffic.load, got '" + key + "'");
}

Axis read_axis(ConfigMap m, const std::string& file) {
  Axis a;
  a.key = m.string("key", "");
  if (!m.present("key")) m.fail("key", "each axis needs a key (a dotted configuration key such as traffic.load)");
  check_key(m, "key", a.key);
  const bool has_values = m.present("values"), has_range = m.present("range");
  if (has_values == has_range) m.fail("", "give an axis either values: [...] or range: {from, to, step | count}");
  if (has_values) {
    const YAML::Node values = m.node("values");
    if (!values.IsSequence() || values.size() == 0) m.fail("values", "expected a non-empty list of values");
    if (values.size() > kMaxAxisValues) m.fail("values", "at most " + std::to_string(kMaxAxisValues) + " values");
    std::set<std::string> seen;
    for (const auto& v : values) {
      if (v.IsNull()) m.fail("values", "empty value in the list");
      a.values.push_back({v.IsScalar() ? v.Scalar() : flow_yaml(v), flow_yaml(v), yaml_mark(file, v)});
      if (!seen.insert(a.values.back().yaml).second)
        throw ConfigError(a.values.back().origin, m.path() + ".values",
                          "value '" + a.values.back().text + "' appears twice (the same points would run twice)");
    }
  } else {
    ConfigMap r = m.map("range");
    const double from = r.number("from", 0, -1e300, 1e300);
    const double to = r.number("to", 0, -1e300, 1e300);
    if (!r.present("from") || !r.present("to")) r.fail("", "a range needs from and to");
    if (r.present("step") == r.present("count")) r.fail("", "give a range either step or count");
    std::size_t n = 0;
    double step = 0;
    if (r.present("step")) {
      step = r.number("step", 1, 0, 1e300);
      if (!(step > 0)) r.fail("step", "must be > 0");
      if (to < from) r.fail("to", "must be >= from");
      const double span = (to - from) / step;
      if (span >= kMaxAxisValues) r.fail("step", "makes more than " + std::to_string(kMaxAxisValues) + " values");
      n = static_cast<std::size_t>(std::floor(span + 1e-9)) + 1;  // `to` included when on the grid
    } else {
      n = static_cast<std::size_t>(r.integer("count", 2, 1, static_cast<std::int64_t>(kMaxAxisValues)));
      step = n > 1 ? (to - from) / static_cast<double>(n - 1) : 0;
    }
    r.finish();
    const std::string origin = m.location("range");
    for (std::size_t i = 0; i < n; ++i) {
      const std::string t = number_text(from + step * static_cast<double>(i));
      a.values.push_back({t, t, origin});
    }
  }
  m.finish();
  return a;
}

std::vector<AxisGroup> read_axes(ConfigMap& top, const std::string& file) {
  std::vector<AxisGroup> groups;
  if (!top.present("axes") || !top.node("axes").IsSequence() || top.node("axes").size() == 0)
    top.fail("axes", "expected a list of axes, e.g. - {key: traffic.load, values: [0.2, 0.5]}");
  for (ConfigMap entry : top.list_of_maps("axes")) {
    if (entry.present("zip")) {
      AxisGroup g;
      for (ConfigMap m : entry.list_of_maps("zip")) g.push_back(read_axis(m, file));
      if (g.empty()) entry.fail("zip", "expected a list of axes to zip");
      for (const Axis& a : g)
        if (a.values.size() != g.front().values.size())
          entry.fail("zip", "zipped axes need the same number of values: " + g.front().key + " has " +
                                std::to_string(g.front().values.size()) + ", " + a.key + " has " +
                                std::to_string(a.values.size()));
      entry.finish();
      groups.push_back(std::move(g));
    } else {
      groups.push_back({read_axis(entry, file)});
    }
  }
  return groups;
}

}  // namespace

std::string yaml_mark(const std::string& file, const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  if (m.line < 0) return file;
  return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

std::vector<Override> set_overrides(ConfigMap& map, const std::string& key, const std::string& file,
                                    const std::shared_ptr<ConfigSource>& source) {
  std::vector<Override> out;
  const YAML::Node set = map.node(key);
  if (!set.IsDefined() || set.IsNull()) return out;
  if (!set.IsMap()) map.fail(key, "expected a mapping of dotted keys to values, e.g. simulation.duration: 20us");
  ConfigMap set_map(set, map.path().empty() ? key : map.path() + "." + key, source);
  for (auto it = set.begin(); it != set.end(); ++it) {
    const std::string k = it->first.Scalar();
    check_key(set_map, k, k);
    out.push_back({k + "=" + flow_yaml(it->second), yaml_mark(file, it->second)});
  }
  return out;
}

nlohmann::ordered_json SweepPoint::record() const {
  nlohmann::ordered_json a = nlohmann::ordered_json::object();
  for (const auto& [k, v] : axes) a[k] = v;
  return {{"point", index}, {"axes", a}, {"seed", seed}};
}

bool is_sweep_file(const std::string& file) {
  try {
    const YAML::Node n = YAML::LoadFile(file);
    return n.IsMap() && (n["base"].IsDefined() || n["axes"].IsDefined());
  } catch (const std::exception&) {
    return false;  // the configuration reader reports what is wrong with it
  }
}

namespace {

// `base:`, resolved against the sweep file's folder: a readable configuration, not a sweep file.
std::string read_base(ConfigMap& top, const std::string& file) {
  if (!top.present("base")) top.fail("base", "a sweep file names its base configuration: base: path/to/config.yaml");
  const std::string base = top.string("base", "");
  const std::string path = (fs::path(file).parent_path() / base).lexically_normal().string();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) top.fail("base", "cannot read '" + path + "'");
  if (is_sweep_file(path))
    top.fail("base", "'" + path + "' is a sweep file" + (fs::equivalent(path, file, ec) ? " (this one)" : "") +
                         "; base names the configuration every point starts from");
  return path;
}

// The overrides of every point: `set:` (each with its line), then the command line's.
std::vector<Override> fixed_overrides(ConfigMap& top, const std::string& file,
                                      const std::shared_ptr<ConfigSource>& source,
                                      const std::vector<std::string>& cli_overrides) {
  std::vector<Override> fixed = set_overrides(top, "set", file, source);
  for (const auto& o : cli_overrides) fixed.push_back({o, ""});
  return fixed;
}

// `seeds:`: a count (seeds 1..n) or a list of distinct seeds; none when absent.
std::vector<std::uint64_t> read_seeds(ConfigMap& top, const std::set<std::string>& axis_keys) {
  std::vector<std::uint64_t> seeds;
  if (!top.present("seeds")) return seeds;
  if (axis_keys.count("simulation.seed")) top.fail("seeds", "simulation.seed is already an axis");
  if (top.node("seeds").IsScalar()) {
    const auto n = top.integer("seeds", 1, 1, 10000);
    for (std::int64_t s = 1; s <= n; ++s) seeds.push_back(static_cast<std::uint64_t>(s));
    return seeds;
  }
  for (auto s : top.integer_list("seeds", {}, 0, std::numeric_limits<std::int64_t>::max(), 10000)) {
    if (std::find(seeds.begin(), seeds.end(), static_cast<std::uint64_t>(s)) != seeds.end())
      top.fail("seeds", "seed " + std::to_string(s) + " appears twice (the same points would run twice)");
    seeds.push_back(static_cast<std::uint64_t>(s));
  }
  if (seeds.empty()) top.fail("seeds", "expected a count or a non-empty list of seeds");
  return seeds;
}

// Combinations of value indices, one per axis group: cartesian (the first axis varies
// slowest) or zipped (all advance together).
std::vector<std::vector<std::size_t>> combinations(ConfigMap& top, const std::vector<AxisGroup>& groups,
                                                   const std::string& combine) {
  std::vector<std::vector<std::size_t>> combos;
  if (combine == "zip") {
    for (const auto& g : groups)
      if (g.front().values.size() != groups.front().front().values.size())
        top.fail("combine", "combine: zip needs axes of the same length: " + groups.front().front().key + " has " +
                                std::to_string(groups.front().front().values.size()) + ", " + g.front().key +
                                " has " + std::to_string(g.front().values.size()));
    for (std::size_t i = 0; i < groups.front().front().values.size(); ++i)
      combos.push_back(std::vector<std::size_t>(groups.size(), i));
    return combos;
  }
  std::size_t total = 1;
  for (const auto& g : groups) {
    total *= g.front().values.size();
    if (total > kMaxPoints) top.fail("axes", "more than " + std::to_string(kMaxPoints) + " points");
  }
  for (std::size_t c = 0; c < total; ++c) {
    std::vector<std::size_t> idx(groups.size());
    std::size_t rest = c;
    for (std::size_t g = groups.size(); g-- > 0;) {
      idx[g] = rest % groups[g].front().values.size();
      rest /= groups[g].front().values.size();
    }
    combos.push_back(idx);
  }
  return combos;
}

// A point per combination and seed: the fixed overrides, each axis' value, the seed.
void add_points(SweepSpec& spec, const std::vector<std::vector<std::size_t>>& combos,
                const std::vector<AxisGroup>& groups, const std::vector<std::uint64_t>& seeds,
                const std::string& seeds_origin, const std::vector<Override>& fixed) {
  for (const auto& combo : combos) {
    for (std::size_t s = 0; s < std::max<std::size_t>(1, seeds.size()); ++s) {
      SweepPoint p;
      p.index = spec.points.size();
      p.overrides = fixed;
      for (std::size_t g = 0; g < groups.size(); ++g)
        for (const Axis& a : groups[g]) {
          const AxisValue& v = a.values[combo[g]];
          p.axes.emplace_back(a.key, v.text);
          p.overrides.push_back({a.key + "=" + v.yaml, v.origin});
        }
      if (!seeds.empty()) {
        p.seed = seeds[s];
        p.overrides.push_back({"simulation.seed=" + std::to_string(p.seed), seeds_origin});
      }
      spec.points.push_back(std::move(p));
    }
  }
}

}  // namespace

SweepSpec read_sweep_file(const std::string& file, const std::vector<std::string>& cli_overrides) {
  auto source = std::make_shared<ConfigSource>();
  source->file = file;
  ConfigMap top(load_yaml_file(file), "", source);
  SweepSpec spec;
  spec.file = file;
  // Unknown top-level keys first: `axis:` is named as a typo of `axes:`, not as a missing axes list.
  for (const char* key : {"base", "set", "axes", "combine", "seeds", "packet_csv", "processes"}) top.has(key);
  top.finish();
  spec.base = read_base(top, file);
  const std::vector<Override> fixed = fixed_overrides(top, file, source, cli_overrides);

  const std::vector<AxisGroup> groups = read_axes(top, file);
  std::set<std::string> keys;
  for (const auto& g : groups)
    for (const auto& a : g) {
      if (!keys.insert(a.key).second) top.fail("axes", "axis '" + a.key + "' appears twice");
      spec.axis_keys.push_back(a.key);
    }
  const std::string combine = top.choice("combine", "cartesian", {"cartesian", "zip"});
  const std::string seeds_origin = top.present("seeds") ? top.location("seeds") : "";
  const std::vector<std::uint64_t> seeds = read_seeds(top, keys);
  spec.packet_csv = top.boolean("packet_csv", true);
  spec.processes = static_cast<int>(top.integer("processes", 1, 1, kMaxProcesses));
  if (top.present("processes")) spec.processes_origin = top.location("processes");
  top.finish();

  const std::vector<std::vector<std::size_t>> combos = combinations(top, groups, combine);
  if (combos.size() * std::max<std::size_t>(1, seeds.size()) > kMaxPoints)
    top.fail("seeds", "more than " + std::to_string(kMaxPoints) + " points");
  add_points(spec, combos, groups, seeds, seeds_origin, fixed);
  return spec;
}

SweepSpec load_sweep(const std::string& config, const std::vector<double>& loads,
                     const std::vector<std::string>& cli_overrides) {
  SweepSpec spec;
  spec.file = config;
  spec.base = config;
  spec.axis_keys = {"traffic.load"};
  spec.packet_csv = false;
  for (double load : loads) {
    SweepPoint p;
    p.index = spec.points.size();
    for (const auto& o : cli_overrides) p.overrides.push_back({o, ""});
    const std::string t = number_text(load);
    p.axes.emplace_back("traffic.load", t);
    p.overrides.push_back({"traffic.load=" + t, "--loads"});
    spec.points.push_back(std::move(p));
  }
  return spec;
}

}  // namespace fabricsim::sim
