#include "sim/invariants.h"

#include <string>
#include <utility>
#include <vector>

#include "sim/gather.h"
#include "tlm/distributed.h"

namespace fabricsim::sim {

namespace {

// A summary line per invariant, then one line per violation (the first few). Over
// several processes each checks what it runs (item() numbers it among all), and process 0
// reports the violations of all in that order.
class Report {
 public:
  explicit Report(std::string check) : check_(std::move(check)) {}
  void item(std::uint64_t k) { item_ = k; }
  void counted() { ++checked_; }
  void violation(const std::string& detail) { violations_.emplace_back(item_, detail); }
  std::vector<InvariantCheck> done(const std::string& what) && {
    const std::uint64_t checked = tlm_fabric::distributed::sum_over_processes(checked_);
    const std::vector<nlohmann::json> violations = gather_entries(violations_);
    const std::size_t failures = violations.size();
    std::vector<InvariantCheck> lines;
    std::string detail = std::to_string(checked) + " " + what + " checked";
    if (failures) detail += ", " + std::to_string(failures) + " violated";
    if (failures > kListed) detail += " (first " + std::to_string(kListed) + " listed)";
    lines.push_back({check_, failures == 0, detail});
    for (std::size_t k = 0; k < failures && k < kListed; ++k) lines.push_back({check_, false, violations[k].get<std::string>()});
    return lines;
  }

 private:
  static constexpr std::size_t kListed = 10;
  std::string check_;
  std::uint64_t item_ = 0, checked_ = 0;
  std::vector<Entry> violations_;
};

// Every link of the fabric between a transmitter and a receiver, in one order in every
// process: its index in all_links(), its transmitter and the receiver's ledger (each
// null where another process runs it; the link is made where either end runs).
template <class Visit>
void for_each_link_end(const Fabric& fabric, Visit&& visit) {
  const auto& sw = fabric.switches();
  const auto& nics = fabric.nics();
  auto tx_of = [](const auto& block) { return block ? &block->egress_port() : nullptr; };
  if (sw.empty())  // back to back: endpoint e's uplink is link e
    for (std::size_t e = 0; e < nics.size(); ++e) visit(e, tx_of(nics[e]), &nics[1 - e]->ingress_credits());
  // Every switch port: its egress link, and for a NIC (endpoint or aggregation node) also the NIC's uplink.
  const auto& ports = fabric.port_links();
  for (std::size_t s = 0; s < sw.size(); ++s) {
    const tlm_fabric::Switch* here = sw[s].get();
    for (std::size_t p = 0; p < ports[s].size(); ++p) {
      const PortLinks& pl = ports[s][p];
      const int port = static_cast<int>(p);
      const tlm_fabric::Nic* nic = pl.peer_nic >= 0 ? nics[static_cast<std::size_t>(pl.peer_nic)].get() : nullptr;
      if (pl.peer_nic >= 0)
        visit(static_cast<std::size_t>(pl.ingress_link), tx_of(nic), here ? &here->ingress_credits(port) : nullptr);
      if (pl.egress_link < 0 || (pl.peer_switch < 0 && pl.peer_nic < 0)) continue;
      const tlm_fabric::TxPort* tx = here ? &here->egress_port(port) : nullptr;
      if (pl.peer_switch >= 0) {
        const tlm_fabric::Switch* peer = sw[static_cast<std::size_t>(pl.peer_switch)].get();
        visit(static_cast<std::size_t>(pl.egress_link), tx, peer ? &peer->ingress_credits(pl.peer_port) : nullptr);
      } else {
        visit(static_cast<std::size_t>(pl.egress_link), tx, nic ? &nic->ingress_credits() : nullptr);
      }
    }
  }
}

// One link's conservation, with the receiver's VLs and the blocks it holds per VL (from
// the process running it).
void check_link(Report& report, const std::string& link, const tlm_fabric::TxPort& tx, int rx_vls,
                const std::uint64_t* held_by_vl) {
  if (rx_vls != tx.vls()) {
    report.violation(link + ": transmitter has " + std::to_string(tx.vls()) + " VLs, receiver " +
                     std::to_string(rx_vls));
    return;
  }
  for (int vl = 0; vl < tx.vls(); ++vl) {
    report.counted();
    const auto& c = tx.credits(vl);
    const std::uint64_t returning = tx.returning_blocks(vl), held = held_by_vl[vl];
    if (c.available() + returning + held != c.capacity() || held > c.capacity())
      report.violation(link + " vl" + std::to_string(vl) + ": available " + std::to_string(c.available()) +
                       " + returning " + std::to_string(returning) + " + held by the receiver " +
                       std::to_string(held) + " != " + std::to_string(c.capacity()) + " blocks of " +
                       std::to_string(c.block_bytes()) + " B");
  }
}

}  // namespace

std::vector<InvariantCheck> check_credit_conservation(const Fabric& fabric) {
  Report report("credit conservation");
  const auto& links = fabric.all_links();
  // Each credit link's VLs at the receiver and the blocks the receiver holds on each,
  // from the process running it (the others add nothing).
  std::vector<std::uint64_t> vls(links.size(), 0);
  for_each_link_end(fabric, [&](std::size_t k, const tlm_fabric::TxPort*, const hw::CreditLedger* rx) {
    if (rx && links[k]->params().flow_control == tlm_fabric::FlowControl::credit) vls[k] = static_cast<std::uint64_t>(rx->vls());
  });
  tlm_fabric::distributed::sum_over_processes(vls);
  std::vector<std::size_t> first(links.size() + 1, 0);  // link k's VLs in `held`
  for (std::size_t k = 0; k < links.size(); ++k) first[k + 1] = first[k] + vls[k];
  std::vector<std::uint64_t> held(first.back(), 0);
  for_each_link_end(fabric, [&](std::size_t k, const tlm_fabric::TxPort*, const hw::CreditLedger* rx) {
    for (std::size_t vl = 0; rx && vl < vls[k]; ++vl) held[first[k] + vl] = rx->held(static_cast<int>(vl));
  });
  tlm_fabric::distributed::sum_over_processes(held);
  std::uint64_t link = 0;
  for_each_link_end(fabric, [&](std::size_t k, const tlm_fabric::TxPort* tx, const hw::CreditLedger*) {
    if (vls[k] == 0) return;
    report.item(link++);
    if (tx) check_link(report, links[k]->name(), *tx, static_cast<int>(vls[k]), held.data() + first[k]);
  });
  return std::move(report).done("credit link-VLs");
}

std::vector<InvariantCheck> check_buffer_bounds(const Fabric& fabric) {
  Report report("buffer bounds");
  for (std::size_t s = 0; s < fabric.switches().size(); ++s) {
    if (!fabric.runs_switch(static_cast<int>(s))) continue;
    const auto& sw = fabric.switches()[s];
    report.item(s);
    for (const auto& b : sw->buffer_bounds()) {
      report.counted();
      if (b.high_water > b.size)
        report.violation(std::string(sw->name()) + " " + b.buffer + ": held " + std::to_string(b.high_water) +
                         " B, size " + std::to_string(b.size) + " B");
    }
  }
  return std::move(report).done("switch buffers");
}

std::vector<InvariantCheck> check_lossless_drops(const Fabric& fabric) {
  Report report("lossless drops");
  std::uint64_t headroom = 0;
  for (std::size_t s = 0; s < fabric.switches().size(); ++s) {
    if (!fabric.runs_switch(static_cast<int>(s))) continue;
    const auto& sw = fabric.switches()[s];
    report.item(s);
    report.counted();
    const auto& d = sw->drop_counts();
    const std::string name = sw->name();
    headroom += d.headroom;
    if (d.crc + d.lossy + d.headroom + d.lossless != sw->packets_dropped())
      report.violation(name + ": dropped " + std::to_string(sw->packets_dropped()) + " != crc " +
                       std::to_string(d.crc) + " + lossy " + std::to_string(d.lossy) + " + headroom " +
                       std::to_string(d.headroom) + " + lossless " + std::to_string(d.lossless));
    if (d.lossless)
      report.violation(name + ": " + std::to_string(d.lossless) +
                       " packets dropped on credit or PFC links without the PFC headroom being exceeded");
  }
  headroom = tlm_fabric::distributed::sum_over_processes(headroom);
  auto lines = std::move(report).done("switches");
  lines.front().detail += "; " + std::to_string(headroom) + " drops beyond PFC headroom (allowed, counted)";
  return lines;
}

std::vector<InvariantCheck> check_invariants(const Fabric& fabric) {
  std::vector<InvariantCheck> all;
  for (auto&& part : {check_credit_conservation(fabric), check_buffer_bounds(fabric), check_lossless_drops(fabric)})
    all.insert(all.end(), part.begin(), part.end());
  return all;
}

}  // namespace fabricsim::sim
