// The `fabricsim` command.
//   fabricsim run CONFIG [--set key=value]... [--out DIR] [--packet-csv]
//   fabricsim validate CONFIG [--set key=value]...
// Exit codes: 0 success, 1 simulation error, 2 configuration or usage error.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <systemc>

#include "sim/config.h"
#include "sim/config_reader.h"
#include "sim/fabric.h"

namespace {

constexpr int kExitSimulationError = 1;
constexpr int kExitConfigError = 2;

// Command-line output options become overrides, so the config echo in
// results.json shows what was really used.
std::string quoted_yaml(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

int run_command(const std::string& file, std::vector<std::string> overrides, const std::string& out_dir,
                bool packet_csv) {
  using namespace fabricsim::sim;
  if (!out_dir.empty()) overrides.push_back("output.directory=" + quoted_yaml(out_dir));
  if (packet_csv) overrides.push_back("output.packet_csv=true");
  const FabricConfig config = load_config(file, overrides);
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

  auto* validate = app.add_subcommand("validate", "check a configuration without running it");
  validate->add_option("config", file, "YAML configuration")->required();
  validate->add_option("--set", overrides, "override a key: path.to.key=value (repeatable)");

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
    return run_command(file, overrides, out_dir, packet_csv);
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
