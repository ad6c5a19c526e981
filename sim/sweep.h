// `fabricsim sweep`: design-space sweeps (docs/sweeps.md). A sweep file (or CONFIG
// --loads) becomes a SweepSpec, one SweepPoint per combination and seed, each a list of
// overrides that remember the sweep file line they came from. Every point's
// configuration is validated before anything runs; complete points are skipped
// (resumable); the rest run on a local process pool or a Slurm job array, each in one
// process or over several (MPI); sweep.csv and sweep.json gather one row per point.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config.h"
#include "sim/config_reader.h"
#include "sim/progress.h"

namespace fabricsim::sim {

/// One configuration of the sweep: a combination of axis values and a seed.
struct SweepPoint {
  std::size_t index = 0;
  std::vector<std::pair<std::string, std::string>> axes;  ///< axis key -> value as written, in axis order
  std::uint64_t seed = 0;                                 ///< simulation.seed of the point
  std::vector<Override> overrides;                        ///< `set:`, --set, the axis values, the seed
  /// {"point": index, "axes": {key: value}, "seed": seed}: the key of the point's row.
  nlohmann::ordered_json record() const;
};

struct SweepSpec {
  std::string file;                    ///< the sweep file (for --loads: the configuration)
  std::string base;                    ///< the base configuration
  std::vector<std::string> axis_keys;  ///< in the order of the table's columns
  bool packet_csv = true;              ///< write packets.csv per point (latency CDFs of the report)
  int processes = 1;                   ///< processes each point runs over (`processes:`)
  std::string processes_origin;        ///< where `processes:` is written, empty when absent
  std::vector<SweepPoint> points;      ///< seed filled from the configuration when not swept
};

/// file:line:column of `node` in `file` (the file alone when the node has no mark).
std::string yaml_mark(const std::string& file, const YAML::Node& node);
/// A `set:` mapping of dotted keys to values (`key` of `map`, read from `file`) as
/// overrides that remember their line; none when absent. Sweep and regress files use it.
std::vector<Override> set_overrides(ConfigMap& map, const std::string& key, const std::string& file,
                                    const std::shared_ptr<ConfigSource>& source);
/// Runs one point in this process (the child of a pool): its CSV files, then its
/// results.json with `record` under `record_key` (a failure: {"error": what} instead).
/// Returns the child's exit code.
int run_point(const FabricConfig& config, const std::string& record_key, const nlohmann::ordered_json& record);

/// True when `file` is a sweep file: a YAML mapping with `axes:`.
bool is_sweep_file(const std::string& file);
/// Reads a sweep file; `cli_overrides` (--set) apply to every point after its `set:`.
SweepSpec read_sweep_file(const std::string& file, const std::vector<std::string>& cli_overrides);
/// The offered-load sweep of `fabricsim sweep CONFIG --loads L,...`: one axis on traffic.load.
SweepSpec load_sweep(const std::string& config, const std::vector<double>& loads,
                     const std::vector<std::string>& cli_overrides);

struct SweepOptions {
  std::string out_dir;                      ///< results folder; empty: results/sweep_<stem>
  std::string executor = "local";           ///< local | slurm
  int jobs = 0;                             ///< local: simulations at once; 0: number of CPUs
  int points_per_task = 1;                  ///< slurm: points per array task
  std::vector<std::string> sbatch_options;  ///< slurm: extra sbatch options, e.g. --partition=x
  /// Processes each point runs over (--processes); 0: the sweep file's `processes:` (default 1).
  /// More than one: each point is a `fabricsim run` under `mpirun` (local) or `srun` (slurm).
  int processes = 0;
  Verbosity verbosity = Verbosity::normal;
};

/// Validates every point, runs the missing ones, gathers the table; returns the exit code.
/// Configuration errors throw ConfigError (exit 2 in main).
int sweep_command(SweepSpec spec, const SweepOptions& options);

/// One Slurm array task: runs the points of task `task` in `plan` (written by the slurm
/// executor). Returns 0 when every point ran.
int sweep_task(const std::string& plan, int task);

}  // namespace fabricsim::sim
