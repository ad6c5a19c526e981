// Switch: the ingress unit. Arrivals filed per input, admission on their header edge
// (CRC check, route lookup, SL->VL, buffer and flow-control admission, ECN/FECN mark),
// buffer release once a tail has left, credit return and PFC PAUSE upstream.
#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>

#include "tlm/sim_time.h"
#include "tlm/switch.h"

namespace fabricsim::tlm_fabric {

using sc_core::sc_time;

tlm::tlm_sync_enum Switch::ingress(int port, Packet& p, tlm::tlm_phase& phase, sc_time& delay) {
  if (phase != END_TAIL) return tlm::TLM_ACCEPTED;
  if (!has_route(p.dst)) throw std::runtime_error(std::string(name()) + ": no route to endpoint " + std::to_string(p.dst));
  auto& ip = inputs_[port];
  Entry e;
  e.packet = &p;
  e.header_at = p.header_at;
  e.tail_at = p.tail_at;
  e.ready = p.header_at;
  e.header_edge = clock_.edge_at_or_after(p.header_at);
  e.frame_bytes = p.frame_bytes;
  e.charged = (e.frame_bytes + params_.cell_bytes - 1) / params_.cell_bytes * params_.cell_bytes;
  e.in = static_cast<std::int16_t>(port);
  e.out = -1;
  e.vl = p.vl;
  e.corrupted = p.corrupted;
  if (ip.fc == FlowControl::credit)
    ip.credits_held.hold(p.vl, (e.frame_bytes + params_.credit_block_bytes - 1) / params_.credit_block_bytes);
  if (plan_.fold_admission) e.ready = pipeline_ready(e);  // it does not depend on when admission runs
  ip.arrivals.push_back(entries_, entries_.add(e));
  if (ip.arrivals.size() == 1) ip.first_header = e.header_at;
  arriving_.insert(port);
  ++in_switch_;
  ++received_;
  wake_for_arrival(port, e.header_edge);
  (void)delay;
  return tlm::TLM_ACCEPTED;
}

void Switch::process_releases(const sc_time& now) {
  while (!releases_.empty() && releases_.front().at <= now) {
    const Release r = releases_.front();
    releases_.pop_front();
    auto& ip = inputs_[r.in];
    if (ip.folded_on_count) ip.stale();  // only such a folded wake can move (fold_admission_wake)
    ip.bytes -= r.charged;
    if (input_fifo_cores()) input_fifo_release(r);
    if (shared_) shared_->free(r.charged);
    if (ip.fc != FlowControl::pfc) continue;
    if (ip.pfc[r.vl].release(r.charged) == hw::PfcAction::send_resume) send_pause(r.in, r.vl, 0, now);
    note_pausing(r.in);
  }
  // PFC refresh: a PAUSE still needed is re-sent before its quanta run out.
  pausing_.for_each([&](int p) {
    auto& ip = inputs_[p];
    for (int vl = 0; vl < params_.vls; ++vl)
      if (ip.pfc[vl].pausing() && now >= ip.pause_sent_at[vl] + ip.pause_refresh) send_pause(p, vl, params_.pause_quanta, now);
  });
}

void Switch::note_pausing(int in_port) {
  const auto& pfc = inputs_[in_port].pfc;
  if (std::any_of(pfc.begin(), pfc.end(), [](const hw::PfcIngress& c) { return c.pausing(); })) pausing_.insert(in_port);
  else pausing_.erase(in_port);
}

sc_time Switch::first_unadmitted_header() const {
  sc_time first = end_of_time_;
  arriving_.for_each([&](int port) { first = std::min(first, inputs_[port].first_header); });
  return first;
}

void Switch::admit_arrivals(const sc_time& now, const sc_time& limit) {
  // Every arrival whose header edge is before `limit`, in the order edge-by-edge admission
  // takes them: by header edge, then input, then arrival (folded admissions can span
  // several edges).
  due_.clear();
  arriving_.for_each([&](int port) {
    const InputPort& ip = inputs_[port];
    if (ip.first_header >= limit) return;  // its header edge is not before it either
    ip.arrivals.walk(entries_, [&](const Entry& e) {
      if (e.header_edge >= limit) return false;
      due_.push_back({e.header_edge, port});
      return true;
    });
  });
  // Filled by input, then arrival: a stable insertion sort (a few per wake; std::stable_sort
  // would allocate its buffer on every wake).
  for (std::size_t i = 1; plan_.fold_admission && i < due_.size(); ++i)
    for (std::size_t j = i; j > 0 && due_[j] < due_[j - 1]; --j) std::swap(due_[j], due_[j - 1]);
  for (const DueArrival& d : due_) {
    auto& ip = inputs_[d.in];
    const std::uint32_t i = ip.arrivals.pop_front(entries_);
    ip.stale();  // and admit() below changes the buffer
    if (ip.arrivals.empty()) {
      ip.first_header = end_of_time_;
      arriving_.erase(d.in);
    } else {
      ip.first_header = entries_[ip.arrivals.front()].header_at;
    }
    const bool admitted = admit(entries_[i], plan_.fold_admission ? d.edge : now);
    if (ip.fc == FlowControl::pfc) note_pausing(d.in);  // PFC may have paused (or undone) on it
    if (admitted) {
      if (input_fifo_cores()) input_fifo_admit(entries_[i], plan_.fold_admission ? d.edge : now);
      enqueue(i);
      if (trace_) trace_admitted(entries_[i], plan_.fold_admission ? d.edge : now);
    } else {
      entries_.remove(i);
      --in_switch_;
      ++dropped_;
    }
  }
}

bool Switch::ready_from_tail(const Entry& e) const {
  // An arrival not yet routed under fast_to_slow takes the header: the earliest it can be.
  const ForwardingMode mode = inputs_[e.in].forwarding;
  return mode == ForwardingMode::store_and_forward || (mode == ForwardingMode::fast_to_slow && e.out >= 0 && speeds_up(e));
}

sc_time Switch::pipeline_ready(const Entry& e) const {
  // Ingress pipeline: from the first edge after the header (CT) or tail (SAF).
  return (ready_from_tail(e) ? clock_.edge_at_or_after(e.tail_at) : e.header_edge) + to_allocator_;
}

bool Switch::admit(Entry& e, const sc_time& now) {
  if (e.corrupted) {
    drop_corrupted(e, now);
    return false;
  }
  const int in_vl = e.packet->vl;  // the VL it arrived on: PFC's priority, the credits it holds
  classify(e, now);
  bool headroom_exceeded = false;
  if (!flow_control_admits(e, in_vl, buffer_has_room(e), now, headroom_exceeded)) {
    count_drop(inputs_[e.in].fc, headroom_exceeded);
    vl_counter(e.in, in_vl, kDrops).add();
    pool_.release(e.packet);
    return false;
  }
  charge_input(e);
  mark_congestion(e, in_vl);
  e.ready = pipeline_ready(e);
  return true;
}

void Switch::drop_corrupted(const Entry& e, const sc_time& now) {
  // CRC check failed: drop, and give the buffer space back once the tail is in.
  port_counter(e.in, kCrcDrops).add();
  ++drops_.crc;
  return_credit(e.in, e.packet->vl, e.frame_bytes, e.tail_at > now ? e.tail_at - now : sc_core::SC_ZERO_TIME);
  pool_.release(e.packet);
}

void Switch::classify(Entry& e, const sc_time& now) {
  // Route lookup: one of the equal-cost ports, chosen when the header is in; then SL->VL.
  if (e.out < 0) e.out = static_cast<std::int16_t>(route(*e.packet, now));
  e.vl = static_cast<std::uint8_t>(params_.vl_of(e.packet->sl));
}

bool Switch::buffer_has_room(const Entry& e) {
  // Physical space where this organisation keeps the packet.
  const InputPort& ip = inputs_[e.in];
  const OutputPort& o = outputs_[e.out];
  bool fits = true;
  switch (params_.buffer) {
    case BufferOrganisation::input_fifo:
      fits = input_fifo_cores() ? input_fifo_has_room(e) : ip.bytes + e.charged <= params_.input_buffer.in_bytes();
      break;
    case BufferOrganisation::voq: fits = ip.bytes + e.charged <= params_.input_buffer.in_bytes(); break;
    case BufferOrganisation::output_queued:
    case BufferOrganisation::cioq: fits = o.bytes + e.charged <= params_.output_buffer.in_bytes(); break;
    case BufferOrganisation::shared_memory:
      // Dynamic thresholds bound each queue in lossy mode (Choudhury-Hahne).
      fits = ip.fc != FlowControl::none || shared_->admit(o.vl_bytes[e.vl], e.charged, params_.alpha);
      break;
  }
  return fits || fault_ == AccountingFault::overfill_buffer;
}

bool Switch::flow_control_admits(const Entry& e, int in_vl, bool fits, const sc_time& now, bool& headroom_exceeded) {
  InputPort& ip = inputs_[e.in];
  const FlowControl fc = ip.fc;
  if (fc == FlowControl::credit) {
    // Credits are the admission: the sender held space for the whole frame.
    fits = true;
  } else if (fc == FlowControl::pfc) {
    hw::PfcAction action = hw::PfcAction::none;
    // A packet the physical buffer cannot take still counts as a headroom drop when
    // PFC would have refused it too; otherwise the lossless class lost it.
    const auto& t = ip.pfc[in_vl].thresholds();
    if (fits) headroom_exceeded = !ip.pfc[in_vl].admit(e.charged, action);
    else headroom_exceeded = ip.pfc[in_vl].occupancy() + e.charged > t.xoff_bytes + t.headroom_bytes;
    fits = fits && !headroom_exceeded;
    if (action == hw::PfcAction::send_pause) send_pause(e.in, in_vl, params_.pause_quanta, now);
    if (fits && fault_ == AccountingFault::drop_lossless) {
      ip.pfc[in_vl].release(e.charged);
      fits = false;
    }
  } else {
    // Bytes queued for the packet's output and VL: read only where WRED is on.
    std::uniform_real_distribution<double> u(0.0, 1.0);
    if (fits && params_.wred.enabled && params_.wred.curve.decide(outputs_[e.out].vl_bytes[e.vl], u(rng_))) fits = false;
  }
  if (fits && shared_ && shared_->free_bytes() < e.charged) {
    if (fc == FlowControl::credit)
      throw std::logic_error(std::string(name()) + ": shared buffer exhausted under credit flow control; "
                             "shared_buffer must cover ports x input_buffer");
    // A PFC class that passed its own accounting still loses the packet: undo it.
    if (fc == FlowControl::pfc) ip.pfc[in_vl].release(e.charged);
    fits = false;
  }
  return fits;
}

void Switch::charge_input(const Entry& e) {
  if (shared_) shared_->allocate(e.charged);
  InputPort& ip = inputs_[e.in];
  ip.bytes += e.charged;
  if (ip.bytes > ip.high_water) {
    port_counter(e.in, kHighWater).add(ip.bytes - ip.high_water);
    ip.high_water = ip.bytes;
  }
}

void Switch::mark_congestion(const Entry& e, int in_vl) {
  // RED marking on the egress queue depth the packet joins (DCQCN, IB CC).
  if (!params_.ecn.enabled) return;
  Packet& p = *e.packet;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const bool ib = inputs_[e.in].link->timing().params().framing == hw::Framing::infiniband;
  if ((ib || p.ecn != Ecn::not_ect) && params_.ecn.curve.decide(outputs_[e.out].vl_bytes[e.vl], u(rng_))) {
    if (ib) p.fecn = true; else p.ecn = Ecn::ce;
    vl_counter(e.in, in_vl, kMarks).add();
  }
}

void Switch::return_credit(int in_port, int vl, std::uint32_t frame_bytes, const sc_time& delay) {
  auto& ip = inputs_[in_port];
  if (ip.fc != FlowControl::credit) return;
  Packet credit;
  credit.kind = PacketKind::credit_update;
  credit.vl = static_cast<std::uint8_t>(vl);
  credit.credit_blocks = (frame_bytes + params_.credit_block_bytes - 1) / params_.credit_block_bytes;
  ip.credits_held.give_back(vl, credit.credit_blocks);
  if (fault_ == AccountingFault::credit_return_short && credit.credit_blocks > 0) --credit.credit_blocks;
  tlm::tlm_phase phase = CREDIT_RETURN;
  sc_time d = delay + credit_return_latency_;
  inputs_[in_port].upstream(credit, phase, d);
}

void Switch::count_drop(FlowControl fc, bool headroom_exceeded) {
  // Lossless classes lose a packet only when PFC headroom overflowed.
  if (fc == FlowControl::none) ++drops_.lossy;
  else if (headroom_exceeded) ++drops_.headroom;
  else ++drops_.lossless;
}

void Switch::send_pause(int in_port, int vl, std::uint16_t quanta, const sc_time& now) {
  Packet frame;
  frame.kind = PacketKind::pfc_pause;
  frame.vl = static_cast<std::uint8_t>(vl);
  frame.pause_quanta = quanta;
  tlm::tlm_phase phase = PFC_PAUSE;
  sc_time delay = sc_core::SC_ZERO_TIME;
  inputs_[in_port].pause_sent_at[vl] = now;
  vl_counter(in_port, vl, kPauseSent).add();
  inputs_[in_port].upstream(frame, phase, delay);
}

}  // namespace fabricsim::tlm_fabric
