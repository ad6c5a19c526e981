// Gathering a run over several processes (sim/gather.h).
#include "sim/gather.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "tlm/distributed.h"

namespace fabricsim::sim {

namespace distributed = tlm_fabric::distributed;

namespace {

void gather_statistics(stats::Registry& registry) {
  // Each block's statistics are in the one process that makes it: process 0 takes the
  // others' into its registry by name.
  std::vector<unsigned char> mine;
  if (distributed::rank() != 0) registry.save(mine);
  const std::vector<std::vector<unsigned char>> all = distributed::gather(mine, 0);
  for (std::size_t from = 1; from < all.size(); ++from) registry.merge(all[from].data(), all[from].data() + all[from].size());
}

}  // namespace

std::vector<nlohmann::json> gather_entries(const std::vector<Entry>& mine) {
  std::vector<nlohmann::json> entries;
  if (!distributed::active() || distributed::rank() != 0) {
    for (const Entry& e : mine) entries.push_back(e.second);
    if (!distributed::active()) return entries;
  }
  // CBOR keeps every number's bits (doubles as binary64).
  std::vector<unsigned char> bytes;
  if (distributed::rank() != 0) bytes = nlohmann::json::to_cbor(nlohmann::json(mine));
  const auto all = distributed::gather(bytes, 0);
  if (distributed::rank() != 0) return entries;
  std::vector<Entry> every = mine;
  for (std::size_t from = 1; from < all.size(); ++from)
    for (auto& e : nlohmann::json::from_cbor(all[from])) every.emplace_back(e[0].get<std::uint64_t>(), std::move(e[1]));
  std::stable_sort(every.begin(), every.end(), [](const Entry& a, const Entry& b) { return a.first < b.first; });
  for (Entry& e : every) entries.push_back(std::move(e.second));
  return entries;
}

void gather_over_processes(stats::Registry& registry, Fabric& fabric) {
  fabric.gather_link_counters();
  gather_statistics(registry);
  fabric.gather_flows();
}

}  // namespace fabricsim::sim
