// Switch: egress side. Per free output the egress scheduler picks a VL among
// eligible heads with flow-control clearance; input-side queues then go through
// the switch allocator (one packet per input and per output), output-side
// queues are served directly. transmit() applies the forwarding-mode timing.
#include <algorithm>

#include "tlm/sim_time.h"
#include "tlm/switch.h"

namespace fabricsim::tlm_fabric {

using sc_core::sc_time;

void Switch::schedule_egress(const sc_time& now) {
  choose_vls(now);
  if (input_queued()) {
    if (!chosen_.empty()) allocate_input_queues(now);  // no output chose a VL: no request
  } else {
    serve_output_queues(now);
  }
}

void Switch::choose_vls(const sc_time& now) {
  // The egress scheduler decides one cycle ahead, so back-to-back packets leave
  // at line rate: an output is free if its wire frees before the next edge.
  const sc_time horizon = now + plan_.ahead;
  const int v = params_.vls;
  chosen_.clear();
  eligible_.clear();
  // Outputs with no head due and no open stall have nothing to choose or close (their
  // chosen_vl is not read: allocation walks chosen_; their head and blocked marks are
  // reset when next walked).
  PortSet walk = stalling_;
  out_heads_.for_each([&](int op) {
    if (plan_.out_due[op] <= now) walk.insert(op);
  });
  walk.for_each([&](int op) {
    auto& o = outputs_[op];
    auto& heads = heads_[op];
    if (has_head_[op]) std::fill(heads.begin(), heads.end(), 0u);
    if (any_blocked_[op]) std::fill(blocked_.begin() + op * v, blocked_.begin() + (op + 1) * v, 0);
    has_head_[op] = 0;
    any_blocked_[op] = 0;
    // Only the heads that leave on this output, none while its wire is busy or before
    // its first head is ready.
    if (plan_.out_due[op] <= now) {
      for (const Head& h : out_queues_[op]) {
        if (!can_leave(h, now, horizon)) continue;
        if (!o.tx.can_send_blocks(h.vl, h.credit_blocks, now)) {
          blocked_[op * v + h.vl] = 1;
          any_blocked_[op] = 1;
          continue;
        }
        if (heads[h.vl] == 0) heads[h.vl] = h.frame_bytes;
        has_head_[op] = 1;
        if (input_queued()) eligible_.push_back({h.queue, h.in, op, h.vl});
      }
    }
    // No eligible head: the scheduler has nothing to choose and keeps its state.
    o.chosen_vl = !o.tx.attached() || !has_head_[op] ? -1 : o.scheduler ? o.scheduler->select(heads) : 0;
    if (o.chosen_vl >= 0) chosen_.push_back(op);
    // Credit stall: a VL with a packet ready and nothing it could send for lack of credits.
    if (!any_blocked_[op] && o.open_stalls == 0) return;
    for (int vl = 0; vl < v; ++vl) {
      const bool stalled = blocked_[op * v + vl] && heads[vl] == 0 && o.tx.flow_control() == FlowControl::credit;
      const std::uint32_t bit = 1u << vl;
      if (stalled && !(o.open_stalls & bit)) {
        o.stall_since[vl] = now;
        if (o.open_stalls == 0) stalling_.insert(op);
        o.open_stalls |= bit;
      } else if (!stalled && (o.open_stalls & bit)) {
        o.stall_s[vl] += seconds(now - o.stall_since[vl]);
        o.open_stalls &= ~bit;
        if (o.open_stalls == 0) stalling_.erase(op);
      }
    }
  });
}

void Switch::allocate_input_queues(const sc_time& now) {
  auto& requests_per_output = requests_per_output_;
  std::fill(requests_per_output.begin(), requests_per_output.end(), 0);
  allocator_->clear();
  // Requests: the heads choose_vls found eligible, on their output's chosen VL (the
  // allocator's result does not depend on the order of requests).
  auto& requests = eligible_;
  requests.erase(std::remove_if(requests.begin(), requests.end(),
                                [&](const Candidate& c) { return outputs_[c.out].chosen_vl != c.vl; }),
                 requests.end());
  for (const Candidate& c : requests) {
    // A packet's age is when it left its source: its own time, not the order the
    // kernel ran same-time sources in (equal ages go to the lower input).
    const Packet& p = *entries_[queues_[c.queue].front()].packet;
    allocator_->add_request({c.in, c.out, p.injected.value(), p.sl});
    ++requests_per_output[c.out];
  }
  if (requests.empty()) return;
  const std::vector<hw::Grant>& grants = allocator_->arbitrate();
  allocator_->update_state();
  for (const hw::Grant& g : grants) {
    // One candidate per (input, output): the output's chosen VL picks the input's queue.
    const auto granted = std::find_if(requests.begin(), requests.end(),
                                      [&](const Candidate& c) { return c.in == g.input && c.out == g.output; });
    // The other requests for this output lost (most often none: the counter stays cold).
    if (requests_per_output[g.output] > 1)
      stats_[g.output].conflicts->add(static_cast<std::uint64_t>(requests_per_output[g.output] - 1));
    requests_per_output[g.output] = 0;
    transmit(granted->queue, now);
  }
  // An output left without a grant although heads asked for it (the input it granted
  // accepted another output): every request lost. Its heads go again on the next edge
  // (schedule_next), as the allocator runs every cycle in hardware.
  for (int op : chosen_)
    if (requests_per_output[op] > 0) stats_[op].conflicts->add(static_cast<std::uint64_t>(requests_per_output[op]));
}

void Switch::serve_output_queues(const sc_time& now) {
  for (int op : chosen_) transmit(queue_index(0, op, outputs_[op].chosen_vl), now);
}

void Switch::transmit(int q, const sc_time& now) {
  const std::uint32_t i = queues_[q].pop_front(entries_);
  const Entry e = entries_[i];
  entries_.remove(i);
  head_changed(q, e.out);
  Packet& p = *e.packet;
  auto& o = outputs_[e.out];
  auto& ip = inputs_[e.in];
  const sc_time out_frame = o.tx.frame_time(p.payload_bytes);

  sc_time start = std::max(now + grant_to_wire_, o.tx.busy_until());
  if (input_queued()) start = std::max(start, read_free_[e.in]);
  // Cut-through never lets the egress tail overtake the ingress tail. Adaptive
  // mode stores and forwards when the egress is faster or the packet had to wait.
  bool store = params_.forwarding == ForwardingMode::store_and_forward;
  if (params_.forwarding == ForwardingMode::adaptive)
    store = o.tx.link().data_rate() > ip.link->timing().data_rate() || now > e.ready;
  if (store) {
    start = std::max(start, e.tail_at);
  } else if (e.tail_at > start + out_frame) {
    start = e.tail_at - out_frame;
  }

  const sc_time read_out = start + out_frame;  // tail leaves the buffer
  if (input_queued()) read_free_[e.in] = read_out;
  o.vl_bytes[e.vl] -= e.charged;
  o.bytes -= e.charged;
  egress_queued_[e.out] = o.bytes;
  const int in_vl = p.vl;
  if (o.scheduler) o.scheduler->update_state(e.vl, e.frame_bytes);
  p.vl = static_cast<std::uint8_t>(e.vl);
  ++p.hops;
  o.tx.send(p, start - now);
  refresh_due(e.out);
  o.egress_packets.add();
  o.egress_bytes.add(p.payload_bytes);
  forwarded_.add();
  --in_switch_;

  // Nearly always the latest: transmits come in time order with similar frame times.
  releases_.insert_sorted({read_out, e.in, e.out, in_vl, e.charged}, [](const Release& r) -> const sc_time& { return r.at; });
  return_credit(e.in, in_vl, e.frame_bytes, read_out - now);
}

std::vector<BlockedHead> Switch::blocked_heads() const {
  std::vector<BlockedHead> heads;
  const sc_time now = sim_now();
  // In the order the queues became non-empty.
  std::vector<int> order;
  for (const auto& list : out_queues_)
    for (const Head& h : list) order.push_back(h.queue);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return queues_[a].seq < queues_[b].seq; });
  for (int q : order) {
    const Entry& e = entries_[queues_[q].front()];
    const auto& tx = outputs_[e.out].tx;
    if (!tx.attached() || tx.can_send(e.vl, e.packet->payload_bytes, now)) continue;
    heads.push_back({e.in, e.packet->vl, e.out, e.vl,
                   tx.flow_control() == FlowControl::credit ? "no credits" : "paused by PFC"});
  }
  return heads;
}

}  // namespace fabricsim::tlm_fabric
