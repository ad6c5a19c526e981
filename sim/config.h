// The run configuration: typed params for every block, read from YAML with
// units and validated key by key (sim/config_reader.h). docs/config.md lists
// every key.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "hw/phy.h"
#include "testbench/traffic_source.h"
#include "tlm/link.h"
#include "tlm/nic.h"
#include "tlm/switch.h"

namespace fabricsim::sim {

/// Run control.
struct SimulationParams {
  std::uint64_t seed = 1;                       ///< random seed; same seed, same results
  hw::Time duration = hw::Time::us(100);        ///< simulated time to run [s]
  hw::Time warmup = hw::Time::us(10);           ///< statistics ignore packets created before this [s]
};

/// Shape of the fabric (issue 2: one switch).
enum class TopologyKind { single_switch };
struct TopologyParams {
  TopologyKind kind = TopologyKind::single_switch;
  int endpoints = 4;                            ///< NICs, one per switch port, 1..switch.ports
};

/// Which destinations sources send to.
enum class TrafficPattern { none, uniform, permutation, explicit_flows };
/// One explicit flow (pattern: explicit).
struct FlowParams {
  int src = 0;
  int dst = 1;
  double load = 1.0;                            ///< fraction of the source link's wire rate
  hw::Size message_size = hw::Size::kib(64);
  std::uint64_t messages = 0;                   ///< 0: until the end of the run
  hw::Time start = hw::Time::seconds(0);
};
struct TrafficParams {
  TrafficPattern pattern = TrafficPattern::uniform;
  double load = 0.5;                            ///< offered load per source, fraction of link wire rate
  hw::Size message_size = hw::Size::kib(64);    ///< bytes per message
  testbench::ArrivalProcess arrival = testbench::ArrivalProcess::poisson;
  std::uint64_t messages = 0;                   ///< per source, 0: until the end of the run
  std::vector<FlowParams> flows;                ///< pattern: explicit
};

/// What to write.
struct OutputParams {
  std::string directory = "results";           ///< results folder (created)
  bool packet_csv = false;                      ///< write packets.csv, one row per delivered packet
};

struct FabricConfig {
  std::string file;                             ///< where it was read from
  SimulationParams simulation;
  tlm_fabric::LinkParams link;
  tlm_fabric::SwitchParams switch_params;
  tlm_fabric::NicParams nic;
  TopologyParams topology;
  TrafficParams traffic;
  OutputParams output;
  nlohmann::json echo;                          ///< the effective document after --set, as JSON
};

/// Reads, overrides and validates a configuration; throws ConfigError.
FabricConfig load_config(const std::string& file, const std::vector<std::string>& overrides = {});
/// Same, from YAML text (for tests); `name` stands in for the file name in errors.
FabricConfig load_config_text(const std::string& yaml, const std::string& name,
                              const std::vector<std::string>& overrides = {});

std::string_view to_string(TrafficPattern p);
std::string_view to_string(testbench::ArrivalProcess a);

}  // namespace fabricsim::sim
