// The `fabricsim` command.
//   fabricsim run CONFIG [--set key=value]... [--out DIR] [--packet-csv] [--trace DIR]
//   fabricsim validate CONFIG [--set key=value]...
//   fabricsim routes CONFIG [--set key=value]...
//   fabricsim sweep CONFIG [--loads 0.1,...,1.0] [--set key=value]... [--out DIR]
//   fabricsim compare CONFIG... [--workload W] [--topology T] [--sizes N,...] [--out DIR]
// Exit codes: 0 success, 1 simulation error, 2 configuration or usage error,
// 3 scoreboard (invariant) failure, 4 stalled fabric (deadlock) found by the watchdog.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <CLI/CLI.hpp>
#include <systemc>

#include "sim/child_run.h"
#include "sim/compare.h"
#include "sim/config.h"
#include "sim/config_reader.h"
#include "sim/fabric.h"

namespace {

constexpr int kExitSimulationError = 1;
constexpr int kExitConfigError = 2;
constexpr int kExitScoreboard = 3;  // a run completed but an invariant check failed
constexpr int kExitStalled = 4;     // the watchdog stopped a fabric that could not progress

// Command-line output options become overrides, so the config echo in
// results.json shows what was really used.
std::string quoted_yaml(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

int run_command(const std::string& file, std::vector<std::string> overrides, const std::string& out_dir,
                bool packet_csv, const std::string& trace_dir) {
  using namespace fabricsim::sim;
  if (!out_dir.empty()) overrides.push_back("output.directory=" + quoted_yaml(out_dir));
  if (packet_csv) overrides.push_back("output.packet_csv=true");
  if (!trace_dir.empty()) overrides.push_back("switch.rtl_trace=" + quoted_yaml(trace_dir));
  const FabricConfig config = load_config(file, overrides);
  if (!trace_dir.empty() && config.switch_params.allocator_impl == fabricsim::tlm_fabric::AllocatorImpl::tlm)
    std::cerr << "fabricsim: --trace: no RTL blocks in use (switch.allocator_impl is tlm), no waveforms written\n";
  namespace fs = std::filesystem;
  const fs::path dir(config.output.directory);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    std::cerr << "fabricsim: cannot create results folder '" << dir.string() << "': " << ec.message() << "\n";
    return kExitSimulationError;
  }
  std::unique_ptr<std::ofstream> csv;
  if (config.output.packet_csv) csv = std::make_unique<std::ofstream>(dir / "packets.csv");
  const nlohmann::json results = run_simulation(config, csv.get());
  std::ofstream(dir / "results.json") << results.dump(2) << "\n";
  std::cout << summary_table(results);
  std::cout << "results: " << (dir / "results.json").string();
  if (csv) std::cout << ", " << (dir / "packets.csv").string();
  std::cout << "\n";
  const bool stalled = results.contains("stall"), scoreboard_ok = results["scoreboard"]["ok"].get<bool>();
  if (stalled)
    std::cerr << "fabricsim: the fabric stopped making progress: " << results["stall"]["diagnosis"].get<std::string>()
              << " (details under \"stall\" in results.json)\n";
  if (!scoreboard_ok)
    std::cerr << "fabricsim: scoreboard check failed (see \"scoreboard\" in results.json)\n";
  // A broken invariant is a model bug, and may be what stalled the fabric (leaked credits): it wins.
  if (!scoreboard_ok) return kExitScoreboard;
  return stalled ? kExitStalled : 0;
}

// Offered-load sweep: one child process per load, a load/throughput/latency curve.
int sweep_command(const std::string& file, std::vector<std::string> overrides, const std::string& out_dir,
                  const std::string& loads_text) {
  using namespace fabricsim::sim;
  const std::vector<double> loads = parse_load_list(loads_text);
  if (!out_dir.empty()) overrides.push_back("output.directory=" + quoted_yaml(out_dir));
  const FabricConfig base = load_config(file, overrides);
  namespace fs = std::filesystem;
  const fs::path dir(base.output.directory);
  fs::create_directories(dir);
  nlohmann::json points = nlohmann::json::array();
  std::ofstream csv(dir / "sweep.csv");
  csv << "offered_load,injected_load,accepted_load,delivered,dropped,latency_mean_ns,latency_p50_ns,"
         "latency_p99_ns,latency_p999_ns,latency_max_ns\n";
  std::printf("%8s %9s %9s %10s %10s %10s %10s\n", "offered", "injected", "accepted", "mean ns", "p50 ns", "p99 ns",
              "p99.9 ns");
  for (double load : loads) {
    std::vector<std::string> point = overrides;
    point.push_back("traffic.load=" + std::to_string(load));
    const nlohmann::json r = run_in_child(load_config(file, point));
    if (r.contains("error")) throw std::runtime_error("load " + std::to_string(load) + ": " + r["error"].get<std::string>());
    const auto& t = r["throughput"];
    const auto& l = r["latency"]["network_latency_ns"];
    points.push_back({{"offered_load", load}, {"throughput", t}, {"latency_ns", l}, {"packets", r["packets"]}});
    csv << load << ',' << t["injected_load"] << ',' << t["accepted_load"] << ',' << r["packets"]["delivered"] << ','
        << r["packets"]["dropped"] << ',' << l["mean"] << ',' << l["p50"] << ',' << l["p99"] << ',' << l["p99.9"] << ','
        << l["max"] << '\n';
    std::printf("%8.3f %9.4f %9.4f %10.1f %10.1f %10.1f %10.1f\n", load, t["injected_load"].get<double>(),
                t["accepted_load"].get<double>(), l["mean"].get<double>(), l["p50"].get<double>(),
                l["p99"].get<double>(), l["p99.9"].get<double>());
    std::fflush(stdout);
  }
  std::ofstream(dir / "sweep.json") << nlohmann::json{{"schema_version", kResultsSchemaVersion},
                                                      {"config_file", file},
                                                      {"config", base.echo},
                                                      {"points", points}}.dump(2)
                                    << "\n";
  std::cout << "results: " << (dir / "sweep.csv").string() << ", " << (dir / "sweep.json").string() << "\n";
  return 0;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  CLI::App app{"fabricsim: SystemC/TLM-2.0 model of InfiniBand and RoCE AI fabrics"};
  app.require_subcommand(1);
  std::string file, out_dir;
  std::vector<std::string> overrides;
  bool packet_csv = false;

  auto* run = app.add_subcommand("run", "simulate a configuration and write results.json");
  run->add_option("config", file, "YAML configuration")->required();
  run->add_option("--set", overrides, "override a key: path.to.key=value (repeatable)");
  run->add_option("--out", out_dir, "results folder (overrides output.directory)");
  run->add_flag("--packet-csv", packet_csv, "also write packets.csv, one row per delivered packet");
  std::string trace_dir;
  run->add_option("--trace", trace_dir,
                  "write FST waveforms (GTKWave) of the RTL blocks in use (switch.allocator_impl rtl | lockstep) "
                  "into this folder");

  auto* validate = app.add_subcommand("validate", "check a configuration without running it");
  validate->add_option("config", file, "YAML configuration")->required();
  validate->add_option("--set", overrides, "override a key: path.to.key=value (repeatable)");

  std::string loads = "0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0";
  auto* sweep = app.add_subcommand("sweep", "run a configuration over offered loads: load/throughput/latency curve");
  sweep->add_option("config", file, "YAML configuration")->required();
  sweep->add_option("--set", overrides, "override a key: path.to.key=value (repeatable)");
  sweep->add_option("--out", out_dir, "results folder (overrides output.directory)");
  sweep->add_option("--loads", loads, "comma-separated offered loads in (0, 1]")->capture_default_str();

  auto* routes = app.add_subcommand("routes", "print every switch's forwarding table");
  routes->add_option("config", file, "YAML configuration")->required();
  routes->add_option("--set", overrides, "override a key: path.to.key=value (repeatable)");

  // fabricsim compare: the same topology and workloads under several configurations (sim/compare.h).
  fabricsim::sim::CompareOptions cmp;
  std::string cmp_workloads, cmp_sizes;
  bool cmp_no_plots = false;
  auto* compare = app.add_subcommand("compare", "run the same topology and workloads under several configurations "
                                                "(e.g. presets/ib_ndr.yaml presets/roce_400g.yaml), side by side");
  compare->add_option("configs", cmp.configs, "YAML configurations or presets, one column each")->required();
  compare->add_option("--workload", cmp_workloads, "comma-separated: latency, allreduce, incast, training (default all)");
  compare->add_option("--topology", cmp.topology, "topology YAML file or text, e.g. '{kind: leaf_spine, radix: 8}' "
                                                  "(default: the first configuration's)");
  compare->add_option("--sizes", cmp_sizes, "cluster-size sweep: comma-separated endpoint counts, a 1:1 leaf-spine each");
  compare->add_option("--out", cmp.out_dir, "results folder")->capture_default_str();
  compare->add_option("--set", cmp.overrides, "override a key in every run: path.to.key=value (repeatable, applied last)");
  compare->add_option("--allreduce-size", cmp.allreduce_size, "AllReduce bytes per rank")->capture_default_str();
  compare->add_option("--latency-iterations", cmp.latency_iterations, "write_lat iterations per size")->capture_default_str();
  compare->add_option("--incast-bytes", cmp.incast_bytes, "size of the one RDMA WRITE each incast sender posts to "
                                                          "endpoint 0 at t = 0")->capture_default_str();
  compare->add_option("--jobs", cmp.jobs, "simulations at once (default: number of CPUs)");
  compare->add_flag("--no-plots", cmp_no_plots, "do not run scripts/plot_compare.py");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitConfigError;
  }
  try {
    if (validate->parsed()) {
      fabricsim::sim::load_config(file, overrides);
      std::cout << file << ": valid\n";
      return 0;
    }
    if (sweep->parsed()) return sweep_command(file, overrides, out_dir, loads);
    if (compare->parsed()) {
      std::stringstream ws(cmp_workloads), ss(cmp_sizes);
      for (std::string w; std::getline(ws, w, ',');)
        if (!w.empty()) cmp.workloads.push_back(w);
      for (std::string n; std::getline(ss, n, ',');) {
        char* end = nullptr;
        const long v = std::strtol(n.c_str(), &end, 10);
        if (n.empty() || *end != '\0' || v < 2 || v > 65536)
          throw fabricsim::sim::ConfigError("--sizes " + cmp_sizes, "", "expected comma-separated endpoint counts (2..65536), got '" + n + "'");
        cmp.sizes.push_back(static_cast<int>(v));
      }
      cmp.plots = !cmp_no_plots;
      return fabricsim::sim::compare_command(cmp);
    }
    if (routes->parsed()) {
      std::cout << fabricsim::sim::route_tables(fabricsim::sim::load_config(file, overrides));
      return 0;
    }
    return run_command(file, overrides, out_dir, packet_csv, trace_dir);
  } catch (const fabricsim::sim::ConfigError& e) {
    std::cerr << "fabricsim: error: " << e.what() << "\n";
    return kExitConfigError;
  } catch (const std::exception& e) {
    std::cerr << "fabricsim: simulation error: " << e.what() << "\n";
    return kExitSimulationError;
  }
}

// Own entry point so the SystemC banner is off before the kernel starts.
int main(int argc, char* argv[]) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  return sc_core::sc_elab_and_sim(argc, argv);
}
