// RDMA engine of a NIC: reliable-connected queue pairs with RDMA WRITE, READ
// and SEND; the host path over PCIe (doorbell, WQE fetch, payload DMA, receive
// DMA writes, CQEs); PSNs, coalesced ACKs, NAKs, go-back-N or selective repeat,
// retransmission timeout; end-host congestion control per QP
// (hw/congestion_control.h). Not an sc_module: the Nic owns it and calls it from
// its transmit (next_packet) and receive (receive) processes. docs/nic.md,
// "Pipeline", follows a work request from post() to its completion.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <systemc>

#include "hw/congestion_control.h"
#include "hw/pcie.h"
#include "hw/phy.h"
#include "sim/stats.h"
#include "tlm/dma_engine.h"
#include "tlm/fabric_protocol.h"
#include "tlm/fifo.h"
#include "tlm/index_set.h"
#include "tlm/min_tree.h"
#include "tlm/packet_pool.h"

namespace fabricsim::tlm_fabric {

class TxPort;

/// What the RDMA engine asks the transmit side while choosing a packet (RdmaEngine::next_packet).
class TxGate {
 public:
  /// The link VL of service level `sl`.
  virtual int vl_of(int sl) const = 0;
  /// The link's flow control lets a segment of `payload` bytes start on `vl` now.
  virtual bool can_send(int vl, std::uint32_t payload) = 0;

 protected:
  ~TxGate() = default;
};

/// Loss recovery of the reliable transport.
enum class RetransmitMode {
  go_back_n,         ///< the receiver drops out-of-order packets; the sender resends from the gap
  selective_repeat,  ///< the receiver keeps out-of-order packets; the sender resends only what is missing
};
std::string_view to_string(RetransmitMode m);
/// The configuration names of RetransmitMode (nic.transport.retransmit).
const hw::EnumNames<RetransmitMode>& retransmit_mode_names();

struct TransportParams {
  RetransmitMode mode = RetransmitMode::go_back_n;  ///< loss recovery
  int ack_every = 4;                                ///< coalescing: one ACK per this many packets (and per message end)
  hw::Time retransmit_timeout = hw::Time::us(100);  ///< no progress for this long: resend
  int window = 512;                                 ///< outstanding PSNs per QP
  hw::Time processing_latency = hw::Time::ns(100);  ///< NIC packet processing before a response leaves
  void validate() const;
};

/// The keys of `nic.transport:`.
const hw::ParamBlock& transport_params();

struct HostParams {
  hw::PcieParams pcie;                              ///< PCIe link of the NIC
  hw::MemoryTarget memory = hw::MemoryTarget::host; ///< buffers in host or GPU memory (GPUDirect RDMA)
  hw::Time poll_latency = hw::Time::ns(50);         ///< host sees a CQE / polled byte this long after it lands
  std::uint32_t wqe_bytes = 64;                     ///< work queue element fetched per WR [B]
  std::uint32_t cqe_bytes = 64;                     ///< completion queue element written per completion [B]
  std::uint32_t inline_threshold = 220;             ///< payloads up to this size travel inside the WQE (no payload DMA) [B]
  bool blueflame = true;                            ///< the host writes the WQE with the doorbell (no WQE fetch)
  /// Time from data's last byte at the NIC to the host seeing it in memory `m`: its write
  /// latency + polling, each rounded to kernel time as the RDMA and DMA engines keep them
  /// (no PCIe serialization; the in-network reduction's results use it as it is).
  sc_core::sc_time landing_delay(hw::MemoryTarget m) const;
  /// Least time from a completion to the host seeing it: the faster memory's landing delay.
  sc_core::sc_time least_completion_delay() const {
    return std::min(landing_delay(hw::MemoryTarget::host), landing_delay(hw::MemoryTarget::gpu));
  }
};

struct CcParams {
  hw::CcKind kind = hw::CcKind::none;               ///< congestion control scheme
  hw::DcqcnParams dcqcn;
  hw::IbCcParams ib;
};

enum class RdmaOpcode { write, read, send };
std::string_view to_string(RdmaOpcode o);

/// Payload of an ACK or NAK (the AETH) and of a CNP (its reserved field) [B].
constexpr std::uint32_t kAckPayloadBytes = 4;
constexpr std::uint32_t kCnpPayloadBytes = 16;

/// A work request posted by the host.
struct WorkRequest {
  RdmaOpcode opcode = RdmaOpcode::write;
  std::uint64_t bytes = 0;
  std::uint64_t wr_id = 0;
};

/// What the host learns: a requester completion (CQE) or, at the responder,
/// a SEND's CQE or the last byte of a WRITE landing in memory.
struct Completion {
  int qp = 0;
  std::uint64_t wr_id = 0;
  RdmaOpcode opcode = RdmaOpcode::write;
  std::uint64_t bytes = 0;
  bool requester = true;
  sc_core::sc_time posted;     ///< requester: post time; responder: first segment ready at the requester
  sc_core::sc_time visible;    ///< when the host sees it (CQE / data landed + poll latency)
};

/// One message (flow) fully delivered at its destination NIC: raw message, RDMA WRITE or SEND.
struct FlowRecord {
  int src = 0, dst = 0;         ///< endpoints
  std::uint64_t bytes = 0;      ///< message length
  std::uint32_t flow = 0;       ///< raw: the message's flow id; RDMA: the requester's QP number
  sc_core::sc_time start;       ///< first segment ready to leave the source NIC
  sc_core::sc_time end;         ///< last byte's tail arrived at the destination NIC (in order for RDMA)
};

/// Per-QP figures (qps.csv; results.json's per-endpoint summaries).
struct QpReport {
  int qpn, peer, peer_qpn, sl;
  std::uint64_t posted;  ///< requests (WRITE, SEND, READ) posted on it: 0 for a QP that only responds
  std::uint64_t acked_bytes, window_acked_bytes, retransmitted, timeouts, cnps_received;
  double rate_gbps;      ///< the rate its congestion control applies now to MTU-sized packets
};

/// A QP's congestion-control rate at a sample.
struct QpRate {
  int qpn;
  double gbps;
};

class RdmaEngine {
 public:
  RdmaEngine(const std::string& name, int endpoint, std::uint32_t mtu, const TransportParams& transport,
             const HostParams& host, const CcParams& cc, PacketSource& packets, stats::Registry& stats,
             sc_core::sc_time measure_from = sc_core::SC_ZERO_TIME);

  /// The NIC's egress link (line rate for CC, framing for the rate limiter).
  void attach(const hw::PhyTiming* link) { link_ = link; }
  /// New RC QP to `peer`'s QP `peer_qpn` on service level `sl`; returns the local QP number.
  int create_qp(int peer, int peer_qpn, int sl);
  /// Room for `more` QPs than it has, made at once (an all-to-all makes one per peer:
  /// without, the QP table is copied at each doubling).
  void reserve_qps(std::size_t more);
  /// Fixes the remote QP number once both ends exist.
  void connect(int qpn, int peer_qpn);
  /// Host posts a work request on `qpn` at `now`.
  void post(int qpn, const WorkRequest& wr, const sc_core::sc_time& now);
  void set_completion_handler(std::function<void(const Completion&)> h) { on_completion_ = std::move(h); }
  /// The least time from a completion handler's call to the completion's `visible` (a
  /// DMA write into memory, then the host's poll).
  sc_core::sc_time least_completion_delay() const { return host_.least_completion_delay(); }
  /// Called when a WRITE or SEND has fully arrived here as the responder (flow completion time).
  void set_flow_handler(std::function<void(const FlowRecord&)> h) { on_flow_ = std::move(h); }

  /// The next packet to transmit at `now`, or nullptr; `gate` is the transmit side's flow control.
  Packet* next_packet(const sc_core::sc_time& now, TxGate& gate);
  /// Earliest future time at which next_packet() could return something; false if none.
  bool next_wake(const sc_core::sc_time& now, sc_core::sc_time& at) const;
  /// Earliest time, `now` or later, at which next_packet() could return something (what is
  /// ready already counts as `now`); false if nothing is waiting to go and no timeout is
  /// armed. O(1): each QP's earliest time is kept in a MinTree.
  bool next_ready(const sc_core::sc_time& now, sc_core::sc_time& at) const;
  /// Handles an arrived transport packet (not released here). Returns whether it may
  /// have given next_packet() something new to send (a control packet, a READ response,
  /// a window opened for segments waiting, a retransmission, a rate change); then the
  /// transmitter must look.
  bool receive(const Packet& p, const sc_core::sc_time& now);

  std::vector<QpReport> report(const sc_core::sc_time& now);
  /// Fast-forward (the NIC's count_skipped_*): a WRITE of `bytes` on QP `qpn` acknowledged
  /// and completed without its packets, at `now`; ACKs sent for messages received so.
  void count_skipped_request(int qpn, std::uint64_t bytes, const sc_core::sc_time& now);
  void count_skipped_acks(std::uint64_t acks) { acks_sent_.add(acks); }
  std::uint32_t mtu() const { return mtu_; }
  /// The QP number at the peer of QP `qpn`.
  int peer_qpn(int qpn) const { return qps_.at(static_cast<std::size_t>(qpn)).peer_qpn; }
  /// The packets a message of `bytes` takes (one at least), and the ACKs its responder sends.
  std::uint64_t packets_of(std::uint64_t bytes) const { return bytes == 0 ? 1 : (bytes + mtu_ - 1) / mtu_; }
  std::uint64_t acks_of(std::uint64_t packets) const {
    const auto every = static_cast<std::uint64_t>(transport_.ack_every);
    return (packets + every - 1) / every;
  }
  const DmaEngine& dma() const { return dma_; }
  /// Scoreboard: messages delivered to the responder with a byte count that
  /// does not match their length (must stay 0), and messages delivered.
  std::uint64_t corrupt_messages() const { return corrupt_messages_; }
  std::uint64_t delivered_messages() const { return delivered_messages_; }
  /// The CC rate (cc_rate_gbps) of each QP with requests posted, into `out` (cleared first); none
  /// without congestion control (every QP at line rate throughout).
  void requester_rates(const sc_core::sc_time& now, std::vector<QpRate>& out);

 private:
  struct SendWqe {
    WorkRequest wr;
    sc_core::sc_time posted, wqe_ready;
    std::vector<sc_core::sc_time> chunk_ready;  // payload per MTU segment (write/send), once its read is issued
    std::uint32_t packets = 1;
    std::uint32_t first_psn = 0;
    std::uint32_t sent = 0;                     // new segments sent
    std::uint32_t fetched = 0;                  // segments whose payload read is issued (or with none to read)
    bool started = false;
  };
  struct Outstanding {
    std::uint32_t psn;
    std::uint64_t wqe_seq;   // which WQE (sequence number)
    std::uint32_t index;     // segment index within the WQE
  };
  struct Resend {
    std::uint32_t psn;
    sc_core::sc_time ready;  // payload re-fetched
  };
  struct ResponseSeg {       // READ response segment at the responder
    std::uint32_t psn;
    std::uint32_t bytes;
    bool last;
    std::uint64_t wr_id;
    sc_core::sc_time ready;
  };
  // Selective repeat at the responder: the packets received beyond the next expected
  // PSN, held until the gap fills. Out of line: a QP in an all-to-all is one of
  // n (n - 1) and most never see a packet out of order.
  struct Reorder {
    std::map<std::uint32_t, std::uint32_t> held;       // PSN -> payload bytes
    std::map<std::uint32_t, Completion> pending_last;  // a held message's last PSN -> its completion
  };
  // What the transmitter's scans over the QPs read (next_packet, wake_times,
  // check_timeouts) comes first, in the first three cache lines of a QP: at 2,048 NICs
  // each scan finds them cold. Four cache lines in all: an all-to-all has a QP per
  // ordered pair of ranks at each end (8.4 million at 2,048 ranks), so what few QPs
  // use lives elsewhere (Reorder; the CNP timers, RdmaEngine::next_cnp_).
  struct alignas(64) Qp {
    int qpn = 0, peer = 0, peer_qpn = 0;
    std::uint8_t sl = 0;
    bool nak_sent = false;                     // responder: a NAK for `expected` is out
    bool read_asked = false;                   // requester: the READ was asked again for the current gap
    sc_core::sc_time next_allowed, last_progress;
    Fifo<ResponseSeg> responses;               // responder: READ response segments
    // requester
    Fifo<Resend> resend;
    Fifo<Outstanding> outstanding;
    Fifo<SendWqe> sq;
    std::uint64_t sq_base = 0;                 // sequence number of sq.front()
    // Sequence number of the first request with segments still to send (sq_base + sq.size()
    // if none): requests send in posting order, so every one before it has sent all.
    std::uint64_t unsent_seq = 0;
    std::uint32_t next_psn = 0, una = 0;
    // Its congestion control's state; none for congestion control `none`, which keeps
    // no state per QP (RdmaEngine::cc() gives the engine's one line-rate limiter).
    std::unique_ptr<hw::CongestionControl> cc;
    std::uint64_t acked_bytes = 0, window_acked_bytes = 0;
    std::uint32_t retransmitted = 0, timeouts = 0, cnps_received = 0;
    std::uint32_t expected = 0;                // responder: next PSN in order
    // requester: the last READ response dropped behind a gap (responses after a gap are
    // dropped until the missing one arrives: the responder's new stream repeats them)
    std::uint32_t read_seen = 0;
    int unacked = 0;                           // responder: packets since its last ACK
    sc_core::sc_time read_landed;              // requester: last READ data written to memory
    std::uint64_t message_bytes = 0;           // responder: bytes of the message in progress
    std::unique_ptr<Reorder> reorder;          // responder: only once a packet came out of order (selective repeat)
    /// Requests posted on it so far (completed ones included).
    std::uint64_t posted() const { return sq_base + sq.size(); }
    /// Some posted request still has segments to send.
    bool unsent() const { return unsent_seq < posted(); }
  };
  static_assert(sizeof(Qp) == 256, "a QP is four cache lines");
  // A QP's payload reads (RdmaEngine::fetch): the first request with payload still to
  // read, and the payload bytes read ahead of the segments sent.
  struct Fetch {
    std::uint64_t seq = 0;
    std::uint64_t ahead = 0;
  };
  struct Control {
    Packet packet;
    sc_core::sc_time ready;
  };
  /// Whether `q` has nothing for the transmitter: no READ response, resend or segment to
  /// send, none waiting for its acknowledgement (so no timeout armed).
  static bool idle(const Qp& q) {
    return q.responses.empty() && q.resend.empty() && q.outstanding.empty() && !q.unsent();
  }

  Qp& qp(int qpn);
  /// Calls `consider(t)` for each time at which next_packet() could next return something,
  /// until it returns true: a control packet; each busy QP's times (qp_times).
  template <class F>
  void wake_times(F&& consider) const;
  /// Calls `consider(t)` for each time at which `q` could next send, until it returns
  /// true (then returns true): its next READ response, resend and new segment, each not
  /// before its data is in and its rate limiter allows; its retransmission timeout.
  template <class F>
  bool qp_times(const Qp& q, F&& consider) const;
  /// Keeps `q`'s earliest time (qp_times) in earliest_: called after anything that may
  /// change it (a post, the transmitter's visit, a packet received for it).
  void refresh(const Qp& q);
  void send_control(const Qp& q, RdmaOp op, std::uint32_t psn, const sc_core::sc_time& now);
  /// DCQCN notification point / IB CC: a marked data packet earns its sender a CNP
  /// (BECN); DCQCN sends at most one per QP per cnp_interval, IB CC one per FECN.
  void notify_congestion(const Qp& q, const Packet& p, const sc_core::sc_time& now);
  /// Requester: a READ response, in order or behind a missing one.
  void requester_read_response(Qp& q, const Packet& p, const sc_core::sc_time& now);
  /// Requester: a NAK acknowledges up to its PSN and resends from it (go-back-N) or it alone.
  void requester_nak(Qp& q, const Packet& p, const sc_core::sc_time& now);
  void requester_ack(Qp& q, std::uint32_t ack_psn, const sc_core::sc_time& now);
  void go_back(Qp& q, std::uint32_t from, const sc_core::sc_time& now);
  /// Selective repeat: `psn` goes again (its payload read from memory again).
  void resend_one(Qp& q, std::uint32_t psn, const sc_core::sc_time& now);
  /// A segment sent again, ready once its payload is read from memory again (a READ
  /// request carries none).
  Resend resend_of(Qp& q, const Outstanding& o, const sc_core::sc_time& now);
  void complete_wqes(Qp& q, const sc_core::sc_time& now);
  void responder_data(Qp& q, const Packet& p, const sc_core::sc_time& now);
  /// Responder: a READ request (new or repeated) queues its response segments.
  void respond_read(Qp& q, const Packet& p, const sc_core::sc_time& now);
  /// `landed`: when this packet's data is in memory (a held packet's: the gap filler's).
  /// `last`: the completion of the message this in-order packet ends (none: a held
  /// message's last packet is looked up in q.reorder).
  void consume(Qp& q, std::uint32_t psn, std::uint32_t bytes, const sc_core::sc_time& now,
               const sc_core::sc_time& landed, const Completion* last = nullptr);
  /// `q`'s congestion control: its own, or the engine's line-rate one (congestion control none).
  hw::CongestionControl& cc(Qp& q) { return q.cc ? *q.cc : *no_cc_; }
  /// The rate `q`'s limiter applies now to MTU-sized packets [Gb/s] (IB CC's inter-packet
  /// delay included): what qps.csv and qp_rates.csv report.
  double cc_rate_gbps(Qp& q, const sc_core::sc_time& now);
  void check_timeouts(Qp& q, const sc_core::sc_time& now);
  /// `q`'s next packet at `now`: a READ response, a resend, a new segment (next_packet's
  /// turn at `q`), after its retransmission timeout is checked; nullptr if none.
  Packet* next_of(Qp& q, const sc_core::sc_time& now, TxGate& gate);
  /// The next new segment (or READ request) of `q`'s first request with segments to
  /// send, if its payload is in, the window open and flow control lets it go on `vl`.
  Packet* next_segment(Qp& q, int vl, const sc_core::sc_time& now, TxGate& gate);
  Packet* emit(Qp& q, RdmaOp op, std::uint32_t psn, std::uint32_t bytes, bool last, std::uint64_t wr_id,
               const sc_core::sc_time& now);
  SendWqe* wqe_of(Qp& q, std::uint64_t seq);
  /// Issues `q`'s payload reads, in segment order, until `read_ahead_` bytes are read ahead
  /// of its segments sent (a NIC reads a QP's payload as its scheduler serves that QP).
  void fetch(Qp& q, const sc_core::sc_time& now);
  std::uint32_t segment_bytes(const SendWqe& w, std::uint32_t index) const;

  // What a packet sent or received reads of the engine, side by side at the front (at
  // 2,048 NICs each line a packet touches is a cache miss).
  std::vector<Qp> qps_;
  Fifo<Control> control_;
  std::size_t rr_ = 0;
  // The QPs the transmitter's walks visit (next_packet, wake_times): every QP that is not
  // idle(), and some that became idle since the last walk (next_packet drops them). A
  // QP joins where it gets something to send: a post, a READ request, a resend.
  IndexSet busy_qps_;
  // Per QP, the earliest of its qp_times (sc_max_time() if none): next_ready's answer.
  MinTree<sc_core::sc_time> earliest_;
  PacketSource& packets_;  // the NIC's
  const hw::PhyTiming* link_ = nullptr;
  sc_core::sc_time measure_from_;  ///< warm-up ends: completions posted earlier and earlier ACKs stay out of the stats
  // The parameters below as kernel times, converted once.
  sc_core::sc_time processing_, retransmit_timeout_, poll_latency_, cnp_interval_;
  int endpoint_;
  std::uint32_t mtu_;
  // Payload a QP reads ahead of its transmission [B]: what the read tags hold in flight
  // (pcie.read_tags x pcie.max_read_request).
  std::uint64_t read_ahead_;
  hw::CcKind cc_kind_;  // cc_params_.kind
  std::unique_ptr<hw::CongestionControl> no_cc_;  // congestion control none: stateless, one for every QP
  // Per QP, with congestion control on (empty without): the earliest time its next CNP
  // (BECN) may go, the notification point's pacing (DCQCN: one per cnp_interval).
  std::vector<sc_core::sc_time> next_cnp_;
  // Per QP, its payload reads (beside the QP: a QP is four cache lines).
  std::vector<Fetch> fetch_;
  TransportParams transport_;
  stats::Counter& acks_sent_;

  std::string name_;
  HostParams host_;
  CcParams cc_params_;
  DmaEngine dma_;
  std::function<void(const Completion&)> on_completion_;
  std::function<void(const FlowRecord&)> on_flow_;
  std::uint64_t corrupt_messages_ = 0, delivered_messages_ = 0;
  stats::Counter& retransmits_;
  stats::Counter& timeouts_;
  stats::Counter& naks_sent_;
  stats::Counter& cnps_sent_;
  stats::Counter& cnps_received_;
  stats::Counter& duplicates_;
  stats::Counter& completions_;
  stats::Distribution& completion_latency_;
};

}  // namespace fabricsim::tlm_fabric
