#include "sim/invariants.h"

#include <utility>

namespace fabricsim::sim {

namespace {

// A summary line per invariant, then one line per violation (the first few).
class Report {
 public:
  explicit Report(std::string check) : check_(std::move(check)) {}
  void counted() { ++checked_; }
  void violation(const std::string& detail) {
    if (failures_++ < kListed) lines_.push_back({check_, false, detail});
  }
  std::vector<InvariantCheck> done(const std::string& what) && {
    std::string detail = std::to_string(checked_) + " " + what + " checked";
    if (failures_) detail += ", " + std::to_string(failures_) + " violated";
    if (failures_ > kListed) detail += " (first " + std::to_string(kListed) + " listed)";
    lines_.insert(lines_.begin(), {check_, failures_ == 0, detail});
    return std::move(lines_);
  }

 private:
  static constexpr int kListed = 10;
  std::string check_;
  int checked_ = 0, failures_ = 0;
  std::vector<InvariantCheck> lines_;
};

void check_link(Report& report, const std::string& link, const tlm_fabric::TxPort& tx, const hw::CreditLedger& rx) {
  if (!tx.attached() || tx.flow_control() != tlm_fabric::FlowControl::credit) return;
  if (rx.vls() != tx.vls()) {
    report.violation(link + ": transmitter has " + std::to_string(tx.vls()) + " VLs, receiver " +
                     std::to_string(rx.vls()));
    return;
  }
  for (int vl = 0; vl < tx.vls(); ++vl) {
    report.counted();
    const auto& c = tx.credits(vl);
    const std::uint64_t returning = tx.returning_blocks(vl), held = rx.held(vl);
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
  const auto& sw = fabric.switches();
  const auto& nics = fabric.nics();
  if (sw.empty())  // back to back
    for (std::size_t e = 0; e < nics.size(); ++e)
      check_link(report, fabric.uplink(static_cast<int>(e)).name(), nics[e]->egress_port(), nics[1 - e]->ingress_credits());
  // Every switch port: its egress link, and for a NIC (endpoint or aggregation node) also the NIC's uplink.
  const auto& ports = fabric.port_links();
  for (std::size_t s = 0; s < sw.size(); ++s)
    for (std::size_t p = 0; p < ports[s].size(); ++p) {
      const PortLinks& pl = ports[s][p];
      const int port = static_cast<int>(p);
      if (pl.peer_nic >= 0)
        check_link(report, pl.ingress->name(), nics[pl.peer_nic]->egress_port(), sw[s]->ingress_credits(port));
      if (!pl.egress || (pl.peer_switch < 0 && pl.peer_nic < 0)) continue;
      const auto& rx = pl.peer_switch >= 0 ? sw[pl.peer_switch]->ingress_credits(pl.peer_port)
                                           : nics[pl.peer_nic]->ingress_credits();
      check_link(report, pl.egress->name(), sw[s]->egress_port(port), rx);
    }
  return std::move(report).done("credit link-VLs");
}

std::vector<InvariantCheck> check_buffer_bounds(const Fabric& fabric) {
  Report report("buffer bounds");
  for (const auto& sw : fabric.switches())
    for (const auto& b : sw->buffer_bounds()) {
      report.counted();
      if (b.high_water > b.size)
        report.violation(std::string(sw->name()) + " " + b.buffer + ": held " + std::to_string(b.high_water) +
                         " B, size " + std::to_string(b.size) + " B");
    }
  return std::move(report).done("switch buffers");
}

std::vector<InvariantCheck> check_lossless_drops(const Fabric& fabric) {
  Report report("lossless drops");
  std::uint64_t headroom = 0;
  for (const auto& sw : fabric.switches()) {
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
