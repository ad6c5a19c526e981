// Switch: the crossbar. Output queueing (output_queued, cioq): the write ports into the
// output queues at speedup, matched to the inputs edge by edge. Input queueing: the
// switch allocator's grants. Then transmit, with the forwarding mode's timing, credit
// return and the buffer release when the tail leaves.
#include <algorithm>
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
    const sc_time due = collect_crossing_requests();
    next_crossing_ = due;
    if (due > horizon) return;
    if (due != edge) {
      edge = due;
      refused = false;
    }
    refused = match_crossings(edge, refused) || refused;
  }
}

sc_time Switch::collect_crossing_requests() {
  // The requests of the inputs whose heads or read port changed since they were made.
  crossing_changed_.for_each([&](int p) {
    crossing_changed_.erase(p);
    auto& requests = crossing_requests_[p];
    requests.clear();
    const sc_time input_free = crossing_grant_edge(read_free_[p]);
    // One request per output: the head that is ready first, the lower VL on a tie.
    auto offer = [&](const EntryQueue& waiting, int slot) {
      const Entry& e = entries_[waiting.front()];
      const sw::CrossingRequest r{std::max(e.ready, input_free), p, e.out, slot, e.vl};
      const std::size_t k = crossing_request_of_[e.out];  // this input's request for the output so far
      if (k < requests.size() && requests[k].out == e.out) {
        sw::CrossingRequest& other = requests[k];
        const sc_time& ready = entries_[queues_[other.queue].front()].ready;
        if (e.ready < ready || (e.ready == ready && e.vl < other.vl)) other = r;
        return;
      }
      crossing_request_of_[e.out] = requests.size();
      requests.push_back(r);
    };
    const InputPort& ip = inputs_[p];
    if (!ip.crossing.empty()) offer(ip.crossing, -1);
    for (const sw::HeldVoq& h : ip.voqs) offer(queues_[h.queue], h.queue);
  });
  sc_time due = end_of_time_;
  crossing_.for_each([&](int p) {
    for (const sw::CrossingRequest& r : crossing_requests_[p]) {
      // The first edge the write port can be granted on, kept until it writes again.
      if (!write_edge_known_.contains(r.out)) {
        write_edge_[r.out] = crossing_grant_edge(outputs_[r.out].write_free);
        write_edge_known_.insert(r.out);
      }
      due = std::min(due, std::max(r.asks, write_edge_[r.out]));
    }
  });
  return due;
}

bool Switch::match_crossings(const sc_time& edge, bool later) {
  // Request: each input asks every write port it has a head for, ready and free by `edge`.
  crossing_.for_each([&](int p) {
    for (const sw::CrossingRequest& r : crossing_requests_[p]) {
      OutputPort& o = outputs_[r.out];
      if (r.asks > edge || write_edge_[r.out] > edge) continue;
      if (!granting_.contains(r.out)) {
        o.write_arbiter->clear();
        granting_.insert(r.out);
      }
      o.write_arbiter->add_request({r.in});
    }
  });
  // Grant: each write port one input, round robin from the one after its last accepted.
  granting_.for_each([&](int op) {
    const int p = outputs_[op].write_arbiter->arbitrate();
    write_grant_[op] = p;
    hw::Arbiter* accept = inputs_[p].accept_arbiter.get();
    if (!accept) {
      accepted_[p] = op;
      return;
    }
    if (!accepting_.contains(p)) {
      accept->clear();
      accepting_.insert(p);
    }
    accept->add_request({op});
  });
  // Accept: each input granted takes one write port, round robin likewise.
  accepting_.for_each([&](int p) { accepted_[p] = inputs_[p].accept_arbiter->arbitrate(); });
  // The pointers move past an accepted grant, in an edge's first round only (iSLIP).
  bool refused = false;
  granting_.for_each([&](int op) {
    const int p = write_grant_[op];
    const bool accepted = accepted_[p] == op;
    refused = refused || !accepted;
    outputs_[op].write_arbiter->update_state(accepted && !later ? p : hw::kNoGrant);
  });
  accepting_.for_each([&](int p) {
    inputs_[p].accept_arbiter->update_state(later ? hw::kNoGrant : accepted_[p]);
    accepting_.erase(p);
  });
  // Cross: the accepted grants, lower write port first.
  granting_.for_each([&](int op) {
    granting_.erase(op);
    const int p = write_grant_[op];
    if (accepted_[p] != op) return;
    for (const sw::CrossingRequest& r : crossing_requests_[p])
      if (r.out == op) return cross(r, edge);
  });
  return refused;
}

void Switch::cross(const sw::CrossingRequest& r, const sc_time& edge) {
  InputPort& ip = inputs_[r.in];
  OutputPort& o = outputs_[r.out];
  EntryQueue& waiting = r.queue < 0 ? ip.crossing : queues_[r.queue];
  const std::uint32_t i = waiting.pop_front(entries_);
  if (waiting.empty() && r.queue >= 0) release_voq(r.queue, r.in);
  if (ip.crossing.empty() && ip.voqs.empty()) crossing_.erase(r.in);
  Entry& e = entries_[i];
  const sc_time write = std::max({e.ready, read_free_[r.in], o.write_free});
  if (breakdown_) breakdown_of(*e.packet).ready_admitted = e.ready;
  e.ready = edge;
  o.write_free = write + to_sc(ip.link->timing().serialization(e.frame_bytes) / static_cast<double>(params_.speedup));
  write_edge_known_.erase(r.out);
  read_free_[r.in] = o.write_free;
  crossing_changed_.insert(r.in);
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
