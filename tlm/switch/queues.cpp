// Switch: the queues. Which queue a packet waits in (input FIFO, VOQ, output queue,
// shared pool), its ready lists (per output, the heads that leave on it), the buffers'
// bounds and the heads that cannot leave.
#include <algorithm>
#include <string>
#include <vector>

#include "tlm/sim_time.h"
#include "tlm/switch.h"

namespace fabricsim::tlm_fabric {

using sc_core::sc_time;

int Switch::queue_index(int in_port, int out_port, int vl) const {
  return (params_.buffer == BufferOrganisation::input_fifo ? in_port : out_port) * params_.vls + vl;
}

int Switch::voq_slot(int in_port, int out_port, int vl) {
  auto& held = inputs_[in_port].voqs;  // as few as the input's packets
  for (const sw::HeldVoq& h : held)
    if (h.out == out_port && h.vl == vl) return h.queue;
  int q;
  if (free_queues_.empty()) {
    q = static_cast<int>(queues_.size());
    queues_.emplace_back();
  } else {
    q = free_queues_.back();
    free_queues_.pop_back();
  }
  held.push_back({static_cast<std::int16_t>(out_port), static_cast<std::uint8_t>(vl), q});
  return q;
}

void Switch::release_voq(int q, int in_port) {
  auto& held = inputs_[in_port].voqs;
  const auto it = std::find_if(held.begin(), held.end(), [q](const sw::HeldVoq& h) { return h.queue == q; });
  *it = held.back();
  held.pop_back();
  free_queues_.push_back(q);
}

void Switch::enqueue(std::uint32_t i) {
  const Entry& e = entries_[i];
  auto& o = outputs_[e.out];
  o.vl_bytes[e.vl] += e.charged;
  o.bytes += e.charged;
  if (o.bytes > o.high_water) {
    port_counter(e.out, kEgressHighWater).add(o.bytes - o.high_water);
    o.high_water = o.bytes;
  }
  egress_queued_[e.out] = o.bytes;
  if (!params_.crosses_to_output_queues()) {
    link(i);
    return;
  }
  // Charged to its output queue now; it crosses into it in cross_to_output_queues, from
  // its input's one crossing FIFO or (cioq) its VOQ, in arrival order either way.
  EntryQueue& waiting =
      params_.buffer == BufferOrganisation::cioq ? queues_[voq_slot(e.in, e.out, e.vl)] : inputs_[e.in].crossing;
  waiting.push_back(entries_, i);
  crossing_.insert(e.in);
  crossing_stale_ = true;
}

void Switch::link(std::uint32_t i) {
  const Entry& e = entries_[i];
  const int q = params_.buffer == BufferOrganisation::voq ? voq_slot(e.in, e.out, e.vl) : queue_index(e.in, e.out, e.vl);
  auto& queue = queues_[q];
  const std::uint32_t prev_head = queue.front();
  const int prev_out = prev_head != kNoNode ? entries_[prev_head].out : -1;
  // Output-side queues take packets from many inputs: keep them in ready order.
  queue.insert_sorted(entries_, i, [](const Entry& x) -> const sc_time& { return x.ready; });
  if (queue.front() != prev_head) head_changed(q, prev_out);
}

void Switch::head_changed(int q, int prev_out) {
  const auto& queue = queues_[q];
  auto find = [&](int op) {
    auto& list = out_queues_[op];
    return std::find_if(list.begin(), list.end(), [q](const Head& h) { return h.queue == q; });
  };
  auto remove = [&](int op) {
    auto& list = out_queues_[op];
    const auto it = find(op);
    const int in_port = it->in;
    list.erase(it);
    if (list.empty()) out_heads_.erase(op);
    return in_port;
  };
  if (queue.empty()) {
    const int in_port = remove(prev_out);
    if (params_.buffer == BufferOrganisation::voq) release_voq(q, in_port);
  } else {
    const Entry& e = entries_[queue.front()];
    if (breakdown_) note_head(e, sim_now());
    const auto blocks = static_cast<std::uint32_t>(outputs_[e.out].tx.credit_blocks(e.packet->payload_bytes));
    const Head head{e.ready, q, e.in, e.vl, blocks, e.frame_bytes};
    if (prev_out < 0) {
      queues_[q].seq = next_seq_++;
      out_queues_[e.out].push_back(head);
    } else if (e.out == prev_out) {
      *find(e.out) = head;
    } else {
      // An input FIFO's next head may leave on another output: it keeps its place in the order.
      remove(prev_out);
      auto& list = out_queues_[e.out];
      list.insert(std::upper_bound(list.begin(), list.end(), queues_[q].seq,
                                   [&](std::uint64_t seq, const Head& other) { return seq < queues_[other.queue].seq; }),
                  head);
    }
    out_heads_.insert(e.out);
    // The output it joined takes it in; the one it left (or was replaced on) recounts.
    if (e.out != prev_out) {
      outputs_[e.out].heads_ready = std::min(outputs_[e.out].heads_ready, e.ready);
      refresh_due(e.out);
    }
  }
  if (prev_out >= 0) refresh_heads_ready(prev_out);
}

void Switch::refresh_heads_ready(int op) {
  sc_time ready = end_of_time_;
  for (const Head& h : out_queues_[op]) ready = std::min(ready, h.ready);
  outputs_[op].heads_ready = ready;
  refresh_due(op);
}

std::vector<BufferBound> Switch::buffer_bounds() const {
  std::vector<BufferBound> b;
  const auto buffer = [](int p, const char* what) { return "port" + std::to_string(p) + " " + what; };
  for (int p = 0; p < params_.ports; ++p) {
    const auto& ip = inputs_[p];
    const bool credit = ip.link && ip.fc == FlowControl::credit;
    // On credit links the bound is the credit allotment (credit conservation checks
    // it); PFC and lossy admission bound the buffer the organisation writes to.
    if (credit || !ip.link) continue;
    if (input_queued()) b.push_back({buffer(p, "input buffer"), ip.high_water, params_.input_buffer.in_bytes()});
    if (params_.crosses_to_output_queues())
      b.push_back({buffer(p, "output queue"), outputs_[p].high_water, params_.output_buffer.in_bytes()});
  }
  return b;
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
