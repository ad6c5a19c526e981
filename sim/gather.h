// A run over several processes (tlm/distributed.h): each process ran its own lanes, so
// each holds its blocks' part of the run. Gathering makes process 0 hold the whole run's
// statistics, as one process would, before it builds the results.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/fabric.h"
#include "sim/stats.h"

namespace fabricsim::sim {

/// Into process 0 (every process calls it, after the run): the statistics of every
/// process (each block's are in the process that makes it: process 0 then holds every
/// one's, as one process would), the flows, and every link's counters (in every process:
/// a link counts in its transmitter's process; Fabric::link_counters).
void gather_over_processes(stats::Registry& registry, Fabric& fabric);

/// A block's part of the results, computed where the block runs: its index among its
/// kind and the part.
using Entry = std::pair<std::uint64_t, nlohmann::json>;
/// Process 0: the entries of every process, in index order; another process: `mine`
/// (one process: `mine`, already in order).
std::vector<nlohmann::json> gather_entries(const std::vector<Entry>& mine);

}  // namespace fabricsim::sim
