#include "sim/config_reader.h"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <tuple>

namespace fabricsim::sim {

namespace {

std::string quote(const std::string& s) { return "'" + s + "'"; }

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Edit distance, for "did you mean" on misspelt keys and names.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string suggestion(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = 3;  // only close matches
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best.empty() ? "" : " (did you mean " + quote(best) + "?)";
}

std::string mark_text(const std::string& file, const YAML::Mark& m) {
  if (m.line < 0) return file;
  return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

}  // namespace

ConfigError::ConfigError(const std::string& location, const std::string& key, const std::string& what)
    : std::runtime_error(location + ": " + (key.empty() ? "" : key + ": ") + what), location_(location), key_(key) {}

ConfigMap::ConfigMap(YAML::Node node, std::string path, std::shared_ptr<const ConfigSource> source)
    : node_(std::move(node)), path_(std::move(path)), source_(std::move(source)) {
  if (node_.IsDefined() && !node_.IsNull() && !node_.IsMap())
    throw ConfigError(location_of(""), path_.empty() ? "(top level)" : path_,
                      "expected a mapping of keys to values");
  if (!node_.IsMap()) return;
  std::set<std::string> seen;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string k = it->first.Scalar();
    if (!seen.insert(k).second)
      throw ConfigError(where(it->first), child_path(k), "key appears twice");
  }
}

std::string ConfigMap::child_path(const std::string& key) const {
  if (key.empty()) return path_;
  return path_.empty() ? key : path_ + "." + key;
}

std::optional<std::string> ConfigMap::override_origin(const std::string& key) const {
  const std::string full = child_path(key);
  for (const auto& [o, origin] : source_->overridden)
    if (full == o || full.rfind(o + ".", 0) == 0 || full.rfind(o + "[", 0) == 0 || o.rfind(full + ".", 0) == 0)
      return origin.empty() ? "--set " + o : origin;
  return std::nullopt;
}

std::string ConfigMap::element_where(const std::string& key, const YAML::Node& element) const {
  // A list given with --set has marks inside the option's text, not the file's.
  if (auto origin = override_origin(key)) return *origin;
  return where(element);
}

std::string ConfigMap::location_of(const std::string& key) const {
  if (auto origin = override_origin(key)) return *origin;
  if (node_.IsMap() && !key.empty())
    for (auto it = node_.begin(); it != node_.end(); ++it)
      if (it->first.Scalar() == key)
        // An empty value's mark points at the next token; blame the key instead.
        return where(it->second.IsNull() ? it->first : it->second);
  return where(node_);
}

std::string ConfigMap::where(const YAML::Node& node) const { return mark_text(source_->file_of(node), node.Mark()); }

void ConfigMap::fail(const std::string& key, const std::string& what) const {
  throw ConfigError(location_of(key), child_path(key), what);
}

std::string ConfigMap::warning(const std::string& key, const std::string& what) const {
  return ConfigError(location_of(key), child_path(key), what).what();
}

bool ConfigMap::has(const std::string& key) const {
  used_.insert(key);
  if (!node_.IsMap()) return false;
  const YAML::Node& n = node_;
  return n[key].IsDefined();
}

YAML::Node ConfigMap::node(const std::string& key) {
  if (!has(key)) return YAML::Node();
  const YAML::Node& n = node_;
  return n[key];
}

bool ConfigMap::present(const std::string& key) const {
  if (!has(key)) return false;
  const YAML::Node& n = node_;
  return !n[key].IsNull();
}

YAML::Node ConfigMap::scalar(const std::string& key, const char* expected) const {
  const YAML::Node& n = node_;
  YAML::Node v = n[key];
  if (!v.IsScalar()) fail(key, std::string("expected ") + expected + ", got a " + (v.IsMap() ? "mapping" : v.IsSequence() ? "list" : "null value"));
  return v;
}

ConfigMap ConfigMap::map(const std::string& key) {
  if (!has(key)) return ConfigMap(YAML::Node(), child_path(key), source_);
  const YAML::Node& n = node_;
  YAML::Node v = n[key];
  if (!v.IsMap() && !v.IsNull()) fail(key, "expected a mapping of keys to values");
  return ConfigMap(v, child_path(key), source_);
}

std::vector<ConfigMap> ConfigMap::list_of_maps(const std::string& key) {
  std::vector<ConfigMap> out;
  if (!has(key)) return out;
  const YAML::Node& n = node_;
  YAML::Node v = n[key];
  if (v.IsNull()) return out;  // `key:` or `key: null` is an empty list
  if (!v.IsSequence()) fail(key, "expected a list");
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].IsMap()) throw ConfigError(element_where(key, v[i]), child_path(key) + "[" + std::to_string(i) + "]", "expected a mapping of keys to values");
    out.emplace_back(v[i], child_path(key) + "[" + std::to_string(i) + "]", source_);
  }
  return out;
}

std::int64_t ConfigMap::required_integer(const std::string& key, std::int64_t min, std::int64_t max) {
  if (!has(key)) fail("", "missing required key " + quote(key));
  return integer(key, min, min, max);
}

std::int64_t ConfigMap::integer(const std::string& key, std::int64_t def, std::int64_t min, std::int64_t max) {
  if (!has(key)) return def;
  const std::string text = scalar(key, "an integer").Scalar();
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  const std::string range = " in " + std::to_string(min) + ".." + std::to_string(max);
  if (ec != std::errc() || end != text.data() + text.size())
    fail(key, "expected an integer" + range + ", got " + quote(text));
  if (v < min || v > max) fail(key, "must be an integer" + range + ", got " + quote(text));
  return v;
}

double ConfigMap::number(const std::string& key, double def, double min, double max) {
  if (!has(key)) return def;
  const std::string text = scalar(key, "a number").Scalar();
  double v = 0;
  // from_chars rejects a leading '+', which YAML users write for positive numbers.
  const std::size_t skip = !text.empty() && text[0] == '+' ? 1 : 0;
  const auto [end, ec] = std::from_chars(text.data() + skip, text.data() + text.size(), v);
  std::ostringstream range;
  range << " in [" << min << ", " << max << "]";
  if (ec != std::errc() || end != text.data() + text.size())
    fail(key, "expected a number" + range.str() + ", got " + quote(text));
  if (!(v >= min && v <= max)) fail(key, "must be a number" + range.str() + ", got " + quote(text));
  return v;
}

bool ConfigMap::boolean(const std::string& key, bool def) {
  if (!has(key)) return def;
  const std::string text = scalar(key, "true or false").Scalar();
  if (text == "true") return true;
  if (text == "false") return false;
  fail(key, "expected true or false, got " + quote(text));
}

std::vector<std::int64_t> ConfigMap::integer_list(const std::string& key, const std::vector<std::int64_t>& def,
                                                  std::int64_t min, std::int64_t max, std::size_t max_items) {
  if (!has(key)) return def;
  const YAML::Node& n = node_;
  YAML::Node v = n[key];
  if (!v.IsSequence()) fail(key, "expected a list of integers such as [0, 1]");
  if (v.size() > max_items) fail(key, "at most " + std::to_string(max_items) + " entries, got " + std::to_string(v.size()));
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string text = v[i].IsScalar() ? v[i].Scalar() : std::string("<not a scalar>");
    std::int64_t x = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
    if (ec != std::errc() || end != text.data() + text.size() || x < min || x > max)
      throw ConfigError(element_where(key, v[i]), child_path(key) + "[" + std::to_string(i) + "]",
                        "must be an integer in " + std::to_string(min) + ".." + std::to_string(max) + ", got " + quote(text));
    out.push_back(x);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> ConfigMap::name_pairs(const std::string& key) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!has(key)) return out;
  const YAML::Node& n = node_;
  YAML::Node v = n[key];
  if (!v.IsSequence()) fail(key, "expected a list of pairs such as [[ep0, sw0], [sw0, sw1]]");
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].IsSequence() || v[i].size() != 2 || !v[i][0].IsScalar() || !v[i][1].IsScalar())
      throw ConfigError(element_where(key, v[i]), child_path(key) + "[" + std::to_string(i) + "]",
                        "expected a pair of node names such as [ep0, sw0]");
    out.emplace_back(v[i][0].Scalar(), v[i][1].Scalar());
  }
  return out;
}

std::vector<hw::Size> ConfigMap::size_list(const std::string& key, hw::Size min, hw::Size max,
                                           const std::string& all_word) {
  std::vector<hw::Size> out;
  if (!has(key)) return out;
  const YAML::Node& n = node_;
  YAML::Node v = n[key];
  if (v.IsScalar() && v.Scalar() == all_word) return out;
  if (!v.IsSequence() || v.size() == 0)
    fail(key, "expected a non-empty list of sizes such as [2B, 4KiB] or '" + all_word + "'");
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string loc = element_where(key, v[i]);
    const std::string path = child_path(key) + "[" + std::to_string(i) + "]";
    if (!v[i].IsScalar()) throw ConfigError(loc, path, "expected a size such as '4KiB'");
    hw::Size s;
    try {
      s = hw::parse_size(v[i].Scalar());
    } catch (const hw::UnitError& e) {
      throw ConfigError(loc, path, e.what());
    }
    if (s < min || s > max)
      throw ConfigError(loc, path, "must be a size in " + hw::to_string(min) + ".." + hw::to_string(max) + ", got '" + v[i].Scalar() + "'");
    out.push_back(s);
  }
  return out;
}

std::vector<bool> ConfigMap::boolean_list(const std::string& key, const std::vector<bool>& def, std::size_t max_items) {
  if (!has(key)) return def;
  const YAML::Node& n = node_;
  YAML::Node v = n[key];
  if (!v.IsSequence()) fail(key, "expected a list of true/false such as [false, true]");
  if (v.size() > max_items) fail(key, "at most " + std::to_string(max_items) + " entries, got " + std::to_string(v.size()));
  std::vector<bool> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string text = v[i].IsScalar() ? v[i].Scalar() : std::string("<not a scalar>");
    if (text != "true" && text != "false")
      throw ConfigError(element_where(key, v[i]), child_path(key) + "[" + std::to_string(i) + "]",
                        "expected true or false, got " + quote(text));
    out.push_back(text == "true");
  }
  return out;
}

std::string ConfigMap::string(const std::string& key, const std::string& def) {
  if (!has(key)) return def;
  return scalar(key, "a string").Scalar();
}

std::string ConfigMap::choice(const std::string& key, const std::string& def, const std::vector<std::string>& allowed) {
  const std::string v = string(key, def);
  if (std::find(allowed.begin(), allowed.end(), v) == allowed.end())
    fail(key, "unknown value " + quote(v) + "; allowed: " + join(allowed) + suggestion(v, allowed));
  return v;
}

template <class T>
T ConfigMap::unit_value(const std::string& key, T def, T min, T max, T (*parse)(std::string_view), const char* what) {
  if (!has(key)) return def;
  const std::string text = scalar(key, what).Scalar();
  T v;
  try {
    v = parse(text);
  } catch (const hw::UnitError& e) {
    fail(key, e.what());
  }
  if (v < min || v > max)
    fail(key, std::string("must be a ") + what + " in " + hw::to_string(min) + ".." + hw::to_string(max) + ", got " + quote(text));
  return v;
}

hw::Bandwidth ConfigMap::bandwidth(const std::string& key, hw::Bandwidth def, hw::Bandwidth min, hw::Bandwidth max) {
  return unit_value(key, def, min, max, &hw::parse_bandwidth, "bandwidth");
}
hw::Time ConfigMap::time(const std::string& key, hw::Time def, hw::Time min, hw::Time max) {
  return unit_value(key, def, min, max, &hw::parse_time, "time");
}
hw::Size ConfigMap::size(const std::string& key, hw::Size def, hw::Size min, hw::Size max) {
  return unit_value(key, def, min, max, &hw::parse_size, "size");
}
hw::Length ConfigMap::length(const std::string& key, hw::Length def, hw::Length min, hw::Length max) {
  return unit_value(key, def, min, max, &hw::parse_length, "length");
}
hw::Frequency ConfigMap::frequency(const std::string& key, hw::Frequency def, hw::Frequency min, hw::Frequency max) {
  return unit_value(key, def, min, max, &hw::parse_frequency, "frequency");
}

namespace {

const hw::ParamSpec& typed(const hw::ParamSpec& spec, hw::ParamType type) {
  if (spec.type != type)
    throw std::logic_error("parameter " + spec.key + " is a " + std::string(hw::to_string(spec.type)) + ", read as a " +
                           std::string(hw::to_string(type)));
  return spec;
}

}  // namespace

std::int64_t ConfigMap::integer(const hw::ParamSpec& spec, std::int64_t def, std::optional<std::int64_t> max) {
  const auto& s = typed(spec, hw::ParamType::integer);
  return integer(s.key, def, s.lo<std::int64_t>(), max.value_or(s.hi<std::int64_t>()));
}
std::int64_t ConfigMap::required_integer(const hw::ParamSpec& spec, std::optional<std::int64_t> max) {
  const auto& s = typed(spec, hw::ParamType::integer);
  return required_integer(s.key, s.lo<std::int64_t>(), max.value_or(s.hi<std::int64_t>()));
}
std::vector<hw::Size> ConfigMap::size_list(const hw::ParamSpec& spec, const std::string& all_word) {
  const auto& s = typed(spec, hw::ParamType::list);
  return size_list(s.key, s.lo<hw::Size>(), s.hi<hw::Size>(), all_word);
}
double ConfigMap::number(const hw::ParamSpec& spec, double def) {
  const auto& s = typed(spec, hw::ParamType::number);
  return number(s.key, def, s.lo<double>(), s.hi<double>());
}
bool ConfigMap::boolean(const hw::ParamSpec& spec, bool def) {
  return boolean(typed(spec, hw::ParamType::boolean).key, def);
}
std::string ConfigMap::string(const hw::ParamSpec& spec, const std::string& def) {
  return string(typed(spec, hw::ParamType::text).key, def);
}
std::string ConfigMap::choice(const hw::ParamSpec& spec, const std::string& def) {
  const auto& s = typed(spec, hw::ParamType::name);
  return choice(s.key, def, s.choices);
}
std::vector<std::int64_t> ConfigMap::integer_list(const hw::ParamSpec& spec, const std::vector<std::int64_t>& def,
                                                  std::size_t max_items, std::optional<std::int64_t> max) {
  const auto& s = typed(spec, hw::ParamType::list);
  return integer_list(s.key, def, s.lo<std::int64_t>(), max.value_or(s.hi<std::int64_t>()), max_items);
}
template <class Q>
Q ConfigMap::quantity(const hw::ParamSpec& spec, Q def, hw::ParamType type, Q (ConfigMap::*read)(const std::string&, Q, Q, Q)) {
  const auto& s = typed(spec, type);
  return (this->*read)(s.key, def, s.lo<Q>(), s.hi<Q>());
}

hw::Size ConfigMap::size(const hw::ParamSpec& spec, hw::Size def) {
  return quantity(spec, def, hw::ParamType::size, &ConfigMap::size);
}
hw::Time ConfigMap::time(const hw::ParamSpec& spec, hw::Time def) {
  return quantity(spec, def, hw::ParamType::time, &ConfigMap::time);
}
hw::Bandwidth ConfigMap::bandwidth(const hw::ParamSpec& spec, hw::Bandwidth def) {
  return quantity(spec, def, hw::ParamType::bandwidth, &ConfigMap::bandwidth);
}
hw::Length ConfigMap::length(const hw::ParamSpec& spec, hw::Length def) {
  return quantity(spec, def, hw::ParamType::length, &ConfigMap::length);
}
hw::Frequency ConfigMap::frequency(const hw::ParamSpec& spec, hw::Frequency def) {
  return quantity(spec, def, hw::ParamType::frequency, &ConfigMap::frequency);
}

void ConfigMap::finish() const {
  if (!node_.IsMap()) return;
  std::vector<std::string> allowed(used_.begin(), used_.end());
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string k = it->first.Scalar();
    if (used_.count(k)) continue;
    const std::string loc = location_of(k) == where(it->second)
                                ? where(it->first)
                                : location_of(k);
    throw ConfigError(loc, child_path(k), "unknown key; allowed keys here: " + join(allowed) + suggestion(k, allowed));
  }
}

namespace {

// A document is bounded before anything walks it: at most kMaxValues values (keys,
// scalars, lists, mappings) and kMaxNesting levels. First as written, from the parser's
// events before any node is built, so a file over a limit costs only the text up to where
// it crossed it (yaml-cpp's own guard, at about 500 levels, says just "bad file"). Then
// with YAML aliases expanded: a few lines can name 10^9 values ("billion laughs") or a
// list can contain itself, and key checks, includes, --set and the results.json echo all
// walk the expanded tree.
constexpr std::size_t kMaxValues = 1000000;
constexpr std::size_t kMaxNesting = 64;

// The dotted key of a path such as {".traffic", ".flows", "[7]"}: its first levels say
// where (a self-containing list would print 64 of them).
std::string path_key(const std::vector<std::string>& path) {
  std::string key;
  for (std::size_t i = 0; i < path.size() && i < 6; ++i) key += path[i];
  if (path.size() > 6) key += "...";
  if (!key.empty() && key[0] == '.') key.erase(0, 1);
  return key.empty() ? "(top level)" : key;
}

std::string too_many_values(const std::string& key) {
  std::string what = "more than " + std::to_string(kMaxValues) +
                     " values (keys, scalars, lists and mappings), the most a configuration holds";
  if (key.rfind("traffic.flows", 0) == 0)
    what += "; traffic.flows lists flows one by one: for traffic among many endpoints use traffic.pattern "
            "uniform, permutation, hotspot or incast";
  if (key.rfind("topology.cables", 0) == 0)
    what += "; for a large regular fabric use topology.kind leaf_spine, fat_tree, kary_ntree or rail_optimized";
  return what;
}

// Counts the values and tracks the key path of the parser's events (no nodes built).
class ShapeCheck : public YAML::EventHandler {
 public:
  explicit ShapeCheck(const std::string& file) : file_(file) {}
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { value(m, "?"); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { value(m, "?"); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string& v) override { value(m, v); }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    value(m, "?");
    levels_.push_back({false, 0, ""});
  }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    value(m, "?");
    levels_.push_back({true, 0, ""});
  }
  void OnSequenceEnd() override { levels_.pop_back(); }
  void OnMapEnd() override { levels_.pop_back(); }

 private:
  struct Level {
    bool map;
    std::size_t items;  // events seen directly inside: keys and values alternate in a map
    std::string key;    // a map's latest key
  };
  void value(const YAML::Mark& m, const std::string& text) {
    if (!levels_.empty()) {
      Level& l = levels_.back();
      if (l.map && l.items % 2 == 0) l.key = text;
      ++l.items;
    }
    if (levels_.size() > kMaxNesting)
      fail(m, "nested more than " + std::to_string(kMaxNesting) + " deep, the most a configuration may nest");
    if (++count_ > kMaxValues) fail(m, too_many_values(key()));
  }
  std::string key() const {
    std::vector<std::string> path;
    for (const Level& l : levels_) path.push_back(l.map ? "." + l.key : "[" + std::to_string(l.items - 1) + "]");
    return path_key(path);
  }
  [[noreturn]] void fail(const YAML::Mark& m, const std::string& what) const {
    throw ConfigError(mark_text(file_, m), key(), what);
  }

  std::string file_;
  std::vector<Level> levels_;
  std::size_t count_ = 0;
};

// The document's size and nesting as written, checked while the parser reads `text`.
void check_shape(const std::string& text, const std::string& file) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  ShapeCheck shape(file);
  while (parser.HandleNextDocument(shape)) {
  }
}

// yaml-cpp 0.7 accepts a quoted scalar that is never closed: the rest of the input
// becomes its value. A quoted scalar starts at its mark with the quote; true when
// the text after it has the closing quote ('' and \" are escapes, not ends).
bool quote_closed(const std::string& text, std::size_t pos) {
  if (pos >= text.size() || (text[pos] != '"' && text[pos] != '\'')) return true;
  const char q = text[pos];
  for (std::size_t i = pos + 1; i < text.size(); ++i) {
    if (q == '"' && text[i] == '\\') {
      ++i;
    } else if (text[i] == q) {
      if (q == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
        ++i;
      } else {
        return true;
      }
    }
  }
  return false;
}

void check_expansion(const YAML::Node& n, const std::string& file, const std::string& text,
                     std::vector<std::string>& path, std::size_t& count) {
  auto fail = [&](const std::string& what) { throw ConfigError(mark_text(file, n.Mark()), path_key(path), what); };
  // check_shape passed: what goes over a limit here does so through aliases.
  if (++count > kMaxValues)
    fail("more than " + std::to_string(kMaxValues) + " values once YAML aliases are expanded (an alias bomb?)");
  if (path.size() > kMaxNesting)
    fail("nested more than " + std::to_string(kMaxNesting) + " deep (an alias that contains itself?)");
  if (n.IsScalar() && n.Tag() == "!" && !quote_closed(text, static_cast<std::size_t>(n.Mark().pos)))
    fail(std::string("YAML syntax error: the quoted value starting here is never closed (missing ") +
         text[static_cast<std::size_t>(n.Mark().pos)] + ")");
  if (n.IsMap()) {
    for (auto it = n.begin(); it != n.end(); ++it) {
      path.push_back("." + (it->first.IsScalar() ? it->first.Scalar() : std::string("?")));
      check_expansion(it->first, file, text, path, count);
      check_expansion(it->second, file, text, path, count);
      path.pop_back();
    }
  } else if (n.IsSequence()) {
    std::size_t i = 0;
    for (const auto& e : n) {
      path.push_back("[" + std::to_string(i++) + "]");
      check_expansion(e, file, text, path, count);
      path.pop_back();
    }
  }
}

// Every quoted value closed, the alias expansion bounded.
void check_document(const YAML::Node& root, const std::string& name, const std::string& text) {
  std::vector<std::string> path;
  std::size_t count = 0;
  check_expansion(root, name, text, path, count);
}

// One YAML document from `text` (the file `name`, for messages), checked: a single
// document, every quoted value closed, the alias expansion bounded.
YAML::Node parse_yaml(const std::string& text, const std::string& name) {
  std::vector<YAML::Node> docs;
  try {
    check_shape(text, name);
    docs = YAML::LoadAll(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(mark_text(name, e.mark), "", "YAML syntax error: " + e.msg);
  }
  // A trailing '---' with nothing after it is an empty document, not a second one.
  const auto second = docs.size() < 2 ? docs.end()
                                      : std::find_if(docs.begin() + 1, docs.end(), [](const YAML::Node& d) { return !d.IsNull(); });
  if (second != docs.end())
    throw ConfigError(mark_text(name, second->Mark()), "",
                      "a second YAML document starts here (after a '---' line); a configuration is one document: "
                      "merge the two, or put shared parts in a file and use include:");
  YAML::Node root = docs.empty() ? YAML::Node() : docs[0];
  check_document(root, name, text);
  return root;
}

}  // namespace

namespace {

// A configuration holds at most kMaxValues values; a file larger than this is refused
// before it is read (a value takes a few bytes, so this leaves room for comments).
constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t{64} << 20;

// The text of the configuration file `path`; nullopt with `why` set when it cannot be one:
// a folder, a device or pipe (/dev/zero would never end), too large, or not readable.
std::optional<std::string> read_config_text(const std::string& path, std::string& why) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st)) {
    why = "is a directory, not a YAML file";
  } else if (fs::exists(st) && !fs::is_regular_file(st)) {
    why = "is not a regular file (a device, pipe or socket), not a YAML file";
  } else if (const auto bytes = fs::file_size(path, ec); !ec && bytes > kMaxFileBytes) {
    why = "is larger than " + std::to_string(kMaxFileBytes >> 20) + " MiB, the most a configuration file may be " +
          "(it holds at most " + std::to_string(kMaxValues) + " values)";
  } else if (std::ifstream in(path, std::ios::binary); in.is_open()) {
    std::ostringstream text;
    text << in.rdbuf();  // an empty file inserts nothing, which is no error
    return std::move(text).str();
  } else {
    why = std::string("cannot be opened: ") + std::strerror(errno);
  }
  return std::nullopt;
}

}  // namespace

YAML::Node load_yaml_file(const std::string& file) {
  std::string why;
  const auto text = read_config_text(file, why);
  if (!text) throw ConfigError(file, "", "the configuration file " + why);
  YAML::Node root = parse_yaml(*text, file);
  if (root.IsNull()) throw ConfigError(file, "", "no configuration: the file is empty or only comments ('{}' runs every default)");
  return root;
}

std::string ConfigSource::file_of(const YAML::Node& node) const {
  // Only error paths ask, so a linear search over the included nodes is fine.
  if (!node.IsDefined() || included.empty()) return file;
  for (const auto& [n, f] : included)
    if (n.is(node)) return f;
  return file;
}

void ConfigSource::add_nodes(const YAML::Node& root, const std::string& path) {
  // A node is identified by where it starts and its type (a map and its first key
  // start at the same place); an alias is the node it names, so it is seen once.
  std::set<std::tuple<int, int, int, int>> seen;
  std::vector<YAML::Node> todo{root};
  while (!todo.empty()) {
    const YAML::Node n = todo.back();
    todo.pop_back();
    const YAML::Mark m = n.Mark();
    if (!seen.emplace(m.pos, m.line, m.column, static_cast<int>(n.Type())).second) continue;
    included.emplace_back(n, path);
    if (n.IsMap()) {
      for (auto it = n.begin(); it != n.end(); ++it) {
        todo.push_back(it->first);
        todo.push_back(it->second);
      }
    } else if (n.IsSequence()) {
      for (const auto& e : n) todo.push_back(e);
    }
  }
}

namespace {

// Merges `base` under `over` in place: a key of `base` absent (or null) in `over` is
// moved over with its nodes (so its file and line stay known); where both hold a map,
// the maps merge key by key; otherwise `over` wins (lists are replaced, not appended).
void merge_under(YAML::Node over, const YAML::Node& base, const std::string& file, int depth = 0) {
  // Maps that contain themselves through aliases would recurse forever.
  if (depth > 64) throw ConfigError(mark_text(file, base.Mark()), "include", "mappings nested more than 64 deep");
  for (auto it = base.begin(); it != base.end(); ++it) {
    const std::string k = it->first.Scalar();
    const YAML::Node& view = over;
    YAML::Node mine = view[k];
    if (!mine.IsDefined()) {
      over.force_insert(it->first, it->second);
    } else if (mine.IsNull()) {
      over[k] = it->second;
    } else if (mine.IsMap() && it->second.IsMap()) {
      merge_under(mine, it->second, file, depth + 1);
    }
  }
}

std::string chain_text(const std::vector<std::string>& chain, const std::string& last) {
  std::string out;
  for (const auto& c : chain) out += c + " -> ";
  return out + last;
}

// Resolves the `include:` key of `root` (read from `file`) and merges the included
// documents under it. `chain`: the files being included, outermost first, for cycles.
void resolve_includes(YAML::Node& root, const std::string& file, std::vector<std::string>& chain,
                      std::vector<std::string>& chain_ids, ConfigSource& source) {
  namespace fs = std::filesystem;
  if (!root.IsMap()) return;
  const YAML::Node& view = root;
  const YAML::Node inc = view["include"];
  if (!inc.IsDefined()) return;
  auto fail = [&](const YAML::Node& at, const std::string& what) {
    throw ConfigError(mark_text(file, at.Mark()), "include", what);
  };
  std::vector<YAML::Node> entries;
  if (inc.IsScalar()) {
    entries.push_back(inc);
  } else if (inc.IsSequence() && inc.size() > 0) {
    for (const auto& e : inc) entries.push_back(e);
  } else {
    fail(inc.IsNull() ? root : inc, "expected a file path or a non-empty list of file paths");
  }
  YAML::Node merged;  // the included documents merged, later entries winning
  for (const YAML::Node& e : entries) {
    if (!e.IsScalar() || e.Scalar().empty()) fail(e, "expected a file path, got a " + std::string(e.IsMap() ? "mapping" : e.IsSequence() ? "list" : "null value"));
    const fs::path rel(e.Scalar());
    const std::string path = (rel.is_absolute() ? rel : fs::path(file).parent_path() / rel).lexically_normal().string();
    std::error_code ec;
    const std::string id = fs::weakly_canonical(path, ec).string();
    for (const auto& c : chain_ids)
      if (c == (ec ? path : id)) fail(e, "include cycle: " + chain_text(chain, path));
    std::string why;
    const auto text = read_config_text(path, why);
    if (!text) fail(e, "included file '" + path + "' " + why);
    YAML::Node doc = parse_yaml(*text, path);
    if (!doc.IsMap()) throw ConfigError(mark_text(path, doc.Mark()), "(top level)", "an included file must be a mapping of keys to values");
    source.add_nodes(doc, path);
    chain.push_back(path);
    chain_ids.push_back(ec ? path : id);
    resolve_includes(doc, path, chain, chain_ids, source);
    chain.pop_back();
    chain_ids.pop_back();
    if (merged.IsMap()) merge_under(doc, merged, path);
    merged = doc;
  }
  root.remove("include");
  merge_under(root, merged, file);
}

ConfigDocument resolve_document(YAML::Node root, const std::string& file) {
  ConfigDocument d;
  d.root = root;
  d.source = std::make_shared<ConfigSource>();
  d.source->file = file;
  std::error_code ec;
  const std::string id = std::filesystem::weakly_canonical(file, ec).string();
  std::vector<std::string> chain{file}, chain_ids{ec ? file : id};
  resolve_includes(d.root, file, chain, chain_ids, *d.source);
  return d;
}

}  // namespace

ConfigDocument load_document(const std::string& file) { return resolve_document(load_yaml_file(file), file); }

ConfigDocument parse_document(const std::string& yaml, const std::string& name) {
  return resolve_document(parse_yaml(yaml, name), name);
}

std::string yaml_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string apply_override(YAML::Node& root, const std::string& assignment, const std::string& origin) {
  const std::string where = origin.empty() ? "--set " + assignment : origin;
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError(where, "", "expected path.to.key=value");
  const std::string path = assignment.substr(0, eq);
  const std::string value = assignment.substr(eq + 1);
  std::vector<std::string> keys;
  std::stringstream ss(path);
  for (std::string k; std::getline(ss, k, '.');) {
    if (k.empty()) throw ConfigError(where, path, "empty key in path");
    keys.push_back(k);
  }
  YAML::Node parsed;
  try {
    check_shape(value, "--set " + path);
    parsed = YAML::Load(value);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(where, path, "cannot parse value: " + e.msg);
  }
  check_document(parsed, "--set " + path, value);
  if (!root.IsDefined() || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
  // Walk by reset() so each step refers to the existing child, not a copy.
  YAML::Node cur = root;
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    if (!cur[keys[i]].IsDefined() || cur[keys[i]].IsNull()) {
      cur[keys[i]] = YAML::Node(YAML::NodeType::Map);
    } else if (!cur[keys[i]].IsMap()) {
      throw ConfigError(where, path, quote(keys[i]) + " is not a mapping");
    }
    // reset() rebinds `cur` to the child itself; assignment would copy into it.
    YAML::Node child = cur[keys[i]];
    cur.reset(child);
  }
  cur[keys.back()] = parsed;
  return path;
}

}  // namespace fabricsim::sim
