#include "tlm/nic.h"

#include <algorithm>
#include <stdexcept>

#include "tlm/link.h"
#include "tlm/sim_time.h"

namespace fabricsim::tlm_fabric {

using sc_core::sc_time;

const hw::ParamBlock& nic_params() {
  using hw::ParamType;
  static const hw::ParamBlock block{
      "nic",
      "every NIC",
      {{"mtu", ParamType::size, "", "4KiB", "64B", "9KiB", {}, "",
        "largest payload per packet; messages are cut into MTU segments"},
       {"rx_buffer", ParamType::size, "", "256KiB", "64B", "1GiB", {}, "",
        "receive buffer, split equally among VLs; backs the switch egress credits"},
       {"credit_return_latency", ParamType::time, "", "10ns", "0s", "100us", {}, "",
        "buffer freed -> credit packet leaves"},
       {"memory", ParamType::name, "", "host", "", "", hw::names_of(hw::memory_target_names()), "",
        "where RDMA buffers live: selects the `pcie.host_*` or `pcie.gpu_*` latencies (GPUDirect RDMA)"},
       {"poll_latency", ParamType::time, "", "50ns", "0s", "100us", {}, "",
        "the host sees a CQE or a polled last byte this long after it lands"},
       {"inline_threshold", ParamType::size, "", "220B", "0B", "1KiB", {}, "",
        "payloads up to this size travel inside the WQE: no payload DMA read (perftest's default inline size)"},
       {"blueflame", ParamType::boolean, "", "true", "", "", {}, "",
        "the host writes the WQE together with the doorbell; `false`: the NIC fetches the 64 B WQE with a DMA read"},
       {"transport", ParamType::section, "", "", "", "", {}, "",
        "reliable transport of the RC queue pairs"},
       {"pcie", ParamType::section, "", "", "", "", {}, "",
        "the NIC's PCIe link and memory latencies"},
       {"congestion_control", ParamType::section, "", "", "", "", {}, "",
        "end-host congestion control per QP"},
       {"vl_arbiter_impl", ParamType::name, "", "tlm", "", "", hw::names_of(allocator_impl_names()), "",
        "the VL arbiter over the raw send queues (round robin) as the `hw/` C++ core, as its Verilated RTL twin, or "
        "both compared every round ([cosim.md](cosim.md#arbiters)); `rtl` / `lockstep` need `-DFABRICSIM_RTL=ON` and "
        "an RTL build with `switch.vls` requesters"},
       {"vl_arbiter_rtl_variant", ParamType::text, "", "rr_arbiter", "", "", {},
        "the registered RTL arbiters (rtl/models/: `rr_arbiter`)",
        "which RTL block `vl_arbiter_impl: rtl` / `lockstep` use"}}};
  return block;
}

const hw::ParamBlock& cc_params() {
  using hw::ParamType;
  static const hw::ParamBlock block{
      "nic.congestion_control",
      "end-host congestion control per QP",
      {{"kind", ParamType::name, "", "none", "", "", hw::names_of(hw::cc_kind_names()), "",
        "the scheme; the sub-maps of the other schemes may be written and are ignored"},
       {"dcqcn", ParamType::section, "", "", "", "", {}, "",
        "DCQCN's keys, below"},
       {"ib_cc", ParamType::section, "", "", "", "", {}, "",
        "InfiniBand congestion control's keys, below"}}};
  return block;
}

const std::vector<hw::ParamBlock>& nic_param_blocks() {
  static const std::vector<hw::ParamBlock> blocks{nic_params(), transport_params(), hw::pcie_params(), cc_params(),
                                                  hw::dcqcn_params(), hw::ib_cc_params()};
  return blocks;
}

void NicParams::validate() const {
  const hw::ParamBlock& spec = nic_params();
  spec["mtu"].check_quantity(mtu);
  if (credit_block_bytes == 0) throw std::invalid_argument("credit_block_bytes must be positive");
  spec["rx_buffer"].check_quantity(rx_buffer);
  if (rx_buffer.in_bytes() < credit_block_bytes) throw std::invalid_argument("rx_buffer must hold at least one credit block");
  spec["credit_return_latency"].check_quantity(credit_return_latency);
  transport.validate();
  host.pcie.validate();
}

Nic::Nic(sc_core::sc_module_name name, int id, const NicParams& params, PacketPool& pool,
         stats::Registry& stats, sc_time measure_from)
    : sc_module(name),
      tx("tx"),
      rx("rx"),
      measure_from_(measure_from),
      packets_(pool, id),
      id_(id),
      credit_block_bytes_(params.credit_block_bytes),
      network_latency_(stats.distribution(std::string(this->name()) + ".network_latency",
                                          "first bit injected -> packet tail received", "ns")),
      params_(params),
      rdma_(std::string(this->name()), id, static_cast<std::uint32_t>(params.mtu.in_bytes()), params.transport,
            params.host, params.cc, packets_, stats, measure_from),
      messages_posted_(stats.counter(std::string(this->name()) + ".messages_posted", "messages posted by the host", "messages")),
      rx_messages_(stats.counter(std::string(this->name()) + ".rx_messages", "messages fully received", "messages")),
      out_of_order_(stats.counter(std::string(this->name()) + ".rx_out_of_order",
                                  "packets received out of PSN order within their flow", "packets")),
      crc_drops_(stats.counter(std::string(this->name()) + ".rx_crc_drops",
                               "packets dropped because a bit error corrupted them on the link", "packets")),
      packet_latency_(stats.distribution(std::string(this->name()) + ".packet_latency",
                                         "message posted -> packet tail received (incl. source queueing)", "ns")),
      message_latency_(stats.distribution(std::string(this->name()) + ".message_latency",
                                          "message posted -> last packet tail received", "ns")) {
  params_.validate();
  const std::string base = this->name();
  stats.attach(base + ".tx_packets", "packets transmitted", "packets", tx_packets_);
  stats.attach(base + ".tx_payload_bytes", "payload bytes transmitted", "B", tx_bytes_);
  stats.attach(base + ".tx_window_wire_bytes", "wire bytes (framing incl.) sent inside the measurement window", "B",
               tx_window_wire_bytes_);
  stats.attach(base + ".rx_packets", "packets received", "packets", rx_packets_);
  stats.attach(base + ".rx_payload_bytes", "payload bytes received", "B", rx_bytes_);
  stats.attach(base + ".rx_window_payload_bytes", "payload bytes received inside the measurement window", "B",
               rx_window_bytes_);
  stats.attach(base + ".rx_window_wire_bytes", "wire bytes (framing incl.) received inside the measurement window",
               "B", rx_window_wire_bytes_);
  credit_return_delay_ = to_sc(params_.credit_return_latency);
  tx.register_bw(this, &Nic::egress_bw);
  rx.register_fw(this, &Nic::ingress);
}

std::vector<RtlBlockName> Nic::rtl_blocks() const {
  std::vector<RtlBlockName> blocks;
  if (auto b = rtl_block(*vl_arbiter_)) blocks.push_back(std::move(*b));
  if (auto b = port_.rtl_block()) blocks.push_back(std::move(*b));
  return blocks;
}

std::vector<RtlWaveformRecord> Nic::finish_waveforms() {
  std::vector<RtlWaveformRecord> records;
  if (auto r = finish_waveform(*vl_arbiter_)) records.push_back(std::move(*r));
  if (auto r = port_.finish_waveform()) records.push_back(std::move(*r));
  return records;
}

void Nic::attach_egress(const Link* link, int vls, std::vector<int> sl_to_vl, std::uint64_t downstream_buffer_per_vl) {
  port_.attach(&tx, link, vls, params_.credit_block_bytes, downstream_buffer_per_vl, std::string(name()) + ".port0");
  tx_wire_extra_ = wire_extra(link->timing());
  // RoCEv2 packets are ECN-capable (RFC 3168 ECT(0)); IB uses FECN instead.
  ecn_capable_ = link->params().phy.framing != hw::Framing::infiniband;
  rdma_.attach(&link->timing());
  if (sl_to_vl.size() > sl_to_vl_.size())
    throw std::invalid_argument(std::string(name()) + ": SL -> VL map of " + std::to_string(sl_to_vl.size()) +
                                " entries (SL 0.." + std::to_string(sl_to_vl_.size() - 1) + ")");
  for (std::size_t sl = 0; sl < sl_to_vl.size(); ++sl) {
    if (sl_to_vl[sl] < 0 || sl_to_vl[sl] >= vls)
      throw std::invalid_argument(std::string(name()) + ": SL " + std::to_string(sl) + " maps to VL " +
                                  std::to_string(sl_to_vl[sl]) + " of " + std::to_string(vls));
    sl_to_vl_[sl] = static_cast<std::uint8_t>(sl_to_vl[sl]);
  }
  sls_mapped_ = static_cast<int>(sl_to_vl.size());
  send_queues_.assign(vls, {});
  vl_arbiter_ = make_arbiter_block({std::string(name()) + ".vl_arbiter", "round_robin", vls, params_.vl_arbiter_impl,
                                    params_.vl_arbiter_rtl_variant, "nic.vl_arbiter_impl", hw::Frequency(),
                                    params_.waveform});
  credits_held_ = hw::CreditLedger(vls);
}

void Nic::end_of_elaboration() {
  port_.resolve_receiver();
  if (ingress_link_) upstream_ = FabricCall::to_other_end(rx.operator->());  // credits go upstream without reading the socket each time
}

void Nic::attach_ingress(const Link* link) {
  ingress_link_ = link;
  ingress_fc_ = link->params().flow_control;
  rx_wire_extra_ = wire_extra(link->timing());
}

int Nic::vl_of(int sl) const {
  if (sl >= 0 && sl < sls_mapped_) return sl_to_vl_[sl];
  return sl % static_cast<int>(send_queues_.size());
}

std::size_t Nic::send_queue_depth() const { return queued_messages_; }

double Nic::paused_seconds(int vl) const { return port_.paused_seconds(vl, sim_now()); }

void Nic::post(const Message& m) {
  if (m.bytes == 0) return;
  messages_posted_.add();
  const std::uint64_t message_id = (static_cast<std::uint64_t>(id_) << 40) | next_message_++;
  send_queues_[vl_of(m.sl)].push_back({m, message_id, m.bytes, sim_now()});
  ++queued_messages_;
  wake_tx_at(sim_now());
}

void Nic::kick() {
  // Before the engine's earliest ready time the transmitter would find nothing to send.
  // Anything ready by the time the wire is free wakes it then (wake_tx_at).
  const sc_time now = sim_now();
  sc_time at;
  if (rdma_.next_ready(now, at)) wake_tx_at(at);
}

void Nic::wake_tx_at(const sc_time& t) { tx_wake_.notify_at(t > port_.busy_until() ? t : port_.busy_until()); }

bool Nic::can_send(int vl, std::uint32_t payload, const sc_time& now) {
  const bool ok = port_.can_send(vl, payload, now);
  credit_blocked_ |= !ok;
  return ok;
}

tlm::tlm_sync_enum Nic::egress_bw(int, Packet& p, tlm::tlm_phase& phase, sc_time& delay) {
  const sc_time at = sim_now() + delay;
  if (phase == CREDIT_RETURN) {
    port_.credit_returned(at, p.vl, p.credit_blocks);
  } else if (phase == PFC_PAUSE) {
    port_.pause_received(at, p.vl, p.pause_quanta);
  }
  if (flow_control_may_wake()) wake_tx_at(at);
  return tlm::TLM_ACCEPTED;
}

bool Nic::flow_control_may_wake() const {
  // Returned credits only matter to a segment that credits held back; otherwise the
  // next wake for other reasons finds them (TxPort::update). A PAUSE window must be
  // applied when it starts, so PFC links always look.
  return credit_blocked_ || port_.flow_control() != FlowControl::credit;
}

void Nic::on_tx() {
  ++activations_;
  const sc_time now = sim_now();
  receive_due(now);
  port_.update(now);
  if (port_.busy_until() > now) {
    wake_tx_at(port_.busy_until());
    return;
  }
  // RDMA transport first (ACKs, retransmissions, READ responses, new segments),
  // then synthetic raw traffic. Note whether flow control held back a segment
  // that could otherwise go: only then do credit returns need to wake us.
  credit_blocked_ = false;
  struct Gate final : TxGate {
    Gate(Nic& n, const sc_time& t) : nic(n), now(t) {}
    int vl_of(int sl) const override { return nic.vl_of(sl); }
    bool can_send(int vl, std::uint32_t payload) override { return nic.can_send(vl, payload, now); }
    Nic& nic;
    const sc_time& now;
  } gate(*this, now);
  Packet* p = rdma_.next_packet(now, gate);
  if (!p) p = next_raw_packet(now);
  if (p) {
    p->vl = static_cast<std::uint8_t>(vl_of(p->sl));
    if (ecn_capable_) p->ecn = Ecn::ect0;
    if (breakdown_) {
      PacketBreakdown& b = breakdown_of(*p);
      b = PacketBreakdown{};
      b.sent(port_.link(), now);
    }
    port_.send(*p, sc_core::SC_ZERO_TIME);
    tx_packets_.add();
    tx_bytes_.add(p->payload_bytes);
    if (now >= measure_from_) tx_window_wire_bytes_.add(p->frame_bytes + tx_wire_extra_);
    // Look again when the wire is free; on credit links, not before the transport has
    // something ready (a PAUSE must be applied when it starts, so PFC links look anyway).
    sc_time at = port_.busy_until();
    if (port_.flow_control() == FlowControl::credit && send_queue_depth() == 0) {
      sc_time ready;
      if (!rdma_.next_ready(now, ready)) return;  // nothing waits, no timeout armed: new work kicks
      if (ready > at) at = ready;
    }
    wake_tx_at(at);
    return;
  }
  // Nothing can go now: wake when the transport changes, and when flow control does
  // if that can matter (flow_control_may_wake).
  sc_time at;
  if (rdma_.next_wake(now, at)) wake_tx_at(at);
  if (flow_control_may_wake() && port_.next_change(now, at)) wake_tx_at(at);
  // else: every credit is lent downstream; its return wakes us (egress_bw).
}

std::uint64_t Nic::order_key(int endpoint, std::uint32_t flow, int sl) {
  // Order holds per SL only: packets on different VLs may overtake each other.
  return (static_cast<std::uint64_t>(endpoint) << 36) | (static_cast<std::uint64_t>(sl & 0xf) << 32) | flow;
}

Packet* Nic::next_raw_packet(const sc_time& now) {
  // The VL arbiter: every VL whose next segment flow control lets start now requests,
  // granted round robin from the VL after the last that sent (none queued: the queues
  // are not read, an RDMA-only NIC asks on every wake).
  if (queued_messages_ == 0) return nullptr;
  const auto mtu = params_.mtu.in_bytes();
  auto segment = [&](const Pending& m) { return static_cast<std::uint32_t>(std::min<std::uint64_t>(m.remaining, mtu)); };
  hw::Arbiter& arbiter = *vl_arbiter_;
  arbiter.clear();
  for (int vl = 0; vl < static_cast<int>(send_queues_.size()); ++vl)
    if (!send_queues_[vl].empty() && can_send(vl, segment(send_queues_[vl].front()), now)) arbiter.add_request({vl});
  const int vl = arbiter.arbitrate();
  if (vl == hw::kNoGrant) return nullptr;
  arbiter.update_state(vl);
  Pending& m = send_queues_[vl].front();
  const std::uint32_t payload = segment(m);
  Packet& p = *packets_.acquire();
  p.src = id_;
  p.dst = m.msg.dst;
  p.flow = m.msg.flow;
  p.sl = static_cast<std::uint8_t>(m.msg.sl);
  // PSNs count per (destination, flow, SL): what the receiver checks order on.
  p.psn = next_psn_[order_key(m.msg.dst, m.msg.flow, p.sl)]++;
  p.message = m.message_id;
  p.payload_bytes = payload;
  p.created = m.created;
  p.message_start = m.created;
  p.read_bytes = m.msg.bytes;
  p.injected = now;
  m.remaining -= payload;
  p.last_of_message = m.remaining == 0;
  if (p.last_of_message) {
    send_queues_[vl].pop_front();
    --queued_messages_;
  }
  return &p;
}

tlm::tlm_sync_enum Nic::ingress(int, Packet& p, tlm::tlm_phase& phase, sc_time& delay) {
  if (phase != END_TAIL) return tlm::TLM_ACCEPTED;
  if (ingress_fc_ == FlowControl::credit) credits_held_.hold(p.vl, credit_blocks(p));
  // Tails arrive in order on one link, so the queue stays sorted by tail time.
  arrivals_.push_back(&p);
  if (arrivals_.size() == 1) rx_wake_.notify_at(sim_now() + delay);
  return tlm::TLM_ACCEPTED;
}

void Nic::on_rx() {
  ++activations_;
  if (receive_due(sim_now())) kick();
}

// Every packet whose tail is in by `now`, in arrival order; whether the transport
// found something to send. Both wake-ups call it first, so a packet received at
// the instant the transmitter decides is seen by that decision whichever of the two
// runs first.
bool Nic::receive_due(const sc_time& now) {
  if (arrivals_.empty() || arrivals_.front()->tail_at > now) return false;  // its wake is pending
  bool transport = false;
  while (!arrivals_.empty() && arrivals_.front()->tail_at <= now) {
    Packet* p = arrivals_.front();
    arrivals_.pop_front();
    if (p->corrupted) {
      // The CRC check fails: the packet is gone, its buffer space is not.
      crc_drops_.add();
    } else if (p->op == RdmaOp::raw) {
      deliver(*p);
    } else {
      record(*p, now);
      log_packet(*p, now);
      transport |= rdma_.receive(*p, now);
    }
    return_credit(*p);
    packets_.release(p);
  }
  if (!arrivals_.empty()) rx_wake_.notify_at(arrivals_.front()->tail_at);
  return transport;
}

void Nic::record(Packet& p, const sc_time& now) {
  if (p.dst != id_)
    throw std::logic_error(std::string(name()) + ": received packet " + std::to_string(p.id) +
                           " addressed to endpoint " + std::to_string(p.dst));
  if (breakdown_) account_delivery(p, now);
  rx_packets_.add();
  rx_bytes_.add(p.payload_bytes);
  if (now >= measure_from_) {
    rx_window_bytes_.add(p.payload_bytes);
    rx_window_wire_bytes_.add(p.frame_bytes + rx_wire_extra_);
  }
  if (p.created >= measure_from_) network_latency_.add(seconds(now - p.injected) * 1e9);
  if (trace_) trace_->delivered(trace_track_, p, now);
}

namespace {

// The wire bytes (framing and gaps included) of the data frames of a message of `bytes`
// in `packets` MTU-sized packets but the last.
std::uint64_t message_wire_bytes(const hw::PhyTiming& link, std::uint64_t bytes, std::uint64_t packets,
                                 std::uint32_t mtu) {
  const std::uint64_t last = bytes - (packets - 1) * mtu;
  return (packets - 1) * link.wire_bytes(mtu) + link.wire_bytes(static_cast<std::uint32_t>(last));
}

}  // namespace

void Nic::count_skipped_send(std::uint32_t qpn, std::uint64_t bytes, const sc_time& now) {
  const std::uint64_t packets = rdma_.packets_of(bytes), acks = rdma_.acks_of(packets);
  tx_packets_.add(packets);
  tx_bytes_.add(bytes);
  rx_packets_.add(acks);
  rx_bytes_.add(acks * kAckPayloadBytes);
  if (now >= measure_from_) {
    tx_window_wire_bytes_.add(message_wire_bytes(port_.link(), bytes, packets, rdma_.mtu()));
    rx_window_bytes_.add(acks * kAckPayloadBytes);
    rx_window_wire_bytes_.add(acks * ingress_link_->timing().wire_bytes(kAckPayloadBytes));
  }
  rdma_.count_skipped_request(static_cast<int>(qpn), bytes, now);
}

void Nic::count_skipped_receive(std::uint64_t bytes, const sc_time& now) {
  const std::uint64_t packets = rdma_.packets_of(bytes), acks = rdma_.acks_of(packets);
  rx_packets_.add(packets);
  rx_bytes_.add(bytes);
  rx_messages_.add();
  tx_packets_.add(acks);
  tx_bytes_.add(acks * kAckPayloadBytes);
  if (now >= measure_from_) {
    rx_window_bytes_.add(bytes);
    rx_window_wire_bytes_.add(message_wire_bytes(ingress_link_->timing(), bytes, packets, rdma_.mtu()));
    tx_window_wire_bytes_.add(acks * port_.link().wire_bytes(kAckPayloadBytes));
  }
  rdma_.count_skipped_acks(acks);
}

void Nic::keep_latency_breakdown() {
  if (!packets_.keeps_breakdowns()) throw std::logic_error(std::string(name()) + ": the packet pool keeps no breakdowns");
  breakdown_ = true;
}

void Nic::account_delivery(Packet& p, const sc_time& now) {
  PacketBreakdown& b = breakdown_of(p);
  b.arrived(now);  // the last link's frame serialisation
  const auto latency = static_cast<std::int64_t>(now.value()) - static_cast<std::int64_t>(p.injected.value());
  if (b.total() != latency)
    throw std::logic_error(std::string(name()) + ": packet " + std::to_string(p.id) + "'s latency parts add up to " +
                           std::to_string(b.total()) + " ticks, its latency is " + std::to_string(latency));
  if (p.created >= measure_from_) latency_sums_.add(b.ticks);
}

void Nic::deliver(Packet& p) {
  const sc_time now = sim_now();
  record(p, now);
  auto& expected = expected_psn_[order_key(p.src, p.flow, p.sl)];
  if (p.psn != expected) out_of_order_.add();
  expected = p.psn + 1;
  if (p.created >= measure_from_) {
    packet_latency_.add(seconds(now - p.created) * 1e9);
    if (p.last_of_message) message_latency_.add(seconds(now - p.created) * 1e9);
  }
  if (p.last_of_message) rx_messages_.add();
  if (on_flow_) {
    // A raw message is complete when all its bytes are in, in whatever order they came.
    bool complete = p.payload_bytes >= p.read_bytes;
    if (!complete) {
      auto it = rx_message_bytes_.try_emplace(p.message, 0).first;
      it->second += p.payload_bytes;
      complete = it->second >= p.read_bytes;
      if (complete) rx_message_bytes_.erase(it);
    }
    if (complete) on_flow_({p.src, id_, p.read_bytes, p.flow, p.message_start, now});
  }
  log_packet(p, now);
}

void Nic::log_packet(const Packet& p, const sc_time& now) {
  if (packet_log_) packet_log_->add(p, now);
}

void Nic::set_trace(FabricTrace* trace) {
  const int track = trace->add_nic(name(), id_, port_.attached() ? port_.vls() : 1);
  if (!trace->on(track)) return;
  trace_ = trace;
  trace_track_ = track;
  if (port_.attached()) port_.set_trace(trace, track);
}

void Nic::set_flow_handler(const std::function<void(const FlowRecord&)>& h) {
  on_flow_ = h;
  rdma_.set_flow_handler(h);
}

void Nic::return_credit(const Packet& p) {
  // The sink drains at line rate: the slot is free as soon as the tail is in.
  if (ingress_fc_ != FlowControl::credit) return;
  Packet credit;
  credit.kind = PacketKind::credit_update;
  credit.vl = p.vl;
  credit.credit_blocks = credit_blocks(p);
  credits_held_.give_back(p.vl, credit.credit_blocks);
  tlm::tlm_phase phase = CREDIT_RETURN;
  sc_time delay = credit_return_delay_;
  upstream_(credit, phase, delay);
}

std::uint64_t Nic::credit_blocks(const Packet& p) const {
  return (p.frame_bytes + credit_block_bytes_ - 1) / credit_block_bytes_;
}

std::uint64_t Nic::wire_extra(const hw::PhyTiming& link) {
  return link.wire_bytes(0) - link.frame_bytes(0);
}

}  // namespace fabricsim::tlm_fabric
