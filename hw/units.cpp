// Parsing and formatting of physical quantities. Each quantity is described by a
// table of units; one parser and one formatter serve all five of them. Numbers are
// kept as exact decimals until the end, so "2.5ns" is rounded to a double once and
// "1.5KiB" is recognised as exactly 1536 bytes.
#include "hw/units.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>

namespace fabricsim::hw {
namespace {

// Whether to_string may pick a unit, or the unit is only accepted on input.
enum class Role { kReported, kInputOnly };

// One unit symbol: a number in this unit is worth number * 10^decimal_exponent *
// 2^binary_exponent of the SI base unit. Powers of two express bytes (8 bits) and
// binary prefixes (1024) exactly.
struct UnitSpec {
  std::string_view symbol;
  int decimal_exponent;
  int binary_exponent;
  Role role;
};

// Everything the generic parser and formatter need to know about one quantity.
struct QuantitySpec {
  std::string_view noun;     // what the user was asked for, in error messages
  std::string_view example;  // a valid value, in error messages
  const UnitSpec* first;
  const UnitSpec* last;
  const UnitSpec* begin() const { return first; }
  const UnitSpec* end() const { return last; }
};

template <std::size_t N>
constexpr QuantitySpec describe(std::string_view noun, std::string_view example,
                                const UnitSpec (&units)[N]) {
  return {noun, example, units, units + N};
}

constexpr int kBitsPerByteLog2 = 3;
static_assert(Size::kBitsPerByte == 1u << kBitsPerByteLog2);
constexpr int kKibiLog2 = 10;  // IEC 80000-13 binary prefix: 2^10 = 1024

// Unit tables list the reported units in ascending order; errors list all units in
// table order. Link rates are reported in bits, the way IEEE 802.3 names them.
constexpr UnitSpec kBandwidthUnits[] = {{"b/s", 0, 0, Role::kReported},
                                        {"Kb/s", 3, 0, Role::kReported},
                                        {"Mb/s", 6, 0, Role::kReported},
                                        {"Gb/s", 9, 0, Role::kReported},
                                        {"Tb/s", 12, 0, Role::kReported},
                                        {"B/s", 0, kBitsPerByteLog2, Role::kInputOnly},
                                        {"KB/s", 3, kBitsPerByteLog2, Role::kInputOnly},
                                        {"MB/s", 6, kBitsPerByteLog2, Role::kInputOnly},
                                        {"GB/s", 9, kBitsPerByteLog2, Role::kInputOnly},
                                        {"TB/s", 12, kBitsPerByteLog2, Role::kInputOnly}};
constexpr UnitSpec kTimeUnits[] = {{"fs", -15, 0, Role::kReported}, {"ps", -12, 0, Role::kReported},
                                   {"ns", -9, 0, Role::kReported},  {"us", -6, 0, Role::kReported},
                                   {"ms", -3, 0, Role::kReported},  {"s", 0, 0, Role::kReported}};
// Buffers are reported with binary prefixes only (SRAM is sized in powers of two).
constexpr UnitSpec kSizeUnits[] = {{"B", 0, 0, Role::kReported},
                                   {"KB", 3, 0, Role::kInputOnly},
                                   {"MB", 6, 0, Role::kInputOnly},
                                   {"GB", 9, 0, Role::kInputOnly},
                                   {"TB", 12, 0, Role::kInputOnly},
                                   {"KiB", 0, kKibiLog2, Role::kReported},
                                   {"MiB", 0, 2 * kKibiLog2, Role::kReported},
                                   {"GiB", 0, 3 * kKibiLog2, Role::kReported},
                                   {"TiB", 0, 4 * kKibiLog2, Role::kReported}};
// Centimetres are accepted but reports step by 1000 (mm, m, km).
constexpr UnitSpec kLengthUnits[] = {{"mm", -3, 0, Role::kReported},
                                     {"cm", -2, 0, Role::kInputOnly},
                                     {"m", 0, 0, Role::kReported},
                                     {"km", 3, 0, Role::kReported}};
constexpr UnitSpec kFrequencyUnits[] = {{"Hz", 0, 0, Role::kReported},
                                        {"kHz", 3, 0, Role::kReported},
                                        {"MHz", 6, 0, Role::kReported},
                                        {"GHz", 9, 0, Role::kReported}};

constexpr QuantitySpec kBandwidth = describe("a bandwidth", "400Gb/s", kBandwidthUnits);
constexpr QuantitySpec kTime = describe("a time", "2.5ns", kTimeUnits);
constexpr QuantitySpec kSize = describe("a size", "4KiB", kSizeUnits);
constexpr QuantitySpec kLength = describe("a length", "30m", kLengthUnits);
constexpr QuantitySpec kFrequency = describe("a frequency", "1.5GHz", kFrequencyUnits);

// Written exponents saturate here so "1e99999999999999999999" cannot overflow the
// arithmetic; such values are out of range for every quantity anyway.
constexpr long long kExponentCap = 1'000'000'000'000'000;
// Doubles span about 10^-324 .. 10^308; values beyond 10^+-400 are rejected before
// conversion so the conversion never sees an absurd exponent.
constexpr long long kDoubleDecades = 400;
constexpr int kSignificantDigits = 6;  // report precision

// A non-negative number exactly as written: digits x 10^exponent, `digits` without
// leading or trailing zeros (empty means zero).
struct Decimal {
  std::string digits;
  long long exponent = 0;
};

// A parsed quantity: its number and the unit it was given in.
struct Reading {
  Decimal number;
  const UnitSpec* unit;
};

bool is_digit(char c) { return c >= '0' && c <= '9'; }
// Locale-independent whitespace test.
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Reads digits ['.' digits] [(e|E) [+|-] digits] spanning all of `text`.
std::optional<Decimal> scan_decimal(std::string_view text) {
  std::size_t pos = 0;
  const auto digit_run = [&] {
    const std::size_t start = pos;
    while (pos < text.size() && is_digit(text[pos])) ++pos;
    return text.substr(start, pos - start);
  };
  const auto next_is = [&](std::string_view chars) {
    return pos < text.size() && chars.find(text[pos]) != std::string_view::npos;
  };
  const std::string_view integer = digit_run();
  if (integer.empty()) return std::nullopt;
  std::string_view fraction;
  if (next_is(".")) {
    ++pos;
    fraction = digit_run();
    if (fraction.empty()) return std::nullopt;
  }
  long long exponent = 0;
  if (next_is("eE")) {
    ++pos;
    const bool negative = next_is("-");
    if (next_is("+-")) ++pos;
    const std::string_view digits = digit_run();
    if (digits.empty()) return std::nullopt;
    for (const char c : digits) exponent = std::min(exponent * 10 + (c - '0'), kExponentCap);
    if (negative) exponent = -exponent;
  }
  if (pos != text.size()) return std::nullopt;

  Decimal d{std::string(integer) + std::string(fraction),
            exponent - static_cast<long long>(fraction.size())};
  d.digits.erase(0, d.digits.find_first_not_of('0'));
  const std::size_t last = d.digits.find_last_not_of('0');
  if (last == std::string::npos) return Decimal{};
  d.exponent += static_cast<long long>(d.digits.size() - 1 - last);
  d.digits.erase(last + 1);
  return d;
}

// Throws the UnitError for `text`: what was expected, the accepted units, and why.
[[noreturn]] void fail(const QuantitySpec& spec, std::string_view text, const std::string& reason) {
  std::string units;
  for (const UnitSpec& u : spec) units += (units.empty() ? "" : ", ") + std::string(u.symbol);
  throw UnitError("expected " + std::string(spec.noun) + " such as '" + std::string(spec.example) +
                  "' (units: " + units + "), got '" + std::string(text) + "': " + reason);
}

// Splits `text` into number and unit and validates both against `spec`.
Reading read_quantity(std::string_view text, const QuantitySpec& spec) {
  if (text.empty()) fail(spec, text, "empty text");
  if (is_space(text.front()) || is_space(text.back())) {
    fail(spec, text, "unexpected leading or trailing whitespace");
  }
  const bool negative = text.front() == '-';
  const std::string_view signless = text.substr(negative ? 1 : 0);
  // No unit symbol starts with a character that can appear in a number.
  const std::size_t number_end =
      std::min(signless.find_first_not_of("0123456789.eE+-"), signless.size());
  const std::string_view number_text = signless.substr(0, number_end);
  std::string_view unit_text = signless.substr(number_end);
  if (number_text.empty()) fail(spec, text, "missing number before the unit");
  std::optional<Decimal> number = scan_decimal(number_text);
  if (!number) fail(spec, text, "malformed number '" + std::string(number_text) + "'");
  if (negative) fail(spec, text, "negative value");
  if (!unit_text.empty() && unit_text.front() == ' ') unit_text.remove_prefix(1);
  if (unit_text.empty()) fail(spec, text, "missing unit");
  if (is_space(unit_text.front())) {
    fail(spec, text, "only a single space may separate number and unit");
  }
  for (const UnitSpec& u : spec) {
    if (u.symbol == unit_text) return {std::move(*number), &u};
  }
  fail(spec, text, "unknown unit '" + std::string(unit_text) + "'");
}

// 10^n for 0 <= n <= 22, exact in a double.
double power_of_ten(int n) {
  double p = 1;
  for (int i = 0; i < n; ++i) p *= 10;
  return p;
}

// Converts a value in `unit` to base units in one correctly rounded step, the same
// arithmetic as the factories in units.h.
double to_base(double value, const UnitSpec& unit) {
  const int e = unit.decimal_exponent;
  return std::ldexp(e >= 0 ? value * power_of_ten(e) : value / power_of_ten(-e),
                    unit.binary_exponent);
}

// Inverse of to_base: a base-unit value expressed in `unit`.
double from_base(double value, const UnitSpec& unit) {
  const int e = unit.decimal_exponent;
  return std::ldexp(e >= 0 ? value / power_of_ten(e) : value * power_of_ten(-e),
                    -unit.binary_exponent);
}

// Value of a reading in base units, rounded once from the exact decimal.
double to_base_double(const Reading& r, const QuantitySpec& spec, std::string_view text) {
  const Decimal& n = r.number;
  if (n.digits.empty()) return 0.0;
  const long long exponent = n.exponent + r.unit->decimal_exponent;
  const long long decades = exponent + static_cast<long long>(n.digits.size());
  if (decades > kDoubleDecades || decades < -kDoubleDecades) fail(spec, text, "value out of range");
  const std::string scientific = n.digits + 'e' + std::to_string(exponent);
  double value = 0;
  const std::from_chars_result result =
      std::from_chars(scientific.data(), scientific.data() + scientific.size(), value);
  value = std::ldexp(value, r.unit->binary_exponent);
  if (result.ec != std::errc() || !std::isfinite(value) || value == 0) {
    fail(spec, text, "value out of range");
  }
  return value;
}

// value = value * factor + addend; false if that does not fit 64 bits.
bool scale_up(std::uint64_t& value, unsigned factor, unsigned addend) {
  if (value > (std::numeric_limits<std::uint64_t>::max() - addend) / factor) return false;
  value = value * factor + addend;
  return true;
}

// Divides a decimal digit string in place; returns the remainder.
unsigned divide_digits(std::string& digits, unsigned divisor) {
  unsigned remainder = 0;
  for (char& c : digits) {
    const unsigned current = remainder * 10 + static_cast<unsigned>(c - '0');
    c = static_cast<char>('0' + current / divisor);
    remainder = current % divisor;
  }
  digits.erase(0, digits.find_first_not_of('0'));
  return remainder;
}

// Exact byte count of a reading: digits x 10^e x 2^b must be whole and fit 64 bits.
std::uint64_t to_whole_bytes(const Reading& r, const QuantitySpec& spec, std::string_view text) {
  std::string digits = r.number.digits;
  long long exponent = r.number.exponent + r.unit->decimal_exponent;
  int binary = r.unit->binary_exponent;
  // A negative power of ten has to cancel against the digits and the binary prefix,
  // as in 1.5KiB = 15 x 2^10 / (5 x 2) = 1536 B. Every step divides by ten, so the
  // loop ends after about as many steps as there are digits.
  for (; exponent < 0 && !digits.empty(); ++exponent) {
    if (divide_digits(digits, 5) != 0) fail(spec, text, "not a whole number of bytes");
    if (binary > 0) {
      --binary;
    } else if (divide_digits(digits, 2) != 0) {
      fail(spec, text, "not a whole number of bytes");
    }
  }
  std::uint64_t bytes = 0;
  bool fits = true;
  for (const char c : digits) fits = fits && scale_up(bytes, 10, static_cast<unsigned>(c - '0'));
  for (; fits && bytes != 0 && exponent > 0; --exponent) fits = scale_up(bytes, 10, 0);
  for (; fits && bytes != 0 && binary > 0; --binary) fits = scale_up(bytes, 2, 0);
  if (!fits) fail(spec, text, "value out of range");
  return bytes;
}

// Parses a real-valued quantity into its SI base unit.
double parse_real(std::string_view text, const QuantitySpec& spec) {
  return to_base_double(read_quantity(text, spec), spec, text);
}

// Shortest text with kSignificantDigits significant digits, locale independent.
std::string format_number(double value) {
  std::array<char, 32> buffer{};
  const std::to_chars_result result =
      std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, std::chars_format::general,
                    kSignificantDigits);
  return std::string(buffer.data(), result.ptr);
}

// The unit worth exactly one SI base unit (b/s, s, B, m, Hz).
const UnitSpec& base_unit(const QuantitySpec& spec) {
  for (const UnitSpec& u : spec) {
    if (u.decimal_exponent == 0 && u.binary_exponent == 0) return u;
  }
  throw std::logic_error("unit table without a base unit");
}

// Formats with the largest reported unit that keeps the printed number >= 1.
std::string format_real(double value, const QuantitySpec& spec) {
  // Decide on the magnitude as printed, so 999.9999ns reports as "1us", not "1000ns".
  double printed = 0;
  const std::string magnitude = format_number(std::fabs(value));
  std::from_chars(magnitude.data(), magnitude.data() + magnitude.size(), printed);
  const UnitSpec* chosen = &base_unit(spec);
  if (std::isfinite(printed) && printed > 0) {
    chosen = nullptr;
    for (const UnitSpec& u : spec) {
      if (u.role == Role::kReported && (chosen == nullptr || printed >= to_base(1.0, u))) {
        chosen = &u;
      }
    }
  }
  return format_number(from_base(value, *chosen)) + std::string(chosen->symbol);
}

}  // namespace

Time operator/(Size s, Bandwidth b) { return Time::seconds(s.in_bits() / b.bps()); }

Size operator*(Bandwidth b, Time t) {
  const double bytes = b.bps() * t.in_seconds() / static_cast<double>(Size::kBitsPerByte);
  if (!(bytes > 0)) return Size{};
  // Rate x time is rarely exact in binary (400Gb/s x 184.32ns = 9215.9999...B), so a
  // byte that completes within a few rounding errors of `t` counts as moved.
  constexpr double kRoundingSlack = 16 * std::numeric_limits<double>::epsilon();
  const double nearest = std::round(bytes);
  const double whole =
      std::fabs(bytes - nearest) <= kRoundingSlack * nearest ? nearest : std::floor(bytes);
  constexpr std::uint64_t kMaxBytes = std::numeric_limits<std::uint64_t>::max();
  if (whole >= static_cast<double>(kMaxBytes)) return Size::bytes(kMaxBytes);
  return Size::bytes(static_cast<std::uint64_t>(whole));
}

Bandwidth parse_bandwidth(std::string_view text) {
  return Bandwidth::bits_per_second(parse_real(text, kBandwidth));
}
Time parse_time(std::string_view text) { return Time::seconds(parse_real(text, kTime)); }
Size parse_size(std::string_view text) {
  return Size::bytes(to_whole_bytes(read_quantity(text, kSize), kSize, text));
}
Length parse_length(std::string_view text) { return Length::metres(parse_real(text, kLength)); }
Frequency parse_frequency(std::string_view text) {
  return Frequency::hertz(parse_real(text, kFrequency));
}

std::string to_string(Bandwidth b) { return format_real(b.bps(), kBandwidth); }
std::string to_string(Time t) { return format_real(t.in_seconds(), kTime); }
std::string to_string(Length l) { return format_real(l.in_metres(), kLength); }
std::string to_string(Frequency f) { return format_real(f.in_hertz(), kFrequency); }

std::string to_string(Size s) {
  // Exact, so the text always parses back to the same byte count.
  const std::uint64_t bytes = s.in_bytes();
  const UnitSpec* chosen = &base_unit(kSize);
  for (const UnitSpec& u : kSize) {
    const std::uint64_t unit_bytes = std::uint64_t{1} << u.binary_exponent;
    const bool divides = bytes != 0 && bytes % unit_bytes == 0;
    if (u.role == Role::kReported && u.decimal_exponent == 0 && divides) chosen = &u;
  }
  return std::to_string(bytes >> chosen->binary_exponent) + std::string(chosen->symbol);
}

}  // namespace fabricsim::hw
