// `fabricsim regress`: regression testbenches of a user's designs (docs/regress.md). A
// suite file lists tests (a configuration, overrides, the implementations of the
// RTL-capable blocks to run it under, the results.json metrics to check, each with a
// tolerance); each (test, implementation) is a point run in its own child process, its
// metrics compared with the point's golden file. A summary, regress.json and JUnit XML
// report the outcome; --update-goldens rewrites the goldens from the values measured.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/param_spec.h"
#include "sim/config.h"
#include "sim/progress.h"
#include "tlm/rtl_allocator.h"

namespace fabricsim::sim {

/// How far a measured value may be from its golden: it passes when
/// |value - golden| <= max(absolute, relative x |golden|); both 0 is `exact` (equal JSON
/// values). Text, booleans and null are always compared exactly.
struct Tolerance {
  double relative = 0;  ///< fraction of |golden|
  double absolute = 0;  ///< in the metric's unit
  bool exact() const { return relative == 0 && absolute == 0; }
  bool accepts(const nlohmann::json& golden, const nlohmann::json& value) const;
  /// "exact", "relative 0.01", "absolute 5", "relative 0.01 or absolute 5".
  std::string text() const;
};

/// One checked metric: a dotted path into results.json and its tolerance.
struct RegressMetric {
  std::string path;                 ///< e.g. latency.network_latency_ns.p99 (array elements by index)
  std::optional<Tolerance> tolerance;  ///< absent: the suite default for the value's kind
};

/// One test: a configuration with overrides, run under each implementation listed.
struct RegressTest {
  std::string name;
  std::string config;                          ///< resolved against the suite file's folder
  std::vector<Override> overrides;             ///< the suite's `set:`, then the test's
  std::vector<tlm_fabric::AllocatorImpl> impl;  ///< one point each
  std::vector<std::string> impl_keys;           ///< the `*_impl` keys each point sets (`blocks:`)
  std::string impl_origin;                      ///< where `blocks:` or `impl:` is (errors on those keys)
  std::vector<RegressMetric> metrics;
};

struct RegressSuite {
  std::string file;
  std::string goldens;        ///< folder of the golden files, resolved against the suite's folder
  Tolerance count_tolerance;  ///< default for integer metrics (counts)
  Tolerance value_tolerance;  ///< default for other numbers (times, loads, rates)
  std::vector<RegressTest> tests;
};

/// The suite file's key tables (`regress`, `regress.defaults`, `regress.tests[i]`,
/// `regress.tests[i].metrics[j]`, `tolerance`): docs/regress.md is generated from them.
const std::vector<hw::ParamBlock>& regress_param_blocks();

/// Reads and checks a suite file; errors are ConfigError with the file, key and line.
RegressSuite read_regress_suite(const std::string& file);

/// `value` at `path` in `results` (keys may hold dots, as p99.9: the longest key that
/// matches wins; a number selects an array element). Throws std::invalid_argument naming
/// the part of the path not found and the keys there.
const nlohmann::json& metric_value(const nlohmann::json& results, const std::string& path);

struct RegressOptions {
  std::string out_dir;       ///< points and reports; empty: results/regress_<suite stem>
  std::string junit;         ///< JUnit XML file; empty: OUT/junit.xml
  std::vector<std::string> only;  ///< run only the tests of these names; empty: every test
  bool update_goldens = false;
  int jobs = 0;              ///< simulations at once; 0: number of CPUs
  Verbosity verbosity = Verbosity::normal;
};

/// Runs the suite; returns 0 when every point that ran passed (or, with
/// update_goldens, had its golden written), else 1. Configuration errors throw
/// ConfigError (exit 2 in main).
int regress_command(const std::string& suite_file, const RegressOptions& options);

}  // namespace fabricsim::sim
