// Transmit side of a port (switch egress or NIC): the transmitter's view of
// its wire (busy until the previous packet's gap has gone out) and of the
// receiver's buffer: per-VL link credits (credit flow control) or per-priority
// PFC pause state (pfc), or nothing (lossy).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>

#include "hw/credit.h"
#include "hw/phy.h"
#include "tlm/fabric_protocol.h"
#include "tlm/fabric_trace.h"
#include "tlm/fifo.h"
#include "tlm/link.h"
#include "tlm/rtl_credit_manager.h"

namespace fabricsim::tlm_fabric {

using InitiatorSocket = tlm::tlm_initiator_socket<kSocketWidth, fabric_protocol_types>;
using TargetSocket = tlm::tlm_target_socket<kSocketWidth, fabric_protocol_types>;

class TxPort {
 public:
  /// Binds the port to its link; `buffer_per_vl_bytes` is the receiver's buffer per VL (credit mode).
  /// `hierarchy` names the port (e.g. fabric.sw0.port3): its credit manager block, when the
  /// link runs one (link.credit_manager_impl rtl | lockstep), is `hierarchy`.credit_manager.
  void attach(InitiatorSocket* socket, const Link* link, int vls, std::uint32_t credit_block_bytes,
              std::uint64_t buffer_per_vl_bytes, const std::string& hierarchy);
  bool attached() const { return link_ != nullptr; }
  /// The credit manager block's names, when the link runs one (switch.rtl_trace_scope).
  std::optional<RtlBlockName> rtl_block() const { return cm_ ? cm_->rtl_block() : std::nullopt; }
  /// Closes the credit manager block's waveform, if it records one, and says what it wrote.
  std::optional<RtlWaveformRecord> finish_waveform() { return cm_ ? cm_->finish_waveform() : std::nullopt; }
  /// Once the sockets are bound (the owner's end_of_elaboration): the receiver's interface,
  /// so each send calls it without reading the socket (tlm/fabric_socket.h FabricCall).
  void resolve_receiver() {
    if (socket_) receiver_ = FabricCall::to_other_end(socket_->operator->());
  }

  const hw::PhyTiming& link() const { return *timing_; }
  FlowControl flow_control() const { return fc_; }
  int vls() const { return vls_; }
  /// Time a frame of this payload takes on the wire, preamble included, gap excluded
  /// (first bit out -> last bit out).
  const sc_core::sc_time& frame_time(std::uint32_t payload_bytes) const { return link_->frame(payload_bytes).time; }
  /// When the transmitter may put the next first bit on the wire.
  const sc_core::sc_time& busy_until() const { return busy_until_; }
  /// Flow control lets a packet of this payload on `vl` start at `now`.
  bool can_send(int vl, std::uint32_t payload_bytes, const sc_core::sc_time& now) const {
    return can_send_blocks(vl, credit_blocks(payload_bytes), now);
  }
  /// Credit blocks a packet of this payload takes from the receiver's buffer (0 without
  /// credit flow control, or not attached): a switch keeps it with each head it asks
  /// can_send_blocks about.
  std::uint64_t credit_blocks(std::uint32_t payload_bytes) const {
    if (fc_ != FlowControl::credit || !link_) return 0;
    // The link's frame bytes from the framing kept here: a switch asks for every new
    // head, where the link's own line is cold.
    return credits_.front().blocks_for(hw::frame_bytes(frame_overhead_, payload_bytes, min_frame_));
  }
  /// can_send for a packet of `blocks` (credit_blocks()).
  bool can_send_blocks(int vl, std::uint64_t blocks, const sc_core::sc_time& now) const {
    switch (fc_) {
      case FlowControl::credit: return cm_ ? cm_->can_send(vl, blocks) : blocks <= credits_[vl].available();
      case FlowControl::pfc: return !(vl_[vl].pause.from <= now && now < vl_[vl].pause.until);
      case FlowControl::none: return true;
    }
    return true;
  }
  /// Records this transmitter's credits, PAUSE state and cable hops on `track` of `trace`.
  void set_trace(FabricTrace* trace, int track);
  /// Sends `p` (on p.vl) with its first bit at now + start_delay; takes credits, marks busy.
  void send(Packet& p, const sc_core::sc_time& start_delay);

  /// Credit flow control: `blocks` for `vl` take effect at `at`.
  void credit_returned(const sc_core::sc_time& at, int vl, std::uint64_t blocks);
  /// PFC: a PAUSE for priority `vl` arriving at `at` (quanta 0 = resume).
  void pause_received(const sc_core::sc_time& at, int vl, std::uint16_t quanta);
  /// Applies credit returns and pause changes due at or before `now`.
  void update(const sc_core::sc_time& now) {
    // Inline: a switch asks on every wake, most often with nothing due yet.
    if (paused_ever_ || next_credit_at_ <= now) apply(now);
  }
  /// Nothing to apply, now or later: no credit return pending and never paused. Reads the
  /// first cache line only (a switch asks for every output with returns on every wake).
  bool settled() const {
    // sc_max_time()'s value, compared without the call into libsystemc.
    return next_credit_at_.value() == std::numeric_limits<sc_core::sc_time::value_type>::max() && !paused_ever_;
  }
  /// Earliest future time at which update() could unblock something; false if none.
  /// `credit_returns` false leaves pending credit returns out (pause changes only).
  bool next_change(const sc_core::sc_time& now, sc_core::sc_time& at, bool credit_returns = true) const;
  /// Time `vl` spent paused up to `now` [s].
  double paused_seconds(int vl, const sc_core::sc_time& now) const;
  const hw::CreditCounter& credits(int vl) const { return credits_.at(vl); }
  /// Credit blocks for `vl` returned by the receiver but not yet in effect (on the reverse wire).
  std::uint64_t returning_blocks(int vl) const;
  /// A credit return or a PFC resume is on the reverse wire, reaching the transmitter after
  /// `now`: the transmitter will be able to send again (the progress watchdog).
  bool unblocking_after(const sc_core::sc_time& now) const;

 private:
  struct PendingCredit {
    sc_core::sc_time at;
    int vl;
    std::uint64_t blocks;
  };
  struct PauseWindow {
    sc_core::sc_time from, until;
  };
  struct VlState {  // PFC
    PauseWindow pause;                 // current window; empty when from == until
    Fifo<PauseWindow> incoming;        // received, not yet in effect (monotone)
    double paused_s = 0;               // closed pause time
  };
  void close_window(VlState& s, const sc_core::sc_time& t);
  void apply(const sc_core::sc_time& now);  // update() with something possibly due
  void trace_sent(const Packet& p, const sc_core::sc_time& start_delay);

  // What a switch's per-wake walks read of an output first (OutputPort keeps them in
  // its first cache line): the wire, attachment (the link), flow control, the next
  // credit return.
  sc_core::sc_time busy_until_ = sc_core::SC_ZERO_TIME;
  // pending_.front().at, or the end of time when none (no return is due at the end of
  // time): update() and settled() read it beside busy_until_ instead of the queue.
  sc_core::sc_time next_credit_at_ = sc_core::sc_max_time();
  const Link* link_ = nullptr;
  FlowControl fc_ = FlowControl::credit;
  bool paused_ever_ = false;  // a PAUSE arrived once: only then are the per-VL windows scanned
  // credit_blocks(): the link's least frame and its header and trailer bytes (in the
  // bytes left before the next field's alignment).
  std::uint16_t min_frame_ = 0;
  std::uint32_t frame_overhead_ = 0;
  // Then what a send and a credit return read: the receiver, the returns on their way
  // and the credits per VL in place, not in allocations of their own (at thousands of
  // ports each is a cache miss per packet).
  FabricCall receiver_;  // socket_'s target, once resolved
  Fifo<PendingCredit> pending_;  // credit returns not yet in effect, in order of `at`
  // The RTL or lockstep credit manager, when the link runs one: it answers can_send and
  // sees every consume and restore; credits_ follow the same calls (statistics, checks).
  std::unique_ptr<CreditManagerBlock> cm_;
  int vls_ = 0;
  std::array<hw::CreditCounter, hw::kMaxDataVls> credits_;  // per VL (credit flow control)
  InitiatorSocket* socket_ = nullptr;
  const hw::PhyTiming* timing_ = nullptr;
  double quantum_s_ = 0;  // 512 bit times at the link's data rate
  std::vector<VlState> vl_;  // per VL (PFC)
  FabricTrace* trace_ = nullptr;  // null: not traced
  int trace_track_ = -1;
};

}  // namespace fabricsim::tlm_fabric
