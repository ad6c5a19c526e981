// Switch: the per-hop latency breakdown (tlm/latency_breakdown.h). Off unless
// keep_latency_breakdown; each hook is one branch on breakdown_.
#include <algorithm>

#include "tlm/switch.h"

namespace fabricsim::tlm_fabric {

using sc_core::sc_time;

void Switch::keep_latency_breakdown(const sc_time& from) {
  if (!pool_.keeps_breakdowns()) throw std::logic_error(std::string(name()) + ": the packet pool keeps no breakdowns");
  breakdown_ = true;
  breakdown_from_ = from;
  const auto ports = outputs_.size();
  latency_sums_.assign(ports, {});
  blocked_total_.assign(ports * static_cast<std::size_t>(params_.vls), sc_core::SC_ZERO_TIME);
  blocked_since_.assign(ports * static_cast<std::size_t>(params_.vls), sc_core::SC_ZERO_TIME);
  blocked_open_.assign(ports, 0);
}

// As a credit stall (track_credit_stalls), on any flow control: a VL with heads held by
// credits or PAUSE and none it could send.
void Switch::track_blocked_vls(int op, const sc_time& now) {
  const int v = params_.vls;
  for (int vl = 0; vl < v; ++vl) {
    const std::size_t k = static_cast<std::size_t>(op * v + vl);
    const bool blocked = blocked_[k] && heads_[op][vl] == 0;
    const std::uint32_t bit = 1u << vl;
    if (blocked && !(blocked_open_[op] & bit)) {
      blocked_since_[k] = now;
      blocked_open_[op] |= bit;
    } else if (!blocked && (blocked_open_[op] & bit)) {
      blocked_total_[k] += now - blocked_since_[k];
      blocked_open_[op] &= ~bit;
    }
  }
}

sc_time Switch::blocked_time(int op, int vl, const sc_time& now) const {
  const std::size_t k = static_cast<std::size_t>(op * params_.vls + vl);
  sc_time t = blocked_total_[k];
  if (blocked_open_[op] & (1u << vl)) t += now - blocked_since_[k];
  return t;
}

void Switch::note_head(const Entry& e, const sc_time& now) {
  PacketBreakdown& b = breakdown_of(*e.packet);
  b.head_since = now;
  b.blocked_before = blocked_time(e.out, e.vl, now);
}

void Switch::account_hop(const Entry& e, const sc_time& now, const sc_time& wire_free, const sc_time& start) {
  PacketBreakdown& b = breakdown_of(*e.packet);
  b.arrived(e.header_at);  // the incoming link's header serialisation
  LatencyParts hop{};      // this switch's parts, from the header in to the first bit out
  // Store-and-forward is ready from the tail's edge: the tail's wait is serialisation.
  const sc_time& buffered = ready_from_tail(e) ? e.tail_at : e.header_at;
  const bool crossed = params_.crosses_to_output_queues();
  const sc_time& ready = crossed ? b.ready_admitted : e.ready;
  add_part(hop, LatencyPart::serialisation, e.header_at, buffered);
  add_part(hop, LatencyPart::pipeline, buffered, ready);
  add_part(hop, LatencyPart::arbitration, ready, e.ready);  // output_queued, cioq: the crossbar write port
  const sc_time head = std::max(e.ready, b.head_since);
  add_part(hop, LatencyPart::queueing, e.ready, head);
  // Of its time at the head, what its (output, VL) spent held by flow control alone.
  const sc_time held = now - head;
  const sc_time blocked = std::min(held, blocked_time(e.out, e.vl, now) - b.blocked_before);
  add_part(hop, LatencyPart::flow_control, sc_core::SC_ZERO_TIME, blocked);
  add_part(hop, LatencyPart::arbitration, blocked, held);
  add_part(hop, LatencyPart::pipeline, now, now + grant_to_wire_);
  add_part(hop, LatencyPart::arbitration, now + grant_to_wire_, wire_free);  // wire or read port still busy
  add_part(hop, LatencyPart::serialisation, wire_free, start);                // the forwarding mode waits for the tail
  for (int k = 0; k < kLatencyParts; ++k) b.ticks[k] += hop[k];
  if (e.packet->created >= breakdown_from_) latency_sums_[static_cast<std::size_t>(e.out)].add(hop);
  b.sent(outputs_[e.out].tx.link(), start);
}

}  // namespace fabricsim::tlm_fabric
