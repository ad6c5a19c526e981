// Strong types for the physical quantities a fabric is described in.
//
// Configuration states rates, delays, buffer sizes, cable lengths and clocks with
// their units ("400Gb/s", "2.5ns", "4KiB", "30m", "1.5GHz"). They are parsed once
// into these types, which each hold one SI base value, so a block can never add a
// delay to a buffer size or read nanoseconds as picoseconds. Cycle counts are
// derived inside the blocks from these values (the model is SST's UnitAlgebra).
#ifndef FABRICSIM_HW_UNITS_H_
#define FABRICSIM_HW_UNITS_H_

#include <cassert>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace fabricsim::hw {

// Arithmetic shared by every quantity: a value of type Rep in the SI base unit.
// Same-type sums, differences and ratios are meaningful; scaling by a plain number
// is too; mixing different quantities is a compile error.
template <class Derived, class Rep>
class Quantity {
 public:
  /// Scalars a quantity may be scaled by: any number for real-valued quantities,
  /// integers only for counted ones (a byte count times 1.5 is not a byte count).
  template <class S>
  static constexpr bool kScalesBy =
      std::is_floating_point_v<Rep> ? std::is_arithmetic_v<S> : std::is_integral_v<S>;

  /// Comparisons order by the SI base value.
  friend constexpr bool operator==(Derived a, Derived b) { return a.value_ == b.value_; }
  friend constexpr bool operator!=(Derived a, Derived b) { return a.value_ != b.value_; }
  friend constexpr bool operator<(Derived a, Derived b) { return a.value_ < b.value_; }
  friend constexpr bool operator<=(Derived a, Derived b) { return a.value_ <= b.value_; }
  friend constexpr bool operator>(Derived a, Derived b) { return a.value_ > b.value_; }
  friend constexpr bool operator>=(Derived a, Derived b) { return a.value_ >= b.value_; }

  /// Sum of two quantities of the same kind.
  friend constexpr Derived operator+(Derived a, Derived b) {
    return from_base(a.value_ + b.value_);
  }
  /// Difference; for counted quantities (bytes) the precondition is a >= b.
  friend constexpr Derived operator-(Derived a, Derived b) {
    if constexpr (std::is_unsigned_v<Rep>) assert(a.value_ >= b.value_);
    return from_base(a.value_ - b.value_);
  }
  /// In-place sum and difference.
  friend constexpr Derived& operator+=(Derived& a, Derived b) { return a = a + b; }
  friend constexpr Derived& operator-=(Derived& a, Derived b) { return a = a - b; }

  /// Ratio of two quantities of the same kind, e.g. link utilisation.
  friend constexpr double operator/(Derived a, Derived b) {
    return static_cast<double>(a.value_) / static_cast<double>(b.value_);
  }

  /// Scaling; counted quantities accept only non-negative integer factors.
  template <class S, std::enable_if_t<kScalesBy<S>, int> = 0>
  friend constexpr Derived operator*(Derived q, S k) {
    if constexpr (std::is_unsigned_v<Rep> && std::is_signed_v<S>) assert(k >= 0);
    return from_base(static_cast<Rep>(q.value_ * k));
  }
  /// Scaling with the factor first.
  template <class S, std::enable_if_t<kScalesBy<S>, int> = 0>
  friend constexpr Derived operator*(S k, Derived q) {
    return q * k;
  }
  /// Division by a scalar; truncates for counted quantities.
  template <class S, std::enable_if_t<kScalesBy<S>, int> = 0>
  friend constexpr Derived operator/(Derived q, S k) {
    if constexpr (std::is_unsigned_v<Rep> && std::is_signed_v<S>) assert(k > 0);
    return from_base(static_cast<Rep>(q.value_ / k));
  }

 protected:
  // Builds a Derived holding `value` in the SI base unit.
  static constexpr Derived from_base(Rep value) {
    Derived d;
    d.value_ = value;
    return d;
  }
  constexpr Rep base() const { return value_; }

 private:
  Rep value_{};
};

// Data rate of a link or port, in bits per second.
class Bandwidth : public Quantity<Bandwidth, double> {
 public:
  constexpr Bandwidth() = default;
  /// Rate given in bits per second.
  static constexpr Bandwidth bits_per_second(double v) { return from_base(v); }
  /// Rate given in gigabits per second (1e9 b/s, the Ethernet/InfiniBand convention).
  static constexpr Bandwidth gbps(double v) { return from_base(v * kBitsPerGigabit); }
  /// Rate in bits per second.
  constexpr double bps() const { return base(); }
  /// Rate in gigabits per second.
  constexpr double in_gbps() const { return base() / kBitsPerGigabit; }

 private:
  static constexpr double kBitsPerGigabit = 1e9;
};

// Simulated time or delay, in seconds. Sub-second factories divide by an exact
// power of ten so Time::ns(2.5) is the double nearest to 2.5e-9 s, the same value
// parse_time("2.5ns") yields.
class Time : public Quantity<Time, double> {
 public:
  constexpr Time() = default;
  /// Time given in seconds.
  static constexpr Time seconds(double v) { return from_base(v); }
  /// Time given in nanoseconds.
  static constexpr Time ns(double v) { return from_base(v / kNsPerSecond); }
  /// Time given in picoseconds.
  static constexpr Time ps(double v) { return from_base(v / kPsPerSecond); }
  /// Time given in microseconds.
  static constexpr Time us(double v) { return from_base(v / kUsPerSecond); }
  /// Time in seconds.
  constexpr double in_seconds() const { return base(); }
  /// Time in nanoseconds.
  constexpr double in_ns() const { return base() * kNsPerSecond; }
  /// Time in picoseconds.
  constexpr double in_ps() const { return base() * kPsPerSecond; }
  /// Time in microseconds.
  constexpr double in_us() const { return base() * kUsPerSecond; }

 private:
  static constexpr double kUsPerSecond = 1e6;
  static constexpr double kNsPerSecond = 1e9;
  static constexpr double kPsPerSecond = 1e12;
};

// Amount of data (packet, buffer, message), as a whole number of bytes.
class Size : public Quantity<Size, std::uint64_t> {
 public:
  /// Bits in one byte (an octet on every link the simulator models).
  static constexpr std::uint64_t kBitsPerByte = 8;

  constexpr Size() = default;
  /// Size given in bytes.
  static constexpr Size bytes(std::uint64_t v) { return from_base(v); }
  /// Size given in kibibytes (1024 bytes), the unit buffers are built in.
  static constexpr Size kib(std::uint64_t v) { return from_base(v * kBytesPerKib); }
  /// Size in bytes.
  constexpr std::uint64_t in_bytes() const { return base(); }
  /// Size in bits, what a serializer shifts out.
  constexpr double in_bits() const {
    return static_cast<double>(base()) * static_cast<double>(kBitsPerByte);
  }

 private:
  static constexpr std::uint64_t kBytesPerKib = 1024;
};

// Physical length, e.g. of a cable (sets propagation delay), in metres.
class Length : public Quantity<Length, double> {
 public:
  constexpr Length() = default;
  /// Length given in metres.
  static constexpr Length metres(double v) { return from_base(v); }
  /// Length in metres.
  constexpr double in_metres() const { return base(); }
};

// Clock frequency, in hertz.
class Frequency : public Quantity<Frequency, double> {
 public:
  constexpr Frequency() = default;
  /// Frequency given in hertz.
  static constexpr Frequency hertz(double v) { return from_base(v); }
  /// Frequency given in gigahertz.
  static constexpr Frequency ghz(double v) { return from_base(v * kHzPerGhz); }
  /// Frequency in hertz.
  constexpr double in_hertz() const { return base(); }
  /// Clock period, 1/f.
  constexpr Time period() const { return Time::seconds(1.0 / base()); }

 private:
  static constexpr double kHzPerGhz = 1e9;
};

/// Serialization time of `s` on a link of rate `b`: bits / rate.
Time operator/(Size s, Bandwidth b);
/// Whole bytes a link of rate `b` moves during `t`, rounded down (0 for t <= 0).
Size operator*(Bandwidth b, Time t);
/// Same as b * t.
inline Size operator*(Time t, Bandwidth b) { return b * t; }

/// Thrown when configuration text is not a valid quantity; what() quotes the text,
/// says what was expected and lists the accepted units.
class UnitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Parsers for configuration text: a non-negative decimal number ("400", "2.5",
// "1e3"), an optional single space, then a case-sensitive unit, which is required.

/// Parses b/s Kb/s Mb/s Gb/s Tb/s (bits) or B/s KB/s MB/s GB/s TB/s (bytes); decimal prefixes.
Bandwidth parse_bandwidth(std::string_view text);
/// Parses fs ps ns us ms s.
Time parse_time(std::string_view text);
/// Parses B, KB MB GB TB (x1000) or KiB MiB GiB TiB (x1024); must be whole bytes.
Size parse_size(std::string_view text);
/// Parses mm cm m km.
Length parse_length(std::string_view text);
/// Parses Hz kHz MHz GHz.
Frequency parse_frequency(std::string_view text);

// Report formatting: up to 6 significant digits with the SI prefix that keeps the
// number at or above 1, no trailing zeros ("400Gb/s", "2.5ns", "30m", "1.5GHz").
// The text parses back with the matching parse_* function.

/// Formats in bits per second with a decimal prefix.
std::string to_string(Bandwidth b);
/// Formats from fs to s.
std::string to_string(Time t);
/// Formats exactly: largest binary prefix that divides the size ("9KiB"), else bytes ("1500B").
std::string to_string(Size s);
/// Formats in mm, m or km.
std::string to_string(Length l);
/// Formats from Hz to GHz.
std::string to_string(Frequency f);

}  // namespace fabricsim::hw

#endif  // FABRICSIM_HW_UNITS_H_
