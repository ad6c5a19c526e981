// The `fabricsim` command: run, validate, routes, sweep, regress, report, compare, params and workload
// (`fabricsim SUBCOMMAND --help`; README.md has examples). Exit codes: 0 success,
// 1 simulation error, 2 configuration or usage error, 3 scoreboard (invariant) failure,
// 4 stalled fabric (deadlock) found by the watchdog.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <CLI/CLI.hpp>
#include <systemc>

#include "sim/child_run.h"
#include "sim/compare.h"
#include "sim/config.h"
#include "sim/config_params.h"
#include "sim/config_reader.h"
#include "sim/fabric.h"
#include "sim/huge_pages.h"
#include "sim/output_file.h"
#include "sim/process_exit.h"
#include "sim/progress.h"
#include "sim/python_script.h"
#include "sim/regress.h"
#include "sim/sweep.h"
#include "sim/training_config.h"
#include "tlm/distributed.h"
#include "tlm/rtl_coverage.h"

namespace distributed = fabricsim::tlm_fabric::distributed;

namespace {

constexpr int kExitSimulationError = 1;
constexpr int kExitConfigError = 2;
constexpr int kExitScoreboard = 3;  // a run completed but an invariant check failed
constexpr int kExitStalled = 4;     // the watchdog stopped a fabric that could not progress

/// Over several processes: process 0's `code`, in every process (one process: `code`).
int agreed(int code) {
  if (!distributed::active()) return code;
  std::vector<unsigned char> bytes(sizeof code);
  std::memcpy(bytes.data(), &code, sizeof code);
  bytes = distributed::broadcast(std::move(bytes), 0);
  std::memcpy(&code, bytes.data(), sizeof code);
  return code;
}

void print_warnings(const fabricsim::sim::FabricConfig& config) {
  for (const auto& w : config.warnings) std::cerr << "fabricsim: warning: " << w << "\n";
}

/// The effective parameters of the switches with their own (switch.tiers, switch.instances).
void print_switch_overrides(const fabricsim::sim::FabricConfig& config) {
  auto text = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  for (const auto& [section, o] : config.switch_overrides.items()) {
    std::string names;
    for (const auto& n : o["switches"]) names += (names.empty() ? "" : ", ") + n.get<std::string>();
    std::cout << section << " (" << names << "):" << (o["keys"].empty() ? " as the switch section" : "") << "\n";
    for (const auto& [key, v] : o["keys"].items())
      std::cout << "  " << key << ": " << text(v["value"]) << " (switch section: "
                << (v["switch"].is_null() ? "default" : text(v["switch"])) << ")\n";
  }
}

/// `fabricsim run --trace KIND... --trace-*`: the trace kinds and the options shaping them.
/// `perfetto` and `vcd` are the fabric trace (output.trace*), `rtl` the RTL blocks'
/// waveforms (switch.rtl_trace*, into OUT/waveforms/); the window, scope and size limit
/// shape every kind given.
struct TraceFlags {
  std::vector<std::string> kinds;
  std::string format, from, to, max_size;
  std::vector<std::string> scopes, endpoints, flows;

  /// The kinds as given (comma lists split), checked; throws ConfigError naming the flag.
  void split_kinds(bool& fabric, bool& rtl) const {
    fabric = rtl = false;
    for (const auto& given : kinds) {
      std::stringstream list(given);
      for (std::string kind; std::getline(list, kind, ',');) {
        if (kind == "perfetto" || kind == "vcd") fabric = true;
        else if (kind == "rtl") rtl = true;
        else
          throw fabricsim::sim::ConfigError("--trace " + given, "",
                                            "unknown trace kind '" + kind +
                                                "'; allowed: perfetto, vcd, rtl (RTL waveforms go into the results "
                                                "folder's waveforms/)");
      }
    }
  }
  /// The flags as overrides of their keys; an error names the flag. `out_dir`: the results
  /// folder (RTL waveforms go into its waveforms/).
  void add_overrides(std::vector<fabricsim::sim::Override>& out, const std::string& out_dir) const {
    using fabricsim::sim::yaml_quoted;
    bool fabric = false, rtl = false;
    split_kinds(fabric, rtl);
    auto list = [](const std::vector<std::string>& items) {
      std::string text;
      for (const auto& p : items) text += (text.empty() ? "" : ", ") + yaml_quoted(p);
      return "[" + text + "]";
    };
    auto flags = [](const char* flag, const std::vector<std::string>& items) {
      std::string text;
      for (const auto& p : items) text += (text.empty() ? "" : " ") + std::string(flag) + " " + p;
      return text;
    };
    std::vector<std::string> fabric_kinds;
    for (const auto& given : kinds) {
      std::stringstream items(given);
      for (std::string kind; std::getline(items, kind, ',');)
        if (kind != "rtl" && std::find(fabric_kinds.begin(), fabric_kinds.end(), kind) == fabric_kinds.end())
          fabric_kinds.push_back(kind);
    }
    if (fabric) out.push_back({"output.trace=" + list(fabric_kinds), flags("--trace", kinds)});
    if (rtl) {
      out.push_back({"switch.rtl_trace=" + yaml_quoted((std::filesystem::path(out_dir) / "waveforms").string()),
                     "--trace rtl"});
      if (!format.empty()) out.push_back({"switch.rtl_trace_format=" + yaml_quoted(format), "--trace-format " + format});
    } else if (!format.empty()) {
      throw fabricsim::sim::ConfigError("--trace-format " + format, "", "the RTL waveforms' format needs --trace rtl");
    }
    // The shaping options: of every kind given; with none, of output.trace (the configuration's).
    const bool to_fabric = fabric || !rtl;
    auto shape = [&](const char* key, const std::string& value, const std::string& flag) {
      if (to_fabric) out.push_back({std::string("output.trace_") + key + "=" + value, flag});
      if (rtl) out.push_back({std::string("switch.rtl_trace_") + key + "=" + value, flag});
    };
    if (!scopes.empty()) shape("scope", list(scopes), flags("--trace-scope", scopes));
    if (!from.empty()) shape("from", yaml_quoted(from), "--trace-from " + from);
    if (!to.empty()) shape("to", yaml_quoted(to), "--trace-to " + to);
    if (!max_size.empty()) shape("max_size", yaml_quoted(max_size), "--trace-max-size " + max_size);
    if ((!endpoints.empty() || !flows.empty()) && rtl && !fabric)
      throw fabricsim::sim::ConfigError("--trace-endpoint, --trace-flow", "",
                                        "filter the fabric trace (--trace perfetto|vcd), not the RTL waveforms");
    if (!endpoints.empty())
      out.push_back({"output.trace_endpoint=" + list(endpoints), flags("--trace-endpoint", endpoints)});
    if (!flows.empty()) out.push_back({"output.trace_flow=" + list(flows), flags("--trace-flow", flows)});
  }
  bool rtl() const {
    bool fabric = false, rtl = false;
    split_kinds(fabric, rtl);
    return rtl;
  }
};

/// `run`'s flags for what else it writes.
struct OutputFlags {
  bool packet_csv = false, latency_breakdown = false;
};

// Command-line output options become overrides, so the config echo in
// results.json shows what was really used. `sweep_point`: a sweep point's record (JSON)
// for results.json, from a sweep that runs its points over several processes (sim/sweep.cpp).
int run_command(const std::string& file, const std::vector<std::string>& set, const std::string& out_dir,
                const OutputFlags& output, const TraceFlags& trace, const std::string& rtl_coverage,
                const std::string& sweep_point, fabricsim::sim::Verbosity verbosity) {
  using namespace fabricsim::sim;
  nlohmann::json point;
  if (!sweep_point.empty()) {
    point = nlohmann::json::parse(sweep_point, nullptr, false);
    if (!point.is_object()) throw ConfigError("--sweep-point", "", "expected a JSON object");
  }
  if (!rtl_coverage.empty() && distributed::active()) {  // each process would hold its blocks' points only
    if (distributed::rank() == 0)
      std::cerr << "fabricsim: --rtl-coverage: not over several processes; run it in one process\n";
    return kExitConfigError;
  }
  if (!rtl_coverage.empty() && !fabricsim::tlm_fabric::rtl_coverage_built()) {
    std::cerr << "fabricsim: --rtl-coverage: this build's RTL models carry no coverage points; use a build "
                 "configured with -DFABRICSIM_RTL_COVERAGE=ON (scripts/rtl_coverage.sh makes one)\n";
    return kExitConfigError;
  }
  std::vector<Override> overrides;
  for (const auto& o : set) overrides.push_back({o, ""});
  if (!out_dir.empty()) overrides.push_back({"output.directory=" + yaml_quoted(out_dir), ""});
  if (output.packet_csv) overrides.push_back({"output.packet_csv=true", ""});
  if (output.latency_breakdown) overrides.push_back({"output.latency_breakdown=true", ""});
  // --trace rtl writes into the results folder: --out's, else the configuration's.
  const std::string results_dir =
      !out_dir.empty() || !trace.rtl() ? out_dir : load_config_with_origins(file, overrides).output.directory;
  trace.add_overrides(overrides, results_dir);
  const FabricConfig config = load_config_with_origins(file, overrides);
  // Over several processes (mpirun) process 0 writes the results and speaks for all.
  const bool writes = distributed::rank() == 0;
  if (!writes) verbosity = Verbosity::quiet;
  if (verbosity != Verbosity::quiet) print_warnings(config);
  if (trace.rtl() && !config.uses_rtl_blocks())
    std::cerr << "fabricsim: --trace rtl: no RTL blocks in use (every `*_impl` key is tlm), no waveforms written\n";
  if (!rtl_coverage.empty() && !config.uses_rtl_blocks()) {
    std::cerr << "fabricsim: --rtl-coverage: no RTL blocks in use (every `*_impl` key is tlm): set one to rtl or "
                 "lockstep\n";
    return kExitConfigError;
  }
  if (!rtl_coverage.empty()) {  // a file that cannot be written fails now, not after the run
    try {
      fabricsim::tlm_fabric::write_rtl_coverage(rtl_coverage);
    } catch (const std::runtime_error& e) {
      std::cerr << "fabricsim: --rtl-coverage: " << e.what() << "\n";
      return kExitConfigError;
    }
  }
  namespace fs = std::filesystem;
  const fs::path dir(config.output.directory);
  std::error_code ec;
  if (writes) fs::create_directories(dir, ec);
  if (agreed(ec ? 1 : 0) != 0) {  // every process stops: process 0 could not write its results
    if (writes) std::cerr << "fabricsim: cannot create results folder '" << dir.string() << "': " << ec.message() << "\n";
    return kExitSimulationError;
  }
  std::unique_ptr<RunFiles> files = writes ? std::make_unique<RunFiles>(dir, config) : nullptr;
  // The other processes' rows and entries go to process 0 (sim/gather.h); their streams
  // are none, and they build no statistics tree (`stats` set: process 0 writes the file).
  static std::ostream nowhere(nullptr);
  static const fabricsim::stats::Registry* not_written = nullptr;
  RunLogs logs = files ? files->logs() : RunLogs{config.output.packet_csv ? &nowhere : nullptr, &nowhere};
  if (!files) logs.stats = &not_written;
  Progress progress(verbosity);
  // The process exits once the results are written: the model and the results' tree are
  // left to the exit (sim/process_exit.h).
  nlohmann::json& results = leave_to_process_exit(
      std::make_unique<nlohmann::json>(run_simulation(config, logs, &progress, ModelTeardown::skip)));
  if (!writes) return agreed(0);  // process 0's exit code
  if (!point.is_null()) results["sweep_point"] = point;
  files->finish(results);  // the CSV files, then results.json
  // The blocks are still alive (left to the exit): their counts are the whole run's.
  if (!rtl_coverage.empty()) fabricsim::tlm_fabric::write_rtl_coverage(rtl_coverage);
  if (verbosity != Verbosity::quiet) {
    std::cout << summary_table(results);
    std::cout << "results: " << (dir / "results.json").string();
    for (const auto& name : RunFiles::file_names(config)) std::cout << ", " << (dir / name).string();
    if (!rtl_coverage.empty()) std::cout << ", " << rtl_coverage;
    std::cout << "\n";
  }
  const bool stalled = results.contains("stall"), scoreboard_ok = results["scoreboard"]["ok"].get<bool>();
  if (stalled)
    std::cerr << "fabricsim: the fabric stopped making progress: " << results["stall"]["diagnosis"].get<std::string>()
              << " (details under \"stall\" in results.json)\n";
  if (!scoreboard_ok)
    std::cerr << "fabricsim: scoreboard check failed (see \"scoreboard\" in results.json)\n";
  // A broken invariant is a model bug, and may be what stalled the fabric (leaked credits): it wins.
  return agreed(!scoreboard_ok ? kExitScoreboard : stalled ? kExitStalled : 0);
}

// `fabricsim report DIR`: scripts/report.py writes DIR/report/index.html (plots and tables).
int report_command(const std::string& dir) {
  using namespace fabricsim::sim;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(fs::path(dir) / "sweep.json", ec) && !fs::exists(fs::path(dir) / "results.json", ec))
    throw ConfigError(dir, "", "not a results folder: expected sweep.json (fabricsim sweep) or results.json (fabricsim run)");
  std::string why_not;
  const std::string script = find_python_script("report.py", why_not);
  if (script.empty()) {
    std::cerr << "fabricsim: report: " << why_not << "\n";
    return kExitSimulationError;
  }
  std::fflush(nullptr);
  const int rc = std::system(("/usr/bin/python3 " + shell_quoted(script) + " " + shell_quoted(dir)).c_str());
  return rc == 0 ? 0 : kExitSimulationError;
}

}  // namespace

namespace {

/// Every subcommand's options, as CLI11 fills them.
struct CommandLine {
  std::string file, out_dir, rtl_coverage, sweep_point;
  TraceFlags trace;
  std::vector<std::string> overrides;
  OutputFlags output;
  bool quiet = false, verbose = false;
  std::string loads = "0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0";
  fabricsim::sim::SweepOptions sw;
  std::string task_plan;
  int task_id = 0;
  std::string report_dir;
  fabricsim::sim::CompareOptions cmp;
  std::string cmp_workloads, cmp_sizes, cmp_layout = "leaf";
  bool cmp_no_plots = false;
  bool params_markdown = false;
  std::string params_doc;
  std::string chakra_dir, chakra_prefix = "training";
  fabricsim::sim::RegressOptions rg;
  CLI::App *run = nullptr, *validate = nullptr, *sweep = nullptr, *sweep_task = nullptr, *report = nullptr,
           *routes = nullptr, *compare = nullptr, *params = nullptr, *workload_export = nullptr,
           *regress = nullptr;
};

// A folder option given as "" would silently fall back to the default folder.
CLI::Validator non_empty() {
  return CLI::Validator([](std::string& s) { return s.empty() ? std::string("must not be empty") : std::string(); }, "");
}

void add_verbosity(CLI::App* cmd, CommandLine& cl) {
  auto* q = cmd->add_flag("--quiet,-q", cl.quiet, "print nothing but errors (no progress line, no table)");
  cmd->add_flag("--verbose,-v", cl.verbose, "progress even when not on a terminal (one line every 2 s), per-point lines")
      ->excludes(q);
}

// `run` and `validate`.
void add_run_commands(CLI::App& app, CommandLine& cl) {
  auto* run = cl.run = app.add_subcommand("run", "simulate a configuration and write results.json");
  run->add_option("config", cl.file, "YAML configuration")->required();
  run->add_option("--set", cl.overrides, "override a key: path.to.key=value (repeatable)");
  run->add_option("--out", cl.out_dir, "results folder (overrides output.directory)")->check(non_empty());
  run->add_flag("--packet-csv", cl.output.packet_csv, "also write packets.csv, one row per delivered packet");
  run->add_flag("--latency-breakdown", cl.output.latency_breakdown,
                "split each packet's latency into its parts, hop by hop (output.latency_breakdown)");
  run->add_option("--trace", cl.trace.kinds,
                  "write traces into the results folder (repeatable, or a comma list): perfetto "
                  "(trace.perfetto.json, ui.perfetto.dev), vcd (fabric.vcd, GTKWave), rtl (waveforms of the RTL "
                  "blocks in use into waveforms/)")
      ->check(non_empty());
  // The shaping options apply to every kind given; the configuration checks them.
  run->add_option("--trace-format", cl.trace.format, "RTL waveforms: fst (default) or vcd (switch.rtl_trace_format)");
  run->add_option("--trace-scope", cl.trace.scopes,
                  "record only these: a glob on hierarchy names (fabric.sw0, fabric.sw0.port3, fabric.ep1, "
                  "fabric.sw0.*), or an RTL model name (repeatable; output.trace_scope, switch.rtl_trace_scope)");
  run->add_option("--trace-endpoint", cl.trace.endpoints,
                  "fabric trace: only packets from or to this endpoint, and its NIC (repeatable; output.trace_endpoint)");
  run->add_option("--trace-flow", cl.trace.flows,
                  "fabric trace: only packets from SRC to DST, as SRC:DST (repeatable; output.trace_flow)");
  run->add_option("--trace-from", cl.trace.from, "start of the traced window, e.g. 20us (output.trace_from, switch.rtl_trace_from)");
  run->add_option("--trace-to", cl.trace.to, "end of the traced window, e.g. 25us (output.trace_to, switch.rtl_trace_to)");
  run->add_option("--trace-max-size", cl.trace.max_size,
                  "stop writing a file near this size, e.g. 100MiB (output.trace_max_size, switch.rtl_trace_max_size)");
  run->add_option("--rtl-coverage", cl.rtl_coverage,
                  "write the coverage points of the RTL blocks in use, every instance, to this file "
                  "(verilator_coverage format; a -DFABRICSIM_RTL_COVERAGE=ON build)")
      ->check(non_empty());
  // A sweep's point over several processes: its record in results.json (sim/sweep.cpp).
  run->add_option("--sweep-point", cl.sweep_point)->group("");

  auto* validate = cl.validate = app.add_subcommand("validate", "check a configuration without running it");
  validate->add_option("config", cl.file, "YAML configuration")->required();
  validate->add_option("--set", cl.overrides, "override a key: path.to.key=value (repeatable)");
  add_verbosity(run, cl);
}

// `sweep`, and `sweep-task`: one array task of a Slurm sweep (written into the job script; not for people).
void add_sweep_commands(CLI::App& app, CommandLine& cl) {
  auto& sw = cl.sw;
  auto* sweep = cl.sweep = app.add_subcommand("sweep", "run a sweep file (base configuration, axes, seeds: "
                                                       "docs/sweeps.md), or a configuration over offered loads (--loads)");
  sweep->add_option("sweep", cl.file, "sweep file (with axes:), or a YAML configuration for a --loads sweep")->required();
  sweep->add_option("--set", cl.overrides, "override a key in every point: path.to.key=value (repeatable)");
  sweep->add_option("--out", sw.out_dir, "results folder (default results/sweep_<file stem>)")->check(non_empty());
  sweep->add_option("--loads", cl.loads, "configuration only: comma-separated offered loads in (0, 1]")
      ->capture_default_str();
  sweep->add_option("--executor", sw.executor, "local (process pool) or slurm (sbatch job array)")
      ->check(CLI::IsMember({"local", "slurm"}))
      ->capture_default_str();
  sweep->add_option("--jobs,-j", sw.jobs, "local: simulations at once (default: number of CPUs)")
      ->check(CLI::Range(1, 4096));
  sweep->add_option("--points-per-task", sw.points_per_task, "slurm: sweep points per array task")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  sweep->add_option("--sbatch-option", sw.sbatch_options, "slurm: extra sbatch option, e.g. --partition=short (repeatable)")
      ->allow_extra_args(false);
  sweep->add_option("--processes", sw.processes,
                    "processes each point runs over (default: the sweep file's processes:, else 1); more than 1: "
                    "slurm: an array task of that many tasks runs each point with srun --mpi=pmix; local: mpirun "
                    "-np N, N of the --jobs each")
      ->check(CLI::Range(1, 4096));
  add_verbosity(sweep, cl);

  auto* sweep_task = cl.sweep_task = app.add_subcommand("sweep-task", "");
  sweep_task->group("");
  sweep_task->add_option("plan", cl.task_plan)->required();
  sweep_task->add_option("task", cl.task_id)->required();
}

// `regress`: a suite of tests against golden results (sim/regress.h).
void add_regress_command(CLI::App& app, CommandLine& cl) {
  auto& rg = cl.rg;
  auto* regress = cl.regress = app.add_subcommand("regress", "run a regression suite (tests under tlm, rtl, lockstep; "
                                                             "metrics against goldens with tolerances: docs/regress.md)");
  regress->add_option("suite", cl.file, "suite file (goldens:, tests:)")->required();
  regress->add_option("--out", rg.out_dir, "results folder (default results/regress_<file stem>)")->check(non_empty());
  regress->add_option("--junit", rg.junit, "JUnit XML file (default OUT/junit.xml)")->check(non_empty());
  regress->add_option("--test", rg.only, "run only the test of this name (repeatable)");
  regress->add_flag("--update-goldens", rg.update_goldens, "rewrite the goldens from this run's values (after review)");
  regress->add_option("--jobs,-j", rg.jobs, "simulations at once (default: number of CPUs)")->check(CLI::Range(1, 4096));
  add_verbosity(regress, cl);
}

// `report`, `routes` and `params`.
void add_inspection_commands(CLI::App& app, CommandLine& cl) {
  auto* report = cl.report = app.add_subcommand("report", "write RESULTS_DIR/report/index.html: the plots and tables "
                                                          "of a sweep (or of one run), viewable offline");
  report->add_option("results_dir", cl.report_dir, "results folder of fabricsim sweep (sweep.json) or run (results.json)")
      ->required();

  auto* routes = cl.routes = app.add_subcommand("routes", "print every switch's forwarding table");
  routes->add_option("config", cl.file, "YAML configuration")->required();
  routes->add_option("--set", cl.overrides, "override a key: path.to.key=value (repeatable)");

  auto* params = cl.params = app.add_subcommand("params", "list every configuration key: type, default, range, meaning");
  auto* markdown = params->add_flag("--markdown", cl.params_markdown, "print docs/config.md's key tables with their markers");
  params->add_option("--update-doc", cl.params_doc, "rewrite the key tables of this file (docs/config.md, docs/regress.md) in place")
      ->excludes(markdown);
}

// `compare`: the same topology and workloads under several configurations (sim/compare.h).
void add_compare_command(CLI::App& app, CommandLine& cl) {
  auto& cmp = cl.cmp;
  auto* compare = cl.compare = app.add_subcommand("compare", "run the same topology and workloads under several "
                                                             "configurations (e.g. presets/ib_ndr.yaml "
                                                             "presets/roce_400g.yaml), side by side");
  compare->add_option("configs", cmp.configs, "YAML configurations or presets, one column each")->required();
  compare->add_option("--workload", cl.cmp_workloads, "comma-separated: latency, allreduce, incast, training (default all)");
  compare->add_option("--topology", cmp.topology, "topology YAML file or text, e.g. '{kind: leaf_spine, radix: 8}' "
                                                  "(default: the first configuration's)");
  compare->add_option("--sizes", cl.cmp_sizes, "cluster-size sweep: comma-separated endpoint counts; each gets one switch, "
                                               "a 2-tier leaf-spine or a 3-tier Clos of --radix switches");
  compare->add_option("--radix", cmp.shape.radix, "--sizes: ports per switch")->capture_default_str()->check(CLI::Range(4, 256));
  compare->add_option("--oversubscription", cmp.shape.oversubscription, "--sizes: leaf host ports : uplink ports")
      ->capture_default_str()->check(CLI::Range(0.1, 16.0));
  compare->add_option("--layout", cl.cmp_layout, "--sizes: leaf (endpoints fill leaves) or rail (GPU i of each server on rail i)")
      ->capture_default_str()->check(CLI::IsMember({"leaf", "rail"}));
  compare->add_option("--job", cmp.job, "YAML file whose training: (a generated job or a fixed-time step) and server: "
                                       "sections every configuration's training workload runs");
  compare->add_option("--gpus-per-server", cmp.shape.gpus_per_server, "--sizes: GPUs per server (rails of --layout "
                                                                      "rail; server.gpus of a server with a scale-up domain)")
      ->capture_default_str()->check(CLI::Range(1, 64));
  compare->add_option("--host-cable", cmp.host_cable, "host-leaf medium in the bill of materials: auto (by cable length "
                                                      "and layout), dac, aec or optics")
      ->capture_default_str()->check(CLI::IsMember({"auto", "dac", "aec", "optics"}));
  compare->add_option("--comm-threshold", cmp.comm_threshold, "mark sizes whose exposed communication fraction of the "
                                                              "training step is above this")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  compare->add_flag("--bom-only", cmp.bom_only, "with --sizes: build each size's fabric and report its bill of "
                                                "materials and cost without running any workload");
  compare->add_option("--prices", cmp.prices, "YAML prices file (examples/prices/400g.yaml): adds cost and cost per training "
                                              "throughput");
  compare->add_option("--out", cmp.out_dir, "results folder")->capture_default_str()->check(non_empty());
  compare->add_option("--set", cmp.overrides, "override a key in every run: path.to.key=value (repeatable, applied last)");
  compare->add_option("--allreduce-size", cmp.allreduce_size, "AllReduce bytes per rank")->capture_default_str();
  compare->add_option("--latency-iterations", cmp.latency_iterations, "write_lat iterations per size")->capture_default_str();
  compare->add_option("--incast-bytes", cmp.incast_bytes, "size of the one RDMA WRITE each incast sender posts to "
                                                          "endpoint 0 at t = 0")->capture_default_str();
  compare->add_option("--jobs", cmp.jobs, "simulations at once (default: number of CPUs)")->check(CLI::Range(1, 4096));
  compare->add_flag("--no-plots", cl.cmp_no_plots, "do not run scripts/plot_compare.py");
}

// `workload export`: a generated training job as Chakra traces (sim/training_config.h).
void add_workload_commands(CLI::App& app, CommandLine& cl) {
  auto* workload = app.add_subcommand("workload", "workloads as files: export a generated training job");
  workload->require_subcommand(1);
  auto* exp = cl.workload_export = workload->add_subcommand(
      "export", "write the configuration's generated training job (training.model, ...) as per-rank Chakra traces");
  exp->add_option("config", cl.file, "YAML configuration")->required();
  exp->add_option("--chakra", cl.chakra_dir, "folder for PREFIX.RANK.et (created)")->required()->check(non_empty());
  exp->add_option("--prefix", cl.chakra_prefix, "file name prefix")->capture_default_str()->check(non_empty());
  exp->add_option("--set", cl.overrides, "override a key: path.to.key=value (repeatable)");
}

// --workload and --sizes lists into the compare options.
void read_compare_lists(CommandLine& cl) {
  std::stringstream ws(cl.cmp_workloads), ss(cl.cmp_sizes);
  for (std::string w; std::getline(ws, w, ',');)
    if (!w.empty()) cl.cmp.workloads.push_back(w);
  for (std::string n; std::getline(ss, n, ',');) {
    char* end = nullptr;
    const long v = std::strtol(n.c_str(), &end, 10);
    if (n.empty() || *end != '\0' || v < 2 || v > 65536)
      throw fabricsim::sim::ConfigError("--sizes " + cl.cmp_sizes, "", "expected comma-separated endpoint counts (2..65536), got '" + n + "'");
    cl.cmp.sizes.push_back(static_cast<int>(v));
  }
  cl.cmp.plots = !cl.cmp_no_plots;
  cl.cmp.shape.layout = *fabricsim::hw::value_of(fabricsim::sim::host_layout_names(), cl.cmp_layout);
  for (const char* opt : {"--radix", "--oversubscription", "--layout", "--gpus-per-server"})
    if (cl.compare->count(opt) && cl.cmp.sizes.empty())
      throw fabricsim::sim::ConfigError(opt, "", "shapes the fabric of each --sizes entry; give --sizes");
  if (cl.cmp.bom_only && !cl.cmp.workloads.empty())
    throw fabricsim::sim::ConfigError("--workload", "", "--bom-only runs no workload");
}

int sweep_subcommand(CommandLine& cl, fabricsim::sim::Verbosity verbosity) {
  cl.sw.verbosity = verbosity;
  if (fabricsim::sim::is_sweep_file(cl.file)) {
    if (cl.sweep->count("--loads"))
      throw fabricsim::sim::ConfigError("--loads", "", "a sweep file gives its loads as an axis on traffic.load");
    return fabricsim::sim::sweep_command(fabricsim::sim::read_sweep_file(cl.file, cl.overrides), cl.sw);
  }
  return fabricsim::sim::sweep_command(
      fabricsim::sim::load_sweep(cl.file, fabricsim::sim::parse_load_list(cl.loads), cl.overrides), cl.sw);
}

// Runs the subcommand given; throws ConfigError on bad input.
int run_subcommand(CommandLine& cl) {
  if (cl.params->parsed()) return fabricsim::sim::params_command(cl.params_markdown, cl.params_doc);
  if (cl.validate->parsed()) {
    const auto config = fabricsim::sim::load_config(cl.file, cl.overrides);
    print_warnings(config);
    std::cout << cl.file << ": valid\n";
    print_switch_overrides(config);
    return 0;
  }
  const auto verbosity = cl.quiet ? fabricsim::sim::Verbosity::quiet
                         : cl.verbose ? fabricsim::sim::Verbosity::verbose
                                      : fabricsim::sim::Verbosity::normal;
  if (cl.sweep->parsed()) return sweep_subcommand(cl, verbosity);
  if (cl.regress->parsed()) {
    cl.rg.verbosity = verbosity;
    return fabricsim::sim::regress_command(cl.file, cl.rg);
  }
  if (cl.sweep_task->parsed()) return fabricsim::sim::sweep_task(cl.task_plan, cl.task_id);
  if (cl.report->parsed()) return report_command(cl.report_dir);
  if (cl.compare->parsed()) {
    read_compare_lists(cl);
    return fabricsim::sim::compare_command(cl.cmp);
  }
  if (cl.workload_export->parsed())
    return fabricsim::sim::export_chakra_command(cl.file, cl.overrides, cl.chakra_dir, cl.chakra_prefix);
  if (cl.routes->parsed()) {
    std::cout << fabricsim::sim::route_tables(fabricsim::sim::load_config(cl.file, cl.overrides));
    return 0;
  }
  return run_command(cl.file, cl.overrides, cl.out_dir, cl.output, cl.trace, cl.rtl_coverage, cl.sweep_point,
                     verbosity);
}

}  // namespace

namespace {

/// `run` is the one subcommand that may run over several processes (tlm/distributed.h).
/// The command line decides, the same in every process: each returns the same code, and
/// process 0 says why.
int refuse_several_processes(const CLI::App& app, const CommandLine& cl) {
  if (!distributed::active()) return 0;
  if (cl.run->parsed()) return 0;
  if (distributed::rank() == 0)
    std::cerr << "fabricsim: error: fabricsim " << app.get_subcommands().front()->get_name()
              << " runs in one process; start it without mpirun\n";
  return kExitConfigError;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  CLI::App app{"fabricsim: SystemC/TLM-2.0 model of InfiniBand and RoCE AI fabrics"};
  app.require_subcommand(1);
  CommandLine cl;
  add_run_commands(app, cl);
  add_sweep_commands(app, cl);
  add_regress_command(app, cl);
  add_inspection_commands(app, cl);
  add_compare_command(app, cl);
  add_workload_commands(app, cl);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Every process parses the same command line: process 0 prints the help or the error.
    std::ostream discard(nullptr);
    const bool prints = distributed::rank() == 0;
    const int code = prints ? app.exit(e) : app.exit(e, discard, discard);
    return code == 0 ? 0 : kExitConfigError;
  }
  if (const int refused = refuse_several_processes(app, cl)) return refused;
  try {
    return run_subcommand(cl);
  } catch (const fabricsim::sim::ConfigError& e) {
    // Every process reads the same configuration: process 0 says what is wrong.
    if (distributed::rank() == 0) std::cerr << "fabricsim: error: " << e.what() << "\n";
    return kExitConfigError;
  } catch (const std::exception& e) {
    const bool agreed = dynamic_cast<const distributed::Agreed*>(&e) != nullptr;
    if (!agreed || distributed::rank() == 0) std::cerr << "fabricsim: simulation error: " << e.what() << "\n";
    // Another error may be this process's alone: the others would wait for it in a collective.
    if (distributed::active() && !agreed) distributed::abort(kExitSimulationError);
    return kExitSimulationError;
  }
}

namespace {
// Runs before the shared libraries' constructors (the dynamic loader calls an executable's
// .preinit_array first): the command runs itself again with huge-page malloc
// (sim/huge_pages.h) without initialising SystemC, yaml-cpp and the C++ runtime twice.
// Returns in the process that runs the command.
void malloc_huge_pages_before_constructors(int, char** argv, char** envp) {
  fabricsim::sim::run_with_malloc_huge_pages(argv, envp);
}
[[gnu::section(".preinit_array"), gnu::used]] void (*const preinit)(int, char**, char**) =
    &malloc_huge_pages_before_constructors;
}  // namespace

// Own entry point so the SystemC banner is off before the kernel starts.
int main(int argc, char* argv[]) {
  // Joins the other processes when mpirun started this one as one of several.
  try {
    distributed::start(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "fabricsim: error: " << e.what() << "\n";
    return kExitConfigError;
  }
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  return sc_core::sc_elab_and_sim(argc, argv);
}
