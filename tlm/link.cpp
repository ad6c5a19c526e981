#include "tlm/link.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "hw/seed.h"
#include "tlm/sim_time.h"
#include "tlm/wake_queue.h"

namespace fabricsim::tlm_fabric {

const hw::EnumNames<FlowControl>& flow_control_names() {
  static const hw::EnumNames<FlowControl> names{
      {FlowControl::credit, "credit"}, {FlowControl::pfc, "pfc"}, {FlowControl::none, "none"}};
  return names;
}

std::string_view to_string(FlowControl f) { return hw::name_of(flow_control_names(), f); }

const hw::ParamBlock& link_params() {
  using hw::ParamType;
  static const hw::ParamBlock block = [] {
    hw::ParamBlock b{"link", "every cable of the fabric (topology.host_link, fabric_link and links[i] override the PHY keys)", {}};
    b.params.push_back({"framing", ParamType::name, "", "roce_v2", "", "", hw::names_of(hw::framing_names()), "",
                        "per-packet overhead, see below; also picks the default `switch.egress_scheduler` and whether "
                        "ECN marks CE or FECN"});
    const auto& phy = hw::phy_params().params;
    b.params.insert(b.params.end(), phy.begin(), phy.end());
    b.params.push_back({"flow_control", ParamType::name, "", "credit", "", "", hw::names_of(flow_control_names()), "",
                        "link-level flow control on every link, see below"});
    b.params.push_back({"flow_control_bytes", ParamType::size, "", "8B", "1B", "1KiB", {}, "",
                        "size of a credit packet; sets the credit's reverse-path serialization delay"});
    b.params.push_back({"pfc_response_delay", ParamType::time, "", "100ns", "0s", "100us", {}, "",
                        "`pfc` only: time the transmitter takes to act on a received PAUSE"});
    b.params.push_back({"credit_block", ParamType::size, "", "64B", "1B", "4KiB", {}, "",
                        "credit granularity of switch and NIC receive buffers (IB: 64 B)"});
    b.params.push_back({"credit_manager_impl", ParamType::name, "", "tlm", "", "", hw::names_of(allocator_impl_names()), "",
                        "credit accounting of every link transmitter (switch output ports and NICs): `tlm` the hw "
                        "core, `rtl` the Verilated twin rtl/credit_manager.sv, `lockstep` both compared every edge "
                        "(docs/cosim.md)"});
    b.params.push_back({"credit_manager_rtl_variant", ParamType::text, "", "credit_manager", "", "", {}, "",
                        "registered RTL credit manager model used by `rtl` and `lockstep` (rtl/models/)"});
    b.params.push_back({"drop_rate", ParamType::number, "", "0", "0", "1", {}, "",
                        "probability that a packet is corrupted on a link direction, independent of its length"});
    b.params.push_back({"ber", ParamType::number, "", "0", "0", "0.5", {}, "",
                        "bit error rate after FEC: a frame of n bits is corrupted with probability 1 - (1 - ber)^n"});
    return b;
  }();
  return block;
}

sc_core::sc_time to_sc(hw::Time t) {
  // The resolution is fixed for the whole process once a time has been made.
  static const sc_core::sc_time tick = sc_core::sc_get_time_resolution();
  static const double res = tick.to_seconds();
  return tick * std::llround(t.in_seconds() / res);
}

Link::Link(sc_core::sc_module_name name, const LinkParams& params)
    : sc_module(name),
      tx("tx"),
      rx("rx"),
      params_(params),
      timing_(params.phy),
      recent_frames_(0, frame_of(0)),
      rng_(params.seed) {
  if (!(params.drop_rate >= 0 && params.drop_rate <= 1) || !(params.ber >= 0 && params.ber < 1))
    throw std::invalid_argument(std::string(this->name()) + ": drop_rate must be in 0..1 and ber in [0, 1)");
  tx.register_fw(this, &Link::forward);
  rx.register_bw(this, &Link::backward);
  const hw::Time wire = timing_.propagation() + timing_.fec_latency();
  reverse_delay_ = to_sc(timing_.serialization(params_.flow_control_bytes) + wire);
  pause_delay_ = to_sc(timing_.serialization(params_.pause_frame_bytes) + wire + params_.pfc_response_delay);
  bit_errors_ = params_.drop_rate > 0 || params_.ber > 0;
}

void Link::end_of_elaboration() {
  receiver_ = FabricCall::to_other_end(rx.operator->());
  transmitter_ = FabricCall::to_other_end(tx.operator->());
}

Link::Frame Link::frame_of(std::uint32_t payload) const {
  const std::uint64_t bytes = timing_.frame_bytes(payload);
  const hw::Time time = timing_.serialization(hw::framing_overhead(timing_.params().framing).preamble_bytes + bytes);
  return {bytes, to_sc(time), to_sc(timing_.header_delay(payload)), to_sc(timing_.tail_delay(payload)),
          to_sc(timing_.occupancy(payload))};
}

tlm::tlm_sync_enum Link::forward(int, Packet& p, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  // `delay` is when the first bit leaves the transmitter, relative to now.
  const sc_core::sc_time start = delay;
  const Frame times = frame(p.payload_bytes);  // a copy: the receiver asks this link too
  const sc_core::sc_time tail = start + times.tail;
  const sc_core::sc_time now = sim_now();
  p.header_at = now + start + times.header;
  p.tail_at = now + tail;
  p.frame_bytes = static_cast<std::uint32_t>(times.bytes);
  // Bit errors: the receiver's CRC check will drop a corrupted frame.
  p.corrupted = false;
  if (bit_errors_) {
    const double bits = 8.0 * static_cast<double>(times.bytes);
    const double loss = params_.drop_rate + (1 - params_.drop_rate) * -std::expm1(bits * std::log1p(-params_.ber));
    p.corrupted = hw::unit_interval(rng_()) < loss;
    if (p.corrupted) ++counters_.corrupted;
  }
  if (forward_crosses_lanes_ && WakeQueue::instance().in_window()) defer_forward(p, tail);
  else deliver(p, tail);

  const sc_core::sc_time busy = times.busy;
  ++counters_.packets;
  counters_.payload_bytes += p.payload_bytes;
  counters_.busy += busy;
  phase = tlm::END_REQ;
  delay = start + busy;
  return tlm::TLM_UPDATED;
}

void Link::deliver(Packet& p, sc_core::sc_time tail) {
  tlm::tlm_phase ph = END_TAIL;
  receiver_(p, ph, tail);
}

tlm::tlm_sync_enum Link::backward(int, Packet& p, tlm::tlm_phase& phase, sc_core::sc_time& delay) {
  // A PAUSE acts once the frame is in and the transmitter has reacted.
  sc_core::sc_time d = delay + (phase == PFC_PAUSE ? pause_delay_ : reverse_delay_);
  if (backward_crosses_lanes_ && WakeQueue::instance().in_window()) defer_backward(p, phase, d);
  else transmitter_(p, phase, d);
  return tlm::TLM_ACCEPTED;
}

void Link::set_lanes(int transmitter, int receiver, PacketPool& pool) {
  tx_lane_ = transmitter;
  rx_lane_ = receiver;
  forward_crosses_lanes_ = backward_crosses_lanes_ = transmitter != receiver;
  if (!forward_crosses_lanes_ || pool_) return;
  pool_ = &pool;
  WakeQueue& queue = WakeQueue::instance();
  forward_receiver_ = queue.add_receiver([this](const unsigned char* bytes) { receive_forward(bytes); });
  backward_receiver_ = queue.add_receiver([this](const unsigned char* bytes) { receive_backward(bytes); });
}

void Link::skip_lanes() { WakeQueue::instance().skip_receivers(2); }  // forward and backward

// A packet handed to the receiver's lane: it hears of it before its next window, as of
// the time sent (the header is in after this window).
struct Link::Forward {
  Link* link;
  Packet* packet;
  sc_core::sc_time::value_type tail;
  void operator()() const { link->deliver(*packet, from_ticks(tail)); }
  // The packet as it is at the window's end (with its latency breakdown, if kept); the
  // receiver's lane takes a copy from the pool.
  void pack(WakeQueue::Bytes& out) const {
    WakeQueue::put(out, tail);
    const auto* b = reinterpret_cast<const unsigned char*>(packet);
    out.insert(out.end(), b, b + link->packet_bytes());
    link->pool_->release(packet);
  }
};

void Link::receive_forward(const unsigned char* bytes) {
  sc_core::sc_time::value_type tail;
  bytes = WakeQueue::get(bytes, tail);
  Packet* p = pool_->acquire();
  std::memcpy(static_cast<void*>(p), bytes, packet_bytes());
  deliver(*p, from_ticks(tail));
}

std::size_t Link::packet_bytes() const {
  return pool_->keeps_breakdowns() ? sizeof(PacketWithBreakdown) : sizeof(Packet);
}

// A credit return or PAUSE frame handed to the transmitter's lane: what the transmitter
// reads of it (Switch, Nic::egress_bw), a copy.
struct Link::Backward {
  Link* link;
  sc_core::sc_time::value_type delay;
  std::uint64_t blocks;
  unsigned int phase;
  std::uint16_t quanta;
  std::uint8_t vl;
  PacketKind kind;
  void operator()() const {
    Packet frame;
    frame.kind = kind;
    frame.vl = vl;
    frame.pause_quanta = quanta;
    frame.credit_blocks = blocks;
    tlm::tlm_phase phase_back(phase);
    sc_core::sc_time at = from_ticks(delay);
    link->transmitter_(frame, phase_back, at);
  }
  void pack(WakeQueue::Bytes& out) const {
    WakeQueue::put(out, delay);
    WakeQueue::put(out, blocks);
    WakeQueue::put(out, phase);
    WakeQueue::put(out, quanta);
    WakeQueue::put(out, vl);
    WakeQueue::put(out, kind);
  }
};

void Link::receive_backward(const unsigned char* bytes) {
  Backward b{this, 0, 0, 0, 0, 0, PacketKind::data};
  bytes = WakeQueue::get(bytes, b.delay);
  bytes = WakeQueue::get(bytes, b.blocks);
  bytes = WakeQueue::get(bytes, b.phase);
  bytes = WakeQueue::get(bytes, b.quanta);
  bytes = WakeQueue::get(bytes, b.vl);
  WakeQueue::get(bytes, b.kind);
  b();
}

// Out of line: the calls within a lane, nearly all of them, keep their short path.
void Link::defer_forward(Packet& p, const sc_core::sc_time& tail) {
  WakeQueue::instance().defer(rx_lane_, sim_now(), p.header_at, forward_receiver_, Forward{this, &p, tail.value()});
}

void Link::defer_backward(const Packet& p, const tlm::tlm_phase& phase, const sc_core::sc_time& d) {
  const sc_core::sc_time now = sim_now();
  WakeQueue::instance().defer(tx_lane_, now, now + d, backward_receiver_,
                              Backward{this, d.value(), p.credit_blocks, phase, p.pause_quanta, p.vl, p.kind});
}

}  // namespace fabricsim::tlm_fabric
