// Builds the SystemC model described by a FabricConfig: a Switch per graph switch
// (sim/topology.h), a Nic per endpoint, a Link per cable direction, open switch ports
// terminated, minimal-path forwarding tables and traffic sources (testbench/);
// run_simulation (sim/results.cpp) runs it. SystemC elaborates once per process: call
// run_simulation at most once.
#pragma once

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "sim/config.h"
#include "sim/flow_completion.h"
#include "sim/output_file.h"
#include "sim/progress.h"
#include "sim/skipped_packets.h"
#include "sim/stats.h"
#include "sim/topology.h"
#include "testbench/collectives.h"
#include "testbench/perftest.h"
#include "testbench/traffic_source.h"
#include "tlm/link.h"
#include "tlm/nic.h"
#include "tlm/packet_pool.h"
#include "tlm/switch.h"
#include "tlm/unconnected_port.h"
#include "tlm/wake_queue.h"

namespace fabricsim::sim {

/// Version of the results.json layout; bump on any incompatible change.
inline constexpr int kResultsSchemaVersion = 3;

/// The cables on one switch port (nullptr when the port is open, or another process
/// makes them: the indices say which).
struct PortLinks {
  const tlm_fabric::Link* ingress = nullptr;  ///< arriving at this port
  const tlm_fabric::Link* egress = nullptr;   ///< leaving this port
  std::string peer;                           ///< node at the other end
  std::string tier;                           ///< host, leaf-spine, edge-agg, agg-core, switch-switch
  int peer_switch = -1;                       ///< switch index at the other end, -1 for an endpoint
  int peer_port = -1;                         ///< its port
  int peer_nic = -1;                          ///< NIC index at the other end (endpoint or aggregation node), else -1
  int ingress_link = -1, egress_link = -1;    ///< their indices in Fabric::all_links(), -1 when open
};

class Fabric : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Fabric);
  Fabric(sc_core::sc_module_name name, const FabricConfig& config, stats::Registry& stats);

  const FabricConfig& config() const { return config_; }
  const TopologyGraph& graph() const { return graph_; }
  /// Every switch, by graph index. Over several processes (tlm/distributed.h) a process
  /// makes only the switches it runs, with their NICs, traffic sources and the links
  /// touching them: the others are null here (runs_switch, runs_nic).
  const std::vector<std::unique_ptr<tlm_fabric::Switch>>& switches() const { return switches_; }
  /// Every NIC: the endpoints, then the aggregation nodes (null where another process runs it).
  const std::vector<std::unique_ptr<tlm_fabric::Nic>>& nics() const { return nics_; }
  /// The hierarchy name of switch `s`, NIC `e` (made here or not).
  std::string switch_name(int s) const;
  std::string nic_name(int e) const;
  /// Host cable of endpoint e: endpoint -> switch (made where its NIC runs).
  const tlm_fabric::Link& uplink(int e) const { return *up_[e]; }
  /// Host cable of endpoint e: switch -> endpoint.
  const tlm_fabric::Link& downlink(int e) const { return *down_[e]; }
  /// Every link direction in the fabric (null where another process makes it, the index the same).
  const std::vector<std::unique_ptr<tlm_fabric::Link>>& all_links() const { return links_; }
  /// The counters of link `k` of all_links(): the link's own, and over several processes
  /// after gather_link_counters the whole run's of every link, in every process.
  const tlm_fabric::LinkCounters& link_counters(int k) const;
  /// port_links()[s][p]: the cables on port p of switch s.
  const std::vector<std::vector<PortLinks>>& port_links() const { return port_links_; }
  const tlm_fabric::PacketPool& pool() const { return pool_; }
  /// The perftest workload, or nullptr.
  const testbench::Perftest* perftest() const { return perftest_.get(); }
  /// The collective workload, or nullptr.
  const testbench::CollectiveRunner* collective() const { return collective_.get(); }
  /// The Chakra trace workload, or nullptr.
  const chakra::Executor* chakra() const { return chakra_.get(); }
  /// The trace the executor runs (a generated job's is built with the fabric), or null.
  const chakra::Trace* chakra_trace() const { return chakra_trace_.get(); }
  /// Endpoint of each collective rank (placement applied).
  std::vector<int> place_ranks() const;
  /// output.latency_breakdown: every packet carries its latency parts (tlm/latency_breakdown.h).
  void keep_latency_breakdowns();
  /// packets.csv into `log` (its header first; tlm/packet_log.h), from now on.
  void set_packet_log(std::ostream& log);
  /// Writes the packet log's last rows (after the run).
  void finish_packet_log();
  /// The fabric trace (output.trace: trace.perfetto.json, fabric.vcd into `dir`), from now on.
  void set_trace(const tlm_fabric::TraceOptions& options, const std::string& dir);
  /// Writes the rest of the trace files (after the run) and says what they hold.
  std::vector<tlm_fabric::TraceFileRecord> finish_trace();
  /// The fabric trace, or null.
  const tlm_fabric::FabricTrace* trace() const { return trace_.get(); }
  /// qp_rates.csv into `log` (its header first): at every sample, the CC rate of each QP with requests.
  void set_qp_rate_log(std::ostream& log);
  /// occupancy.csv into `log` (its header first): at every sample, the bytes each switch
  /// port holds (ingress and egress), a row per port holding any.
  void set_occupancy_log(std::ostream& log);
  /// Sampled every output.sample_interval, as results.json "timeseries": the bytes all
  /// switch ports hold (each port's in occupancy.csv) and the CC rates of each endpoint.
  nlohmann::json timeseries() const;
  /// FCT and slowdown of every message delivered whose flow started after the warm-up (results.json "flows").
  const FlowStats& flows() const { return *flows_; }
  /// Over `processes` processes: throws std::invalid_argument naming what of `config` does
  /// not run over them (`fabricsim sweep --processes` checks its points with it first).
  static void refuse_over_processes(const FabricConfig& config, int processes);
  /// Whether this process runs switch `s`, endpoint `e` (every one but in a run over
  /// several processes: tlm/distributed.h); it makes exactly those (switches(), nics()).
  bool runs_switch(int s) const;
  bool runs_nic(int e) const;
  /// Several processes, after the run: every process's flows into process 0's flows().
  void gather_flows();
  /// Several processes, after the run: the whole run's counters of every link, in every
  /// process (a link counts in its transmitter's process).
  void gather_link_counters();
  /// The watchdog's finding when the fabric stopped making progress (null otherwise).
  const nlohmann::json& stall_report() const { return stall_; }

 private:
  /// The zero-load closed form of a message on this fabric (ideal FCT).
  IdealFct ideal_fct() const;
  /// Wake-queue lanes (simulation.threads): a lane per switch (switch_lane_), set before any block is made.
  void plan_lanes();
  /// The same, with the fabric's switches with hosts and whether its workload is coupled.
  static void refuse_over_processes(const FabricConfig& config, int processes, int host_switches, bool coupled);
  /// `link` from switch `from` to switch `to` crosses lanes: it defers, and bounds the
  /// lookahead (by the delays of the switches made here: the processes agree on the least).
  void cross_lanes(int from, tlm_fabric::Link& link, int to);
  void merge_lane_flows();  // the lanes' flow records of a window into flows_
  /// simulation.fast_forward for a workload, counting what it skips on the links (skipped_).
  testbench::FastForwardParams fast_forward();
  tlm_fabric::Link& add_link(const std::string& name, const tlm_fabric::LinkParams& params);
  /// In place of a link another process makes: its index (and its seed's) taken. Returns the index.
  int skip_link();
  /// The far end `name` of a cable whose switch another process makes: the receiver of
  /// `to_far` and the transmitter of `from_far`, a stub.
  void bind_far_end(const std::string& name, tlm_fabric::Link& to_far, tlm_fabric::Link& from_far);
  /// Every switch's forwarding table, from the minimal routes of `routed` (the graph with
  /// the aggregation ports of in-network reduction).
  void set_routes(const TopologyGraph& routed);
  /// A Switch per graph switch, with `extra_ports[s]` internal ports beyond its radix.
  void build_switches(const std::vector<int>& extra_ports, stats::Registry& stats);
  /// Switch `s`'s parameters: the switch section, its tier's and its own overrides.
  const tlm_fabric::SwitchParams& switch_params_of(int s) const {
    return config_.switch_params_for(graph_.switches[s].name, graph_.switches[s].level);
  }
  /// No switch: NIC 0 and NIC 1 on one cable (a Link per direction).
  void connect_back_to_back(stats::Registry& stats);
  /// A NIC (endpoint or aggregation node) `e` named `ep` on port `port` of switch `s`.
  void attach_nic(int e, const std::string& ep, int s, int port, const tlm_fabric::LinkParams& cable,
                  const std::string& tier, stats::Registry& stats);
  /// Sharp: the aggregation nodes of `tree` as endpoints n, n + 1, ... (each a NIC on an
  /// internal port at the rate of `link`, no cable), added to `routed`.
  testbench::AggregationTree attach_aggregation_ports(const SwitchTree& tree, const std::vector<int>& ranks,
                                                      TopologyGraph& routed, stats::Registry& stats);
  /// A Link pair per switch-to-switch cable.
  void connect_switch_cables();
  /// Ports without a cable get an UnconnectedPort.
  void terminate_open_ports();
  /// The NICs' flow records after the warm-up into flows_ (per lane in a parallel window).
  void collect_flows();
  void build_collective(const testbench::AggregationTree& aggregation);
  /// The Chakra executor over the placed ranks' NICs (each rank in its NIC's lane).
  void build_chakra();
  /// The wake-queue lane of each endpoint of `routed` (its switch's).
  std::vector<int> endpoint_lanes(const TopologyGraph& routed) const;
  void build_traffic();
  /// A traffic generator at endpoint `src` (with its RC QPs when the transport is RDMA).
  void add_source(int src, testbench::Destinations dsts, std::vector<testbench::Weighted> msg_sizes,
                  std::uint32_t flow, const std::vector<int>& sls, double load, std::uint64_t messages,
                  hw::Time start);
  void sample();
  void watchdog();
  /// Something is on its way that arrives after now (the watchdog's progress).
  bool on_its_way() const;
  nlohmann::json diagnose_stall() const;

  FabricConfig config_;
  TopologyGraph graph_;
  tlm_fabric::PacketPool pool_;
  std::vector<std::unique_ptr<tlm_fabric::Switch>> switches_;
  std::vector<std::unique_ptr<tlm_fabric::Nic>> nics_;
  std::vector<std::string> elsewhere_names_;  // per NIC another process makes: its name
  std::vector<std::unique_ptr<tlm_fabric::Link>> links_;
  std::vector<tlm_fabric::Link*> up_, down_;
  std::vector<tlm_fabric::LinkCounters> link_counters_;  // several processes: every link's, gathered
  std::vector<std::vector<PortLinks>> port_links_;
  std::vector<std::unique_ptr<tlm_fabric::UnconnectedPort>> unused_;
  std::vector<std::unique_ptr<testbench::TrafficSource>> sources_;
  std::vector<int> qps_made_;  // per NIC: the RC QPs the traffic made on it (made here or not)
  std::unique_ptr<FlowStats> flows_;
  std::unique_ptr<SkippedPackets> skipped_;  // fast-forward on: its packets on the links
  int lanes_ = 1;
  std::vector<int> switch_lane_;  // per switch: its wake-queue lane (its NICs and sources wake there too)
  sc_core::sc_time lookahead_;    // of the lanes' windows: the least delay across a link between lanes
  std::vector<std::vector<tlm_fabric::FlowRecord>> lane_flows_;  // per lane: flow records of this window
  std::vector<tlm_fabric::FlowRecord> merged_flows_, merging_flows_;  // merge_lane_flows' buffers
  std::vector<int> nic_lane_;  // per NIC (endpoints, then aggregation ports): its lane
  std::vector<tlm_fabric::FlowRecord> process_flows_;  // several processes: this one's, in completion order
  std::unique_ptr<tlm_fabric::PacketLog> packet_log_;
  std::unique_ptr<tlm_fabric::FabricTrace> trace_;
  std::unique_ptr<testbench::Perftest> perftest_;
  std::unique_ptr<testbench::CollectiveRunner> collective_;
  std::shared_ptr<const chakra::Trace> chakra_trace_;
  std::unique_ptr<chakra::Executor> chakra_;
  // The occupancy sampler, a wake-up made before any block's: a sample at t runs before
  // every block woken at t, whatever order the kernel gives events due at one instant.
  std::unique_ptr<tlm_fabric::WakeEvent> sampler_;
  sc_core::sc_event watchdog_event_;
  std::uint64_t last_progress_ = 0;
  nlohmann::json stall_;
  std::vector<double> sample_times_ns_;
  std::vector<std::uint64_t> ingress_totals_, egress_totals_;  // [sample]: bytes in every switch port
  // sample()'s scratch: each NIC's QP rates, each switch's ports' bytes (in process 0
  // every one's, gathered: gather_sample).
  std::vector<std::vector<tlm_fabric::QpRate>> sampled_rates_;
  std::vector<std::vector<std::uint64_t>> sampled_ingress_, sampled_egress_;
  void gather_sample();
  std::ostream* occupancy_log_ = nullptr;
  // Per endpoint, per sample, the lowest and mean CC rate [Gb/s] of its QPs with requests;
  // empty until it has one, NaN (null in JSON) at samples when it has none.
  struct RateSeries {
    std::vector<double> lowest, mean;
  };
  std::vector<RateSeries> rate_series_;
  std::ostream* qp_rate_log_ = nullptr;
};

/// What run_simulation does with the model once the results are built.
enum class ModelTeardown {
  destroy,  ///< destroy it (the default; a process may then only exit: SystemC elaborates once)
  skip,     ///< leave it to the process exit (leave_to_process_exit, sim/process_exit.h): the
            ///< caller exits right after the results are written (`fabricsim run`, a sweep
            ///< point's or a compare job's child process). Destroying a large fabric is slow
            ///< (SystemC's port registries remove each socket with a linear search).
            ///< Not with RTL waveforms (switch.rtl_trace): their files are finished on destruction.
};

/// Where a run writes its CSV files (each written only when given).
struct RunLogs {
  std::ostream* packets = nullptr;   ///< packets.csv: a row per packet delivered (tlm/packet_log.h)
  std::ostream* qps = nullptr;       ///< qps.csv: a row per RDMA queue pair, at the end of the run
  std::ostream* qp_rates = nullptr;  ///< qp_rates.csv: at every sample, the CC rate of each QP with requests
  std::ostream* occupancy = nullptr; ///< occupancy.csv: at every sample, the bytes each switch port holds
  /// When given and the model outlives the run (ModelTeardown::skip, no RTL waveforms):
  /// the results leave out "stats" and this points at the registry, for write_results.
  const stats::Registry** stats = nullptr;
};

/// `results` as `dir`/results.json (indented by 2), through write_file_atomically; with
/// `stats`, its "stats" section written from the registry one statistic at a time (the
/// same bytes as the tree's, without the tree: gigabytes at millions of statistics).
void write_results(const std::filesystem::path& dir, const nlohmann::json& results,
                   const stats::Registry* stats = nullptr);

/// The output files of a run in folder `dir`. The constructor removes results.json
/// first (until the run ends, the folder does not look complete), then every CSV file
/// a run can write that this one does not (an earlier run's, which this results.json
/// would not describe), and opens the others for writing: packets.csv with
/// output.packet_csv, qps.csv always, qp_rates.csv and occupancy.csv when
/// output.sample_interval samples.
/// Throws if one cannot be opened (sim/output_file.h: the file and the OS reason).
class RunFiles {
 public:
  RunFiles(const std::filesystem::path& dir, const FabricConfig& config);
  RunLogs logs() const;
  /// The names (without the folder) of the CSV files a run of `config` writes, in the order
  /// packets.csv, qps.csv, qp_rates.csv, occupancy.csv.
  static std::vector<std::string> file_names(const FabricConfig& config);
  /// Closes the CSV files (throws if one could not be written in full, with the file and the
  /// OS reason), lists them under `files` in `results` and writes results.json, last.
  void finish(nlohmann::json& results);

 private:
  std::filesystem::path dir_;
  std::vector<std::unique_ptr<OutputFile>> files_;  // in the order of file_names()
  OutputFile* packets_ = nullptr;
  OutputFile* qps_ = nullptr;
  OutputFile* qp_rates_ = nullptr;
  OutputFile* occupancy_ = nullptr;
  mutable const stats::Registry* stats_ = nullptr;  // set by run_simulation through logs()
};

/// Elaborates, simulates for simulation.duration and returns results.json content,
/// writing `logs`.
/// With `progress`, the simulation runs in slices of 1/200 of the duration so the
/// progress line can follow simulated time; slicing does not change the results.
nlohmann::json run_simulation(const FabricConfig& config, const RunLogs& logs = {}, Progress* progress = nullptr,
                              ModelTeardown teardown = ModelTeardown::destroy);

/// A short human-readable table of a results document.
std::string summary_table(const nlohmann::json& results);

/// The forwarding tables of every switch as text (`fabricsim routes`), each switch with the
/// parameters its override sets apart from the switch section.
std::string route_tables(const FabricConfig& config);

/// results.json "switch_parameters": per switch with an override (switch.tiers,
/// switch.instances), the section that sets its parameters (`override`) and each key
/// whose effective value differs from the switch section (`keys`: `value` and `switch`,
/// the switch section's, null for its default).
nlohmann::json overridden_switches(const FabricConfig& config);

}  // namespace fabricsim::sim
