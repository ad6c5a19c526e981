// Switch: the crossbar. Output queueing: the write ports into the output queues at
// speedup. Input queueing: the switch allocator's grants. Then transmit, with the
// forwarding mode's timing, credit return and the buffer release when the tail leaves.
#include <algorithm>
#include <vector>

#include "tlm/sim_time.h"
#include "tlm/switch.h"

namespace fabricsim::tlm_fabric {

using sc_core::sc_time;

// Output queueing with speedup S < N (combined input-output queueing, Chuang, Goel,
// McKeown, Prabhakar, IEEE JSAC 1999): each output's write port takes one packet at a
// time at S x the ingress rate, granted round robin (docs/switch.md, "Timing").
void Switch::cross_to_output_queues(const sc_time& now) {
  const sc_time horizon = now + to_allocator_;
  // The first edge a port busy until `t` can be granted on, a cycle ahead.
  auto ahead = [&](const sc_time& t) { return clock_.edge_at_or_after(t > clock_.period() ? t - clock_.period() : t); };
  auto head = [&](int p) -> Entry& { return entries_[inputs_[p].crossing.front()]; };
  // The first edge input p's next packet can cross on: it is ready and its input free.
  auto asks = [&](int p) { return std::max(head(p).ready, ahead(read_free_[p])); };
  for (;;) {
    // The next write port to grant: the first edge one of its requests is in by and the
    // port frees by (lower output first).
    int port = -1;
    sc_time edge = end_of_time_;
    crossing_.for_each([&](int p) {
      const int o = head(p).out;
      const sc_time t = std::max(asks(p), ahead(outputs_[o].write_free));
      if (t < edge || (t == edge && o < port)) {
        edge = t;
        port = o;
      }
    });
    next_crossing_ = edge;
    if (port < 0 || edge > horizon) return;
    // Round robin among the inputs asking by then, from the one after the last granted.
    OutputPort& o = outputs_[port];
    hw::Arbiter& arbiter = *o.write_arbiter;
    arbiter.clear();
    crossing_.for_each([&](int p) {
      if (head(p).out == port && asks(p) <= edge) arbiter.add_request({p});
    });
    const int input = arbiter.arbitrate();
    arbiter.update_state(input);
    InputPort& ip = inputs_[input];
    const std::uint32_t i = ip.crossing.pop_front(entries_);
    if (ip.crossing.empty()) crossing_.erase(input);
    Entry& e = entries_[i];
    const sc_time write = std::max({e.ready, read_free_[input], o.write_free});
    e.ready = edge;
    o.write_free = write + to_sc(ip.link->timing().serialization(e.frame_bytes) / static_cast<double>(params_.speedup));
    read_free_[input] = o.write_free;
    link(i);
  }
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
