// Process-group membership in a Chakra trace, as PyTorch's execution traces record
// it: a METADATA_NODE named "## process_group:init ##" whose inputs hold, as a
// one-element Python list of a JSON string, torch.distributed's pg_config_info: one
// object per group with pg_name (the name collectives carry in their pg_name
// attribute), pg_desc, backend_config, ranks (global ranks in group-rank order;
// PyTorch writes [] for a group of every rank) and group_size. ASTRA-sim reads the
// same node (Workload::issue_pytorch_pg_metadata).
#pragma once

#include <string>
#include <vector>

#include "testbench/chakra/trace.h"

namespace fabricsim::chakra {

inline constexpr const char* kProcessGroupNodeName = "## process_group:init ##";

struct ProcessGroup {
  std::string name;        // pg_name: what collectives name
  std::string desc;        // pg_desc: what the group is for
  std::vector<int> ranks;  // global ranks, in group-rank order
};

// The inputs value of a process-group node for `groups`.
std::string process_groups_inputs(const std::vector<ProcessGroup>& groups);

// The groups a rank's "## process_group:init ##" node declares (empty ranks: every
// rank of a trace of `world` ranks); none when the rank has no such node. TraceError
// naming the file and node when the inputs do not parse.
std::vector<ProcessGroup> process_groups(const RankTrace& rank, int world);

// Every rank that issues a collective of a declared group is one of its members, and
// every member issues the group's collectives (check_ranks compares their order).
void check_process_groups(const Trace& trace);

}  // namespace fabricsim::chakra
