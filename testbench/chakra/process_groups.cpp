#include "testbench/chakra/process_groups.h"

#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

namespace fabricsim::chakra {

std::string process_groups_inputs(const std::vector<ProcessGroup>& groups) {
  nlohmann::json list = nlohmann::json::array();
  for (const ProcessGroup& g : groups)
    list.push_back({{"pg_name", g.name},
                    {"pg_desc", g.desc},
                    {"backend_config", "cuda:nccl"},
                    {"ranks", g.ranks},
                    {"group_size", g.ranks.size()}});
  // PyTorch records the JSON string as the node's one input; Chakra's converter
  // writes the inputs as a Python list literal: ['<json>'].
  return "['" + list.dump() + "']";
}

std::vector<ProcessGroup> process_groups(const RankTrace& rank, int world) {
  std::vector<ProcessGroup> out;
  for (const Node& node : rank.nodes) {
    if (node.kind != NodeKind::metadata || node.name != kProcessGroupNodeName) continue;
    const std::string where = rank.file + ": node " + std::to_string(node.id);
    const std::string& v = node.inputs;
    if (v.size() < 4 || v.compare(0, 2, "['") != 0 || v.compare(v.size() - 2, 2, "']") != 0)
      throw TraceError(where + ": process-group inputs are not a list of one JSON string ['...']");
    nlohmann::json list = nlohmann::json::parse(v.substr(2, v.size() - 4), nullptr, false);
    if (!list.is_array()) throw TraceError(where + ": process-group inputs are not a JSON list");
    for (const auto& g : list) {
      if (!g.is_object() || !g.contains("pg_name") || !g["pg_name"].is_string() || !g.contains("ranks") ||
          !g["ranks"].is_array())
        throw TraceError(where + ": a process group without pg_name (string) and ranks (list)");
      ProcessGroup pg;
      pg.name = g["pg_name"].get<std::string>();
      pg.desc = g.value("pg_desc", std::string());
      for (const auto& r : g["ranks"]) {
        const bool is_rank = r.is_number_unsigned() ? r.get<std::uint64_t>() < static_cast<std::uint64_t>(world)
                          : r.is_number_integer() && r.get<std::int64_t>() >= 0 && r.get<std::int64_t>() < world;
        if (!is_rank)
          throw TraceError(where + ": process group '" + pg.name + "' lists " + r.dump() +
                           ", not a rank of the trace (0.." + std::to_string(world - 1) + ")");
        pg.ranks.push_back(static_cast<int>(r.get<std::int64_t>()));
      }
      if (pg.ranks.empty())
        for (int r = 0; r < world; ++r) pg.ranks.push_back(r);
      out.push_back(std::move(pg));
    }
  }
  return out;
}

void check_process_groups(const Trace& trace) {
  const int world = static_cast<int>(trace.ranks.size());
  std::vector<std::set<std::string>> uses(trace.ranks.size());  // the groups each rank issues collectives in
  for (const RankTrace& r : trace.ranks)
    for (const Node& node : r.nodes)
      if (node.kind == NodeKind::collective && !node.pg_name.empty()) uses[static_cast<std::size_t>(r.rank)].insert(node.pg_name);
  for (const RankTrace& r : trace.ranks) {
    std::map<std::string, std::vector<int>> members;
    for (ProcessGroup& g : process_groups(r, world)) members[g.name] = std::move(g.ranks);
    if (members.empty()) continue;
    for (const Node& node : r.nodes) {
      if (node.kind != NodeKind::collective || node.pg_name.empty()) continue;
      auto it = members.find(node.pg_name);
      const std::string where = r.file + ": node " + std::to_string(node.id);
      if (it == members.end())
        throw TraceError(where + ": process group '" + node.pg_name + "' is not declared in the rank's " +
                         kProcessGroupNodeName + " node");
      if (std::find(it->second.begin(), it->second.end(), r.rank) == it->second.end())
        throw TraceError(where + ": rank " + std::to_string(r.rank) + " is not a member of process group '" +
                         node.pg_name + "'");
    }
    for (const std::string& name : uses[static_cast<std::size_t>(r.rank)])
      for (int m : members[name])
        if (!uses[static_cast<std::size_t>(m)].count(name))
          throw TraceError(trace.ranks[static_cast<std::size_t>(m)].file + ": rank " + std::to_string(m) +
                           " is a member of process group '" + name + "' but issues none of its collectives");
  }
}

}  // namespace fabricsim::chakra
