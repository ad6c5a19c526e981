// One direction of a cable between a transmitter and a receiver, with the
// reverse flow-control channel. Turns the first-bit time of a packet into its
// header and tail times at the receiver using hw::PhyTiming; adds the reverse
// path delay (flow-control packet serialization, propagation, FEC) to credits.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>

#include <systemc>
#include <tlm>

#include "hw/param_spec.h"
#include "hw/phy.h"
#include "tlm/fabric_protocol.h"
#include "tlm/fabric_socket.h"
#include "tlm/packet_pool.h"
#include "tlm/recent.h"
#include "tlm/rtl_allocator.h"
#include "tlm/waveform_options.h"

namespace fabricsim::tlm_fabric {

/// Converts a hw::Time to sc_time at the kernel resolution (rounded to nearest).
sc_core::sc_time to_sc(hw::Time t);

/// Link-level flow control, agreed by both ends of a link. A byte: a transmit port keeps it
/// in its first cache line beside what its framing needs (TxPort).
enum class FlowControl : std::uint8_t {
  credit,  ///< IB-style credits per VL in blocks: lossless by construction
  pfc,     ///< IEEE 802.1Qbb priority flow control: XOFF/XON per priority, drops beyond headroom
  none,    ///< lossy: the receiver drops what it cannot buffer
};
/// The configuration names of FlowControl (link.flow_control).
const hw::EnumNames<FlowControl>& flow_control_names();
std::string_view to_string(FlowControl f);

/// The keys of `link:`: framing, the PHY's (hw::phy_params()) and the link layer's.
const hw::ParamBlock& link_params();

/// Link-layer parameters on top of the PHY.
struct LinkParams {
  hw::PhyParams phy;                                  ///< lanes, rate, coding, FEC, cable, framing
  FlowControl flow_control = FlowControl::credit;     ///< link-level flow control
  std::uint32_t flow_control_bytes = 8;               ///< credit packet size on the reverse wire [B]
  std::uint32_t pause_frame_bytes = 84;               ///< PFC frame on the wire: 64 B MAC control + preamble + IFG [B]
  hw::Time pfc_response_delay = hw::Time::ns(100);    ///< transmitter reaction to a received PAUSE [s]
  double drop_rate = 0;                               ///< probability a packet is corrupted on this link, 0..1
  double ber = 0;                                     ///< post-FEC bit error rate: corrupts a frame of n bits with 1-(1-ber)^n
  std::uint64_t seed = 1;                             ///< random stream of the error process (set per link by the builder)
  AllocatorImpl credit_manager_impl = AllocatorImpl::tlm;     ///< transmitters' credit accounting: hw core, RTL twin or both
  std::string credit_manager_rtl_variant = "credit_manager";  ///< RTL model of it (rtl_credit_manager_models())
  WaveformOptions waveform;                                   ///< waveforms of the RTL credit managers (switch.rtl_trace*); dir empty: none
};

/// Bytes moved and busy time, for utilisation.
struct LinkCounters {
  std::uint64_t packets = 0;        ///< data packets carried
  std::uint64_t payload_bytes = 0;  ///< payload bytes carried
  std::uint64_t corrupted = 0;      ///< packets hit by a bit error (dropped by the receiver's CRC check)
  sc_core::sc_time busy;            ///< sum of occupancy (wire time incl. gaps)
};

class Link : public sc_core::sc_module {
 public:
  FabricTargetSocket<Link> tx;       ///< from the transmitter
  FabricInitiatorSocket<Link> rx;  ///< to the receiver

  Link(sc_core::sc_module_name name, const LinkParams& params);

  const hw::PhyTiming& timing() const { return timing_; }
  const LinkParams& params() const { return params_; }
  const LinkCounters& counters() const { return counters_; }
  /// Whether frames can arrive corrupted (drop_rate or ber set): the receiver drops them.
  bool bit_errors() const { return bit_errors_; }

  /// A frame of one payload size on this link, as kernel times.
  struct Frame {
    std::uint64_t bytes = 0;  ///< header + payload + trailer (what credits count)
    sc_core::sc_time time;    ///< first bit out -> last bit out, preamble included, gap excluded
    sc_core::sc_time header, tail, busy;  ///< first bit out -> header in, -> tail in; wire occupancy
  };
  /// The frame of `payload` bytes (per-packet arithmetic kept for the sizes asked last:
  /// the transmitter and the link ask for the same sizes in turn).
  const Frame& frame(std::uint32_t payload) const {
    return recent_frames_.get(payload, [this](std::uint32_t b) { return frame_of(b); });
  }
  /// frame() computed afresh, for a reader in another lane than the link's.
  Frame frame_of(std::uint32_t payload) const;
  /// Counts `packets` frames of `payload_bytes` in all, occupying the wire `busy`, as
  /// carried: the packets fast-forward skips (between windows, or in the link's lane).
  void count_skipped(std::uint64_t packets, std::uint64_t payload_bytes, const sc_core::sc_time& busy) {
    counters_.packets += packets;
    counters_.payload_bytes += payload_bytes;
    counters_.busy += busy;
  }
  /// The wake-queue lanes of the transmitter and the receiver: where they differ, in a
  /// parallel window the link defers what it hands across (WakeQueue::defer), as bytes
  /// where the lanes are in different processes: a packet leaves `pool` at its window's
  /// end and comes out of it again at the receiver's lane.
  void set_lanes(int transmitter, int receiver, PacketPool& pool);
  /// In place of a link between lanes that another process makes and this one does not:
  /// skips the receiver handles its set_lanes takes (WakeQueue::skip_receivers).
  static void skip_lanes();
  /// The least time from a transmitter's call to the receiver acting on it: the first
  /// bit out to the header in (the transmitter adds its own least start delay).
  sc_core::sc_time least_forward_delay() const { return frame_of(0).header; }
  /// The same backward: a credit return the receiver sends at least `credit_delay` after
  /// its call, or with PFC a PAUSE frame it sends at once, acting at the transmitter.
  sc_core::sc_time least_backward_delay(const sc_core::sc_time& credit_delay) const {
    const sc_core::sc_time credit = credit_delay + reverse_delay_;
    return params_.flow_control == FlowControl::pfc ? std::min(credit, pause_delay_) : credit;
  }

 private:
  tlm::tlm_sync_enum forward(int, Packet& p, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum backward(int, Packet& p, tlm::tlm_phase& phase, sc_core::sc_time& delay);

  void deliver(Packet& p, sc_core::sc_time tail);  // to the receiver: END_TAIL
  // The calls deferred across lanes, packable (WakeQueue::defer with a receiver).
  struct Forward;
  struct Backward;
  void receive_forward(const unsigned char* bytes);
  void receive_backward(const unsigned char* bytes);
  std::size_t packet_bytes() const;  // what a packet crossing processes carries: its pool slot
  PacketPool* pool_ = nullptr;           // with ends in different lanes (set_lanes)
  int forward_receiver_ = -1, backward_receiver_ = -1;  // WakeQueue::add_receiver
  // A parallel window: to the other lane's receiver, transmitter, when the window ends.
  [[gnu::noinline]] void defer_forward(Packet& p, const sc_core::sc_time& tail);
  [[gnu::noinline]] void defer_backward(const Packet& p, const tlm::tlm_phase& phase, const sc_core::sc_time& d);
  void end_of_elaboration() override;

  LinkParams params_;
  hw::PhyTiming timing_;
  // What every packet and credit uses, in as few cache lines as they fit (a fabric of
  // thousands of links misses the cache on each line a packet touches): a packet's
  // forward() reads the first three (the transmitter read the frame just before), its
  // credit's backward() the fourth. The receiver's call is not in the line forward()
  // writes (the counters): where the ends are in different lanes, the receiver's lane
  // reads it to make the deferred call, and the line would pass between the two threads
  // on every packet.
  alignas(64) mutable RecentTwo<std::uint32_t, Frame> recent_frames_;  // frame() of the payload sizes used last
  FabricCall receiver_;     // rx's target, once bound
  LinkCounters counters_;
  bool bit_errors_ = false;  // drop_rate or ber set
  bool forward_crosses_lanes_ = false;  // the ends are in different lanes (set_lanes), for forward()

  alignas(64) FabricCall transmitter_;  // tx's initiator, once bound
  sc_core::sc_time reverse_delay_;
  sc_core::sc_time pause_delay_;
  // The same as forward_crosses_lanes_, written only while the fabric is built, for
  // backward(): beside what it reads, not in the line forward() writes (the two ends'
  // lanes' threads would pass that line back and forth).
  bool backward_crosses_lanes_ = false;
  int tx_lane_ = 0, rx_lane_ = 0;
  std::mt19937_64 rng_;
};

}  // namespace fabricsim::tlm_fabric
