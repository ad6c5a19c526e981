// Unit tests for hw/units: the strong quantity types, the configuration parsers
// (values and every documented error) and the report formatting.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "hw/units.h"

namespace fabricsim::hw {
// Failure messages show quantities with their units instead of raw bytes.
void PrintTo(Bandwidth b, std::ostream* os) { *os << to_string(b); }
void PrintTo(Time t, std::ostream* os) { *os << to_string(t); }
void PrintTo(Size s, std::ostream* os) { *os << to_string(s); }
void PrintTo(Length l, std::ostream* os) { *os << to_string(l); }
void PrintTo(Frequency f, std::ostream* os) { *os << to_string(f); }
}  // namespace fabricsim::hw

namespace fabricsim::hw {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr double kRelTol = 1e-12;

// Each parser with the unit list its error messages must show.
struct ParserCase {
  std::string name;
  std::function<void(std::string_view)> parse;
  std::string noun;
  std::string example;
  std::string units;
};

std::vector<ParserCase> all_parsers() {
  return {
      {"bandwidth", [](std::string_view t) { parse_bandwidth(t); }, "a bandwidth", "400Gb/s",
       "(units: b/s, Kb/s, Mb/s, Gb/s, Tb/s, B/s, KB/s, MB/s, GB/s, TB/s)"},
      {"time", [](std::string_view t) { parse_time(t); }, "a time", "2.5ns",
       "(units: fs, ps, ns, us, ms, s)"},
      {"size", [](std::string_view t) { parse_size(t); }, "a size", "4KiB",
       "(units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)"},
      {"length", [](std::string_view t) { parse_length(t); }, "a length", "30m",
       "(units: mm, cm, m, km)"},
      {"frequency", [](std::string_view t) { parse_frequency(t); }, "a frequency", "1.5GHz",
       "(units: Hz, kHz, MHz, GHz)"},
  };
}

// A callable that parses `text`, for the ThrowsMessage matcher.
auto parsing(const ParserCase& p, std::string text) {
  return [parse = p.parse, text] { parse(text); };
}

// ---------------------------------------------------------------- construction

TEST(UnitsConstruction, BandwidthFactoriesAndAccessors) {
  EXPECT_EQ(Bandwidth::gbps(400).bps(), 400e9);
  EXPECT_EQ(Bandwidth::gbps(400).in_gbps(), 400);
  EXPECT_EQ(Bandwidth::bits_per_second(25e9), Bandwidth::gbps(25));
  EXPECT_EQ(Bandwidth::gbps(0.5).bps(), 5e8);
}

TEST(UnitsConstruction, TimeFactoriesAgreeAcrossScales) {
  EXPECT_EQ(Time::seconds(2).in_seconds(), 2);
  EXPECT_NEAR(Time::ns(1).in_ps(), 1000, 1000 * kRelTol);
  EXPECT_NEAR(Time::us(1).in_ns(), 1000, 1000 * kRelTol);
  EXPECT_NEAR(Time::ps(2500).in_ns(), 2.5, 2.5 * kRelTol);
  EXPECT_NEAR(Time::us(3).in_us(), 3, 3 * kRelTol);
  EXPECT_NEAR(Time::ns(2.5).in_seconds(), 2.5e-9, 2.5e-9 * kRelTol);
  // Dividing by an exact power of ten rounds once: the nearest double to 2.5e-9.
  EXPECT_EQ(Time::ns(2.5).in_seconds(), 2.5e-9);
  EXPECT_EQ(Time::ps(1).in_seconds(), 1e-12);
  EXPECT_EQ(Time::us(7).in_seconds(), 7e-6);
}

TEST(UnitsConstruction, SizeFactoriesAndBits) {
  EXPECT_EQ(Size::bytes(1500).in_bytes(), 1500u);
  EXPECT_EQ(Size::kib(4).in_bytes(), 4096u);
  EXPECT_EQ(Size::bytes(1500).in_bits(), 12000);
  EXPECT_EQ(Size::kib(9), Size::bytes(9216));
}

TEST(UnitsConstruction, LengthAndFrequency) {
  EXPECT_EQ(Length::metres(30).in_metres(), 30);
  EXPECT_EQ(Frequency::ghz(1.5).in_hertz(), 1.5e9);
  EXPECT_EQ(Frequency::hertz(50).in_hertz(), 50);
  EXPECT_NEAR(Frequency::ghz(1).period().in_ns(), 1, kRelTol);
  EXPECT_NEAR(Frequency::ghz(1.5).period().in_ps(), 2000.0 / 3, 1e-9);
  EXPECT_EQ(Frequency::hertz(4).period(), Time::seconds(0.25));
}

TEST(UnitsConstruction, DefaultIsZero) {
  EXPECT_EQ(Bandwidth{}.bps(), 0);
  EXPECT_EQ(Time{}.in_seconds(), 0);
  EXPECT_EQ(Size{}.in_bytes(), 0u);
  EXPECT_EQ(Length{}.in_metres(), 0);
  EXPECT_EQ(Frequency{}.in_hertz(), 0);
}

TEST(UnitsConstruction, UsableInConstantExpressions) {
  // Block params structs default their fields with these at compile time.
  constexpr Size kMtu = Size::bytes(4096) + Size::kib(1);
  static_assert(kMtu.in_bytes() == 5120);
  constexpr Time kHop = Time::ns(2) * 3;
  static_assert(kHop > Time::ns(5) && kHop < Time::ns(7));
  constexpr Bandwidth kLane = Bandwidth::gbps(400) / 4;
  static_assert(kLane == Bandwidth::gbps(100));
  constexpr Time kPeriod = Frequency::hertz(2).period();
  static_assert(kPeriod == Time::seconds(0.5));
  EXPECT_EQ(kMtu.in_bytes(), 5120u);
}

// ---------------------------------------------------------------- arithmetic

// Two values of one quantity, small < large, for the shared-operator tests.
template <class Q>
struct Sample;
template <>
struct Sample<Bandwidth> {
  static Bandwidth small() { return Bandwidth::gbps(100); }
  static Bandwidth large() { return Bandwidth::gbps(400); }
};
template <>
struct Sample<Time> {
  static Time small() { return Time::ns(100); }
  static Time large() { return Time::ns(400); }
};
template <>
struct Sample<Size> {
  static Size small() { return Size::bytes(100); }
  static Size large() { return Size::bytes(400); }
};
template <>
struct Sample<Length> {
  static Length small() { return Length::metres(100); }
  static Length large() { return Length::metres(400); }
};
template <>
struct Sample<Frequency> {
  static Frequency small() { return Frequency::hertz(100); }
  static Frequency large() { return Frequency::hertz(400); }
};

template <class Q>
class QuantityArithmetic : public ::testing::Test {};
using AllQuantities = ::testing::Types<Bandwidth, Time, Size, Length, Frequency>;
// Names the typed-test instances after the quantity, e.g. QuantityArithmetic/Size.
struct QuantityName {
  template <class Q>
  static std::string GetName(int) {
    if constexpr (std::is_same_v<Q, Bandwidth>) return "Bandwidth";
    if constexpr (std::is_same_v<Q, Time>) return "Time";
    if constexpr (std::is_same_v<Q, Size>) return "Size";
    if constexpr (std::is_same_v<Q, Length>) return "Length";
    return "Frequency";
  }
};
TYPED_TEST_SUITE(QuantityArithmetic, AllQuantities, QuantityName);

TYPED_TEST(QuantityArithmetic, Comparisons) {
  const TypeParam a = Sample<TypeParam>::small();
  const TypeParam b = Sample<TypeParam>::large();
  EXPECT_TRUE(a == a);
  EXPECT_FALSE(a == b);
  EXPECT_TRUE(a != b);
  EXPECT_FALSE(a != a);
  EXPECT_TRUE(a < b);
  EXPECT_FALSE(b < a);
  EXPECT_FALSE(a < a);
  EXPECT_TRUE(a <= b);
  EXPECT_TRUE(a <= a);
  EXPECT_FALSE(b <= a);
  EXPECT_TRUE(b > a);
  EXPECT_FALSE(a > b);
  EXPECT_FALSE(a > a);
  EXPECT_TRUE(b >= a);
  EXPECT_TRUE(a >= a);
  EXPECT_FALSE(a >= b);
}

TYPED_TEST(QuantityArithmetic, SumDifferenceAndRatio) {
  const TypeParam a = Sample<TypeParam>::small();
  const TypeParam b = Sample<TypeParam>::large();
  EXPECT_EQ(a + a + a + a, b);
  EXPECT_EQ(b - a - a - a, a);
  EXPECT_EQ(b / a, 4.0);
  EXPECT_EQ(a / b, 0.25);
  TypeParam c = a;
  c += b;
  EXPECT_EQ(c, a + b);
  c -= a;
  EXPECT_EQ(c, b);
}

TYPED_TEST(QuantityArithmetic, ScaledByIntegers) {
  const TypeParam a = Sample<TypeParam>::small();
  const TypeParam b = Sample<TypeParam>::large();
  EXPECT_EQ(a * 4, b);
  EXPECT_EQ(4 * a, b);
  EXPECT_EQ(b / 4, a);
  EXPECT_EQ(a * std::uint64_t{4}, b);
}

TEST(UnitsArithmetic, RealQuantitiesScaleByFractions) {
  EXPECT_EQ(Time::ns(10) * 0.5, Time::ns(5));
  EXPECT_EQ(0.25 * Bandwidth::gbps(400), Bandwidth::gbps(100));
  EXPECT_EQ(Length::metres(30) / 2.5, Length::metres(12));
  EXPECT_EQ(Frequency::ghz(1) * 1.5, Frequency::ghz(1.5));
}

TEST(UnitsArithmetic, TimeDifferenceMayBeNegative) {
  EXPECT_EQ(Time::ns(2) - Time::ns(5), Time::ns(-3));
  EXPECT_LT(Time::ns(2) - Time::ns(5), Time{});
}

TEST(UnitsArithmetic, SizeDivisionByIntegerTruncates) {
  // Splitting a 1500 B buffer over 7 VLs leaves whole bytes per VL.
  EXPECT_EQ(Size::bytes(1500) / 7, Size::bytes(214));
  EXPECT_EQ(Size::kib(1) / Size::bytes(256), 4.0);
  EXPECT_EQ(Size::bytes(3) / Size::bytes(2), 1.5);
}

// ---------------------------------------------------------------- serialization

TEST(Serialization, JumboFrameAt400G) {
  const Time t = Size::bytes(9216) / Bandwidth::gbps(400);
  EXPECT_NEAR(t.in_ns(), 184.32, 184.32 * kRelTol);
}

TEST(Serialization, EthernetMtuAt100G) {
  const Time t = Size::bytes(1500) / Bandwidth::gbps(100);
  EXPECT_NEAR(t.in_ns(), 120, 120 * kRelTol);
}

TEST(Serialization, ParsedOperandsGiveSameTime) {
  EXPECT_NEAR((parse_size("9KiB") / parse_bandwidth("50GB/s")).in_ns(), 184.32, 184.32 * kRelTol);
  EXPECT_NEAR((parse_size("1.5KB") / parse_bandwidth("100 Gb/s")).in_ns(), 120, 120 * kRelTol);
}

TEST(Serialization, BytesMovedDuringTime) {
  // 184.32ns at 400Gb/s is 9215.99999... B in floating point; the frame is complete.
  EXPECT_EQ(Bandwidth::gbps(400) * Time::ns(184.32), Size::bytes(9216));
  EXPECT_EQ(Time::ns(120) * Bandwidth::gbps(100), Size::bytes(1500));
  // 12.5 B in 1ns at 100Gb/s: only whole bytes have arrived.
  EXPECT_EQ(Bandwidth::gbps(100) * Time::ns(1), Size::bytes(12));
  EXPECT_EQ(Bandwidth::gbps(100) * Time::ps(79), Size::bytes(0));
  EXPECT_EQ(Bandwidth::gbps(100) * Time::ps(80), Size::bytes(1));
}

TEST(Serialization, NoBytesMovedWithoutTimeOrRate) {
  EXPECT_EQ(Bandwidth::gbps(400) * Time{}, Size{});
  EXPECT_EQ(Bandwidth::gbps(400) * Time::ns(-5), Size{});
  EXPECT_EQ(Bandwidth{} * Time::ns(5), Size{});
}

TEST(Serialization, SizeSurvivesSerializeThenMeasure) {
  // The link model computes a tail time from a size and later the bytes that
  // arrived by that time; every packet must come out whole.
  for (const double gbps : {1.0, 10.0, 25.0, 40.0, 50.0, 56.0, 100.0, 200.0, 400.0, 800.0}) {
    const Bandwidth rate = Bandwidth::gbps(gbps);
    for (std::uint64_t bytes = 1; bytes <= 10000; bytes += 7) {
      const Size s = Size::bytes(bytes);
      ASSERT_EQ(rate * (s / rate), s) << gbps << "Gb/s";
    }
  }
}

// ---------------------------------------------------------------- parsing values

TEST(ParseBandwidth, EveryUnit) {
  struct Case {
    const char* text;
    double bps;
  };
  for (const Case& c : {Case{"1b/s", 1}, Case{"1Kb/s", 1e3}, Case{"1Mb/s", 1e6}, Case{"1Gb/s", 1e9},
                        Case{"1Tb/s", 1e12}, Case{"1B/s", 8}, Case{"1KB/s", 8e3},
                        Case{"1MB/s", 8e6}, Case{"1GB/s", 8e9}, Case{"1TB/s", 8e12}}) {
    EXPECT_EQ(parse_bandwidth(c.text).bps(), c.bps) << c.text;
  }
}

TEST(ParseBandwidth, LinkRates) {
  EXPECT_EQ(parse_bandwidth("400Gb/s"), Bandwidth::gbps(400));
  EXPECT_EQ(parse_bandwidth("400 Gb/s"), Bandwidth::gbps(400));
  EXPECT_EQ(parse_bandwidth("50GB/s").bps(), 400e9);
  EXPECT_EQ(parse_bandwidth("1.6Tb/s"), Bandwidth::gbps(1600));
  EXPECT_EQ(parse_bandwidth("25.78125Gb/s").bps(), 25.78125e9);
}

TEST(ParseTime, EveryUnit) {
  struct Case {
    const char* text;
    double seconds;
  };
  for (const Case& c : {Case{"3fs", 3e-15}, Case{"3ps", 3e-12}, Case{"3ns", 3e-9},
                        Case{"3us", 3e-6}, Case{"3ms", 3e-3}, Case{"3s", 3}}) {
    EXPECT_EQ(parse_time(c.text).in_seconds(), c.seconds) << c.text;
  }
}

TEST(ParseTime, ExactDecimal) {
  EXPECT_NEAR(parse_time("2.5ns").in_ps(), 2500, 2500 * 1e-9);
  EXPECT_EQ(parse_time("2.5ns"), Time::ns(2.5));
  EXPECT_EQ(parse_time("2.5 ns"), Time::ns(2.5));
  // One rounding from the written decimal: the nearest double to 1e-10 s.
  EXPECT_EQ(parse_time("0.1ns").in_seconds(), 1e-10);
  EXPECT_EQ(parse_time("100ps").in_seconds(), 1e-10);
  EXPECT_EQ(parse_time("1e3ps"), parse_time("1ns"));
}

TEST(ParseSize, DecimalUnits) {
  EXPECT_EQ(parse_size("1500B").in_bytes(), 1500u);
  EXPECT_EQ(parse_size("2KB").in_bytes(), 2000u);
  EXPECT_EQ(parse_size("2MB").in_bytes(), 2000000u);
  EXPECT_EQ(parse_size("2GB").in_bytes(), 2000000000u);
  EXPECT_EQ(parse_size("2TB").in_bytes(), 2000000000000u);
}

TEST(ParseSize, BinaryUnits) {
  EXPECT_EQ(parse_size("4KiB").in_bytes(), 4096u);
  EXPECT_EQ(parse_size("2MiB").in_bytes(), 2u << 20);
  EXPECT_EQ(parse_size("2GiB").in_bytes(), std::uint64_t{2} << 30);
  EXPECT_EQ(parse_size("2TiB").in_bytes(), std::uint64_t{2} << 40);
}

TEST(ParseSize, BinaryAndDecimalDiffer) {
  EXPECT_EQ(parse_size("1KB").in_bytes(), 1000u);
  EXPECT_EQ(parse_size("1KiB").in_bytes(), 1024u);
  EXPECT_NE(parse_size("1MB"), parse_size("1MiB"));
}

TEST(ParseSize, FractionsThatAreWholeBytes) {
  EXPECT_EQ(parse_size("1.5KiB").in_bytes(), 1536u);
  EXPECT_EQ(parse_size("0.5KB").in_bytes(), 500u);
  EXPECT_EQ(parse_size("2.5e-3MB").in_bytes(), 2500u);
  EXPECT_EQ(parse_size("1e3B").in_bytes(), 1000u);
  EXPECT_EQ(parse_size("9216.000B").in_bytes(), 9216u);
  EXPECT_EQ(parse_size("0.25MiB").in_bytes(), 262144u);
  // 2^-30 GiB is exactly one byte.
  EXPECT_EQ(parse_size("0.000000000931322574615478515625GiB").in_bytes(), 1u);
}

TEST(ParseSize, FullSixtyFourBitRange) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(parse_size("18446744073709551615B").in_bytes(), kMax);
  EXPECT_EQ(parse_size("16777215TiB").in_bytes(), std::uint64_t{16777215} << 40);
  EXPECT_EQ(parse_size("0B").in_bytes(), 0u);
  EXPECT_EQ(parse_size("0.0TB").in_bytes(), 0u);
}

TEST(ParseLength, EveryUnit) {
  EXPECT_EQ(parse_length("5mm").in_metres(), 0.005);
  EXPECT_EQ(parse_length("5cm").in_metres(), 0.05);
  EXPECT_EQ(parse_length("5m").in_metres(), 5);
  EXPECT_EQ(parse_length("5km").in_metres(), 5000);
  EXPECT_EQ(parse_length("30m"), Length::metres(30));
  EXPECT_EQ(parse_length("2.5 cm").in_metres(), 0.025);
}

TEST(ParseFrequency, EveryUnit) {
  EXPECT_EQ(parse_frequency("50Hz").in_hertz(), 50);
  EXPECT_EQ(parse_frequency("32.768kHz").in_hertz(), 32768);
  EXPECT_EQ(parse_frequency("156.25MHz").in_hertz(), 156.25e6);
  EXPECT_EQ(parse_frequency("1.5GHz"), Frequency::ghz(1.5));
}

TEST(ParseNumber, AcceptedForms) {
  EXPECT_EQ(parse_time("0s"), Time{});
  EXPECT_EQ(parse_time("0.000ns"), Time{});
  EXPECT_EQ(parse_time("007ns"), Time::ns(7));
  EXPECT_EQ(parse_time("2.50ns"), Time::ns(2.5));
  EXPECT_EQ(parse_time("1E3ps"), Time::ns(1));
  EXPECT_EQ(parse_time("1e+3ps"), Time::ns(1));
  EXPECT_EQ(parse_time("25e-1ns"), Time::ns(2.5));
  EXPECT_EQ(parse_time("0.0025e3ns"), Time::ns(2.5));
  EXPECT_EQ(parse_time("0e999999999999999999999s"), Time{});
}

// ---------------------------------------------------------------- parsing errors

TEST(ParseErrors, MessageMatchesDocumentedExample) {
  EXPECT_THAT([] { parse_bandwidth("400G"); },
              ThrowsMessage<UnitError>(HasSubstr(
                  "expected a bandwidth such as '400Gb/s' (units: b/s, Kb/s, Mb/s, Gb/s, Tb/s, "
                  "B/s, KB/s, MB/s, GB/s, TB/s), got '400G'")));
}

TEST(ParseErrors, EveryMessageNamesQuantityListsUnitsAndQuotesText) {
  for (const ParserCase& p : all_parsers()) {
    for (const char* raw : {"", "5", "5 parsecs", "-5", "x"}) {
      const std::string text = raw;
      SCOPED_TRACE(p.name + " '" + text + "'");
      EXPECT_THAT(parsing(p, text),
                  ThrowsMessage<UnitError>(
                      AllOf(HasSubstr("expected " + p.noun + " such as '" + p.example + "'"),
                            HasSubstr(p.units), HasSubstr("got '" + text + "'"))));
    }
  }
}

TEST(ParseErrors, EmptyText) {
  for (const ParserCase& p : all_parsers()) {
    SCOPED_TRACE(p.name);
    EXPECT_THAT(parsing(p, ""), ThrowsMessage<UnitError>(HasSubstr("got '': empty text")));
  }
}

TEST(ParseErrors, MissingUnit) {
  for (const ParserCase& p : all_parsers()) {
    for (const char* text : {"400", "2.5", "1e3", "0"}) {
      SCOPED_TRACE(p.name + " " + text);
      EXPECT_THAT(parsing(p, text), ThrowsMessage<UnitError>(HasSubstr("missing unit")));
    }
  }
}

TEST(ParseErrors, UnknownUnit) {
  EXPECT_THAT([] { parse_bandwidth("400G"); },
              ThrowsMessage<UnitError>(HasSubstr("unknown unit 'G'")));
  EXPECT_THAT([] { parse_bandwidth("400Gbps"); },
              ThrowsMessage<UnitError>(HasSubstr("unknown unit 'Gbps'")));
  EXPECT_THAT([] { parse_time("5 sec"); },
              ThrowsMessage<UnitError>(HasSubstr("unknown unit 'sec'")));
  EXPECT_THAT([] { parse_time("5µs"); }, ThrowsMessage<UnitError>(HasSubstr("unknown unit")));
  EXPECT_THAT([] { parse_size("4KiB/s"); },
              ThrowsMessage<UnitError>(HasSubstr("unknown unit 'KiB/s'")));
  EXPECT_THAT([] { parse_size("4Gb/s"); },
              ThrowsMessage<UnitError>(HasSubstr("unknown unit 'Gb/s'")));
  EXPECT_THAT([] { parse_length("3ft"); },
              ThrowsMessage<UnitError>(HasSubstr("unknown unit 'ft'")));
  EXPECT_THAT([] { parse_frequency("1.5GHz,"); },
              ThrowsMessage<UnitError>(HasSubstr("unknown unit 'GHz,'")));
}

TEST(ParseErrors, UnitsAreCaseSensitive) {
  // b is bits and B bytes; m is milli and M mega: case carries meaning.
  struct Case {
    std::function<void(std::string_view)> parse;
    const char* text;
  };
  const auto bw = [](std::string_view t) { parse_bandwidth(t); };
  const auto time = [](std::string_view t) { parse_time(t); };
  const auto size = [](std::string_view t) { parse_size(t); };
  const auto length = [](std::string_view t) { parse_length(t); };
  const auto freq = [](std::string_view t) { parse_frequency(t); };
  for (const Case& c :
       {Case{bw, "400gb/s"}, Case{bw, "400GB/S"}, Case{bw, "1kb/s"}, Case{time, "5NS"},
        Case{time, "5S"}, Case{time, "5Ms"}, Case{size, "4kib"}, Case{size, "4KIB"},
        Case{size, "4b"}, Case{size, "4kB"}, Case{length, "30M"}, Case{length, "1KM"},
        Case{freq, "1ghz"}, Case{freq, "1KHz"}, Case{freq, "1hz"}}) {
    SCOPED_TRACE(c.text);
    EXPECT_THAT([&] { c.parse(c.text); }, ThrowsMessage<UnitError>(HasSubstr("unknown unit")));
  }
}

TEST(ParseErrors, MalformedNumber) {
  struct Case {
    const char* text;
    const char* number;
  };
  for (const Case& c :
       {Case{"4..0ns", "4..0"}, Case{"1.ns", "1."}, Case{".5ns", ".5"}, Case{"1ens", "1e"},
        Case{"1e+ns", "1e+"}, Case{"+5ns", "+5"}, Case{"1.2.3ns", "1.2.3"}, Case{"5-3ns", "5-3"},
        Case{"1e2.5ns", "1e2.5"}, Case{"--5ns", "-5"}}) {
    SCOPED_TRACE(c.text);
    EXPECT_THAT(
        [&] { parse_time(c.text); },
        ThrowsMessage<UnitError>(HasSubstr(std::string("malformed number '") + c.number + "'")));
  }
}

TEST(ParseErrors, MissingNumber) {
  for (const char* text : {"ns", "inf s", "nan s", "x5ns"}) {
    SCOPED_TRACE(text);
    EXPECT_THAT([&] { parse_time(text); }, ThrowsMessage<UnitError>(HasSubstr("missing number")));
  }
}

TEST(ParseErrors, NegativeValue) {
  for (const ParserCase& p : all_parsers()) {
    for (const char* text : {"-5ns", "-400Gb/s", "-1B", "-30m", "-1GHz", "-0.5 s", "-1e3KiB"}) {
      SCOPED_TRACE(p.name + " " + text);
      EXPECT_THAT(parsing(p, text), ThrowsMessage<UnitError>(HasSubstr("negative value")));
    }
  }
}

TEST(ParseErrors, WhitespaceIsStrict) {
  for (const char* text : {" 5ns", "5ns ", "\t5ns", "5ns\n"}) {
    SCOPED_TRACE(text);
    EXPECT_THAT([&] { parse_time(text); },
                ThrowsMessage<UnitError>(HasSubstr("unexpected leading or trailing whitespace")));
  }
  for (const char* text : {"5  ns", "5 \tns", "5\tns"}) {
    SCOPED_TRACE(text);
    EXPECT_THAT(
        [&] { parse_time(text); },
        ThrowsMessage<UnitError>(HasSubstr("only a single space may separate number and unit")));
  }
}

TEST(ParseErrors, OutOfRange) {
  EXPECT_THAT([] { parse_time("1e400s"); },
              ThrowsMessage<UnitError>(HasSubstr("value out of range")));
  EXPECT_THAT([] { parse_time("1e-400s"); },
              ThrowsMessage<UnitError>(HasSubstr("value out of range")));
  EXPECT_THAT([] { parse_bandwidth("1e99999999999999999999Tb/s"); },
              ThrowsMessage<UnitError>(HasSubstr("value out of range")));
  EXPECT_THAT([] { parse_size("18446744073709551616B"); },
              ThrowsMessage<UnitError>(HasSubstr("value out of range")));
  EXPECT_THAT([] { parse_size("16777216TiB"); },
              ThrowsMessage<UnitError>(HasSubstr("value out of range")));
  EXPECT_THAT([] { parse_size("1e20B"); },
              ThrowsMessage<UnitError>(HasSubstr("value out of range")));
}

TEST(ParseErrors, SizeMustBeWholeBytes) {
  for (const char* text : {"0.3B", "1.5B", "0.1KiB", "1e-1B", "0.0001KB", "1e-999999B"}) {
    SCOPED_TRACE(text);
    EXPECT_THAT([&] { parse_size(text); },
                ThrowsMessage<UnitError>(HasSubstr("not a whole number of bytes")));
  }
}

TEST(ParseErrors, UnitErrorIsAnInvalidArgument) {
  EXPECT_THROW(parse_time("fast"), std::invalid_argument);
  try {
    parse_size("1.5 bytes");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("got '1.5 bytes'"));
  }
}

// ---------------------------------------------------------------- formatting

TEST(Format, DocumentedExamples) {
  EXPECT_EQ(to_string(Bandwidth::gbps(400)), "400Gb/s");
  EXPECT_EQ(to_string(Time::ns(2.5)), "2.5ns");
  EXPECT_EQ(to_string(Size::kib(4)), "4KiB");
  EXPECT_EQ(to_string(Size::bytes(9216)), "9KiB");
  EXPECT_EQ(to_string(Size::bytes(1500)), "1500B");
  EXPECT_EQ(to_string(Length::metres(30)), "30m");
  EXPECT_EQ(to_string(Frequency::ghz(1.5)), "1.5GHz");
}

TEST(Format, BandwidthInBitsWithDecimalPrefix) {
  EXPECT_EQ(to_string(Bandwidth::bits_per_second(0)), "0b/s");
  EXPECT_EQ(to_string(Bandwidth::bits_per_second(8)), "8b/s");
  EXPECT_EQ(to_string(Bandwidth::bits_per_second(9600)), "9.6Kb/s");
  EXPECT_EQ(to_string(Bandwidth::bits_per_second(999e6)), "999Mb/s");
  EXPECT_EQ(to_string(Bandwidth::gbps(25.78125)), "25.7812Gb/s");
  EXPECT_EQ(to_string(Bandwidth::gbps(1600)), "1.6Tb/s");
  EXPECT_EQ(to_string(parse_bandwidth("50GB/s")), "400Gb/s");
}

TEST(Format, TimeEveryPrefix) {
  EXPECT_EQ(to_string(Time{}), "0s");
  EXPECT_EQ(to_string(Time::seconds(5e-15)), "5fs");
  EXPECT_EQ(to_string(Time::ps(80)), "80ps");
  EXPECT_EQ(to_string(Time::ns(184.32)), "184.32ns");
  EXPECT_EQ(to_string(Time::us(1.5)), "1.5us");
  EXPECT_EQ(to_string(Time::seconds(0.002)), "2ms");
  EXPECT_EQ(to_string(Time::seconds(3600)), "3600s");
  EXPECT_EQ(to_string(Time::ns(1000)), "1us");
  EXPECT_EQ(to_string(Time::ns(-3)), "-3ns");
}

TEST(Format, SixSignificantDigitsWithoutTrailingZeros) {
  EXPECT_EQ(to_string(Time::ns(123.4567)), "123.457ns");
  EXPECT_EQ(to_string(Time::ns(2.50)), "2.5ns");
  EXPECT_EQ(to_string(Time::ns(100)), "100ns");
  EXPECT_EQ(to_string(Frequency::ghz(2) / 3), "666.667MHz");
  // Rounding that reaches 1000 moves up a prefix instead of printing "1000ns".
  EXPECT_EQ(to_string(Time::ns(999.9999)), "1us");
  EXPECT_EQ(to_string(Time::ns(999.999)), "999.999ns");
}

TEST(Format, SizeExactWithBinaryPrefix) {
  EXPECT_EQ(to_string(Size{}), "0B");
  EXPECT_EQ(to_string(Size::bytes(1)), "1B");
  EXPECT_EQ(to_string(Size::bytes(1023)), "1023B");
  EXPECT_EQ(to_string(Size::bytes(1025)), "1025B");
  EXPECT_EQ(to_string(Size::bytes(1536)), "1536B");
  EXPECT_EQ(to_string(Size::bytes(1000000)), "1000000B");
  EXPECT_EQ(to_string(Size::kib(1024)), "1MiB");
  EXPECT_EQ(to_string(Size::kib(1536)), "1536KiB");
  EXPECT_EQ(to_string(Size::bytes(std::uint64_t{5} << 30)), "5GiB");
  EXPECT_EQ(to_string(Size::bytes(std::uint64_t{3} << 40)), "3TiB");
  EXPECT_EQ(to_string(Size::bytes(std::uint64_t{2048} << 40)), "2048TiB");
  EXPECT_EQ(to_string(Size::bytes(std::numeric_limits<std::uint64_t>::max())),
            "18446744073709551615B");
}

TEST(Format, LengthStepsByThousand) {
  EXPECT_EQ(to_string(Length::metres(0.5)), "500mm");
  EXPECT_EQ(to_string(Length::metres(0.05)), "50mm");
  EXPECT_EQ(to_string(Length::metres(2)), "2m");
  EXPECT_EQ(to_string(Length::metres(1500)), "1.5km");
  EXPECT_EQ(to_string(parse_length("3cm")), "30mm");
}

TEST(Format, FrequencyEveryPrefix) {
  EXPECT_EQ(to_string(Frequency::hertz(50)), "50Hz");
  EXPECT_EQ(to_string(Frequency::hertz(32768)), "32.768kHz");
  EXPECT_EQ(to_string(Frequency::hertz(156.25e6)), "156.25MHz");
  EXPECT_EQ(to_string(Frequency::ghz(1.5)), "1.5GHz");
}

TEST(Format, ExamplesRoundTripExactly) {
  EXPECT_EQ(parse_bandwidth(to_string(Bandwidth::gbps(400))), Bandwidth::gbps(400));
  EXPECT_EQ(parse_time(to_string(Time::ns(2.5))), Time::ns(2.5));
  EXPECT_EQ(parse_size(to_string(Size::kib(4))), Size::kib(4));
  EXPECT_EQ(parse_size(to_string(Size::bytes(9216))), Size::bytes(9216));
  EXPECT_EQ(parse_size(to_string(Size::bytes(1500))), Size::bytes(1500));
  EXPECT_EQ(parse_length(to_string(Length::metres(30))), Length::metres(30));
  EXPECT_EQ(parse_frequency(to_string(Frequency::ghz(1.5))), Frequency::ghz(1.5));
}

TEST(Format, TextRoundTrips) {
  // Configuration echoed into a report reads back as the same text.
  for (const char* text : {"400Gb/s", "25.7812Gb/s", "1.6Tb/s", "8b/s"}) {
    EXPECT_EQ(to_string(parse_bandwidth(text)), text);
  }
  for (const char* text : {"2.5ns", "184.32ns", "5fs", "80ps", "1.5us", "2ms", "3600s"}) {
    EXPECT_EQ(to_string(parse_time(text)), text);
  }
  for (const char* text : {"4KiB", "1500B", "1MiB", "3TiB"})
    EXPECT_EQ(to_string(parse_size(text)), text);
  for (const char* text : {"30m", "500mm", "1.5km"}) EXPECT_EQ(to_string(parse_length(text)), text);
  for (const char* text : {"50Hz", "32.768kHz", "1.5GHz"})
    EXPECT_EQ(to_string(parse_frequency(text)), text);
}

TEST(Format, EverySizeRoundTrips) {
  for (std::uint64_t bytes = 0; bytes < 70000; ++bytes) {
    ASSERT_EQ(parse_size(to_string(Size::bytes(bytes))).in_bytes(), bytes);
  }
}

TEST(Format, RealQuantitiesRoundTripWithinPrintedPrecision) {
  for (const double mantissa : {1.0, 1.5, 2.5, 9.99999, 123.456, 999.999}) {
    for (double scale = 1e-15; scale < 1e4; scale *= 10) {
      const Time t = Time::seconds(mantissa * scale);
      EXPECT_NEAR(parse_time(to_string(t)).in_seconds(), t.in_seconds(), t.in_seconds() * 1e-12)
          << to_string(t);
    }
  }
}

}  // namespace
}  // namespace fabricsim::hw
