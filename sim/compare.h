// `fabricsim compare`: the same topology and workloads under several fabric
// configurations (typically presets/*.yaml), side by side. Each configuration document
// loses its workload sections and gets the common topology, one workload (the training
// workload: --job's `training:` and `server:` sections) and --set; each (configuration,
// workload) runs in a child process. With --sizes each size gets the fabric a cluster of that size
// is built with (sim/cluster_fabric.h), its bill of materials and, with --prices, cost. docs/ib-vs-roce.md describes the
// workloads, the --sizes sweep and the files written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cluster_fabric.h"
#include "sim/topology.h"

namespace fabricsim::sim {

/// The workloads `--workload` can select.
const std::vector<std::string>& compare_workload_names();

struct CompareOptions {
  std::vector<std::string> configs;            ///< configuration files, one column each
  std::vector<std::string> workloads;          ///< subset of compare_workload_names(); empty: all
  std::string topology;                        ///< YAML text or a file; empty: the first configuration's topology
  std::string job;                             ///< --job: file whose training: and server: the training workload runs
  std::vector<int> sizes;                      ///< cluster-size sweep (endpoints); empty: no sweep
  std::string out_dir = "results/compare";     ///< everything is written here
  std::vector<std::string> overrides;          ///< --set, applied to every run after the workload
  std::string allreduce_size = "4MiB";         ///< AllReduce bytes per rank
  int latency_iterations = 1000;               ///< write_lat iterations per size
  std::string incast_bytes = "256KiB";         ///< incast: each sender's one RDMA WRITE to endpoint 0, posted at t = 0
  int jobs = 0;                                ///< simulations at once; 0: number of CPUs
  bool plots = true;                           ///< run scripts/plot_compare.py
  ClusterShape shape;                          ///< --sizes: radix, oversubscription, layout, server size of each size's fabric
  std::string host_cable = "auto";             ///< host-leaf medium: auto, dac, aec or optics (CablingRule)
  double comm_threshold = 0.30;                ///< mark sizes whose exposed communication fraction is above this
  std::string prices;                          ///< prices file; empty: no cost rows
  bool bom_only = false;                       ///< --sizes: fabrics, materials and cost only, nothing run
};

/// Runs the comparison, prints the table and writes the files; returns the exit code.
/// Configuration errors throw ConfigError (exit 2 in main).
int compare_command(const CompareOptions& options);

}  // namespace fabricsim::sim
