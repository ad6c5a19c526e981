// The run configuration: typed params for every block, read from YAML with
// units and validated key by key (sim/config_reader.h). docs/config.md lists
// every key.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "hw/phy.h"
#include "hw/routing.h"
#include "sim/topology.h"
#include "testbench/chakra/executor.h"
#include "testbench/collectives.h"
#include "testbench/perftest.h"
#include "testbench/traffic_source.h"
#include "testbench/training/generator.h"
#include "tlm/link.h"
#include "tlm/nic.h"
#include "tlm/switch.h"

namespace fabricsim::sim {

/// Run control.
struct SimulationParams {
  std::uint64_t seed = 1;                       ///< random seed; same seed, same results
  hw::Time duration = hw::Time::us(100);        ///< simulated time to run [s]
  hw::Time warmup = hw::Time::us(10);           ///< statistics ignore packets created before this [s]
  hw::Time watchdog = hw::Time::us(1000);       ///< stop with a diagnosis when no packet moves for this long; 0: off
  int threads = 1;                              ///< lanes of the wake queue run in parallel (the same results with any number)
  tlm_fabric::Engine engine = tlm_fabric::Engine::wheel;  ///< how block wake-ups run: wake-queue wheels or one sc_event each
  std::uint64_t max_memory = 0;                 ///< refuse a topology estimated to need more [B]; 0: the machine's available memory
  testbench::FastForwardParams fast_forward;    ///< on only where it applies (check_fast_forward)
  bool fast_forward_asked = false;              ///< simulation.fast_forward was on in the configuration
  std::string fast_forward_off;                 ///< asked but off: why
};


/// Which destinations sources send to.
enum class TrafficPattern {
  none,
  uniform,         ///< each message to a uniformly drawn other endpoint
  permutation,     ///< each source to one fixed partner, a random derangement
  hotspot,         ///< a fraction of messages to hotspot endpoints, the rest uniform
  incast,          ///< every sender to one target
  explicit_flows,  ///< the listed flows
};
/// The configuration names of TrafficPattern (traffic.pattern).
const hw::EnumNames<TrafficPattern>& traffic_pattern_names();
std::string_view to_string(TrafficPattern p);

/// How synthetic traffic travels (traffic.transport).
enum class TrafficTransport {
  raw,   ///< bare packets from the NIC's send queues
  rdma,  ///< each message an RDMA WRITE on an RC queue pair
};
const hw::EnumNames<TrafficTransport>& traffic_transport_names();
std::string_view to_string(TrafficTransport t);

/// A message size and its relative frequency.
struct SizeWeight {
  hw::Size size;
  double weight = 1.0;
};
/// One explicit flow (pattern: explicit).
struct FlowParams {
  int src = 0;
  int dst = 1;
  double load = 1.0;                            ///< fraction of the source link's wire rate
  hw::Size message_size = hw::Size::kib(64);
  std::uint64_t messages = 0;                   ///< 0: until the end of the run
  hw::Time start = hw::Time::seconds(0);
  std::vector<int> sls{0};                      ///< service levels, message i of the flow on sls[i mod size]
};
struct TrafficParams {
  TrafficPattern pattern = TrafficPattern::uniform;
  double load = 0.5;                            ///< offered load per source, fraction of link wire rate
  hw::Size message_size = hw::Size::kib(64);    ///< bytes per message (when no distribution)
  std::vector<SizeWeight> message_sizes;        ///< weighted size distribution; empty: message_size
  testbench::ArrivalProcess arrival = testbench::ArrivalProcess::poisson;
  double burst_length = 8;                      ///< on_off: mean messages per burst
  std::uint64_t messages = 0;                   ///< per source, 0: until the end of the run
  std::vector<int> sls{0};                      ///< service levels; message i of each source on sls[i mod size]
  std::vector<int> hotspots{0};                 ///< hotspot: hotspot endpoints
  double hotspot_fraction = 0.5;                ///< hotspot: share of messages to the hotspots
  int incast_target = 0;                        ///< incast: the receiver
  std::vector<int> incast_senders;              ///< incast: senders; empty: all others
  std::vector<FlowParams> flows;                ///< pattern: explicit
  TrafficTransport transport = TrafficTransport::raw;
};

/// What to write.
struct OutputParams {
  std::string directory = "results";           ///< results folder (created)
  bool packet_csv = false;                      ///< write packets.csv, one row per delivered packet
  bool latency_breakdown = false;               ///< per-hop latency parts: results.json, packets.csv columns
  hw::Time sample_interval = hw::Time::us(1);   ///< buffer occupancy sampling period; 0s: off
  tlm_fabric::TraceOptions trace;               ///< the fabric trace (output.trace*); off by default
};

/// Which endpoint each rank of a collective or training step runs on (sim/fabric.cpp place_ranks).
enum class RankPlacement {
  packed,  ///< rank i on endpoint i
  spread,  ///< round robin over the switches with endpoints
  random,  ///< a shuffle drawn from simulation.seed
  rail,    ///< whole servers, ordered rail by rail (rail_optimized only)
};
/// The configuration names of RankPlacement (collective.placement, training.placement).
const hw::EnumNames<RankPlacement>& rank_placement_names();
std::string_view to_string(RankPlacement p);

/// SHARP-like in-network reduction: an aggregation node in every switch of a
/// reduction tree (InfiniBand switches only); used by collective.algorithm: sharp.
struct InNetworkReduction {
  bool enabled = false;                          ///< switch.in_network_reduction
  hw::Time latency = hw::Time::ns(200);          ///< switch.reduction_latency: inputs in -> result out, per node and chunk (assumption)
  hw::Bandwidth bandwidth;                       ///< switch.reduction_bandwidth: reduction throughput per node; 0: as fast as its ports
};

/// A Chakra trace run on the fabric (`chakra:`).
struct ChakraWorkload {
  std::string prefix;                                 ///< the trace's path prefix, resolved
  std::shared_ptr<const chakra::Trace> trace;         ///< read and checked at load time; null for a generated job
  chakra::ExecutorParams params;                      ///< ranks filled by the builder (placement)
};

/// The host of the endpoints (`server:`): `gpus` GPUs with one NIC each, endpoint e
/// being GPU e mod gpus of server e / gpus, and optionally a scale-up domain
/// (NVLink-like) that carries a Chakra trace's transfers between GPUs of one server.
struct ServerParams {
  int gpus = 0;                  ///< GPUs per server; 0 (absent): the rail layout's gpus_per_server, else 1
  bool scale_up = false;         ///< `server.scale_up` given: the domain is on
  chakra::ScaleUp domain;        ///< its bandwidth and latency; gpus_per_server = gpus when on
};

struct FabricConfig {
  std::string file;                             ///< where it was read from
  SimulationParams simulation;
  tlm_fabric::LinkParams link;
  tlm_fabric::SwitchParams switch_params;
  InNetworkReduction in_network_reduction;
  tlm_fabric::NicParams nic;
  TopologyParams topology;
  ServerParams server;          ///< gpus resolved (1 or more) at load
  hw::RoutingParams routing;
  TrafficParams traffic;
  bool perftest_enabled = false;                ///< a `perftest:` section was given
  testbench::PerftestParams perftest;
  bool collective_enabled = false;              ///< a `collective:` section was given
  testbench::CollectiveParams collective;       ///< ranks filled by the builder from rank_count/placement
  int collective_ranks = 0;                     ///< ranks, 0: every endpoint
  RankPlacement placement = RankPlacement::packed;
  bool chakra_enabled = false;                  ///< a `chakra:` section was given (collective_ranks: its ranks)
  ChakraWorkload chakra;
  /// A generated training job (`training:` with model, parallelism, gpu;
  /// sim/training_config.h), run as a Chakra trace (chakra_enabled). Its plan is checked
  /// when the configuration is read; its trace is built when the run starts (run_trace).
  std::optional<training::Job> training_job;
  OutputParams output;
  nlohmann::json echo;                          ///< the effective document after --set, as JSON
  /// Settings that are accepted but likely not what was meant, each worded as an error
  /// (`FILE:LINE:COL: key: what`): printed by run and validate, kept in results.json.
  std::vector<std::string> warnings;

  /// Switch parameters of the tiers (switch.tiers, by level: 0 leaf, 1 spine, 2 core) and
  /// of the named switches (switch.instances), each complete: switch_params with the
  /// tier's, then the switch's keys over it.
  std::map<int, tlm_fabric::SwitchParams> tier_switch_params;
  std::map<std::string, tlm_fabric::SwitchParams> instance_switch_params;
  /// Per override section (switch.tiers.spine, switch.instances.leaf0): `switches`, the
  /// switch names it applies to, and `keys`, each key whose effective value differs from
  /// the switch section's: {value, switch} (`fabricsim validate` prints them).
  nlohmann::json switch_overrides = nlohmann::json::object();
  /// The effective parameters of the switch `name` at tier `level`.
  const tlm_fabric::SwitchParams& switch_params_for(const std::string& name, int level) const;

  /// Whether any block runs as an RTL twin (an `*_impl` key other than tlm that has an
  /// effect: the write arbiters only on an output-queued switch).
  bool uses_rtl_blocks() const;
};

/// One `path.to.key=value` override and where it came from: empty `origin` for `--set`,
/// else a location such as `sweep.yaml:9:13` that errors on the key name instead.
struct Override {
  std::string assignment;
  std::string origin;
};

/// Reads, overrides and validates a configuration; throws ConfigError.
FabricConfig load_config(const std::string& file, const std::vector<std::string>& overrides = {});
/// Same, with overrides that know where they came from (`fabricsim sweep` axes).
FabricConfig load_config_with_origins(const std::string& file, const std::vector<Override>& overrides);
/// Same, from YAML text (for tests); `name` stands in for the file name in errors.
FabricConfig load_config_text(const std::string& yaml, const std::string& name,
                              const std::vector<std::string>& overrides = {});
struct ConfigDocument;  // sim/config_reader.h
/// Same, from a document already read (and perhaps edited, as `fabricsim compare` does);
/// the overrides are applied to `doc` itself. Errors keep pointing into the files read.
FabricConfig load_config(const ConfigDocument& doc, const std::vector<std::string>& overrides = {});

/// `fabricsim sweep CONFIG --loads`: the offered loads of the load axis.
std::vector<double> parse_load_list(const std::string& text);

}  // namespace fabricsim::sim
