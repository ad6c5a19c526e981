// Running a regression suite (sim/regress.h): every point's configuration checked, the
// points run on the sweep's process pool (sim/sweep.h run_point), their metrics compared
// with the goldens (or the goldens rewritten), then the table, regress.json and JUnit XML.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <thread>

#include "sim/config_reader.h"
#include "sim/output_file.h"
#include "sim/process_pool.h"
#include "sim/regress.h"
#include "sim/sweep.h"

namespace fabricsim::sim {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

bool Tolerance::accepts(const nlohmann::json& golden, const nlohmann::json& value) const {
  if (exact() || !golden.is_number() || !value.is_number()) return golden == value;
  const double g = golden.get<double>(), v = value.get<double>();
  return std::fabs(v - g) <= std::max(absolute, relative * std::fabs(g));
}

std::string Tolerance::text() const {
  char buf[96];
  if (exact()) return "exact";
  if (absolute == 0) std::snprintf(buf, sizeof buf, "relative %g", relative);
  else if (relative == 0) std::snprintf(buf, sizeof buf, "absolute %g", absolute);
  else std::snprintf(buf, sizeof buf, "relative %g or absolute %g", relative, absolute);
  return buf;
}

const nlohmann::json& metric_value(const nlohmann::json& results, const std::string& path) {
  const nlohmann::json* at = &results;
  std::size_t pos = 0;
  const auto where = [&] { return pos == 0 ? std::string("the top of results.json") : path.substr(0, pos - 1); };
  while (pos <= path.size()) {
    const std::string rest = path.substr(pos);
    std::size_t len = 0;
    if (at->is_object()) {
      // The longest key that is a whole number of the remaining parts (p99.9 before p99).
      for (const auto& item : at->items())
        if (item.key().size() > len && rest.compare(0, item.key().size(), item.key()) == 0 &&
            (rest.size() == item.key().size() || rest[item.key().size()] == '.'))
          len = item.key().size();
      if (len == 0) {
        std::string keys;
        for (const auto& item : at->items()) keys += (keys.empty() ? "" : ", ") + item.key();
        throw std::invalid_argument("no '" + rest.substr(0, rest.find('.')) + "' in " + where() +
                                    (keys.empty() ? " (it is empty)" : " (keys: " + keys + ")"));
      }
      at = &(*at)[rest.substr(0, len)];
    } else if (at->is_array()) {
      len = std::min(rest.find('.'), rest.size());
      const std::string part = rest.substr(0, len);
      if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 9 ||
          std::stoul(part) >= at->size())
        throw std::invalid_argument(where() + " is a list of " + std::to_string(at->size()) + " entries" +
                                    (at->empty() ? std::string() : ": expected an index 0.." +
                                                                       std::to_string(at->size() - 1)) +
                                    ", got '" + part + "'");
      at = &(*at)[std::stoul(part)];
    } else {
      throw std::invalid_argument(where() + " is a value (" + at->dump() + "), not a section: no '" + rest + "' in it");
    }
    pos += len + 1;
  }
  return *at;
}

namespace {

constexpr int kRegressSchemaVersion = 1;
constexpr int kGoldenSchemaVersion = 1;

enum class Status { pass, fail, error, skipped, updated };
std::string_view status_name(Status s) {
  static const hw::EnumNames<Status> names{{Status::pass, "pass"},       {Status::fail, "fail"},
                                           {Status::error, "error"},     {Status::skipped, "skipped"},
                                           {Status::updated, "updated"}};
  return hw::name_of(names, s);
}

/// One metric of a point as checked: a failure message when it failed.
struct MetricCheck {
  std::string path;
  nlohmann::json golden, value;  ///< null when absent
  std::string tolerance;
  std::string failure;  ///< empty: passed
};

/// One (test, implementation) of the suite.
struct Point {
  const RegressTest* test = nullptr;
  tlm_fabric::AllocatorImpl impl = tlm_fabric::AllocatorImpl::tlm;
  std::string id;  ///< NAME.IMPL: its folder, golden file and JUnit case
  FabricConfig config;
  Status status = Status::pass;
  std::string message;  ///< why it failed, erred, was skipped or what the update changed
  std::vector<MetricCheck> metrics;
  double wall_s = 0;
};

bool rtl_built() {
  const auto models = tlm_fabric::rtl_allocator_models();
  return std::any_of(models.begin(), models.end(), [](const auto& m) { return !m.test_only; });
}

fs::path golden_file(const RegressSuite& suite, const Point& p) { return fs::path(suite.goldens) / (p.id + ".json"); }

/// Every point's configuration, read and checked before anything runs (its warnings
/// printed). An `rtl` or `lockstep` point in a build without RTL twins is checked as
/// `tlm` and skipped.
std::vector<Point> make_points(const RegressSuite& suite, const fs::path& dir, const RegressOptions& options) {
  std::vector<std::string> names;
  for (const auto& t : suite.tests) names.push_back(t.name);
  for (const auto& n : options.only)
    if (std::find(names.begin(), names.end(), n) == names.end())
      throw ConfigError("--test " + n, "", "no test of that name in " + suite.file + "; its tests: " + [&] {
        std::string all;
        for (const auto& m : names) all += (all.empty() ? "" : ", ") + m;
        return all;
      }());
  const bool rtl = rtl_built();
  std::vector<Point> points;
  for (const auto& t : suite.tests) {
    if (!options.only.empty() && std::find(options.only.begin(), options.only.end(), t.name) == options.only.end())
      continue;
    for (const auto impl : t.impl) {
      Point p;
      p.test = &t;
      p.impl = impl;
      p.id = t.name + "." + std::string(tlm_fabric::to_string(impl));
      const bool skip = impl != tlm_fabric::AllocatorImpl::tlm && !rtl;
      std::vector<Override> o = t.overrides;
      for (const auto& key : t.impl_keys)
        o.push_back({key + "=" + std::string(tlm_fabric::to_string(skip ? tlm_fabric::AllocatorImpl::tlm : impl)),
                     t.impl_origin});
      o.push_back({"output.directory=" + yaml_quoted((dir / "points" / p.id).string()), ""});
      o.push_back({"output.packet_csv=false", ""});
      p.config = load_config_with_origins(t.config, o);
      if (options.verbosity != Verbosity::quiet)
        for (const auto& w : p.config.warnings) std::cerr << "fabricsim: warning: " << p.id << ": " << w << "\n";
      if (skip) {
        p.status = Status::skipped;
        p.message = "this build has no RTL twins (build with -DFABRICSIM_RTL=ON to run " +
                    std::string(tlm_fabric::to_string(impl)) + " points)";
      }
      points.push_back(std::move(p));
    }
  }
  return points;
}

/// Why the point's run is not a result to check, or empty (then `r` holds its results).
std::string run_problem(const Point& p, int status, nlohmann::json& r) {
  std::ifstream in(fs::path(p.config.output.directory) / "results.json");
  if (!in) return "the run ended without results.json (exit status " + std::to_string(status) + ")";
  try {
    r = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    return std::string("results.json is unreadable: ") + e.what();
  }
  if (r.contains("error")) return "the run failed: " + r["error"].get<std::string>();
  if (r.contains("stall")) return "the fabric stalled: " + r["stall"].value("diagnosis", std::string("see results.json"));
  if (!r.value("scoreboard", nlohmann::json::object()).value("ok", false))
    return "the scoreboard failed (see \"scoreboard\" in results.json)";
  return "";
}

/// The measured values of the point's metrics; a path not in the results fails the point.
nlohmann::ordered_json measured(Point& p, const nlohmann::json& r) {
  nlohmann::ordered_json values = nlohmann::ordered_json::object();
  for (const auto& m : p.test->metrics) {
    try {
      values[m.path] = metric_value(r, m.path);
    } catch (const std::invalid_argument& e) {
      p.metrics.push_back({m.path, nullptr, nullptr, "", m.path + ": not in results.json: " + e.what()});
    }
  }
  return values;
}

void check_against_golden(const RegressSuite& suite, Point& p, const nlohmann::ordered_json& values) {
  const fs::path file = golden_file(suite, p);
  std::ifstream in(file);
  if (!in) {
    p.status = Status::fail;
    p.message = "no golden " + file.string() + " (review the results, then run with --update-goldens)";
    return;
  }
  nlohmann::json golden;
  try {
    golden = nlohmann::json::parse(in).at("metrics");
    if (!golden.is_object()) throw std::runtime_error("its metrics are not a mapping of paths to values");
  } catch (const std::exception& e) {
    p.status = Status::fail;
    p.message = "golden " + file.string() + " is unreadable: " + e.what();
    return;
  }
  for (const auto& m : p.test->metrics) {
    if (!values.contains(m.path)) continue;  // not in results.json: already a failure
    MetricCheck c{m.path, golden.value(m.path, nlohmann::json()), values[m.path], "", ""};
    const Tolerance tol = !c.golden.is_number()          ? Tolerance{}
                          : m.tolerance                    ? *m.tolerance
                          : c.golden.is_number_integer() ? suite.count_tolerance
                                                           : suite.value_tolerance;
    c.tolerance = tol.text();
    if (!golden.contains(m.path))
      c.failure = m.path + ": not in the golden " + file.string() + " (review, then run with --update-goldens)";
    else if (!tol.accepts(c.golden, c.value))
      c.failure = m.path + ": golden " + c.golden.dump() + ", value " + c.value.dump() + ", tolerance " + c.tolerance;
    p.metrics.push_back(std::move(c));
  }
}

void write_golden(const RegressSuite& suite, Point& p, const nlohmann::ordered_json& values) {
  const fs::path file = golden_file(suite, p);
  nlohmann::json old;
  std::ifstream in(file);
  try {
    if (in) old = nlohmann::json::parse(in).at("metrics");
  } catch (const std::exception&) {
    old = nullptr;  // unreadable: rewritten
  }
  std::size_t changed = 0;
  for (const auto& [path, v] : values.items()) {
    const nlohmann::json before = old.is_object() ? old.value(path, nlohmann::json()) : nlohmann::json();
    p.metrics.push_back({path, before, v, "", ""});
    changed += before != nlohmann::json(v);
  }
  fs::create_directories(file.parent_path());
  const Json g{{"schema_version", kGoldenSchemaVersion},
               {"test", p.test->name},
               {"impl", tlm_fabric::to_string(p.impl)},
               {"metrics", values}};
  write_file_atomically(file, [&](std::ostream& out) { out << g.dump(2) << "\n"; });
  p.status = Status::updated;
  p.message = old.is_null() ? "golden written" : std::to_string(changed) + " of " + std::to_string(values.size()) +
                                                     " metrics changed";
}

/// The point's outcome from its run (status: the child's waitpid status).
void conclude(const RegressSuite& suite, Point& p, int status, bool update) {
  nlohmann::json r;
  const std::string problem = run_problem(p, status, r);
  if (!problem.empty()) {
    p.status = Status::error;
    p.message = problem;
    return;
  }
  const nlohmann::ordered_json values = measured(p, r);
  if (!p.metrics.empty()) {  // a path not in the results: nothing to compare or write
    p.status = Status::fail;
    p.message = p.metrics.front().failure;
    return;
  }
  if (update) return write_golden(suite, p, values);
  check_against_golden(suite, p, values);
  for (const auto& c : p.metrics)
    if (!c.failure.empty()) {
      p.status = Status::fail;
      if (p.message.empty()) p.message = c.failure;
    }
}

std::string xml_escaped(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\n': out += "&#10;"; break;
      case '\t': out += "&#9;"; break;
      default: out += static_cast<unsigned char>(c) < 0x20 ? '?' : c;  // not allowed in XML 1.0
    }
  }
  return out;
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

std::size_t count(const std::vector<Point>& points, Status s) {
  return static_cast<std::size_t>(
      std::count_if(points.begin(), points.end(), [&](const Point& p) { return p.status == s; }));
}

/// JUnit XML as Jenkins, GitLab and GitHub read it: a test case per point (class: the
/// suite and the test, name: the implementation); a metric out of tolerance or a missing
/// golden is a <failure>, a run that did not complete an <error>, a skipped point
/// <skipped/>; <system-out> names the point's results.json.
void write_junit(const fs::path& file, const RegressSuite& suite, const std::vector<Point>& points) {
  const std::string stem = fs::path(suite.file).stem().string();
  double total = 0;
  for (const auto& p : points) total += p.wall_s;
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  const std::string counts = "tests=\"" + std::to_string(points.size()) + "\" failures=\"" +
                             std::to_string(count(points, Status::fail)) + "\" errors=\"" +
                             std::to_string(count(points, Status::error)) + "\" skipped=\"" +
                             std::to_string(count(points, Status::skipped)) + "\" time=\"" + seconds(total) + "\"";
  x += "<testsuites name=\"fabricsim regress\" " + counts + ">\n";
  x += "  <testsuite name=\"" + xml_escaped(stem) + "\" " + counts + ">\n";
  for (const auto& p : points) {
    x += "    <testcase classname=\"" + xml_escaped(stem + "." + p.test->name) + "\" name=\"" +
         xml_escaped(std::string(tlm_fabric::to_string(p.impl))) + "\" time=\"" + seconds(p.wall_s) + "\">\n";
    std::string details;
    for (const auto& c : p.metrics)
      if (!c.failure.empty()) details += c.failure + "\n";
    if (p.status == Status::fail)
      x += "      <failure message=\"" + xml_escaped(p.message) + "\" type=\"" +
           (p.metrics.empty() ? "golden" : "metric") + "\">" + xml_escaped(details.empty() ? p.message : details) +
           "</failure>\n";
    else if (p.status == Status::error)
      x += "      <error message=\"" + xml_escaped(p.message) + "\" type=\"run\"/>\n";
    else if (p.status == Status::skipped)
      x += "      <skipped message=\"" + xml_escaped(p.message) + "\"/>\n";
    // Where the point's results are, for the engineer who reads the CI report.
    if (p.status != Status::skipped)
      x += "      <system-out>" + xml_escaped((fs::path(p.config.output.directory) / "results.json").string()) +
           "</system-out>\n";
    x += "    </testcase>\n";
  }
  x += "  </testsuite>\n</testsuites>\n";
  if (!file.parent_path().empty()) fs::create_directories(file.parent_path());
  write_file_atomically(file, [&](std::ostream& out) { out << x; });
}

void write_summary(const fs::path& file, const RegressSuite& suite, const std::vector<Point>& points, bool update) {
  Json rows = Json::array();
  for (const auto& p : points) {
    Json metrics = Json::array();
    for (const auto& c : p.metrics)
      metrics.push_back({{"path", c.path}, {"golden", c.golden}, {"value", c.value}, {"tolerance", c.tolerance},
                         {"ok", c.failure.empty()}});
    rows.push_back({{"test", p.test->name},
                    {"impl", tlm_fabric::to_string(p.impl)},
                    {"status", status_name(p.status)},
                    {"message", p.message},
                    {"golden", golden_file(suite, p).string()},
                    {"results", (fs::path(p.config.output.directory) / "results.json").string()},
                    {"wall_s", p.wall_s},
                    {"metrics", metrics}});
  }
  const Json report{{"schema_version", kRegressSchemaVersion}, {"suite", suite.file}, {"goldens", suite.goldens},
                    {"update_goldens", update}, {"points", rows}};
  write_file_atomically(file, [&](std::ostream& out) { out << report.dump(2) << "\n"; });
}

void print_table(const std::vector<Point>& points) {
  std::size_t w = 4;
  for (const auto& p : points) w = std::max(w, p.test->name.size());
  std::printf("%-*s %-8s %-8s %8s %8s\n", static_cast<int>(w), "test", "impl", "status", "metrics", "wall s");
  for (const auto& p : points) {
    std::size_t ok = 0;
    for (const auto& c : p.metrics) ok += c.failure.empty();
    const std::string m = p.metrics.empty() ? "-" : std::to_string(ok) + "/" + std::to_string(p.metrics.size());
    std::printf("%-*s %-8s %-8s %8s %8s", static_cast<int>(w), p.test->name.c_str(),
                std::string(tlm_fabric::to_string(p.impl)).c_str(), std::string(status_name(p.status)).c_str(),
                m.c_str(), p.status == Status::skipped ? "-" : seconds(p.wall_s).c_str());
    std::printf(p.status == Status::pass ? "\n" : "  %s\n", p.message.c_str());
  }
  for (const auto& p : points) {
    for (const auto& c : p.metrics)
      if (!c.failure.empty() && p.status == Status::fail)
        std::printf("FAIL %s: %s\n", p.id.c_str(), c.failure.c_str());
      else if (p.status == Status::updated && c.golden != c.value)
        std::printf("UPDATED %s: %s: %s -> %s\n", p.id.c_str(), c.path.c_str(), c.golden.dump().c_str(),
                    c.value.dump().c_str());
  }
}

/// Golden files of points the suite no longer has (a test renamed or removed, an
/// implementation dropped): warned about, left for the engineer to delete.
void warn_orphan_goldens(const RegressSuite& suite, const std::vector<Point>& points) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(suite.goldens, ec)) {
    if (e.path().extension() != ".json") continue;
    const std::string id = e.path().stem().string();
    if (std::none_of(points.begin(), points.end(), [&](const Point& p) { return p.id == id; }))
      std::cerr << "fabricsim: warning: " << e.path().string() << " is the golden of no point of " << suite.file
                << " (" << id << ")\n";
  }
}

}  // namespace

int regress_command(const std::string& suite_file, const RegressOptions& o) {
  const RegressSuite suite = read_regress_suite(suite_file);
  const fs::path dir = fs::absolute(o.out_dir.empty() ? "results/regress_" + fs::path(suite_file).stem().string()
                                                      : o.out_dir).lexically_normal();
  std::vector<Point> points = make_points(suite, dir, o);
  if (o.only.empty() && o.verbosity != Verbosity::quiet) warn_orphan_goldens(suite, points);
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (points[i].status != Status::skipped) {
      todo.push_back(i);
      std::error_code ec;
      fs::remove(fs::path(points[i].config.output.directory) / "results.json", ec);  // never an earlier run's
    }
  const int parallel = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (o.verbosity != Verbosity::quiet)
    std::printf("regress: %zu points, %zu to run, %zu skipped%s\n", points.size(), todo.size(),
                points.size() - todo.size(), o.update_goldens ? " (updating the goldens)" : "");
  std::fflush(stdout);
  Progress progress(o.verbosity);
  std::size_t done = 0;
  run_process_pool(
      todo.size(), parallel,
      [&](std::size_t i) {
        const Point& p = points[todo[i]];
        return run_point(p.config, "regress_point",
                         {{"test", p.test->name}, {"impl", tlm_fabric::to_string(p.impl)}});
      },
      [&](std::size_t i, int status, double wall_s) {
        Point& p = points[todo[i]];
        p.wall_s = wall_s;
        conclude(suite, p, status, o.update_goldens);
        ++done;
        if (o.verbosity == Verbosity::verbose) {
          progress.finish();
          std::printf("regress: [%zu/%zu] %s: %s in %.2f s\n", done, todo.size(), p.id.c_str(),
                      std::string(status_name(p.status)).c_str(), wall_s);
          std::fflush(stdout);
        }
        progress.update(static_cast<double>(done), static_cast<double>(todo.size()), "points", done == todo.size());
      });
  progress.finish();

  fs::create_directories(dir);
  const fs::path junit = o.junit.empty() ? dir / "junit.xml" : fs::absolute(o.junit);
  write_summary(dir / "regress.json", suite, points, o.update_goldens);
  write_junit(junit, suite, points);
  const std::size_t failed = count(points, Status::fail), errors = count(points, Status::error);
  if (o.verbosity != Verbosity::quiet) {
    print_table(points);
    std::printf("regress: %zu passed, %zu failed, %zu errors, %zu skipped, %zu goldens written; %s, %s\n",
                count(points, Status::pass), failed, errors, count(points, Status::skipped),
                count(points, Status::updated), (dir / "regress.json").string().c_str(), junit.string().c_str());
  }
  if (failed + errors)
    std::cerr << "fabricsim: regress: " << failed + errors << " of " << points.size() << " points "
              << (o.update_goldens ? "have no golden written" : "failed") << " (" << (dir / "regress.json").string()
              << "; each point's results in " << (dir / "points").string() << ")\n";
  return failed + errors == 0 ? 0 : 1;
}

}  // namespace fabricsim::sim
