// `fabricsim regress`: suites against goldens (pass, a value out of tolerance, a missing
// golden, --update-goldens), the JUnit XML (parsed by python3's xml.etree), suite file
// errors, rtl points skipped in a build without RTL twins, and the metric paths.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "command.h"
#include "temp_files.h"
#include "sim/config_params.h"
#include "sim/regress.h"

namespace {

namespace fs = std::filesystem;
using fabricsim::testing::run_command;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kSource = FABRICSIM_SOURCE_DIR;

fs::path temp_dir() { return fabricsim::testing::test_temp_dir("regress"); }

using fabricsim::testing::write_text;

nlohmann::json read_json(const fs::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

bool rtl_built() {
  for (const auto& m : fabricsim::tlm_fabric::rtl_allocator_models())
    if (!m.test_only) return true;
  return false;
}

// One test of the 16-port switch example, 5 us simulated: a fraction of a second.
std::string one_test_suite(const std::string& impl = "[tlm]") {
  return "goldens: goldens\n"
         "set:\n"
         "  simulation.duration: 5us\n"
         "  simulation.warmup: 1us\n"
         "tests:\n"
         "  - name: voq\n"
         "    config: " + kSource + "/examples/single_switch.yaml\n"
         "    set: {switch.buffer: voq, traffic.load: 0.7}\n"
         "    impl: " + impl + "\n"
         "    metrics:\n"
         "      - packets.delivered\n"
         "      - path: latency.network_latency_ns.p99\n"
         "        tolerance: {relative: 0.01}\n"
         "      - latency.network_latency_ns.p99.9\n";
}

std::string regress(const fs::path& dir, const std::string& suite, const std::string& extra = "") {
  return "regress " + (dir / suite).string() + " --out " + (dir / "out").string() + " --jobs 2 " + extra;
}

// The JUnit file parsed by python3's xml.etree (as CI tools parse it), as JSON: the
// counts of <testsuites> and, per <testcase>, its classname, name, the tag and message
// of its outcome element and its <system-out>.
nlohmann::json parse_junit(const fs::path& file) {
  const std::string script =
      "import json, sys, xml.etree.ElementTree as E\n"
      "root = E.parse(sys.argv[1]).getroot()\n"
      "assert root.tag == 'testsuites', root.tag\n"
      "cases = []\n"
      "for s in root.findall('testsuite'):\n"
      "  for c in s.findall('testcase'):\n"
      "    kids = [k for k in c if k.tag != 'system-out']\n"
      "    out = c.find('system-out')\n"
      "    cases.append({'suite': s.get('name'), 'classname': c.get('classname'), 'name': c.get('name'),\n"
      "                  'outcome': kids[0].tag if kids else 'pass',\n"
      "                  'message': kids[0].get('message') if kids else None,\n"
      "                  'out': out.text if out is not None else None})\n"
      "print(json.dumps({k: int(root.get(k)) for k in ('tests', 'failures', 'errors', 'skipped')} | {'cases': cases}))\n";
  const fs::path py = file.parent_path() / "parse_junit.py";
  write_text(py, script);
  FILE* f = popen(("/usr/bin/python3 " + py.string() + " " + file.string() + " 2>&1").c_str(), "r");
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  EXPECT_EQ(pclose(f), 0) << out;
  return nlohmann::json::parse(out);
}

// The golden of voq.tlm with `metric` set to `value`.
void set_golden(const fs::path& dir, const std::string& metric, const nlohmann::json& value) {
  const fs::path file = dir / "goldens" / "voq.tlm.json";
  nlohmann::json g = read_json(file);
  g["metrics"][metric] = value;
  write_text(file, g.dump(2));
}

TEST(Regress, ExampleSuitePassesAgainstItsGoldens) {
  const fs::path dir = temp_dir();
  const auto r = run_command("regress " + kSource + "/examples/regress/suite.yaml --out " + (dir / "out").string() +
                             " --junit " + (dir / "ci" / "junit.xml").string() + " --jobs 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("voq_islip             tlm      pass"));
  const nlohmann::json junit = parse_junit(dir / "ci" / "junit.xml");
  EXPECT_EQ(junit["tests"], 6);
  EXPECT_EQ(junit["failures"], 0);
  EXPECT_EQ(junit["errors"], 0);
  EXPECT_EQ(junit["skipped"], rtl_built() ? 0 : 3);
  EXPECT_EQ(junit["cases"][0]["classname"], "suite.voq_islip");
  EXPECT_EQ(junit["cases"][0]["name"], "tlm");
  EXPECT_EQ(junit["cases"][0]["out"], (dir / "out" / "points" / "voq_islip.tlm" / "results.json").string());
  const nlohmann::json rtl_out = (dir / "out" / "points" / "voq_islip.rtl" / "results.json").string();
  EXPECT_EQ(junit["cases"][1]["out"], rtl_built() ? rtl_out : nlohmann::json());  // none when skipped
  const nlohmann::json summary = read_json(dir / "out" / "regress.json");
  ASSERT_EQ(summary["points"].size(), 6u);
  for (const auto& p : summary["points"]) EXPECT_NE(p["status"], "fail") << p.dump();
  if (rtl_built()) {  // `blocks:` chose the keys the lockstep point set
    const nlohmann::json point = read_json(dir / "out" / "points" / "ib_vl_arbitration.lockstep" / "results.json");
    EXPECT_EQ(point["config"]["switch"]["vl_arbiter_impl"], "lockstep");
    EXPECT_EQ(point["config"]["nic"]["vl_arbiter_impl"], "lockstep");
    EXPECT_FALSE(point["config"]["switch"].contains("allocator_impl")) << "not in blocks: left as configured";
  }
}

TEST(Regress, ABlockTheFabricCannotRunIsAnErrorAtBlocks) {
  if (!rtl_built()) GTEST_SKIP() << "rtl points are skipped in a build without RTL twins";
  const fs::path dir = temp_dir();
  // The example's egress scheduler is not the InfiniBand VL arbiter the RTL twins.
  write_text(dir / "suite.yaml", one_test_suite("[rtl]\n    blocks: [allocator, vl_arbiter]"));
  const auto r = run_command(regress(dir, "suite.yaml"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("suite.yaml:10:13: switch.vl_arbiter_impl: the RTL VL arbiter twins ib_vl_arb"));
}

TEST(Regress, UpdateGoldensWritesTheMeasuredValuesThenPasses) {
  const fs::path dir = temp_dir();
  write_text(dir / "suite.yaml", one_test_suite());
  auto r = run_command(regress(dir, "suite.yaml", "--update-goldens"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("golden written"));
  // The golden holds exactly the point's results.json values.
  const nlohmann::json g = read_json(dir / "goldens" / "voq.tlm.json");
  const nlohmann::json results = read_json(dir / "out" / "points" / "voq.tlm" / "results.json");
  EXPECT_EQ(g["test"], "voq");
  EXPECT_EQ(g["impl"], "tlm");
  EXPECT_EQ(g["metrics"]["packets.delivered"], results["packets"]["delivered"]);
  EXPECT_EQ(g["metrics"]["latency.network_latency_ns.p99"], results["latency"]["network_latency_ns"]["p99"]);
  EXPECT_EQ(g["metrics"]["latency.network_latency_ns.p99.9"], results["latency"]["network_latency_ns"]["p99.9"]);
  EXPECT_GT(g["metrics"]["packets.delivered"].get<int>(), 0);
  // A second update changes nothing; a check passes.
  r = run_command(regress(dir, "suite.yaml", "--update-goldens"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("0 of 3 metrics changed"));
  r = run_command(regress(dir, "suite.yaml"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("1 passed, 0 failed"));
  EXPECT_THAT(r.output, Not(HasSubstr("warning")));
  // A golden no point has (a renamed test) is warned about.
  fs::copy_file(dir / "goldens" / "voq.tlm.json", dir / "goldens" / "old_name.tlm.json");
  r = run_command(regress(dir, "suite.yaml"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("old_name.tlm.json is the golden of no point of " + (dir / "suite.yaml").string()));
  fs::remove(dir / "goldens" / "old_name.tlm.json");
  // An update after a perturbation restores the value and names the change.
  set_golden(dir, "packets.delivered", 1);
  r = run_command(regress(dir, "suite.yaml", "--update-goldens"));
  EXPECT_THAT(r.output, HasSubstr("1 of 3 metrics changed"));
  EXPECT_THAT(r.output, HasSubstr("UPDATED voq.tlm: packets.delivered: 1 -> " + results["packets"]["delivered"].dump()));
  EXPECT_EQ(read_json(dir / "goldens" / "voq.tlm.json"), g);
}

TEST(Regress, AValueOutOfToleranceFailsNamingGoldenValueAndTolerance) {
  const fs::path dir = temp_dir();
  write_text(dir / "suite.yaml", one_test_suite());
  ASSERT_EQ(run_command(regress(dir, "suite.yaml", "--update-goldens")).exit_code, 0);
  const nlohmann::json g = read_json(dir / "goldens" / "voq.tlm.json")["metrics"];
  const double p99 = g["latency.network_latency_ns.p99"].get<double>();

  // Within the 1% relative tolerance: passes.
  set_golden(dir, "latency.network_latency_ns.p99", p99 * 1.005);
  auto r = run_command(regress(dir, "suite.yaml"));
  EXPECT_EQ(r.exit_code, 0) << r.output;

  // 2% off: fails, with the golden, the value and the tolerance.
  const nlohmann::json off = p99 * 1.02;
  set_golden(dir, "latency.network_latency_ns.p99", off);
  r = run_command(regress(dir, "suite.yaml", "--junit " + (dir / "junit.xml").string()));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  const std::string message = "latency.network_latency_ns.p99: golden " + off.dump() + ", value " +
                              nlohmann::json(p99).dump() + ", tolerance relative 0.01";
  EXPECT_THAT(r.output, HasSubstr("FAIL voq.tlm: " + message));
  const nlohmann::json junit = parse_junit(dir / "junit.xml");
  EXPECT_EQ(junit["failures"], 1);
  EXPECT_EQ(junit["cases"][0]["outcome"], "failure");
  EXPECT_EQ(junit["cases"][0]["message"], message);
  const nlohmann::json point = read_json(dir / "out" / "regress.json")["points"][0];
  EXPECT_EQ(point["status"], "fail");
  EXPECT_EQ(point["metrics"][1]["ok"], false);
  EXPECT_EQ(point["metrics"][0]["ok"], true);

  // A count is exact by default: one packet off fails.
  set_golden(dir, "latency.network_latency_ns.p99", p99);
  set_golden(dir, "packets.delivered", g["packets.delivered"].get<int>() + 1);
  r = run_command(regress(dir, "suite.yaml"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("packets.delivered: golden " + std::to_string(g["packets.delivered"].get<int>() + 1) +
                                  ", value " + g["packets.delivered"].dump() + ", tolerance exact"));
  // Other numbers default to relative 1e-9: a change in the 7th digit fails.
  set_golden(dir, "packets.delivered", g["packets.delivered"]);
  set_golden(dir, "latency.network_latency_ns.p99.9", g["latency.network_latency_ns.p99.9"].get<double>() * (1 + 1e-7));
  r = run_command(regress(dir, "suite.yaml"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("tolerance relative 1e-09"));
}

TEST(Regress, AMissingGoldenFailsClearly) {
  const fs::path dir = temp_dir();
  write_text(dir / "suite.yaml", one_test_suite());
  const auto r = run_command(regress(dir, "suite.yaml", "--junit " + (dir / "junit.xml").string()));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("no golden " + (dir / "goldens" / "voq.tlm.json").string() +
                                  " (review the results, then run with --update-goldens)"));
  const nlohmann::json junit = parse_junit(dir / "junit.xml");
  EXPECT_EQ(junit["failures"], 1);
  EXPECT_THAT(junit["cases"][0]["message"].get<std::string>(), HasSubstr("no golden"));

  // A metric the golden lacks fails too.
  ASSERT_EQ(run_command(regress(dir, "suite.yaml", "--update-goldens")).exit_code, 0);
  nlohmann::json g = read_json(dir / "goldens" / "voq.tlm.json");
  g["metrics"].erase("packets.delivered");
  write_text(dir / "goldens" / "voq.tlm.json", g.dump());
  const auto r2 = run_command(regress(dir, "suite.yaml"));
  EXPECT_EQ(r2.exit_code, 1) << r2.output;
  EXPECT_THAT(r2.output, HasSubstr("packets.delivered: not in the golden"));
  // So does an unreadable one.
  write_text(dir / "goldens" / "voq.tlm.json", R"({"metrics": [1, 2]})");
  const auto r3 = run_command(regress(dir, "suite.yaml"));
  EXPECT_EQ(r3.exit_code, 1) << r3.output;
  EXPECT_THAT(r3.output, HasSubstr("voq.tlm.json is unreadable: its metrics are not a mapping"));
}

TEST(Regress, AMetricNotInTheResultsFailsListingTheKeys) {
  const fs::path dir = temp_dir();
  std::string suite = one_test_suite();
  suite.replace(suite.find("packets.delivered"), 17, "packets.deliverd");
  write_text(dir / "suite.yaml", suite);
  const auto r = run_command(regress(dir, "suite.yaml", "--update-goldens"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("packets.deliverd: not in results.json: no 'deliverd' in packets (keys: "));
  EXPECT_FALSE(fs::exists(dir / "goldens" / "voq.tlm.json"));
}

// --test runs the named tests only; an unknown name lists the suite's tests.
TEST(Regress, TestOptionRunsTheNamedTestsOnly) {
  const fs::path dir = temp_dir();
  const std::string suite = kSource + "/examples/regress/suite.yaml";
  const auto r = run_command("regress " + suite + " --out " + (dir / "out").string() + " --test input_fifo_saturation");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("regress: 1 points, 1 to run, 0 skipped"));
  EXPECT_EQ(read_json(dir / "out" / "regress.json")["points"][0]["test"], "input_fifo_saturation");
  const auto bad = run_command("regress " + suite + " --out " + (dir / "out").string() + " --test voq");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_THAT(bad.output, HasSubstr("--test voq: no test of that name in " + suite +
                                    "; its tests: voq_islip, input_fifo_saturation"));
}

// A run that does not complete (here the deadlocked ring of tests/deadlock/) is an error,
// with or without a golden, and gets no golden.
TEST(Regress, ARunThatStallsIsAnError) {
  const fs::path dir = temp_dir();
  write_text(dir / "suite.yaml", "goldens: goldens\ntests:\n  - name: ring\n    config: " + kSource +
                                     "/tests/deadlock/ring5_pfc.yaml\n    metrics: [packets.delivered]\n");
  for (const std::string& extra : {std::string("--update-goldens"), "--junit " + (dir / "junit.xml").string()}) {
    const auto r = run_command(regress(dir, "suite.yaml", extra));
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_THAT(r.output, HasSubstr("ring tlm      error"));
    EXPECT_THAT(r.output, HasSubstr("the fabric stalled: deadlock: cyclic buffer dependency"));
  }
  EXPECT_FALSE(fs::exists(dir / "goldens" / "ring.tlm.json"));
  const nlohmann::json junit = parse_junit(dir / "junit.xml");
  EXPECT_EQ(junit["errors"], 1);
  EXPECT_EQ(junit["failures"], 0);
  EXPECT_EQ(junit["cases"][0]["outcome"], "error");
}

TEST(Regress, RtlPointsAreSkippedInABuildWithoutRtl) {
  if (rtl_built()) GTEST_SKIP() << "this build has RTL twins: its rtl points run";
  const fs::path dir = temp_dir();
  write_text(dir / "suite.yaml", one_test_suite("[tlm, rtl, lockstep]"));
  auto r = run_command(regress(dir, "suite.yaml", "--update-goldens"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(dir / "goldens" / "voq.tlm.json"));
  EXPECT_FALSE(fs::exists(dir / "goldens" / "voq.rtl.json"));
  r = run_command(regress(dir, "suite.yaml", "--junit " + (dir / "junit.xml").string()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("1 passed, 0 failed, 0 errors, 2 skipped"));
  const nlohmann::json junit = parse_junit(dir / "junit.xml");
  EXPECT_EQ(junit["skipped"], 2);
  EXPECT_EQ(junit["failures"], 0);
  EXPECT_EQ(junit["cases"][1]["name"], "rtl");
  EXPECT_EQ(junit["cases"][1]["outcome"], "skipped");
  EXPECT_THAT(junit["cases"][2]["message"].get<std::string>(), HasSubstr("-DFABRICSIM_RTL=ON"));
  // A skipped point's configuration is still checked.
  std::string bad = one_test_suite("[rtl]");
  bad.replace(bad.find("switch.buffer: voq"), 18, "switch.buffer: voqq");
  write_text(dir / "bad.yaml", bad);
  r = run_command(regress(dir, "bad.yaml"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("bad.yaml:8:"));
  EXPECT_THAT(r.output, HasSubstr("unknown value 'voqq'"));
}

// In an RTL build the rtl and lockstep points run; a correct RTL allocator gives the tlm values.
TEST(Regress, RtlPointsRunAndMatchTlmInAnRtlBuild) {
  if (!rtl_built()) GTEST_SKIP() << "this build has no RTL twins (-DFABRICSIM_RTL=OFF)";
  const fs::path dir = temp_dir();
  write_text(dir / "suite.yaml", one_test_suite("[tlm, rtl, lockstep]"));
  const auto r = run_command(regress(dir, "suite.yaml", "--update-goldens"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("0 skipped, 3 goldens written"));
  const nlohmann::json tlm = read_json(dir / "goldens" / "voq.tlm.json")["metrics"];
  EXPECT_EQ(read_json(dir / "goldens" / "voq.rtl.json")["metrics"], tlm);
  EXPECT_EQ(read_json(dir / "goldens" / "voq.lockstep.json")["metrics"], tlm);
}

// Each bad suite is refused before anything runs, naming the file, the line and the key.
TEST(Regress, BadSuitesAreErrorsWithFileLineAndKey) {
  const fs::path dir = temp_dir();
  const std::string good = one_test_suite();
  struct Case {
    std::string from, to, expect;
  };
  const std::vector<Case> cases{
      {"tests:", "test:", "suite.yaml:5:1: test: unknown key; allowed keys here: "},
      {"goldens: goldens\n", "", "missing required key 'goldens'"},
      {"  - name: voq", "  - name: v/q", "suite.yaml:6:11: tests[0].name: 'v/q': a test name is letters"},
      {"impl: [tlm]", "impl: [tlm, rtlx]", "suite.yaml:9:17: tests[0].impl[1]: unknown implementation 'rtlx'"},
      {"impl: [tlm]", "impl: [tlm, tlm]", "suite.yaml:9:17: tests[0].impl[1]: 'tlm' appears twice"},
      {"impl: [tlm]", "impl: [tlm, rtl]\n    blocks: [allocator, vl_arb]",
       "suite.yaml:10:25: tests[0].blocks[1]: unknown block 'vl_arb'; allowed: allocator, vl_arbiter, write_arbiter, "
       "input_fifo, nic_vl_arbiter, credit_manager"},
      {"impl: [tlm]", "impl: [rtl]\n    blocks: [allocator, allocator]",
       "tests[0].blocks[1]: 'allocator' appears twice"},
      {"impl: [tlm]", "impl: [tlm]\n    blocks: [credit_manager]",
       "suite.yaml:10:13: tests[0].blocks: has no effect: `impl` lists tlm only"},
      {"      - packets.delivered\n", "      - [packets]\n", "suite.yaml:11:9: tests[0].metrics[0]: expected a dotted path"},
      {"      - packets.delivered\n", "      - packets..delivered\n", "tests[0].metrics[0]: expected a dotted path into"},
      {"{relative: 0.01}", "{relative: -0.01}", "suite.yaml:13:31: tests[0].metrics[1].tolerance.relative: must be a number"},
      {"{relative: 0.01}", "{relative: 0.01, abs: 1}", "tests[0].metrics[1].tolerance.abs: unknown key"},
      {"{relative: 0.01}", "approx", "suite.yaml:13:20: tests[0].metrics[1].tolerance: expected exact or a mapping"},
      {"{relative: 0.01}", "{relative: 0}", "a tolerance of 0 is `exact`"},
      {"      - latency.network_latency_ns.p99.9\n", "      - packets.delivered\n", "metric 'packets.delivered' appears twice"},
      {"traffic.load: 0.7", "traffic.laod: 0.7", "suite.yaml:8:45: traffic.laod: unknown key"},
      {"simulation.duration: 5us", "simulation.duration: 5parsecs", "suite.yaml:3:24: simulation.duration:"},
      {"config: " + kSource + "/examples/single_switch.yaml", "config: nowhere.yaml", "tests[0].config: cannot read"},
  };
  for (const auto& c : cases) {
    std::string suite = good;
    ASSERT_NE(suite.find(c.from), std::string::npos) << c.from;
    suite.replace(suite.find(c.from), c.from.size(), c.to);
    write_text(dir / "suite.yaml", suite);
    const auto r = run_command(regress(dir, "suite.yaml"));
    EXPECT_EQ(r.exit_code, 2) << c.to << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(c.expect)) << c.to;
    EXPECT_FALSE(fs::exists(dir / "out" / "regress.json")) << c.to << ": nothing runs";
  }
  // Two tests of one name would share golden files.
  write_text(dir / "twice.yaml", good + good.substr(good.find("  - name: voq")));
  const auto r = run_command(regress(dir, "twice.yaml"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("test 'voq' appears twice"));
  const auto none = run_command(regress(dir, "none.yaml"));
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_THAT(none.output, HasSubstr("none.yaml: the suite file cannot be read"));
}

TEST(Regress, MetricPathsReadKeysWithDotsAndListEntries) {
  using fabricsim::sim::metric_value;
  const nlohmann::json r = nlohmann::json::parse(
      R"({"latency": {"p99": 1, "p99.9": 2}, "sizes": [{"bw": 3}, {"bw": 4}], "n": 5})");
  EXPECT_EQ(metric_value(r, "latency.p99"), 1);
  EXPECT_EQ(metric_value(r, "latency.p99.9"), 2);
  EXPECT_EQ(metric_value(r, "sizes.1.bw"), 4);
  EXPECT_EQ(metric_value(r, "n"), 5);
  const auto error = [&](const std::string& path) {
    try {
      metric_value(r, path);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("latency.p98"), "no 'p98' in latency (keys: p99, p99.9)");
  EXPECT_EQ(error("sizes.2.bw"), "sizes is a list of 2 entries: expected an index 0..1, got '2'");
  EXPECT_EQ(error("n.x"), "n is a value (5), not a section: no 'x' in it");
  EXPECT_EQ(error("m"), "no 'm' in the top of results.json (keys: latency, n, sizes)");
}

TEST(Regress, SuiteDocIsUpToDate) {
  std::ifstream in(kSource + "/docs/regress.md");
  std::stringstream doc;
  doc << in.rdbuf();
  ASSERT_FALSE(doc.str().empty());
  EXPECT_TRUE(fabricsim::sim::update_param_tables(doc.str(), fabricsim::sim::regress_param_blocks()) == doc.str())
      << "docs/regress.md's key tables differ from the tables in the code; regenerate them with\n"
         "  build/fabricsim params --update-doc docs/regress.md";
}

TEST(Regress, ToleranceAcceptsWithinTheLargerOfRelativeAndAbsolute) {
  using fabricsim::sim::Tolerance;
  EXPECT_TRUE(Tolerance{}.accepts(3, 3));
  EXPECT_FALSE(Tolerance{}.accepts(3, 4));
  EXPECT_TRUE(Tolerance{}.accepts("voq", "voq"));
  EXPECT_TRUE((Tolerance{0.01, 0}.accepts(100.0, 101.0)));
  EXPECT_FALSE((Tolerance{0.01, 0}.accepts(100.0, 101.5)));
  EXPECT_TRUE((Tolerance{0.01, 2}.accepts(100.0, 101.5)));
  EXPECT_FALSE((Tolerance{0.01, 2}.accepts(100.0, "101")));
  EXPECT_TRUE((Tolerance{0.01, 0}.accepts("voq", "voq")));
  EXPECT_FALSE((Tolerance{0.01, 0}.accepts(nullptr, 0)));
  EXPECT_EQ((Tolerance{0.01, 2}.text()), "relative 0.01 or absolute 2");
  EXPECT_EQ((Tolerance{0, 2}.text()), "absolute 2");
  EXPECT_EQ(Tolerance{}.text(), "exact");
}

}  // namespace
