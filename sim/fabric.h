// Builds the SystemC model described by a FabricConfig and runs it.
//
// CODE FLOW
//   FabricConfig -> Fabric (switch, NICs, a Link per direction, traffic sources)
//   run_simulation -> sc_start(duration) -> results JSON (sim/results.h layout)
// SystemC elaborates once per process: call run_simulation at most once.
#pragma once

#include <memory>
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "sim/config.h"
#include "sim/stats.h"
#include "testbench/traffic_source.h"
#include "tlm/link.h"
#include "tlm/nic.h"
#include "tlm/packet_pool.h"
#include "tlm/switch.h"
#include "tlm/unconnected_port.h"

namespace fabricsim::sim {

/// Version of the results.json layout; bump on any incompatible change.
inline constexpr int kResultsSchemaVersion = 1;

class Fabric : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Fabric);
  Fabric(sc_core::sc_module_name name, const FabricConfig& config, stats::Registry& stats);

  const FabricConfig& config() const { return config_; }
  tlm_fabric::Switch& fabric_switch() { return *switch_; }
  const std::vector<std::unique_ptr<tlm_fabric::Nic>>& nics() const { return nics_; }
  /// Link endpoint -> switch (index = endpoint) and switch -> endpoint.
  const std::vector<std::unique_ptr<tlm_fabric::Link>>& uplinks() const { return up_; }
  const std::vector<std::unique_ptr<tlm_fabric::Link>>& downlinks() const { return down_; }
  const tlm_fabric::PacketPool& pool() const { return pool_; }
  void set_packet_log(std::ostream* log);
  /// Buffer occupancy sampled every output.sample_interval, as results.json "timeseries".
  nlohmann::json timeseries() const;

 private:
  void build_traffic();
  void sample();

  FabricConfig config_;
  tlm_fabric::PacketPool pool_;
  std::unique_ptr<tlm_fabric::Switch> switch_;
  std::vector<std::unique_ptr<tlm_fabric::Nic>> nics_;
  std::vector<std::unique_ptr<tlm_fabric::Link>> up_, down_;
  std::vector<std::unique_ptr<tlm_fabric::UnconnectedPort>> unused_;
  std::vector<std::unique_ptr<testbench::TrafficSource>> sources_;
  sc_core::sc_event sample_event_;
  std::vector<double> sample_times_ns_;
  std::vector<std::vector<std::uint64_t>> ingress_samples_, egress_samples_;  // [port][sample]
};

/// Elaborates, simulates for simulation.duration and returns results.json content.
/// `packet_log`, when given, receives packets.csv.
nlohmann::json run_simulation(const FabricConfig& config, std::ostream* packet_log = nullptr);

/// A short human-readable table of a results document.
std::string summary_table(const nlohmann::json& results);

}  // namespace fabricsim::sim
