// Validation checks (ctest -L validation, docs/validation.md). A tier test that
// reproduces a closed form or a published result asserts it through one of the
// functions below, which also record the check, its source, the expected and measured
// values and the tolerance as a test property; scripts/validation_report.sh runs the
// tests labelled `validation` (tests/validation_labels.cmake: list every test that
// calls these there) and writes docs/validation.md from those properties. Each check
// is made by one test only.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace fabricsim::testing {

/// What docs/validation.md prints for one check.
struct Check {
  const char* section;  ///< report section: Phy, Fabric, Switch, Collectives, Nic or Training
  std::string what;     ///< the quantity and the closed form or result it is held against
  std::string source;   ///< the standard, paper or document the expected value comes from
};

/// `v` as the report prints it (6 significant digits).
inline std::string report_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

/// Asserts expected + low <= measured <= expected + high and records the check as the
/// property validation_check_N (N = 1, 2 ... within the test, a JSON object).
inline void expect_within(const Check& c, double measured, double expected, double low, double high,
                          const std::string& unit, const std::string& tolerance) {
  static const ::testing::TestInfo* test = nullptr;
  static int index = 0;
  const ::testing::TestInfo* now = ::testing::UnitTest::GetInstance()->current_test_info();
  index = now == test ? index + 1 : 1;
  test = now;
  const bool within = measured >= expected + low && measured <= expected + high;
  const nlohmann::json record = {{"section", c.section},
                                 {"check", c.what},
                                 {"source", c.source},
                                 {"measured", report_number(measured)},
                                 {"expected", report_number(expected)},
                                 {"unit", unit},
                                 {"tolerance", tolerance},
                                 {"within", within}};
  ::testing::Test::RecordProperty("validation_check_" + std::to_string(index), record.dump());
  EXPECT_GE(measured, expected + low) << c.what << " (" << c.source << ")";
  EXPECT_LE(measured, expected + high) << c.what << " (" << c.source << ")";
}

/// |measured - expected| <= tol.
inline void expect_near(const Check& c, double measured, double expected, double tol, const std::string& unit) {
  expect_within(c, measured, expected, -tol, tol, unit,
                "+/- " + report_number(tol) + (unit.empty() ? "" : " " + unit));
}

/// |measured - expected| <= rel x |expected|; below 1e-6 the report calls it exact.
inline void expect_relative(const Check& c, double measured, double expected, double rel, const std::string& unit) {
  const double t = std::abs(expected) * rel;
  expect_within(c, measured, expected, -t, t, unit,
                rel < 1e-6 ? "exact (" + report_number(rel) + " relative)" : "+/- " + report_number(100 * rel) + "%");
}

}  // namespace fabricsim::testing
