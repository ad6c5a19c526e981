// Reading a regression suite file (sim/regress.h): its key tables, the tests, their
// implementations and metrics, and the tolerances. Every error names the suite file,
// the key and the line; overrides remember their line, so a bad configuration key in a
// test's `set:` is reported there too.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <set>
#include <utility>

#include <yaml-cpp/yaml.h>

#include "sim/config_reader.h"
#include "sim/regress.h"
#include "sim/sweep.h"

namespace fabricsim::sim {

namespace fs = std::filesystem;

const std::vector<hw::ParamBlock>& regress_param_blocks() {
  using hw::ParamType;
  const std::string tolerance_syntax = "`exact`, or a [tolerance](#tolerance) mapping";
  static const std::vector<hw::ParamBlock> blocks{
      {"regress",
       "a regression suite file (`fabricsim regress SUITE.yaml`)",
       {{"goldens", ParamType::text, "", "", "", "", {}, "required",
         "folder of the golden files, one per point (`NAME.IMPL.json`); relative to the suite file"},
        {"set", ParamType::section, "", "{}", "", "", {}, "",
         "mapping of dotted configuration keys to values, applied to every test before the test's own `set:`"},
        {"defaults", ParamType::section, "", "", "", "", {}, "",
         "the tolerance of a metric that gives none, by the kind of its golden value"},
        {"tests", ParamType::list, "tests", "", "", "", {}, "required, non-empty", "the tests, each name once"}}},
      {"regress.defaults",
       "default tolerances by the metric's kind",
       {{"counts", ParamType::section, "", "exact", "", "", {}, tolerance_syntax,
         "integer metrics (packets, drops, counts of samples)"},
        {"values", ParamType::section, "", "{relative: 1e-9}", "", "", {}, tolerance_syntax,
         "other numbers (latencies, times, loads, rates); text and booleans are always compared exactly"}}},
      {"regress.tests[i]",
       "one test: a configuration run under each implementation listed, one point each",
       {{"name", ParamType::text, "", "", "", "", {}, "required; letters, digits, `_`, `-`, `.`",
         "names the test's points (`NAME.IMPL`), golden files and JUnit test cases"},
        {"config", ParamType::text, "", "", "", "", {}, "required",
         "the configuration file, relative to the suite file"},
        {"set", ParamType::section, "", "{}", "", "", {}, "",
         "mapping of dotted configuration keys to values, applied after the suite's `set:`"},
        {"impl", ParamType::list, "names", "[tlm]", "", "", {}, "`tlm`, `rtl`, `lockstep`; each once",
         "implementations of the blocks in `blocks`, one point each; `rtl` and `lockstep` points are skipped "
         "in a build without RTL twins ([cosim.md](cosim.md))"},
        {"blocks", ParamType::list, "names", "[allocator]", "", "", {},
         "`allocator`, `vl_arbiter`, `write_arbiter`, `input_fifo`, `nic_vl_arbiter`, `credit_manager`; each "
         "once; needs `rtl` or `lockstep` in `impl`",
         "the RTL-capable blocks each point runs as its `impl`: `switch.allocator_impl`, "
         "`switch.vl_arbiter_impl`, `switch.write_arbiter_impl`, `switch.input_fifo_impl`, `nic.vl_arbiter_impl`, "
         "`link.credit_manager_impl`"},
        {"metrics", ParamType::list, "paths or mappings", "", "", "", {}, "required, non-empty; each path once",
         "the results.json values checked: a dotted path, or a mapping (below)"}}},
      {"regress.tests[i].metrics[j]",
       "a checked metric given as a mapping",
       {{"path", ParamType::text, "", "", "", "", {}, "required",
         "dotted path into results.json, e.g. `latency.network_latency_ns.p99`; a number selects an array "
         "element (`collective.sizes.0.busbw_GBps`)"},
        {"tolerance", ParamType::section, "", "`defaults`", "", "", {}, tolerance_syntax,
         "how far the value may be from its golden"}}},
      {"tolerance",
       "a tolerance: the value passes when |value - golden| <= max(absolute, relative x |golden|)",
       {{"relative", ParamType::number, "", "0", "0", "1e300", {}, "", "fraction of |golden|"},
        {"absolute", ParamType::number, "", "0", "0", "1e300", {}, "", "in the metric's unit"}}}};
  return blocks;
}

namespace {

/// The RTL-capable blocks a test may name in `blocks:`, with their configuration keys.
const std::vector<std::pair<std::string, std::string>>& rtl_block_keys() {
  static const std::vector<std::pair<std::string, std::string>> keys{{"allocator", "switch.allocator_impl"},
                                                                     {"vl_arbiter", "switch.vl_arbiter_impl"},
                                                                     {"write_arbiter", "switch.write_arbiter_impl"},
                                                                     {"input_fifo", "switch.input_fifo_impl"},
                                                                     {"nic_vl_arbiter", "nic.vl_arbiter_impl"},
                                                                     {"credit_manager", "link.credit_manager_impl"}};
  return keys;
}

const hw::ParamBlock& block(std::string_view section) { return hw::block_of(regress_param_blocks(), section); }

// A required text key of `spec`.
std::string required_text(ConfigMap& m, const hw::ParamSpec& spec) {
  if (!m.present(spec.key)) m.fail("", "missing required key '" + spec.key + "'");
  return m.string(spec, "");
}

// `exact` or {relative, absolute}, at `key` of `m`.
Tolerance read_tolerance(ConfigMap& m, const std::string& key, const std::shared_ptr<ConfigSource>& source) {
  const YAML::Node n = m.node(key);
  if (n.IsScalar() && n.Scalar() == "exact") return {};
  if (!n.IsMap())
    m.fail(key, "expected exact or a mapping {relative: R, absolute: A}, got " +
                    (n.IsScalar() ? "'" + n.Scalar() + "'" : std::string(n.IsSequence() ? "a list" : "nothing")));
  ConfigMap t(n, m.path().empty() ? key : m.path() + "." + key, source);
  const hw::ParamBlock& spec = block("tolerance");
  Tolerance tol;
  tol.relative = t.number(spec["relative"], 0);
  tol.absolute = t.number(spec["absolute"], 0);
  t.finish();
  if (tol.exact()) t.fail("", "a tolerance of 0 is `exact`: write exact");
  return tol;
}

// A dotted path into results.json: non-empty parts.
void check_path(const std::string& path, const std::string& where, const std::string& key) {
  if (path.empty() || path.front() == '.' || path.back() == '.' || path.find("..") != std::string::npos)
    throw ConfigError(where, key, "expected a dotted path into results.json such as "
                                  "latency.network_latency_ns.p99, got '" + path + "'");
}

std::vector<RegressMetric> read_metrics(ConfigMap& t, const std::string& file,
                                        const std::shared_ptr<ConfigSource>& source) {
  const YAML::Node list = t.node("metrics");
  if (!list.IsSequence() || list.size() == 0)
    t.fail("metrics", "expected a non-empty list of metrics, e.g. - packets.delivered");
  const hw::ParamBlock& spec = block("regress.tests[i].metrics[j]");
  std::vector<RegressMetric> metrics;
  std::set<std::string> seen;
  for (std::size_t j = 0; j < list.size(); ++j) {
    const YAML::Node e = list[j];
    const std::string key = t.path() + ".metrics[" + std::to_string(j) + "]";
    RegressMetric metric;
    if (e.IsScalar()) {
      metric.path = e.Scalar();
    } else if (e.IsMap()) {
      ConfigMap m(e, key, source);
      metric.path = required_text(m, spec["path"]);
      if (m.present("tolerance")) metric.tolerance = read_tolerance(m, "tolerance", source);
      m.finish();
    } else {
      throw ConfigError(yaml_mark(file, e), key, "expected a dotted path or a mapping {path, tolerance}");
    }
    check_path(metric.path, yaml_mark(file, e), key);
    if (!seen.insert(metric.path).second)
      throw ConfigError(yaml_mark(file, e), key, "metric '" + metric.path + "' appears twice in this test");
    metrics.push_back(std::move(metric));
  }
  return metrics;
}

std::vector<tlm_fabric::AllocatorImpl> read_impl(ConfigMap& t, const std::string& file) {
  using tlm_fabric::AllocatorImpl;
  if (!t.present("impl")) return {AllocatorImpl::tlm};
  const YAML::Node list = t.node("impl");
  if (!list.IsSequence() || list.size() == 0) t.fail("impl", "expected a non-empty list such as [tlm, rtl, lockstep]");
  const auto& names = tlm_fabric::allocator_impl_names();
  std::vector<AllocatorImpl> impl;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string key = t.path() + ".impl[" + std::to_string(i) + "]";
    const auto v = list[i].IsScalar() ? hw::value_of(names, list[i].Scalar()) : std::nullopt;
    if (!v)
      throw ConfigError(yaml_mark(file, list[i]), key,
                        "unknown implementation" + (list[i].IsScalar() ? " '" + list[i].Scalar() + "'" : std::string()) +
                            "; allowed: tlm, rtl, lockstep");
    if (std::find(impl.begin(), impl.end(), *v) != impl.end())
      throw ConfigError(yaml_mark(file, list[i]), key, "'" + list[i].Scalar() + "' appears twice in this test");
    impl.push_back(*v);
  }
  return impl;
}

/// The `*_impl` keys of the blocks in `blocks:` (default: the switch allocator's).
std::vector<std::string> read_blocks(ConfigMap& t, const std::string& file,
                                     const std::vector<tlm_fabric::AllocatorImpl>& impl) {
  if (!t.present("blocks")) return {"switch.allocator_impl"};
  const YAML::Node list = t.node("blocks");
  if (!list.IsSequence() || list.size() == 0)
    t.fail("blocks", "expected a non-empty list such as [allocator, vl_arbiter]");
  if (std::all_of(impl.begin(), impl.end(), [](auto i) { return i == tlm_fabric::AllocatorImpl::tlm; }))
    t.fail("blocks", "has no effect: `impl` lists tlm only (add rtl or lockstep, or drop `blocks`)");
  std::string allowed;
  for (const auto& [name, key] : rtl_block_keys()) allowed += (allowed.empty() ? "" : ", ") + name;
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string key = t.path() + ".blocks[" + std::to_string(i) + "]";
    const std::string name = list[i].IsScalar() ? list[i].Scalar() : std::string();
    const auto& table = rtl_block_keys();
    const auto it = std::find_if(table.begin(), table.end(), [&](const auto& e) { return e.first == name; });
    if (it == table.end())
      throw ConfigError(yaml_mark(file, list[i]), key,
                        "unknown block" + (name.empty() ? std::string() : " '" + name + "'") + "; allowed: " + allowed);
    if (std::find(keys.begin(), keys.end(), it->second) != keys.end())
      throw ConfigError(yaml_mark(file, list[i]), key, "'" + name + "' appears twice in this test");
    keys.push_back(it->second);
  }
  return keys;
}

RegressTest read_test(ConfigMap& t, const RegressSuite& suite, const std::vector<Override>& suite_set,
                      const std::shared_ptr<ConfigSource>& source) {
  const hw::ParamBlock& spec = block("regress.tests[i]");
  RegressTest test;
  test.name = required_text(t, spec["name"]);
  if (test.name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.") !=
          std::string::npos ||
      test.name.front() == '.')
    t.fail("name", "'" + test.name + "': a test name is letters, digits, _, - and . (it names files), not starting with .");
  const std::string config = required_text(t, spec["config"]);
  test.config = (fs::path(suite.file).parent_path() / config).lexically_normal().string();
  std::error_code ec;
  if (!fs::is_regular_file(test.config, ec)) t.fail("config", "cannot read '" + test.config + "'");
  test.overrides = suite_set;
  for (auto& o : set_overrides(t, "set", suite.file, source)) test.overrides.push_back(std::move(o));
  test.impl = read_impl(t, suite.file);
  test.impl_origin = t.present("blocks") ? t.location("blocks") : t.present("impl") ? t.location("impl") : t.location("");
  test.impl_keys = read_blocks(t, suite.file, test.impl);
  test.metrics = read_metrics(t, suite.file, source);
  t.finish();
  return test;
}

}  // namespace

RegressSuite read_regress_suite(const std::string& file) {
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) throw ConfigError(file, "", "the suite file cannot be read");
  auto source = std::make_shared<ConfigSource>();
  source->file = file;
  ConfigMap top(load_yaml_file(file), "", source);
  // Unknown top-level keys first: `test:` is named as a typo of `tests:`, not as a missing list.
  const hw::ParamBlock& spec = block("regress");
  for (const auto& p : spec.params) top.has(p.key);
  top.finish();
  RegressSuite suite;
  suite.file = file;
  suite.goldens = (fs::path(file).parent_path() / required_text(top, spec["goldens"])).lexically_normal().string();
  const std::vector<Override> suite_set = set_overrides(top, "set", file, source);

  // The defaults of `defaults:` are read from its table, as if written in the suite.
  const hw::ParamBlock& kinds = block("regress.defaults");
  YAML::Node builtin(YAML::NodeType::Map);
  for (const auto& p : kinds.params) builtin[p.key] = YAML::Load(p.def);
  ConfigMap builtin_map(builtin, "regress.defaults", source);
  ConfigMap defaults = top.map("defaults");
  suite.count_tolerance = read_tolerance(defaults.present("counts") ? defaults : builtin_map, "counts", source);
  suite.value_tolerance = read_tolerance(defaults.present("values") ? defaults : builtin_map, "values", source);
  defaults.finish();

  if (!top.present("tests") || !top.node("tests").IsSequence() || top.node("tests").size() == 0)
    top.fail("tests", "expected a list of tests, e.g. - {name: voq, config: switch.yaml, metrics: [packets.delivered]}");
  std::set<std::string> names;
  for (ConfigMap t : top.list_of_maps("tests")) {
    suite.tests.push_back(read_test(t, suite, suite_set, source));
    if (!names.insert(suite.tests.back().name).second)
      t.fail("name", "test '" + suite.tests.back().name + "' appears twice (its points would share golden files)");
  }
  top.finish();
  return suite;
}

}  // namespace fabricsim::sim
