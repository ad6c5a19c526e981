#include "hw/param_spec.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <limits>

namespace fabricsim::hw {

namespace {

std::int64_t parse_integer(const std::string& text, std::int64_t none) {
  if (text.empty()) return none;
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    throw std::logic_error("parameter bound '" + text + "' is not an integer");
  return v;
}

double parse_number(const std::string& text, double none) {
  if (text.empty()) return none;
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    throw std::logic_error("parameter bound '" + text + "' is not a number");
  return v;
}

template <class Q>
Q parse_bound(const std::string& text, Q (*parse)(std::string_view)) {
  if (text.empty()) throw std::logic_error("a quantity parameter needs both bounds");
  return parse(text);
}

std::string quoted_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "`" : ", `") + n + "`";
  return out;
}

std::string type_text(const ParamSpec& p) {
  if (p.type == ParamType::list) return "list of " + p.unit;
  if (p.unit.empty()) return std::string(to_string(p.type));
  return std::string(to_string(p.type)) + " [" + p.unit + "]";
}

bool is_scalar(ParamType t) { return t != ParamType::section && t != ParamType::list && t != ParamType::text; }

// A scalar key without a default must be given.
std::string default_text(const ParamSpec& p) {
  if (p.type == ParamType::section && p.def.empty()) return "see below";
  if (p.def.empty()) return is_scalar(p.type) ? "required" : "empty";
  if (p.def.front() == '`') return p.def;  // another key's value
  return "`" + p.def + "`";
}

std::string allowed_text(const ParamSpec& p) {
  std::string range = p.type == ParamType::name ? quoted_names(p.choices) : p.range_text();
  if (p.note.empty()) return range;
  return range.empty() ? p.note : range + "; " + p.note;
}

}  // namespace

std::string_view to_string(ParamType t) {
  switch (t) {
    case ParamType::integer: return "integer";
    case ParamType::number: return "number";
    case ParamType::boolean: return "boolean";
    case ParamType::name: return "name";
    case ParamType::text: return "text";
    case ParamType::size: return "size";
    case ParamType::time: return "time";
    case ParamType::bandwidth: return "bandwidth";
    case ParamType::length: return "length";
    case ParamType::frequency: return "frequency";
    case ParamType::section: return "map";
    case ParamType::list: return "list";
  }
  return "?";
}

std::int64_t ParamSpec::bound(const std::string& text, std::int64_t*, bool low) {
  return parse_integer(text, low ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max());
}
double ParamSpec::bound(const std::string& text, double*, bool low) {
  return parse_number(text, (low ? -1 : 1) * std::numeric_limits<double>::infinity());
}
Size ParamSpec::bound(const std::string& text, Size*, bool) { return parse_bound(text, &parse_size); }
Time ParamSpec::bound(const std::string& text, Time*, bool) { return parse_bound(text, &parse_time); }
Bandwidth ParamSpec::bound(const std::string& text, Bandwidth*, bool) { return parse_bound(text, &parse_bandwidth); }
Length ParamSpec::bound(const std::string& text, Length*, bool) { return parse_bound(text, &parse_length); }
Frequency ParamSpec::bound(const std::string& text, Frequency*, bool) { return parse_bound(text, &parse_frequency); }

std::string ParamSpec::range_text() const {
  if (type == ParamType::name) return quoted_names(choices);
  if (min.empty() && max.empty()) return "";
  return min + ".." + max;
}

void ParamSpec::check(std::int64_t v) const {
  if (v < lo<std::int64_t>() || v > hi<std::int64_t>()) out_of_range();
}

void ParamSpec::check(double v) const {
  if (!(v >= lo<double>() && v <= hi<double>())) out_of_range();
}

void ParamSpec::out_of_range() const {
  throw std::invalid_argument(key + " must be in " + range_text() + (unit.empty() ? "" : " " + unit));
}

const ParamSpec& ParamBlock::operator[](std::string_view key) const {
  for (const auto& p : params)
    if (p.key == key) return p;
  throw std::logic_error("no parameter '" + std::string(key) + "' in " + section);
}

const ParamBlock& block_of(const std::vector<ParamBlock>& blocks, std::string_view section) {
  for (const auto& b : blocks)
    if (b.section == section) return b;
  throw std::logic_error("no parameter section '" + std::string(section) + "'");
}

std::string markdown_table(const ParamBlock& block) {
  std::string out = "| Key | Type | Default | Allowed | Meaning |\n|---|---|---|---|---|\n";
  for (const auto& p : block.params)
    out += "| `" + p.key + "` | " + type_text(p) + " | " + default_text(p) + " | " + allowed_text(p) + " | " + p.doc + " |\n";
  return out;
}

std::string listing(const ParamBlock& block) {
  std::size_t key_width = 0, type_width = 0, def_width = 0, range_width = 0;
  for (const auto& p : block.params) {
    key_width = std::max(key_width, block.section.size() + 1 + p.key.size());
    type_width = std::max(type_width, type_text(p).size());
    def_width = std::max(def_width, p.def.size());
    range_width = std::max(range_width, p.type == ParamType::name ? std::size_t{0} : p.range_text().size());
  }
  auto pad = [](std::string s, std::size_t w) { return s + std::string(w - s.size() + 2, ' '); };
  std::string out;
  for (const auto& p : block.params) {
    std::string range = p.range_text();
    std::string line = pad(block.section + "." + p.key, key_width) + pad(type_text(p), type_width) +
                       pad(p.def.empty() ? (is_scalar(p.type) ? "required" : "-") : p.def, std::max<std::size_t>(def_width, 8));
    if (p.type == ParamType::name) {
      std::string names;
      for (const auto& n : p.choices) names += (names.empty() ? "" : "|") + n;
      line += names + "  ";
    } else {
      line += pad(range, range_width);
    }
    out += line + p.doc + (p.note.empty() ? "" : " (" + p.note + ")") + "\n";
  }
  return out;
}

}  // namespace fabricsim::hw
