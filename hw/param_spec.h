// Configuration parameters declared once. Each block (switch, NIC, link, ...) has one
// table of ParamSpec beside its params struct: key, type, unit, default, range or
// allowed names, and a one-line meaning. The YAML reader checks types and ranges
// against it, the block's validate() takes its ranges from it, `fabricsim params`
// lists it and docs/config.md's key tables are generated from it.
//
// Each enum a key chooses has one EnumNames table beside it: the names the YAML
// reader accepts, to_string prints and errors list.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hw/units.h"

namespace fabricsim::hw {

/// What a key holds, as docs/config.md's "Value syntax" names it.
enum class ParamType { integer, number, boolean, name, text, size, time, bandwidth, length, frequency, section, list };

std::string_view to_string(ParamType t);

/// One configuration key. Bounds and the default are written as in YAML ("64B", "10us",
/// "16"), so the table reads like the documentation it generates.
struct ParamSpec {
  std::string key;
  ParamType type = ParamType::integer;
  std::string unit;                  ///< unit of a plain integer or number ("cycles"); quantities carry their own
  std::string def;                   ///< default as written in YAML; "" when required or when it depends on other
                                     ///< keys (see note); another key in backticks (`traffic.load`): that key's value
  std::string min;                   ///< lowest accepted value; "" for none
  std::string max;                   ///< highest accepted value; "" for none
  std::vector<std::string> choices;  ///< a name key: the names accepted
  std::string note;                  ///< a condition beyond the range, or how the default is chosen (markdown)
  std::string doc;                   ///< one-line meaning (markdown)

  /// The bounds as a value of the key's type (std::int64_t, double or a quantity).
  template <class T>
  T lo() const {
    return bound(min, static_cast<T*>(nullptr), true);
  }
  template <class T>
  T hi() const {
    return bound(max, static_cast<T*>(nullptr), false);
  }
  /// "2..256", "64B..1GiB", the names joined, or "" for keys without bounds.
  std::string range_text() const;
  /// Throws std::invalid_argument "KEY must be in MIN..MAX" when `v` is outside the bounds.
  void check(std::int64_t v) const;
  void check(int v) const { check(static_cast<std::int64_t>(v)); }
  void check(double v) const;
  template <class Q>
  void check_quantity(Q v) const {
    if (v < lo<Q>() || v > hi<Q>()) out_of_range();
  }

 private:
  [[noreturn]] void out_of_range() const;
  // A bound's text as a value; an empty integer or number bound is the type's limit.
  static std::int64_t bound(const std::string& text, std::int64_t*, bool low);
  static double bound(const std::string& text, double*, bool low);
  static Size bound(const std::string& text, Size*, bool low);
  static Time bound(const std::string& text, Time*, bool low);
  static Bandwidth bound(const std::string& text, Bandwidth*, bool low);
  static Length bound(const std::string& text, Length*, bool low);
  static Frequency bound(const std::string& text, Frequency*, bool low);
};

/// The keys of one YAML section (`switch`, `switch.pfc`, ...), in documentation order.
struct ParamBlock {
  std::string section;  ///< dotted path of the section
  std::string title;    ///< one line on what it configures
  std::vector<ParamSpec> params;

  /// The key's spec; std::logic_error when the block has none (a programming error).
  const ParamSpec& operator[](std::string_view key) const;
};

/// The block of `section` among `blocks`; std::logic_error when none is (a programming error).
const ParamBlock& block_of(const std::vector<ParamBlock>& blocks, std::string_view section);

/// A name for each value of an enum, as configuration files write it.
template <class E>
using EnumNames = std::vector<std::pair<E, std::string_view>>;

/// The name of `e`, "?" when the table lacks it.
template <class E>
std::string_view name_of(const EnumNames<E>& names, E e) {
  for (const auto& [v, n] : names)
    if (v == e) return n;
  return "?";
}
/// The value named `name`, if any.
template <class E>
std::optional<E> value_of(const EnumNames<E>& names, std::string_view name) {
  for (const auto& [v, n] : names)
    if (n == name) return v;
  return std::nullopt;
}
/// Every name, in table order (a ParamSpec's choices).
template <class E>
std::vector<std::string> names_of(const EnumNames<E>& names) {
  std::vector<std::string> out;
  for (const auto& [v, n] : names) out.emplace_back(n);
  return out;
}

/// The blocks as a markdown table each (Key, Type, Default, Allowed, Meaning).
std::string markdown_table(const ParamBlock& block);
/// The blocks as plain text, one key a line: `section.key  type  default  range  meaning`.
std::string listing(const ParamBlock& block);

}  // namespace fabricsim::hw
