// Switch: the egress unit. Credits and PAUSE frames from downstream, and per free
// output the egress scheduler's VL choice among the heads with flow-control clearance
// (none to make with one VL), with the credit stalls it sees.
#include <algorithm>
#include <memory>

#include "tlm/rtl_arbiter.h"
#include "tlm/rtl_vl_arbiter.h"
#include "tlm/sim_time.h"
#include "tlm/switch.h"

namespace fabricsim::tlm_fabric {

using sc_core::sc_time;

// An output's egress scheduler, or none with one VL: every scheduler serves the one VL
// whenever it has a head, whatever its tables and history (tests/test_egress_scheduler.cpp,
// OneClassIsServedWheneverReady), so the output sends it without asking. The tables are
// checked either way.
std::unique_ptr<hw::EgressScheduler> Switch::make_egress_scheduler(const SwitchParams& p, const std::string& hierarchy) {
  if (p.egress_scheduler == EgressSchedulerKind::ib_vl_arb) {
    hw::IbVlArbParams a = p.vl_arb;
    a.vls = p.vls;
    if (a.high.empty() && a.low.empty())
      for (int v = 0; v < p.vls; ++v) a.low.push_back({v, 1});
    a.validate();
    if (p.vls == 1) return nullptr;
    return make_vl_arbiter({hierarchy, a, p.vl_arbiter_impl, p.vl_arbiter_rtl_variant, p.core_clock, p.waveform, true});
  }
  hw::TcSchedulerParams t = p.tc;
  t.classes = p.vls;
  t.strict.resize(p.vls, false);
  t.weights.resize(p.vls, 1);
  t.validate();
  return p.vls == 1 ? nullptr : hw::make_tc_scheduler(t);
}

tlm::tlm_sync_enum Switch::egress_bw(int port, Packet& p, tlm::tlm_phase& phase, sc_time& delay) {
  const sc_time at = sim_now() + delay;
  auto& o = outputs_[port];
  tx_changing_.insert(port);
  if (phase == CREDIT_RETURN) {
    o.tx.credit_returned(at, p.vl, p.credit_blocks);
  } else if (phase == PFC_PAUSE) {
    o.tx.pause_received(at, p.vl, p.pause_quanta);
    vl_counter(port, p.vl, kPauseReceived).add();
  }
  wake_for_downstream(phase, at);
  return tlm::TLM_ACCEPTED;
}

double Switch::egress_paused_seconds(int port, int vl) const {
  const auto& tx = outputs_.at(port).tx;
  return tx.attached() ? tx.paused_seconds(vl, sim_now()) : 0.0;
}

double Switch::credit_stall_seconds(int port, int vl) const {
  const auto& o = outputs_.at(port);
  double s = o.stall_s.at(vl);
  if (o.open_stalls & (1u << vl)) s += (sim_now() - o.stall_since[vl]).to_seconds();
  return s;
}

void Switch::update_transmitters(const sc_time& now) {
  tx_changing_.for_each([&](int op) {
    TxPort& tx = outputs_[op].tx;
    tx.update(now);
    if (tx.settled()) tx_changing_.erase(op);
  });
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
    if (any_blocked_[op] || o.open_stalls != 0) track_credit_stalls(op, now);
    if (breakdown_) track_blocked_vls(op, now);
  });
}

void Switch::track_credit_stalls(int op, const sc_time& now) {
  // Credit stall: a VL with a packet ready and nothing it could send for lack of credits.
  auto& o = outputs_[op];
  const int v = params_.vls;
  for (int vl = 0; vl < v; ++vl) {
    const bool stalled = blocked_[op * v + vl] && heads_[op][vl] == 0 && o.tx.flow_control() == FlowControl::credit;
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
}

std::vector<RtlBlockName> Switch::rtl_blocks() const {
  std::vector<RtlBlockName> blocks;
  if (params_.allocator_impl != AllocatorImpl::tlm) blocks.push_back({std::string(name()) + ".allocator", params_.rtl_variant});
  if (!input_fifos_.empty() && params_.input_fifo_impl != AllocatorImpl::tlm)
    for (int p = 0; p < params_.ports; ++p)
      for (int vl = 0; vl < params_.vls; ++vl) blocks.push_back({input_fifo_hierarchy(p, vl), params_.input_fifo_rtl_variant});
  for (const auto& o : outputs_) {
    if (o.scheduler)
      if (auto b = rtl_block(*o.scheduler)) blocks.push_back(std::move(*b));
    if (o.write_arbiter)
      if (auto b = rtl_block(*o.write_arbiter)) blocks.push_back(std::move(*b));
    if (auto b = o.tx.rtl_block()) blocks.push_back(std::move(*b));
  }
  for (const auto& ip : inputs_)
    if (ip.accept_arbiter)
      if (auto b = rtl_block(*ip.accept_arbiter)) blocks.push_back(std::move(*b));
  return blocks;
}

std::vector<RtlWaveformRecord> Switch::finish_waveforms() {
  std::vector<RtlWaveformRecord> records;
  if (auto r = finish_waveform(*allocator_)) records.push_back(std::move(*r));
  for (auto& f : input_fifos_)
    if (f.block)
      if (auto r = f.block->finish_waveform()) records.push_back(std::move(*r));
  for (auto& o : outputs_) {
    if (o.scheduler)
      if (auto r = finish_waveform(*o.scheduler)) records.push_back(std::move(*r));
    if (o.write_arbiter)
      if (auto r = finish_waveform(*o.write_arbiter)) records.push_back(std::move(*r));
    if (auto r = o.tx.finish_waveform()) records.push_back(std::move(*r));
  }
  for (auto& ip : inputs_)
    if (ip.accept_arbiter)
      if (auto r = finish_waveform(*ip.accept_arbiter)) records.push_back(std::move(*r));
  return records;
}

}  // namespace fabricsim::tlm_fabric
