#include "tlm/tx_port.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "tlm/sim_time.h"

namespace fabricsim::tlm_fabric {

using sc_core::sc_time;

void TxPort::attach(InitiatorSocket* socket, const Link* link, int vls, std::uint32_t credit_block_bytes,
                    std::uint64_t buffer_per_vl_bytes, const std::string& hierarchy) {
  socket_ = socket;
  link_ = link;
  timing_ = &link->timing();
  fc_ = link->params().flow_control;
  const hw::FramingOverhead framing = hw::framing_overhead(timing_->params().framing);
  frame_overhead_ = framing.header_bytes + framing.trailer_bytes;
  if (framing.min_frame_bytes > std::numeric_limits<std::uint16_t>::max())
    throw std::logic_error("transmit port: a least frame of " + std::to_string(framing.min_frame_bytes) +
                           " bytes does not fit its 16-bit field");
  min_frame_ = static_cast<std::uint16_t>(framing.min_frame_bytes);
  // IEEE 802.1Qbb: one pause quantum is 512 bit times at the port speed.
  quantum_s_ = 512.0 / timing_->data_rate().bps();
  if (vls < 1 || vls > hw::kMaxDataVls)
    throw std::invalid_argument("transmit port with " + std::to_string(vls) + " VLs (1.." + std::to_string(hw::kMaxDataVls) + ")");
  vls_ = vls;
  vl_.assign(vls, VlState{});
  credits_.fill(hw::CreditCounter(credit_block_bytes, 0));
  for (int vl = 0; vl < vls; ++vl) credits_[vl] = hw::CreditCounter(credit_block_bytes, buffer_per_vl_bytes / credit_block_bytes);
  const LinkParams& lp = link->params();
  if (fc_ == FlowControl::credit && lp.credit_manager_impl != AllocatorImpl::tlm)
    cm_ = make_credit_manager({hierarchy + ".credit_manager", lp.credit_manager_impl, lp.credit_manager_rtl_variant, vls,
                               credit_block_bytes, buffer_per_vl_bytes / credit_block_bytes, lp.waveform});
}

void TxPort::set_trace(FabricTrace* trace, int track) {
  trace_ = trace;
  trace_track_ = track;
  if (fc_ == FlowControl::credit)
    for (int vl = 0; vl < vls_; ++vl) trace->initial_credits(track, vl, credits_[vl].available());
  if (fc_ == FlowControl::pfc) trace->pfc(track);
}

void TxPort::send(Packet& p, const sc_time& start_delay) {
  if (fc_ == FlowControl::credit) {
    const std::uint64_t bytes = link_->frame(p.payload_bytes).bytes;
    if (cm_) cm_->consume(p.vl, bytes);
    credits_[p.vl].consume(bytes);
  }
  tlm::tlm_phase phase = BEGIN_HEADER;
  sc_time delay = start_delay;
  receiver_(p, phase, delay);
  // The link answers END_REQ with the time the wire is free again.
  busy_until_ = sim_now() + delay;
  // The link has set the packet's times on this hop.
  if (trace_) trace_sent(p, start_delay);
}

void TxPort::trace_sent(const Packet& p, const sc_time& start_delay) {
  const sc_time now = sim_now();
  if (fc_ == FlowControl::credit)
    trace_->credits(trace_track_, p.vl, now, -static_cast<std::int64_t>(credits_[p.vl].blocks_for(link_->frame(p.payload_bytes).bytes)));
  trace_->link_hop(trace_track_, p, now + start_delay, p.tail_at);
}

void TxPort::credit_returned(const sc_time& at, int vl, std::uint64_t blocks) {
  // Nearly always the latest: returns come back in the order their packets left.
  pending_.insert_sorted({at, vl, blocks}, [](const PendingCredit& c) -> const sc_time& { return c.at; });
  // The queue's front is the earlier of the old front and this return (without reading
  // the front's line: a switch output's queue spans several).
  if (at < next_credit_at_) next_credit_at_ = at;
  if (trace_) trace_->credits(trace_track_, vl, at, static_cast<std::int64_t>(blocks));
}

void TxPort::pause_received(const sc_time& at, int vl, std::uint16_t quanta) {
  const sc_time until = at + from_seconds(quanta * quantum_s_);
  vl_[vl].incoming.push_back({at, until});
  paused_ever_ = true;
  if (trace_) trace_->pause(trace_track_, vl, at, until);
}

void TxPort::close_window(VlState& s, const sc_time& t) {
  // Account the part of the current pause window that lies before t.
  if (s.pause.until > s.pause.from) {
    const sc_time end = std::min(t, s.pause.until);
    if (end > s.pause.from) s.paused_s += seconds(end - s.pause.from);
  }
}

void TxPort::apply(const sc_time& now) {
  while (!pending_.empty() && pending_.front().at <= now) {
    if (cm_) cm_->restore(pending_.front().vl, pending_.front().blocks);
    credits_[pending_.front().vl].restore(pending_.front().blocks);
    pending_.pop_front();
  }
  next_credit_at_ = pending_.empty() ? sc_core::sc_max_time() : pending_.front().at;
  if (!paused_ever_) return;
  for (auto& s : vl_) {
    while (!s.incoming.empty() && s.incoming.front().from <= now) {
      // A new PAUSE (or resume, until == from) replaces the running window.
      close_window(s, s.incoming.front().from);
      s.pause = s.incoming.front();
      s.incoming.pop_front();
    }
  }
}

bool TxPort::next_change(const sc_time& now, sc_time& at, bool credit_returns) const {
  bool have = false;
  auto consider = [&](const sc_time& t) {
    if (t <= now) return;
    if (!have || t < at) at = t;
    have = true;
  };
  if (credit_returns && !pending_.empty()) consider(pending_.front().at);
  if (!paused_ever_) return have;
  for (const auto& s : vl_) {
    if (!s.incoming.empty()) consider(s.incoming.front().from);
    if (s.pause.from <= now && now < s.pause.until) consider(s.pause.until);
  }
  return have;
}

std::uint64_t TxPort::returning_blocks(int vl) const {
  std::uint64_t blocks = 0;
  for (const PendingCredit& c : pending_)
    if (c.vl == vl) blocks += c.blocks;
  return blocks;
}

bool TxPort::unblocking_after(const sc_time& now) const {
  if (!pending_.empty() && pending_.back().at > now) return true;  // in order of `at`
  for (const auto& s : vl_)
    for (const PauseWindow& w : s.incoming)
      if (w.from > now && w.until == w.from) return true;  // quanta 0: resume
  return false;
}

double TxPort::paused_seconds(int vl, const sc_time& now) const {
  const VlState& s = vl_[vl];
  double total = s.paused_s;
  if (s.pause.until > s.pause.from && now > s.pause.from)
    total += (std::min(now, s.pause.until) - s.pause.from).to_seconds();
  return total;
}

}  // namespace fabricsim::tlm_fabric
