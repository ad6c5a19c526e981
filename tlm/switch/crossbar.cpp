// Switch: the crossbar. Output queueing (output_queued, cioq): the write ports into the
// output queues at speedup, matched to the inputs edge by edge. Input queueing: the
// switch allocator's grants. Then transmit, with the forwarding mode's timing, credit
// return and the buffer release when the tail leaves.
#include <algorithm>
#include <array>
#include <vector>

#include "tlm/sim_time.h"
#include "tlm/switch.h"

namespace fabricsim::tlm_fabric {

using sc_core::sc_time;

// Combined input-output queueing (output_queued, cioq; Chuang, Goel, McKeown, Prabhakar,
// IEEE JSAC 1999): the crossbar writes admitted packets into their output queues, each
// output's write port and each input one packet at a time at S x the ingress rate. Ports
// are granted a cycle ahead, edge by edge; the grants of one edge match inputs to write
// ports by request, grant and accept with round-robin pointers, as iSLIP (McKeown,
// IEEE/ACM ToN 1999), in rounds until no free input asks a free port (docs/switch.md,
// "Timing"). FIFO inputs ask one port each, so every grant is accepted.
void Switch::cross_to_output_queues(const sc_time& now) {
  const sc_time horizon = now + to_allocator_;
  sc_time edge = end_of_time_;
  bool refused = false;  // a grant on `edge` went unaccepted: the rounds after it are iSLIP's later iterations
  for (;;) {
    const sc_time due = next_crossing();
    if (due > horizon) return;
    if (due != edge) {
      edge = due;
      refused = false;
    }
    refused = match_crossings(edge, refused) || refused;
  }
}

const sc_time& Switch::next_crossing() {
  if (crossing_stale_) next_crossing_ = first_crossing_edge();
  crossing_stale_ = false;
  return next_crossing_;
}

sc_time Switch::first_crossing_edge() const {
  // A head can be granted from max(ready, its input's and its write port's grant times)
  // on; an input busy past the best so far cannot better it. The edge at or after the
  // least of those times is the least of their edges.
  sc_time first = end_of_time_;
  crossing_.for_each([&](int p) {
    const sc_time input = crossing_grant_time(read_free_[p]);
    if (input >= first) return;
    for_each_crossing_head(p, [&](const Entry& e, int) {
      first = std::min(first, std::max({e.ready, input, crossing_grant_time(outputs_[e.out].write_free)}));
    });
  });
  return first == end_of_time_ ? first : clock_.edge_at_or_after(first);
}

bool Switch::match_crossings(const sc_time& edge, bool later) {
  // Request: each input free by `edge` asks every write port free by then it has a
  // head ready for.
  PortSet granting;  // write ports asked
  granting.resize(params_.ports);
  crossing_.for_each([&](int p) {
    if (crossing_grant_time(read_free_[p]) > edge) return;
    for_each_crossing_head(p, [&](const Entry& e, int) {
      if (e.ready > edge || crossing_grant_time(outputs_[e.out].write_free) > edge) return;
      hw::Arbiter& grant = *outputs_[e.out].write_arbiter;
      if (!granting.contains(e.out)) {
        grant.clear();
        granting.insert(e.out);
      }
      grant.add_request({p});
    });
  });
  // Grant: each write port one input, round robin from the one after its last accepted.
  std::array<int, kMaxPorts> granted;  // per write port granting: the input it granted
  PortSet accepting;                   // cioq: inputs granted by some write port
  PortSet accepted;                    // write ports whose grant was accepted
  accepting.resize(params_.ports);
  accepted.resize(params_.ports);
  granting.for_each([&](int op) {
    const int p = outputs_[op].write_arbiter->arbitrate();
    granted[op] = p;
    hw::Arbiter* accept = inputs_[p].accept_arbiter.get();
    if (!accept) {  // a FIFO input asks one port
      accepted.insert(op);
      return;
    }
    if (!accepting.contains(p)) {
      accept->clear();
      accepting.insert(p);
    }
    accept->add_request({op});
  });
  // Accept: each input granted takes one write port, round robin likewise. The pointers
  // move past an accepted grant, in an edge's first round only (iSLIP).
  accepting.for_each([&](int p) {
    hw::Arbiter& accept = *inputs_[p].accept_arbiter;
    const int op = accept.arbitrate();
    accept.update_state(later ? hw::kNoGrant : op);
    accepted.insert(op);
  });
  // Cross: the accepted grants, lower write port first.
  bool refused = false;
  granting.for_each([&](int op) {
    const bool accepts = accepted.contains(op);
    refused = refused || !accepts;
    outputs_[op].write_arbiter->update_state(accepts && !later ? granted[op] : hw::kNoGrant);
    if (accepts) cross(granted[op], op, edge);
  });
  return refused;
}

void Switch::cross(int in_port, int out_port, const sc_time& edge) {
  // The input's head for the output that is ready first, the lower VL on a tie.
  const Entry* head = nullptr;
  int slot = -1;
  for_each_crossing_head(in_port, [&](const Entry& e, int s) {
    if (e.out != out_port || (head && (head->ready < e.ready || (head->ready == e.ready && head->vl < e.vl)))) return;
    head = &e;
    slot = s;
  });
  InputPort& ip = inputs_[in_port];
  EntryQueue& waiting = slot < 0 ? ip.crossing : queues_[slot];
  OutputPort& o = outputs_[out_port];
  const std::uint32_t i = waiting.pop_front(entries_);
  if (waiting.empty() && slot >= 0) release_voq(slot, in_port);
  if (ip.crossing.empty() && ip.voqs.empty()) crossing_.erase(in_port);
  Entry& e = entries_[i];
  const sc_time write = std::max({e.ready, read_free_[in_port], o.write_free});
  if (breakdown_) breakdown_of(*e.packet).ready_admitted = e.ready;
  e.ready = edge;
  o.write_free = write + to_sc(ip.link->timing().serialization(e.frame_bytes) / static_cast<double>(params_.speedup));
  read_free_[in_port] = o.write_free;
  crossing_stale_ = true;
  link(i);
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
      port_counter(g.output, kConflicts).add(static_cast<std::uint64_t>(requests_per_output[g.output] - 1));
    requests_per_output[g.output] = 0;
    transmit(granted->queue, now);
  }
  // An output left without a grant although heads asked for it (the input it granted
  // accepted another output): every request lost. Its heads go again on the next edge
  // (schedule_next), as the allocator runs every cycle in hardware.
  for (int op : chosen_)
    if (requests_per_output[op] > 0) port_counter(op, kConflicts).add(static_cast<std::uint64_t>(requests_per_output[op]));
}

void Switch::serve_output_queues(const sc_time& now) {
  for (int op : chosen_) transmit(queue_index(0, op, outputs_[op].chosen_vl), now);
}

bool Switch::speeds_up(const Entry& e) const {
  return outputs_[e.out].tx.link().data_rate() > inputs_[e.in].link->timing().data_rate();
}

void Switch::transmit(int q, const sc_time& now) {
  const std::uint32_t i = queues_[q].pop_front(entries_);
  const Entry e = entries_[i];
  entries_.remove(i);
  head_changed(q, e.out);
  if (input_fifo_cores()) input_fifo_grant(e, now);
  Packet& p = *e.packet;
  auto& o = outputs_[e.out];
  auto& ip = inputs_[e.in];
  const sc_time out_frame = o.tx.frame_time(p.payload_bytes);

  sc_time start = std::max(now + grant_to_wire_, o.tx.busy_until());
  if (input_queued()) start = std::max(start, read_free_[e.in]);
  const sc_time wire_free = start;
  // Cut-through never lets the egress tail overtake the ingress tail. The ingress
  // port's mode decides: fast_to_slow stores and forwards onto a faster egress,
  // adaptive also when the packet had to wait.
  const ForwardingMode mode = ip.forwarding;
  bool store = mode == ForwardingMode::store_and_forward;
  if (mode == ForwardingMode::fast_to_slow) store = speeds_up(e);
  if (mode == ForwardingMode::adaptive) store = speeds_up(e) || now > e.ready;
  if (store) {
    start = std::max(start, e.tail_at);
  } else if (e.tail_at > start + out_frame) {
    start = e.tail_at - out_frame;
  }

  if (breakdown_) account_hop(e, now, wire_free, start);

  const sc_time read_out = start + out_frame;  // tail leaves the buffer
  if (input_queued()) read_free_[e.in] = read_out;
  o.vl_bytes[e.vl] -= e.charged;
  o.bytes -= e.charged;
  egress_queued_[e.out] = o.bytes;
  const int in_vl = p.vl;
  if (o.scheduler) o.scheduler->update_state(e.vl, e.frame_bytes);
  p.vl = static_cast<std::uint8_t>(e.vl);
  ++p.hops;
  if (trace_) trace_->forwarded(trace_track_ + e.in, trace_track_ + e.out, p, {e.header_at, start, read_out, now}, e.charged);
  o.tx.send(p, start - now);
  refresh_due(e.out);
  o.egress_packets.add();
  o.egress_bytes.add(p.payload_bytes);
  forwarded_.add();
  --in_switch_;

  // Nearly always the latest: transmits come in time order with similar frame times.
  releases_.insert_sorted({read_out, e.in, e.out, in_vl, e.vl, e.charged}, [](const Release& r) -> const sc_time& { return r.at; });
  return_credit(e.in, in_vl, e.frame_bytes, read_out - now);
}

}  // namespace fabricsim::tlm_fabric
