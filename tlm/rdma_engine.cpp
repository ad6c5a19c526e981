#include "tlm/rdma_engine.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>

#include "tlm/link.h"
#include "tlm/sim_time.h"

namespace fabricsim::tlm_fabric {

using sc_core::sc_time;

const hw::EnumNames<RetransmitMode>& retransmit_mode_names() {
  static const hw::EnumNames<RetransmitMode> names{{RetransmitMode::go_back_n, "go_back_n"},
                                                   {RetransmitMode::selective_repeat, "selective_repeat"}};
  return names;
}

std::string_view to_string(RetransmitMode m) { return hw::name_of(retransmit_mode_names(), m); }

const hw::ParamBlock& transport_params() {
  using hw::ParamType;
  static const hw::ParamBlock block{
      "nic.transport",
      "reliable transport of the RC queue pairs",
      {{"retransmit", ParamType::name, "", "go_back_n", "", "", hw::names_of(retransmit_mode_names()), "",
        "loss recovery: the receiver drops out-of-order packets and the sender resends from the gap, or the receiver keeps them and the sender resends only what is missing"},
       {"ack_every", ParamType::integer, "", "4", "1", "1024", {}, "",
        "ACK coalescing: one ACK per this many packets (and at each message end)"},
       {"retransmit_timeout", ParamType::time, "", "100us", "100ns", "1s", {}, "",
        "no ACK progress for this long: resend"},
       {"window", ParamType::integer, "", "512", "1", "4194304", {}, "",
        "outstanding PSNs per QP"},
       {"processing_latency", ParamType::time, "", "100ns", "0s", "100us", {}, "",
        "NIC processing before a WQE's first packet or a response leaves"}}};
  return block;
}

std::string_view to_string(RdmaOpcode o) {
  switch (o) {
    case RdmaOpcode::write: return "write";
    case RdmaOpcode::read: return "read";
    case RdmaOpcode::send: return "send";
  }
  return "?";
}

void TransportParams::validate() const {
  const hw::ParamBlock& spec = transport_params();
  spec["ack_every"].check(ack_every);
  spec["retransmit_timeout"].check_quantity(retransmit_timeout);
  spec["window"].check(window);
  spec["processing_latency"].check_quantity(processing_latency);
}

sc_time HostParams::landing_delay(hw::MemoryTarget m) const {
  return to_sc(m == hw::MemoryTarget::host ? pcie.host_write_latency : pcie.gpu_write_latency) + to_sc(poll_latency);
}

RdmaEngine::RdmaEngine(const std::string& name, int endpoint, std::uint32_t mtu, const TransportParams& transport,
                       const HostParams& host, const CcParams& cc, PacketSource& packets, stats::Registry& stats,
                       sc_time measure_from)
    : earliest_(sc_core::sc_max_time()),
      packets_(packets),
      measure_from_(measure_from),
      processing_(to_sc(transport.processing_latency)),
      retransmit_timeout_(to_sc(transport.retransmit_timeout)),
      poll_latency_(to_sc(host.poll_latency)),
      cnp_interval_(to_sc(cc.dcqcn.cnp_interval)),
      endpoint_(endpoint),
      mtu_(mtu),
      read_ahead_(static_cast<std::uint64_t>(host.pcie.read_tags) * host.pcie.max_read_request),
      cc_kind_(cc.kind),
      transport_(transport),
      acks_sent_(stats.counter(name + ".rdma.acks_sent", "ACK packets sent", "packets")),
      name_(name),
      host_(host),
      cc_params_(cc),
      dma_(host.pcie),
      retransmits_(stats.counter(name + ".rdma.retransmitted_packets", "packets sent again after a NAK or timeout", "packets")),
      timeouts_(stats.counter(name + ".rdma.timeouts", "retransmission timeouts", "events")),
      naks_sent_(stats.counter(name + ".rdma.naks_sent", "sequence-error NAKs sent", "packets")),
      cnps_sent_(stats.counter(name + ".rdma.cnps_sent", "congestion notifications sent (CNP / BECN)", "packets")),
      cnps_received_(stats.counter(name + ".rdma.cnps_received", "congestion notifications received", "packets")),
      duplicates_(stats.counter(name + ".rdma.duplicates", "duplicate packets received", "packets")),
      completions_(stats.counter(name + ".rdma.completions", "requester work completions", "completions")),
      completion_latency_(stats.distribution(name + ".rdma.completion_latency",
                                             "work request posted -> completion visible to the host", "ns")) {
  transport_.validate();
}

RdmaEngine::Qp& RdmaEngine::qp(int qpn) {
  if (qpn < 0 || qpn >= static_cast<int>(qps_.size()))
    throw std::logic_error(name_ + ": packet for unknown QP " + std::to_string(qpn));
  return qps_[qpn];
}

void RdmaEngine::count_skipped_request(int qpn, std::uint64_t bytes, const sc_time& now) {
  Qp& q = qp(qpn);
  q.acked_bytes += bytes;
  if (now >= measure_from_) q.window_acked_bytes += bytes;
  completions_.add();
}

int RdmaEngine::create_qp(int peer, int peer_qpn, int sl) {
  if (!link_) throw std::logic_error(name_ + ": create_qp before the NIC is attached to its link");
  Qp q;
  q.qpn = static_cast<int>(qps_.size());
  q.peer = peer;
  q.peer_qpn = peer_qpn;
  q.sl = static_cast<std::uint8_t>(sl);
  auto make_cc = [&] {
    return hw::make_congestion_control(cc_params_.kind, cc_params_.dcqcn, cc_params_.ib, link_->data_rate().bps());
  };
  if (cc_kind_ != hw::CcKind::none) q.cc = make_cc();
  else if (!no_cc_) no_cc_ = make_cc();
  qps_.push_back(std::move(q));
  busy_qps_.resize(qps_.size());
  earliest_.resize(qps_.size());
  fetch_.resize(qps_.size());
  if (cc_kind_ != hw::CcKind::none) next_cnp_.resize(qps_.size(), sc_core::SC_ZERO_TIME);
  return qps_.back().qpn;
}

void RdmaEngine::reserve_qps(std::size_t more) {
  qps_.reserve(qps_.size() + more);
  fetch_.reserve(qps_.size() + more);
  if (cc_kind_ != hw::CcKind::none) next_cnp_.reserve(qps_.size() + more);
}

void RdmaEngine::connect(int qpn, int peer_qpn) { qp(qpn).peer_qpn = peer_qpn; }

void RdmaEngine::post(int qpn, const WorkRequest& wr, const sc_time& now) {
  Qp& q = qp(qpn);
  SendWqe w;
  w.wr = wr;
  w.posted = now;
  // Doorbell, then the NIC fetches the WQE (unless BlueFlame wrote it with the
  // doorbell), then (WRITE/SEND) the payload unless it was inline in the WQE.
  const sc_time db = dma_.doorbell(now);
  w.wqe_ready = (host_.blueflame ? db : dma_.read(db, host_.wqe_bytes, 0, host_.memory)) +
                processing_;
  w.packets = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (wr.bytes + mtu_ - 1) / mtu_));
  if (wr.opcode == RdmaOpcode::read) {
    w.fetched = w.packets;  // no payload
  } else if (wr.bytes <= host_.inline_threshold) {
    w.chunk_ready.assign(w.packets, w.wqe_ready);  // every segment is in the WQE (MTU may be below the threshold)
    w.fetched = w.packets;
  } else {
    w.chunk_ready.resize(w.packets);
  }
  q.sq.push_back(std::move(w));
  fetch(q, now);
  busy_qps_.insert(static_cast<std::size_t>(qpn));
  refresh(q);
}

void RdmaEngine::fetch(Qp& q, const sc_time& now) {
  // The reads of a request's consecutive segments go as one read in MRRS pieces, issued
  // once the WQE is in. The read-ahead is in bytes: many short messages keep as much
  // payload in flight as one long one.
  Fetch& f = fetch_[static_cast<std::size_t>(q.qpn)];
  for (; f.seq < q.posted(); ++f.seq) {
    SendWqe& w = q.sq[f.seq - q.sq_base];
    if (w.fetched < w.packets) {
      if (f.ahead >= read_ahead_) return;
      const std::uint64_t from = static_cast<std::uint64_t>(w.fetched) * mtu_;
      const std::uint64_t room = read_ahead_ - f.ahead;
      const std::uint64_t bytes = std::min(w.wr.bytes - from, (room + mtu_ - 1) / mtu_ * mtu_);
      dma_.read(std::max(now, w.wqe_ready), bytes, mtu_, host_.memory, &w.chunk_ready[w.fetched]);
      w.fetched += static_cast<std::uint32_t>((bytes + mtu_ - 1) / mtu_);
      f.ahead += bytes;
      if (w.fetched < w.packets) return;
    }
  }
}

std::uint32_t RdmaEngine::segment_bytes(const SendWqe& w, std::uint32_t index) const {
  const std::uint64_t off = static_cast<std::uint64_t>(index) * mtu_;
  return w.wr.bytes > off ? static_cast<std::uint32_t>(std::min<std::uint64_t>(mtu_, w.wr.bytes - off)) : 0;
}

RdmaEngine::SendWqe* RdmaEngine::wqe_of(Qp& q, std::uint64_t seq) {
  if (seq < q.sq_base || seq - q.sq_base >= q.sq.size()) return nullptr;
  return &q.sq[seq - q.sq_base];
}

Packet* RdmaEngine::emit(Qp& q, RdmaOp op, std::uint32_t psn, std::uint32_t bytes, bool last, std::uint64_t wr_id,
                         const sc_time& now) {
  Packet& p = *packets_.acquire();
  p.src = endpoint_;
  p.dst = q.peer;
  p.qp = static_cast<std::uint32_t>(q.peer_qpn);
  p.flow = static_cast<std::uint32_t>(q.qpn);
  p.psn = psn;
  p.op = op;
  p.payload_bytes = bytes;
  p.last_of_message = last;
  p.wr_id = wr_id;
  p.sl = static_cast<std::uint8_t>(q.sl);
  p.created = now;
  p.injected = now;
  // Rate limiter: the next packet of this QP waits for its wire time at the CC rate.
  if (link_) {
    const double wire = static_cast<double>(link_->wire_bytes(bytes)) * 8.0;
    const double t = seconds(now);
    hw::CongestionControl& limiter = cc(q);
    const double gap = wire / limiter.paced_rate_bps(wire, t);
    q.next_allowed = now + from_seconds(gap);
    limiter.on_bytes_sent(link_->wire_bytes(bytes), t);
  }
  return &p;
}

void RdmaEngine::send_control(const Qp& q, RdmaOp op, std::uint32_t psn, const sc_time& now) {
  Control c;
  c.packet.src = endpoint_;
  c.packet.dst = q.peer;
  c.packet.qp = static_cast<std::uint32_t>(q.peer_qpn);
  c.packet.flow = static_cast<std::uint32_t>(q.qpn);
  c.packet.op = op;
  c.packet.ack_psn = psn;
  c.packet.payload_bytes = op == RdmaOp::cnp ? kCnpPayloadBytes : kAckPayloadBytes;
  c.packet.sl = static_cast<std::uint8_t>(q.sl);
  c.ready = now + processing_;
  if (op == RdmaOp::ack) acks_sent_.add();
  if (op == RdmaOp::nak) naks_sent_.add();
  if (op == RdmaOp::cnp) cnps_sent_.add();
  control_.push_back(c);
}

Packet* RdmaEngine::next_packet(const sc_time& now, TxGate& gate) {
  if (!control_.empty() && control_.front().ready <= now &&
      gate.can_send(gate.vl_of(control_.front().packet.sl), control_.front().packet.payload_bytes)) {
    Packet& p = *packets_.acquire();
    const std::uint64_t id = p.id;
    p = control_.front().packet;
    p.id = id;
    p.created = p.injected = now;
    control_.pop_front();
    return &p;
  }
  // The busy QPs in turn from the one after the last that sent (the others have nothing).
  const std::size_t n = qps_.size();
  Packet* out = nullptr;
  busy_qps_.cycle_from(rr_, [&](std::size_t i) {
    Qp& q = qps_[i];
    if (idle(q)) {
      busy_qps_.erase(i);
      return false;
    }
    out = next_of(q, now, gate);
    refresh(q);
    if (out) rr_ = (i + 1) % n;
    return out != nullptr;
  });
  return out;
}

Packet* RdmaEngine::next_of(Qp& q, const sc_time& now, TxGate& gate) {
  check_timeouts(q, now);
  if (q.next_allowed > now) return nullptr;
  const int vl = gate.vl_of(q.sl);
  Packet* out = nullptr;
  // Responder: READ response segments whose data has been read from memory.
  if (!q.responses.empty() && q.responses.front().ready <= now && gate.can_send(vl, q.responses.front().bytes)) {
    const ResponseSeg r = q.responses.front();
    q.responses.pop_front();
    out = emit(q, RdmaOp::read_response, r.psn, r.bytes, r.last, r.wr_id, now);
  }
  // Requester: retransmissions first, then new segments.
  while (!out && !q.resend.empty() && q.resend.front().ready <= now) {
    const Resend r = q.resend.front();
    auto it = std::find_if(q.outstanding.begin(), q.outstanding.end(), [&](const Outstanding& o) { return o.psn == r.psn; });
    SendWqe* w = it == q.outstanding.end() ? nullptr : wqe_of(q, it->wqe_seq);
    if (!w) {  // acknowledged meanwhile
      q.resend.pop_front();
      continue;
    }
    if (w->wr.opcode == RdmaOpcode::read) {
      // One READ request covers the rest of the read from the missing PSN.
      if (!gate.can_send(vl, 16)) break;
      q.resend.pop_front();
      const std::uint64_t seq = it->wqe_seq;
      q.resend.erase(std::remove_if(q.resend.begin(), q.resend.end(),
                                    [&](const Resend& x) {
                                      auto o = std::find_if(q.outstanding.begin(), q.outstanding.end(),
                                                            [&](const Outstanding& y) { return y.psn == x.psn; });
                                      return o != q.outstanding.end() && o->wqe_seq == seq;
                                    }),
                     q.resend.end());
      out = emit(q, RdmaOp::read_request, r.psn, 16, true, w->wr.wr_id, now);
      out->read_bytes = w->wr.bytes - static_cast<std::uint64_t>(it->index) * mtu_;
    } else {
      const std::uint32_t bytes = segment_bytes(*w, it->index);
      if (!gate.can_send(vl, bytes)) break;
      q.resend.pop_front();
      out = emit(q, w->wr.opcode == RdmaOpcode::send ? RdmaOp::send : RdmaOp::write, r.psn, bytes,
                 it->index + 1 == w->packets, w->wr.wr_id, now);
      out->read_bytes = w->wr.bytes;
      out->message_start = w->chunk_ready.front();
    }
    retransmits_.add();
    ++q.retransmitted;
  }
  if (!out && q.resend.empty() && q.unsent()) out = next_segment(q, vl, now, gate);
  return out;
}

Packet* RdmaEngine::next_segment(Qp& q, int vl, const sc_time& now, TxGate& gate) {
  // Requests go out in posting order: only the first with segments still to send can send.
  const std::uint64_t seq = q.unsent_seq;
  SendWqe& w = q.sq[seq - q.sq_base];
  const std::uint32_t need = w.wr.opcode == RdmaOpcode::read ? w.packets : 1;
  if (q.next_psn + need - q.una > static_cast<std::uint32_t>(transport_.window) && !q.outstanding.empty()) return nullptr;
  Packet* out;
  if (w.wr.opcode == RdmaOpcode::read) {
    if (w.wqe_ready > now || !gate.can_send(vl, 16)) return nullptr;
    w.first_psn = q.next_psn;
    w.started = true;
    for (std::uint32_t s = 0; s < w.packets; ++s) q.outstanding.push_back({q.next_psn + s, seq, s});
    out = emit(q, RdmaOp::read_request, q.next_psn, 16, true, w.wr.wr_id, now);
    out->read_bytes = w.wr.bytes;
    q.next_psn += w.packets;
    w.sent = w.packets;
  } else {
    const std::uint32_t bytes = segment_bytes(w, w.sent);
    assert(w.sent < w.fetched);
    if (w.chunk_ready[w.sent] > now || !gate.can_send(vl, bytes)) return nullptr;
    if (!w.started) {
      w.first_psn = q.next_psn;
      w.started = true;
    }
    q.outstanding.push_back({q.next_psn, seq, w.sent});
    out = emit(q, w.wr.opcode == RdmaOpcode::send ? RdmaOp::send : RdmaOp::write, q.next_psn, bytes,
               w.sent + 1 == w.packets, w.wr.wr_id, now);
    out->read_bytes = w.wr.bytes;
    out->message_start = w.chunk_ready.front();
    ++q.next_psn;
    ++w.sent;
    // Its payload leaves the transmit buffer: the QP's next payload reads go out.
    if (w.wr.bytes > host_.inline_threshold) {
      fetch_[static_cast<std::size_t>(q.qpn)].ahead -= bytes;
      fetch(q, now);
    }
  }
  if (w.sent == w.packets) ++q.unsent_seq;
  if (q.outstanding.size() == 1 || q.last_progress == sc_core::SC_ZERO_TIME) q.last_progress = now;
  return out;
}

template <class F>
bool RdmaEngine::qp_times(const Qp& q, F&& consider) const {
  // Each of a QP's next packets waits for its data (READ response read from memory, a
  // resend's payload re-fetched, the next segment's payload) and for its rate limiter.
  auto data = [&](const sc_time& t) { return consider(std::max(t, q.next_allowed)); };
  if (!q.responses.empty() && data(q.responses.front().ready)) return true;
  if (!q.resend.empty() && data(q.resend.front().ready)) return true;
  if (q.unsent()) {
    const SendWqe& w = q.sq[q.unsent_seq - q.sq_base];
    if (data(w.wr.opcode == RdmaOpcode::read ? w.wqe_ready : w.chunk_ready[w.sent])) return true;
  }
  return !q.outstanding.empty() && consider(q.last_progress + retransmit_timeout_);
}

template <class F>
void RdmaEngine::wake_times(F&& consider) const {
  if (!control_.empty() && consider(control_.front().ready)) return;
  // (an idle QP considers nothing)
  busy_qps_.cycle_from(0, [&](std::size_t i) { return qp_times(qps_[i], consider); });
}

void RdmaEngine::refresh(const Qp& q) {
  sc_time first = earliest_.none();
  qp_times(q, [&](const sc_time& t) {
    first = std::min(first, t);
    return false;
  });
  earliest_.set(static_cast<std::size_t>(q.qpn), first);
}

bool RdmaEngine::next_wake(const sc_time& now, sc_time& at) const {
  bool have = false;
  wake_times([&](const sc_time& t) {
    if (t <= now) return false;
    if (!have || t < at) at = t;
    have = true;
    return false;
  });
  return have;
}

bool RdmaEngine::next_ready(const sc_time& now, sc_time& at) const {
  sc_time first = earliest_.min();
  if (!control_.empty()) first = std::min(first, control_.front().ready);
#ifndef NDEBUG
  // The kept times are those a walk over the busy QPs finds (every refresh in place).
  sc_time walked = earliest_.none();
  wake_times([&](const sc_time& t) {
    walked = std::min(walked, t);
    return false;
  });
  assert(walked == first);
#endif
  if (first == earliest_.none()) return false;
  at = std::max(first, now);
  return true;
}

void RdmaEngine::check_timeouts(Qp& q, const sc_time& now) {
  if (q.outstanding.empty() || !q.resend.empty()) return;
  if (q.last_progress + retransmit_timeout_ > now) return;
  timeouts_.add();
  ++q.timeouts;
  q.last_progress = now;
  if (transport_.mode == RetransmitMode::go_back_n) {
    go_back(q, q.una, now);
  } else {
    resend_one(q, q.una, now);
  }
}

void RdmaEngine::go_back(Qp& q, std::uint32_t from, const sc_time& now) {
  // The payload is read from memory again; the resends leave in PSN order.
  q.resend.clear();
  for (const Outstanding& o : q.outstanding)
    if (o.psn >= from) q.resend.push_back(resend_of(q, o, now));
  if (!q.resend.empty()) busy_qps_.insert(static_cast<std::size_t>(q.qpn));
}

void RdmaEngine::resend_one(Qp& q, std::uint32_t psn, const sc_time& now) {
  const auto it = std::find_if(q.outstanding.begin(), q.outstanding.end(), [&](const Outstanding& o) { return o.psn == psn; });
  q.resend.push_back(it != q.outstanding.end() ? resend_of(q, *it, now) : Resend{psn, now});  // else acknowledged: dropped when due
  busy_qps_.insert(static_cast<std::size_t>(q.qpn));
}

RdmaEngine::Resend RdmaEngine::resend_of(Qp& q, const Outstanding& o, const sc_time& now) {
  const SendWqe* w = wqe_of(q, o.wqe_seq);
  const std::uint32_t bytes = w && w->wr.opcode != RdmaOpcode::read ? segment_bytes(*w, o.index) : 0;
  return {o.psn, bytes ? dma_.reread(now, bytes, host_.memory) : now};
}

void RdmaEngine::requester_ack(Qp& q, std::uint32_t ack_psn, const sc_time& now) {
  if (ack_psn <= q.una) return;
  while (!q.outstanding.empty() && q.outstanding.front().psn < ack_psn) {
    const Outstanding& o = q.outstanding.front();
    if (const SendWqe* w = wqe_of(q, o.wqe_seq)) {
      q.acked_bytes += segment_bytes(*w, o.index);
      if (now >= measure_from_) q.window_acked_bytes += segment_bytes(*w, o.index);
    }
    q.outstanding.pop_front();
  }
  q.una = ack_psn;
  q.read_asked = false;  // a new gap, if any
  q.last_progress = now;
  while (!q.resend.empty() && q.resend.front().psn < q.una) q.resend.pop_front();
  complete_wqes(q, now);
}

void RdmaEngine::complete_wqes(Qp& q, const sc_time& now) {
  while (!q.sq.empty()) {
    SendWqe& w = q.sq.front();
    if (!w.started || w.sent < w.packets || w.first_psn + w.packets > q.una) break;
    // CQE write; for a READ after its data is in memory.
    const sc_time cqe = dma_.write(w.wr.opcode == RdmaOpcode::read ? std::max(now, q.read_landed) : now,
                                   host_.cqe_bytes, host_.memory);
    Completion c{q.qpn, w.wr.wr_id, w.wr.opcode, w.wr.bytes, true, w.posted, cqe + poll_latency_};
    completions_.add();
    if (c.posted >= measure_from_) completion_latency_.add(seconds(c.visible - c.posted) * 1e9);
    q.sq.pop_front();
    ++q.sq_base;
    if (on_completion_) on_completion_(c);
  }
}

void RdmaEngine::consume(Qp& q, std::uint32_t psn, std::uint32_t bytes, const sc_time& now, const sc_time& landed,
                         const Completion* last) {
  // The next PSN in order: count its bytes; a message's last PSN delivers it.
  q.message_bytes += bytes;
  ++q.expected;
  Completion c;
  if (last) {
    c = *last;
  } else {
    if (!q.reorder) return;
    auto& pending = q.reorder->pending_last;
    auto it = pending.find(psn);
    if (it == pending.end()) return;
    c = it->second;
    // Its last packet came ahead of a gap: the host sees the message once the packet
    // that filled the gap has landed too.
    c.visible = std::max(c.visible, landed + poll_latency_);
    pending.erase(it);
  }
  // Scoreboard: every byte of the message arrived exactly once, in order.
  ++delivered_messages_;
  if (q.message_bytes != c.bytes && !(c.bytes == 0 && q.message_bytes == 0)) ++corrupt_messages_;
  q.message_bytes = 0;
  if (on_flow_) on_flow_({q.peer, endpoint_, c.bytes, static_cast<std::uint32_t>(q.peer_qpn), c.posted, now});
  if (on_completion_) on_completion_(c);
}

void RdmaEngine::responder_data(Qp& q, const Packet& p, const sc_time& now) {
  const std::uint32_t psn = p.psn;
  if (psn < q.expected) {
    duplicates_.add();
    send_control(q, RdmaOp::ack, q.expected, now);
    return;
  }
  const bool in_order = psn == q.expected;
  if (!in_order) {
    const bool keep = transport_.mode == RetransmitMode::selective_repeat &&
                      psn - q.expected < static_cast<std::uint32_t>(transport_.window);
    if (keep && !q.reorder) q.reorder = std::make_unique<Reorder>();
    if (!keep || !q.reorder->held.emplace(psn, p.payload_bytes).second) {
      if (keep) duplicates_.add();
      if (!q.nak_sent) {
        send_control(q, RdmaOp::nak, q.expected, now);
        q.nak_sent = true;
      }
      return;
    }
    if (!q.nak_sent) {
      send_control(q, RdmaOp::nak, q.expected, now);
      q.nak_sent = true;
    }
  }
  // Direct placement: the payload goes to memory as it arrives.
  const sc_time landed = dma_.write(now, p.payload_bytes, host_.memory);
  Completion last;
  if (p.last_of_message) {
    sc_time visible = landed;
    if (p.op == RdmaOp::send) visible = dma_.write(landed, host_.cqe_bytes, host_.memory);
    last = Completion{q.qpn, p.wr_id, p.op == RdmaOp::send ? RdmaOpcode::send : RdmaOpcode::write,
                      p.read_bytes, false, p.message_start, visible + poll_latency_};
    if (!in_order) q.reorder->pending_last[psn] = last;
  }
  if (!in_order) return;
  consume(q, psn, p.payload_bytes, now, landed, p.last_of_message ? &last : nullptr);
  // Selective repeat: the gap filler releases the packets held behind it; the ACK must
  // cover them (one of them may end a message the requester is waiting on).
  auto* held = q.reorder ? &q.reorder->held : nullptr;
  const bool released_held = held && !held->empty() && held->begin()->first == q.expected;
  while (held && !held->empty() && held->begin()->first == q.expected) {
    const auto [held_psn, held_bytes] = *held->begin();
    held->erase(held->begin());
    consume(q, held_psn, held_bytes, now, landed);
  }
  q.nak_sent = false;
  if (held && !held->empty()) {
    // Another gap behind the released packets: NAK it now (it acknowledges up to it),
    // rather than leave the requester to find it by timeout.
    send_control(q, RdmaOp::nak, q.expected, now);
    q.nak_sent = true;
    q.unacked = 0;
  } else if (++q.unacked >= transport_.ack_every || p.last_of_message || released_held) {
    send_control(q, RdmaOp::ack, q.expected, now);
    q.unacked = 0;
  }
}

void RdmaEngine::respond_read(Qp& q, const Packet& p, const sc_time& now) {
  if (p.psn > q.expected) {
    if (!q.nak_sent) {
      send_control(q, RdmaOp::nak, q.expected, now);
      q.nak_sent = true;
    }
    return;
  }
  const std::uint32_t packets = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (p.read_bytes + mtu_ - 1) / mtu_));
  const bool repeated = p.psn < q.expected;
  q.expected = std::max(q.expected, p.psn + packets);
  q.nak_sent = false;
  // A repeated request (the requester missed a response) restarts the responses from its
  // PSN (IBTA Vol. 1, 9.7.5.1, duplicate RDMA READ request): what was sent from there on
  // goes again, its data read again ahead of the posted reads like a retransmission's
  // payload; the responses not yet sent keep their place and their data (a NIC reads a
  // READ's data as its transmit buffer drains; the model reserves those reads at once).
  const auto at = std::find_if(q.responses.begin(), q.responses.end(),
                               [&](const ResponseSeg& r) { return r.psn >= p.psn; });
  const std::uint32_t resend = at != q.responses.end() && at->psn < p.psn + packets ? at->psn - p.psn : packets;
  busy_qps_.insert(static_cast<std::size_t>(q.qpn));
  if (resend == 0) return;  // all still queued
  const std::uint64_t bytes = std::min<std::uint64_t>(p.read_bytes, static_cast<std::uint64_t>(resend) * mtu_);
  std::vector<sc_time> ready((bytes + mtu_ - 1) / mtu_);
  if (repeated) {
    dma_.reread(now + processing_, bytes, host_.memory, mtu_, ready.data());
  } else {
    dma_.read(now + processing_, bytes, mtu_, host_.memory, ready.data());
  }
  if (ready.empty()) ready.assign(1, now + processing_);
  std::size_t pos = static_cast<std::size_t>(at - q.responses.begin());
  for (std::uint32_t s = 0; s < resend; ++s) {
    const std::uint64_t off = static_cast<std::uint64_t>(s) * mtu_;
    const auto seg = static_cast<std::uint32_t>(p.read_bytes > off ? std::min<std::uint64_t>(mtu_, p.read_bytes - off) : 0);
    const ResponseSeg r{p.psn + s, seg, s + 1 == packets, p.wr_id, ready[std::min<std::size_t>(s, ready.size() - 1)]};
    q.responses.insert(q.responses.begin() + static_cast<std::ptrdiff_t>(pos++), r);
  }
}

void RdmaEngine::notify_congestion(const Qp& q, const Packet& p, const sc_time& now) {
  const bool marked = p.ecn == Ecn::ce || p.fecn;
  const sc_time interval = cc_kind_ == hw::CcKind::dcqcn ? cnp_interval_ : sc_core::SC_ZERO_TIME;
  if (marked && cc_kind_ != hw::CcKind::none && next_cnp_[q.qpn] <= now) {
    send_control(q, RdmaOp::cnp, 0, now);
    next_cnp_[q.qpn] = now + interval;
  }
}

void RdmaEngine::requester_read_response(Qp& q, const Packet& p, const sc_time& now) {
  if (p.psn < q.una) return;  // duplicate
  if (p.psn != q.una) {
    // A response went missing (an implied NAK): ask again from the first missing PSN
    // at once; the responses still in flight behind the gap are dropped (the new
    // stream repeats them). Once per gap, unless the PSNs start over (at or below the
    // last one dropped): the responder's new stream has lost that PSN again. A lost
    // re-request is found by the timeout.
    if (q.resend.empty() && (!q.read_asked || p.psn <= q.read_seen)) {
      go_back(q, q.una, now);
      q.read_asked = true;
    }
    q.read_seen = p.psn;
    return;
  }
  // The completion waits for the data to land in memory (CQE after it).
  q.read_landed = std::max(q.read_landed, dma_.write(now, p.payload_bytes, host_.memory));
  requester_ack(q, p.psn + 1, now);
}

void RdmaEngine::requester_nak(Qp& q, const Packet& p, const sc_time& now) {
  requester_ack(q, p.ack_psn, now);
  if (transport_.mode == RetransmitMode::go_back_n) {
    go_back(q, p.ack_psn, now);
  } else if (std::none_of(q.resend.begin(), q.resend.end(), [&](const Resend& r) { return r.psn == p.ack_psn; })) {
    resend_one(q, p.ack_psn, now);
  }
}

bool RdmaEngine::receive(const Packet& p, const sc_time& now) {
  Qp& q = qp(static_cast<int>(p.qp));
  const std::size_t controls = control_.size();
  notify_congestion(q, p, now);
  switch (p.op) {
    case RdmaOp::write:
    case RdmaOp::send: responder_data(q, p, now); break;
    case RdmaOp::read_request: respond_read(q, p, now); break;
    case RdmaOp::read_response: requester_read_response(q, p, now); break;
    case RdmaOp::ack: requester_ack(q, p.ack_psn, now); break;
    case RdmaOp::nak: requester_nak(q, p, now); break;
    case RdmaOp::cnp:
      cc(q).on_notification(seconds(now));
      cnps_received_.add();
      ++q.cnps_received;
      break;
    case RdmaOp::raw: break;
  }
  refresh(q);
  // Data at the responder changes nothing the transmitter reads unless it queued an
  // ACK, NAK or CNP; an ACK only opens the window, which matters to a QP with segments
  // still to send; the rest (READ requests and responses, NAK, CNP) may always.
  if (control_.size() != controls) return true;
  if (p.op == RdmaOp::write || p.op == RdmaOp::send) return false;
  if (p.op == RdmaOp::ack)
    return !q.resend.empty() || q.unsent();
  return true;
}

double RdmaEngine::cc_rate_gbps(Qp& q, const sc_time& now) {
  const double t = now.to_seconds();
  if (!link_) return cc(q).rate_bps(t) / 1e9;
  return cc(q).paced_rate_bps(static_cast<double>(link_->wire_bytes(mtu_)) * 8.0, t) / 1e9;
}

std::vector<QpReport> RdmaEngine::report(const sc_time& now) {
  std::vector<QpReport> out;
  out.reserve(qps_.size());
  for (Qp& q : qps_)
    out.push_back({q.qpn, q.peer, q.peer_qpn, q.sl, q.posted(), q.acked_bytes, q.window_acked_bytes,
                   q.retransmitted, q.timeouts, q.cnps_received, cc_rate_gbps(q, now)});
  return out;
}

void RdmaEngine::requester_rates(const sc_time& now, std::vector<QpRate>& out) {
  out.clear();
  if (cc_kind_ == hw::CcKind::none) return;
  for (Qp& q : qps_)
    if (q.posted() > 0) out.push_back({q.qpn, cc_rate_gbps(q, now)});
}

}  // namespace fabricsim::tlm_fabric
