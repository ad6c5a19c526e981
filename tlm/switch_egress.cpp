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
  const sc_time horizon = now + ahead_;
  const int v = params_.vls;
  chosen_.clear();
  eligible_.clear();
  // Outputs with no head due and no open stall have nothing to choose or close (their
  // chosen_vl is not read: allocation walks chosen_; their head and blocked marks are
  // reset when next walked).
  PortSet walk = stalling_;
  out_heads_.for_each([&](int op) {
    if (out_due_[op] <= now) walk.insert(op);
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
    if (out_due_[op] <= now) {
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

// Whether an edge with nothing due but a credit return or a buffer release could change
// what the switch does. Until the next wake (the earliest header, ready head, freeing wire
// or read port, PAUSE change) no head becomes ready and no busy wire or read port frees,
// so an edge in between finds the same heads as now. It decides something only for a
// head that is ready with its output (and input) free: the head waits for credits, or it
// lost allocation and is retried on any edge; or for an open credit stall, which closes
// on the edge where its head is no longer blocked. Otherwise credit returns wait for the
// next wake (TxPort::update applies every return due by then), and so do releases
// (process_releases runs before admission): the same state, fewer activations. A PFC
// input needs no edge of its own for a release except while it pauses (a release can
// resume it) and refreshes a PAUSE at a time schedule_next asks for.
bool Switch::can_leave(const Head& h, const sc_time& now, const sc_time& horizon) const {
  // Ready, and (input-side queues) its input's read port frees before the next edge.
  return h.ready <= now && (!input_queued() || read_free_[h.in] <= horizon);
}

// One walk over the heads of every output with heads or an open stall answers two
// questions for schedule_next.
//
// `leave`: the first edge after now that some head could leave on (the end of time if
// none): it is ready, its output's wire (and for input-side queues its input's read
// port) frees before that edge's grant reaches the wire (a decision ahead of the wire).
// No head can leave on an edge before the earliest of these, so such an edge decides
// nothing. An output whose wire frees after the best time so far is not walked for it.
//
// `next_edge`: the next edge decides something by itself. Either a head is ready with
// its wire and read port free and flow control would let it go, yet it is still here: it
// lost this edge's allocation (its output went to nobody, or to a frame shorter than a
// cycle that leaves the wire free again by the next edge, or to another VL) and goes on
// the next edge, as every cycle in hardware. Or a credit stall opens or ends there: the
// VLs with a head that could leave on the next edge but for credits are not the VLs
// with an open stall (this wake sent the VL's only sendable head, or gave the wire or a
// read port to another packet). Once the next edge is a wake no edge comes before it, so
// what an edge in between would decide no longer matters and that question is dropped.
//
// `decides`: whether an edge with only a credit return or a release due could decide
// something (edge_decides_, above). `next` is the edge after now.
Switch::EdgeOutlook Switch::edge_decides(const sc_time& now, const sc_time& next) const {
  const sc_time horizon = now + ahead_, next_horizon = next + ahead_;
  bool ready_with_wire = false, next_edge = false;
  sc_time leave = end_of_time_;
  (out_heads_ | stalling_).for_each([&](int op) {
    // Not due before `leave` nor (while it is asked) by the next edge, and no stall to
    // compare: the walk below would stop at once (out_due_ is its two tests' time).
    const sc_time& due = out_due_[op];
    if (due >= leave && (next_edge || due > next) && !stalling_.contains(op)) return;
    const OutputPort& o = outputs_[op];
    const sc_time& busy = o.tx.busy_until();
    const sc_time wire = free_edge(busy);
    // No head leaves before its output's first head is ready (nor its wire frees: due).
    bool find_leave = due < leave;
    const bool decide = !next_edge;
    bool walk_decide = decide && due <= next;
    std::uint32_t blocked_next = 0;
    for (const Head& h : out_queues_[op]) {
      if (!find_leave && !walk_decide) break;
      if (find_leave) {
        sc_time earliest = std::max(h.ready, wire);
        if (input_queued()) earliest = std::max(earliest, free_edge(read_free_[h.in]));
        if (earliest > now && earliest < leave) leave = earliest;
        if (earliest == wire && wire > now) find_leave = false;  // no head of this output leaves earlier
      }
      if (!walk_decide || !can_leave(h, next, next_horizon)) continue;
      const bool sendable = o.tx.can_send_blocks(h.vl, h.credit_blocks, now);
      if (busy <= horizon && can_leave(h, now, horizon)) {
        if (sendable) {
          next_edge = true;
          walk_decide = false;
          continue;
        }
        ready_with_wire = true;
      }
      if (!sendable && o.tx.flow_control() == FlowControl::credit) blocked_next |= 1u << h.vl;
    }
    if (decide && !next_edge && blocked_next != o.open_stalls) next_edge = true;
  });
  return {next_edge || ready_with_wire || every_edge_ || !stalling_.empty(), next_edge, leave};
}

void Switch::schedule_next(const sc_time& now, const sc_time& next_edge) {
  bool have = false;
  sc_time next;
  auto consider = [&](const sc_time& t) {
    if (t <= now) return;
    if (!have || t < next) next = t;
    have = true;
  };
  const EdgeOutlook outlook = edge_decides(now, next_edge);
  edge_decides_ = outlook.decides;
  if (outlook.leave != end_of_time_) consider(outlook.leave);
  if (outlook.next_edge || (every_edge_ && (in_switch_ > 0 || !releases_.empty()))) consider(next_edge);
  arriving_.for_each([&](int p) { consider(admission_wake(p)); });
  if (!crossing_.empty()) consider(crossing_edge(next_crossing_));
  // PFC: a PAUSE still needed is refreshed on the first edge its half-quanta have run out,
  // and while an input pauses a release can resume it (process_releases) on its own edge.
  pausing_.for_each([&](int p) {
    const auto& ip = inputs_[p];
    for (int vl = 0; vl < params_.vls; ++vl)
      if (ip.pfc[vl].pausing()) consider(ip.pause_sent_at[vl] + ip.pause_refresh);
  });
  // Otherwise a release changes only counts that the next wake's admissions read after
  // applying it (process_releases runs first), as they would on the release's own edge.
  if (!releases_.empty() && (edge_decides_ || !pausing_.empty())) consider(releases_.front().at);
  // Without edge_decides_ only PAUSE changes count (TxPort::next_change).
  if (edge_decides_ || pause_received_)
    tx_changing_.for_each([&](int op) {
      sc_time at;
      if (outputs_[op].tx.next_change(now, at, edge_decides_)) consider(at);
    });
  if (have) wake_at(clock_.edge_at_or_after(next));
}

}  // namespace fabricsim::tlm_fabric
