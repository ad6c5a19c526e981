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

void gather_link_counters(Fabric& fabric) {
  std::vector<std::uint64_t> values;
  for (const auto& link : fabric.all_links()) {
    const tlm_fabric::LinkCounters& c = link->counters();
    values.insert(values.end(), {c.packets, c.payload_bytes, c.corrupted, c.busy.value()});
  }
  distributed::sum_over_processes(values);
  std::size_t at = 0;
  for (const auto& link : fabric.all_links()) {
    tlm_fabric::LinkCounters c;
    c.packets = values[at++];
    c.payload_bytes = values[at++];
    c.corrupted = values[at++];
    c.busy = tlm_fabric::from_ticks(values[at++]);
    link->set_counters(c);
  }
}

void gather_counters(stats::Registry& registry) {
  std::vector<std::uint64_t> values;
  registry.for_each_counter([&](stats::Counter& c) { values.push_back(c.value()); });
  distributed::sum_over_processes(values);
  std::size_t at = 0;
  registry.for_each_counter([&](stats::Counter& c) { c.set(values[at++]); });
}

void gather_distributions(stats::Registry& registry) {
  // Each process sends the distributions it added samples to, by their place in name order.
  std::vector<unsigned char> mine;
  std::uint64_t index = 0;
  registry.for_each_distribution([&](stats::Distribution& d) {
    if (d.count() > 0) {
      const auto* b = reinterpret_cast<const unsigned char*>(&index);
      mine.insert(mine.end(), b, b + sizeof index);
      d.save(mine);
    }
    ++index;
  });
  const std::vector<std::vector<unsigned char>> all = distributed::gather(mine, 0);
  if (distributed::rank() != 0) return;
  std::vector<stats::Distribution*> held;
  registry.for_each_distribution([&](stats::Distribution& d) { held.push_back(&d); });
  for (std::size_t from = 1; from < all.size(); ++from) {
    const unsigned char* in = all[from].data();
    const unsigned char* end = in + all[from].size();
    while (in < end) {
      std::uint64_t at;
      if (end - in < static_cast<std::ptrdiff_t>(sizeof at))
        throw std::logic_error("gathering statistics: a truncated record from process " + std::to_string(from));
      std::memcpy(&at, in, sizeof at);
      in += sizeof at;
      if (at >= held.size())
        throw std::logic_error("gathering statistics: process " + std::to_string(from) + " sent distribution " +
                               std::to_string(at) + " of " + std::to_string(held.size()));
      stats::Distribution& d = *held[at];
      const stats::Distribution theirs = stats::Distribution::load(in, end);
      // A block's distribution fills in the one process that runs it.
      if (d.count() > 0)
        throw std::logic_error("gathering statistics: distribution " + std::to_string(at) +
                               " has samples in process 0 and in process " + std::to_string(from));
      d = theirs;
    }
  }
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
  gather_link_counters(fabric);
  gather_counters(registry);
  gather_distributions(registry);
  fabric.gather_flows();
}

}  // namespace fabricsim::sim
