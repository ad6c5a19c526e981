// Endpoint NIC: send queues per VL of posted messages segmented into MTU
// packets, sent back to back as the link and its flow control (credits or PFC)
// allow, round robin over VLs; a receive side that sinks packets at line rate,
// returns credits and records latency. post() queues on the message's VL; a wake
// applies credits and pauses, then sends the next segment flow control clears; an
// END_TAIL arrival is handled at its tail time (docs/nic.md, "Pipeline").
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <systemc>
#include <tlm>

#include "hw/arbiter.h"
#include "hw/units.h"
#include "sim/stats.h"
#include "tlm/fabric_protocol.h"
#include "tlm/fabric_socket.h"
#include "tlm/fabric_trace.h"
#include "tlm/fifo.h"
#include "tlm/latency_breakdown.h"
#include "tlm/packet_log.h"
#include "tlm/packet_pool.h"
#include "tlm/psn_table.h"
#include "tlm/rtl_arbiter.h"
#include "tlm/rdma_engine.h"
#include "tlm/tx_port.h"
#include "tlm/wake_queue.h"
#include "tlm/waveform_options.h"

namespace fabricsim::tlm_fabric {

/// Parameters of a NIC. Every field has a default and a unit.
struct NicParams {
  hw::Size mtu = hw::Size::kib(4);                    ///< largest payload per packet [B], 64..9216
  hw::Size rx_buffer = hw::Size::kib(256);            ///< receive buffer backing link credits [B]
  std::uint32_t credit_block_bytes = 64;              ///< credit granularity [B]
  hw::Time credit_return_latency = hw::Time::ns(10);  ///< buffer freed -> credit packet leaves [s]
  TransportParams transport;                          ///< reliable transport of RDMA QPs
  HostParams host;                                    ///< PCIe and memory of the host side
  CcParams cc;                                        ///< end-host congestion control of RDMA QPs
  AllocatorImpl vl_arbiter_impl = AllocatorImpl::tlm; ///< VL arbiter as hw/ core, RTL twin, or both compared (tlm/rtl_arbiter.h)
  std::string vl_arbiter_rtl_variant = "rr_arbiter";  ///< RTL top of the VL arbiter (rtl_arbiter_models())
  WaveformOptions waveform;                           ///< waveform of an RTL VL arbiter (switch.rtl_trace*)

  /// Throws std::invalid_argument naming the field when out of range.
  void validate() const;
};

/// The keys of `nic:` and of `nic.congestion_control:`.
const hw::ParamBlock& nic_params();
const hw::ParamBlock& cc_params();
/// `nic:` and its sections: transport, pcie, congestion_control (and its dcqcn, ib_cc),
/// in documentation order.
const std::vector<hw::ParamBlock>& nic_param_blocks();

/// A message posted by the host: `bytes` to endpoint `dst` on flow `flow` at service level `sl`.
struct Message {
  int dst = 0;
  std::uint32_t flow = 0;
  std::uint64_t bytes = 0;
  int sl = 0;        ///< IB service level / Ethernet priority
};

class Nic : public sc_core::sc_module {
 public:
  FabricInitiatorSocket<Nic> tx;  ///< to the egress link
  FabricTargetSocket<Nic> rx;     ///< from the ingress link

  /// `measure_from`: packets created earlier are warm-up and stay out of latency/throughput stats.
  Nic(sc_core::sc_module_name name, int id, const NicParams& params, PacketPool& pool,
      stats::Registry& stats, sc_core::sc_time measure_from);

  /// Binds the transmit side; `sl_to_vl` maps a message's SL to the link VL.
  void attach_egress(const Link* link, int vls, std::vector<int> sl_to_vl, std::uint64_t downstream_buffer_per_vl);
  void attach_ingress(const Link* link);
  /// Host posts a message now.
  void post(const Message& m);
  /// Called for every message (raw, RDMA WRITE or SEND) fully delivered here (flow completion time).
  void set_flow_handler(const std::function<void(const FlowRecord&)>& h);
  /// A message delivered here without its packets (fast-forward), as the flow handler sees one.
  void record_flow(const FlowRecord& f) const {
    if (on_flow_) on_flow_(f);
  }
  /// Fast-forward: a WRITE of `bytes` on QP `qpn` this NIC sends without its packets
  /// (posted at `now`, in its lane): its data packets counted as sent, its ACKs as
  /// received, the request as completed.
  void count_skipped_send(std::uint32_t qpn, std::uint64_t bytes, const sc_core::sc_time& now);
  /// Fast-forward: a message of `bytes` delivered here without its packets (landing at
  /// `now`, in its lane): its data packets counted as received, its ACKs as sent.
  void count_skipped_receive(std::uint64_t bytes, const sc_core::sc_time& now);
  /// One row per delivered packet into `log` (nullptr: off).
  void set_packet_log(PacketLog* log) { packet_log_ = log; }
  /// Per-hop latency breakdown (`output.latency_breakdown`; the pool keeps breakdowns):
  /// each packet sent starts its parts, each received ends them (they must add up to its
  /// latency) and, created after warm-up, sums them.
  void keep_latency_breakdown();
  /// The parts of the packets received after warm-up, summed.
  const LatencySums& latency_sums() const { return latency_sums_; }
  /// Records the NIC's transmitter (credits, PAUSE, hops on its cable) and the packets it
  /// delivers in `trace` (output.trace), on a track named as the NIC.
  void set_trace(FabricTrace* trace);

  int id() const { return id_; }
  const NicParams& params() const { return params_; }
  /// Times the NIC's processes woke: the simulator's effort, reported outside the model's statistics.
  std::uint64_t activations() const { return activations_; }
  /// Messages posted but not fully transmitted.
  std::size_t send_queue_depth() const;
  /// Time the transmitter spent paused by PFC on `vl` [s].
  double paused_seconds(int vl) const;
  /// The RDMA engine (queue pairs, verbs, transport, CC).
  RdmaEngine& rdma() { return rdma_; }
  /// Wakes the transmitter when the RDMA engine's work can first go (after posting work to it).
  void kick();
  /// Transmit side: credits per VL toward the switch (or peer NIC) buffer (invariants).
  const TxPort& egress_port() const { return port_; }
  /// The RTL blocks in use: the VL arbiter and the transmitter's credit manager.
  std::vector<RtlBlockName> rtl_blocks() const;
  /// Closes the waveforms of the RTL blocks that record one (the run must be over).
  std::vector<RtlWaveformRecord> finish_waveforms();
  /// Credit blocks of the receive buffer not yet returned upstream, per VL (invariants).
  const hw::CreditLedger& ingress_credits() const { return credits_held_; }

 private:
  struct Pending {
    Message msg;
    std::uint64_t message_id;
    std::uint64_t remaining;
    sc_core::sc_time created;
  };
  int vl_of(int sl) const;
  tlm::tlm_sync_enum egress_bw(int, Packet& p, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  tlm::tlm_sync_enum ingress(int, Packet& p, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  void on_tx();
  void end_of_elaboration() override;
  void on_rx();
  bool receive_due(const sc_core::sc_time& now);
  void deliver(Packet& p);
  void record(Packet& p, const sc_core::sc_time& now);
  void account_delivery(Packet& p, const sc_core::sc_time& now);
  void log_packet(const Packet& p, const sc_core::sc_time& now);  ///< one packets.csv row
  void return_credit(const Packet& p);
  std::uint64_t credit_blocks(const Packet& p) const;
  /// Bytes a packet takes on `link`'s wire beyond its frame (Packet::frame_bytes): preamble and gap.
  static std::uint64_t wire_extra(const hw::PhyTiming& link);
  Packet* next_raw_packet(const sc_core::sc_time& now);
  /// Wakes the transmitter at `t`, or when the wire is free if that is later (a wake
  /// with the wire busy could only wait for it).
  void wake_tx_at(const sc_core::sc_time& t);
  /// The link's flow control lets a segment of `payload` bytes start on `vl` now (notes a refusal).
  bool can_send(int vl, std::uint32_t payload, const sc_core::sc_time& now);
  /// A flow-control change (credit return, PAUSE window) can let the transmitter send
  /// something it could not at its last look.
  bool flow_control_may_wake() const;

  // What a packet sent or received reads of the NIC, side by side at the front (at 2,048
  // NICs each line a packet touches is a cache miss): receive queue and wake, the credit
  // return, the figures kept beside each packet instead of in the links.
  Fifo<Packet*> arrivals_;
  FabricCall upstream_;                           // rx's transmitter, once bound
  sc_core::sc_time measure_from_;
  sc_core::sc_time credit_return_delay_;          // params_.credit_return_latency as a kernel time
  std::uint64_t rx_wire_extra_ = 0;               // wire_extra() of the ingress and egress links, kept beside what
  std::uint64_t tx_wire_extra_ = 0;               // each packet reads instead of in the link (thousands of links)
  PacketSource packets_;                          // the pool, ids of this endpoint's (before rdma_, which sends from it)
  PacketLog* packet_log_ = nullptr;
  bool breakdown_ = false;                        // keep_latency_breakdown
  FabricTrace* trace_ = nullptr;  // null: not traced
  int trace_track_ = -1;
  int id_;
  std::uint32_t credit_block_bytes_;              // params_.credit_block_bytes
  FlowControl ingress_fc_ = FlowControl::credit;  // ingress_link_'s flow control
  bool ecn_capable_ = false;                      // egress framing is RoCEv2 / Ethernet: packets leave ECT(0)
  bool credit_blocked_ = false;                   // the last transmit decision was held back by flow control
  std::uint32_t queued_messages_ = 0;             // raw messages posted, not fully sent (send_queues_, send_queue_depth())
  std::uint64_t activations_ = 0;                 // wake-ups (activations()): written on every one
  WakeEvent tx_wake_{[this] { on_tx(); }, false, this};        // (registered before rx_wake_: the order of same-time wakes)
  WakeEvent rx_wake_{[this] { on_rx(); }, false, this};
  int sls_mapped_ = 0;                            // SLs in sl_to_vl_; others go to SL mod VLs
  std::array<std::uint8_t, 16> sl_to_vl_{};       // SL 0..15 -> VL, in place (read for every packet sent)
  // The statistics every packet adds to, in place (Registry::attach): a registry's
  // counters would be a line more per packet sent and received.
  stats::Counter tx_packets_;
  stats::Counter tx_bytes_;
  stats::Counter tx_window_wire_bytes_;
  stats::Counter rx_packets_;
  stats::Counter rx_bytes_;
  stats::Counter rx_window_bytes_;
  stats::Counter rx_window_wire_bytes_;
  stats::Distribution& network_latency_;
  LatencySums latency_sums_;                      // keep_latency_breakdown
  hw::CreditLedger credits_held_;                 // credit ingress: blocks lent to the upstream
  TxPort port_;
  std::vector<Fifo<Pending>> send_queues_;       // per VL

  NicParams params_;
  const Link* ingress_link_ = nullptr;
  std::unique_ptr<hw::Arbiter> vl_arbiter_ = std::make_unique<hw::RoundRobinArbiter>(1);  // raw send queues, per VL (attach_egress)
  PsnTable next_psn_;      // per (destination, flow, SL), transmit
  PsnTable expected_psn_;  // per (src, flow, SL), receive
  /// Key of a raw packet stream whose order the receiver checks: (peer endpoint, flow, SL).
  static std::uint64_t order_key(int endpoint, std::uint32_t flow, int sl);
  std::unordered_map<std::uint64_t, std::uint64_t> rx_message_bytes_;  // raw message -> bytes in so far
  std::function<void(const FlowRecord&)> on_flow_;
  std::uint64_t next_message_ = 0;
  RdmaEngine rdma_;

  stats::Counter& messages_posted_;
  stats::Counter& rx_messages_;
  stats::Counter& out_of_order_;
  stats::Counter& crc_drops_;
  stats::Distribution& packet_latency_;
  stats::Distribution& message_latency_;
};

}  // namespace fabricsim::tlm_fabric
