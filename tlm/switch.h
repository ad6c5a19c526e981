// Switch ASIC model: ingress pipeline in core-clock cycles, per-VL ingress
// accounting with credit / PFC / lossy admission, a chosen buffer organisation
// (input FIFO, VOQ, output queued with speedup, shared memory with dynamic
// thresholds), a switch allocator, per-port VL/TC egress scheduling,
// cut-through / store-and-forward / adaptive forwarding, ECN/FECN marking.
// The units are in tlm/switch/ (README: one row each); docs/switch.md has the
// pipeline, the wake-up rules and every parameter.
#pragma once

#include <array>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>

#include "hw/allocator.h"
#include "hw/egress_scheduler.h"
#include "hw/flow_control.h"
#include "hw/routing.h"
#include "hw/units.h"
#include "sim/stats.h"
#include "tlm/clock.h"
#include "tlm/fabric_protocol.h"
#include "tlm/fabric_socket.h"
#include "tlm/fifo.h"
#include "tlm/latency_breakdown.h"
#include "tlm/linked_queue.h"
#include "tlm/link.h"
#include "tlm/packet_pool.h"
#include "tlm/rtl_allocator.h"
#include "tlm/sim_time.h"
#include "tlm/tx_port.h"
#include "tlm/waveform_options.h"
#include "tlm/switch/egress_unit.h"
#include "tlm/switch/ingress_unit.h"
#include "tlm/switch/input_fifo.h"
#include "tlm/switch/port_set.h"
#include "tlm/switch/queues.h"
#include "tlm/switch/wake_planner.h"
#include "tlm/wake_queue.h"

namespace fabricsim::tlm_fabric {

/// When a switch may start forwarding a packet.
enum class ForwardingMode {
  cut_through,        ///< once the header is parsed; egress tail never overtakes the ingress tail
  store_and_forward,  ///< once the whole frame is received and checked
  adaptive,           ///< cut-through when the egress is free and not faster than the ingress, else SAF
  fast_to_slow,       ///< per port pair: cut-through onto an egress no faster than the ingress, SAF onto a faster one
};

/// Where packets wait inside the switch.
enum class BufferOrganisation {
  input_fifo,     ///< one FIFO per input and VL: head-of-line blocking
  voq,            ///< virtual output queues per input, output and VL
  output_queued,  ///< queues per output and VL, written through a crossbar with speedup (FIFO inputs)
  cioq,           ///< output_queued with virtual output queues at the inputs (combined input-output queueing)
  shared_memory,  ///< output queues in one shared pool, dynamic thresholds (alpha)
};

/// Which egress scheduler arbitrates VLs / traffic classes at each output.
enum class EgressSchedulerKind { ib_vl_arb, tc_dwrr };

/// Pipeline stage latencies in core-clock cycles.
struct PipelineStages {
  int parse = 20;              ///< ingress header parse
  int route_lookup = 40;       ///< forwarding table lookup
  int vl_mapping = 10;         ///< SL->VL (IB) or priority->TC (Ethernet)
  int buffer_admission = 20;   ///< admission, queue write
  int switch_allocation = 10;  ///< allocator decision -> grant
  int crossbar = 60;           ///< crossbar traversal
  int egress_scheduling = 40;  ///< egress queue to MAC
  /// Header usable -> eligible for allocation.
  int to_allocator() const { return parse + route_lookup + vl_mapping + buffer_admission; }
  /// Grant decision -> first bit on the egress wire.
  int grant_to_wire() const { return switch_allocation + crossbar + egress_scheduling; }
  /// The stages by configuration key (`switch.pipeline`), in pipeline order.
  static constexpr std::array<std::pair<const char*, int PipelineStages::*>, 7> kStages{{
      {"parse", &PipelineStages::parse},
      {"route_lookup", &PipelineStages::route_lookup},
      {"vl_mapping", &PipelineStages::vl_mapping},
      {"buffer_admission", &PipelineStages::buffer_admission},
      {"switch_allocation", &PipelineStages::switch_allocation},
      {"crossbar", &PipelineStages::crossbar},
      {"egress_scheduling", &PipelineStages::egress_scheduling},
  }};
};

/// ECN (RoCE) / FECN (IB) marking on egress queue depth.
struct MarkingParams {
  bool enabled = false;      ///< mark at all
  hw::RedCurve curve;        ///< Kmin, Kmax [B], Pmax
};

/// A head-of-queue packet that cannot leave: where it waits and why (watchdog).
struct BlockedHead {
  int in_port = 0;      ///< input it arrived on
  int in_vl = 0;        ///< VL it holds buffer space on
  int out_port = 0;     ///< output it waits for
  int out_vl = 0;       ///< VL it needs downstream
  std::string reason;   ///< "no credits", "paused by PFC", "egress busy"
};

/// One buffer's fill against its size, for the "no buffer beyond its size" invariant.
struct BufferBound {
  std::string buffer;           ///< e.g. "port3 input buffer"
  std::uint64_t high_water = 0; ///< most bytes it ever held [B]
  std::uint64_t size = 0;       ///< its size [B]
};

/// Why a switch dropped packets at ingress, for the lossless invariant.
struct DropCounts {
  std::uint64_t crc = 0;       ///< frames hit by a bit error (any flow control)
  std::uint64_t lossy = 0;     ///< no room on a lossy (flow_control none) link
  std::uint64_t headroom = 0;  ///< PFC: beyond xoff + headroom (the sender ignored or outran PAUSE)
  std::uint64_t lossless = 0;  ///< on a credit or PFC link without headroom exceeded: must stay 0
};

/// Test only (SwitchTestAccess, tests/switch_test_access.h): breaks one piece of the
/// switch's accounting, so tests can show that each run-time invariant
/// (sim/invariants.h) catches it.
enum class AccountingFault {
  none,
  credit_return_short,  ///< every credit return carries one block fewer than the packet held
  overfill_buffer,      ///< lossy admission ignores the physical buffer size
  drop_lossless,        ///< PFC admission drops packets PFC accepted
};

/// Parameters of a switch. Every field has a default and a unit.
struct SwitchParams {
  int ports = 4;                                             ///< radix, 2..256
  hw::Frequency core_clock = hw::Frequency::ghz(1.5);        ///< core clock [Hz]
  PipelineStages pipeline;                                   ///< stage latencies [cycles]
  ForwardingMode forwarding = ForwardingMode::cut_through;   ///< forwarding mode
  std::map<int, ForwardingMode> port_forwarding;             ///< per ingress port: its own mode; the others use `forwarding`
  BufferOrganisation buffer = BufferOrganisation::input_fifo;///< buffer organisation
  hw::Size input_buffer = hw::Size::kib(256);                ///< per input port, all VLs: credit allotment / input queues [B]
  hw::Size output_buffer = hw::Size::kib(256);               ///< per output port (output_queued, lossy) [B]
  hw::Size shared_buffer = hw::Size::kib(4096);              ///< shared pool (shared_memory) [B]
  double alpha = 1.0;                                        ///< dynamic-threshold factor (shared_memory)
  int speedup = 1;                                           ///< output_queued, cioq: crossbar writes per output and per input per frame time, 1..ports
  std::uint32_t cell_bytes = 64;                             ///< buffer cell: occupancy is counted in whole cells [B]
  std::uint32_t credit_block_bytes = 64;                     ///< credit granularity [B] (IB: 64)
  hw::Time credit_return_latency = hw::Time::ns(10);         ///< buffer freed -> credit packet leaves [s]
  std::string allocator = "round_robin";                     ///< switch allocator (hw::allocator_names())
  int allocator_iterations = 1;                              ///< iterations for islip / pim
  AllocatorImpl allocator_impl = AllocatorImpl::tlm;         ///< allocator as hw/ core, Verilated RTL twin, or both compared (tlm/rtl_allocator.h)
  std::string rtl_variant = "islip_allocator";               ///< RTL top of the twin (rtl_allocator_models())
  AllocatorImpl vl_arbiter_impl = AllocatorImpl::tlm;        ///< ib_vl_arb as hw/ core, Verilated RTL twin, or both compared (tlm/rtl_vl_arbiter.h)
  std::string vl_arbiter_rtl_variant = "vl_arbiter";         ///< RTL model of the VL arbiter twin (kind vl_arbiter)
  AllocatorImpl write_arbiter_impl = AllocatorImpl::tlm;     ///< crossbar arbiters (write ports; cioq: inputs' accept) as hw/ core, RTL twin, or both compared (tlm/rtl_arbiter.h)
  std::string write_arbiter_rtl_variant = "rr_arbiter";      ///< RTL top of the write-port arbiters (rtl_arbiter_models())
  AllocatorImpl input_fifo_impl = AllocatorImpl::tlm;        ///< input_fifo buffers as hw/ cores, RTL twins, or both compared (tlm/rtl_packet_fifo.h)
  std::string input_fifo_rtl_variant = "packet_fifo";        ///< RTL model of the input FIFOs (kind packet_fifo)
  WaveformOptions waveform;                                  ///< waveforms of the RTL twin (switch.rtl_trace*); dir empty: none (fabricsim run --trace)
  int vls = 1;                                               ///< data VLs / traffic classes, 1..15
  std::vector<int> sl_to_vl;                                 ///< SL/priority (index) -> VL; empty: sl mod vls
  EgressSchedulerKind egress_scheduler = EgressSchedulerKind::tc_dwrr; ///< VL/TC arbitration at egress
  hw::IbVlArbParams vl_arb;                                  ///< ib_vl_arb tables; empty: all VLs weight 1 in low
  hw::TcSchedulerParams tc;                                  ///< tc_dwrr classes; classes forced to vls
  hw::PfcThresholds pfc{65536, 32768, 131072};               ///< per input and priority [B] (pfc links)
  std::uint16_t pause_quanta = 65535;                        ///< quanta in each PAUSE frame
  MarkingParams ecn{false, {5000, 200000, 0.01}};            ///< RED marking of ECT packets / FECN; DCQCN paper Kmin 5 KB, Kmax 200 KB, Pmax 1%
  MarkingParams wred{false, {131072, 524288, 0.1}};          ///< weighted RED drops (lossy links); defaults are an assumption
  hw::RoutingParams routing;                                 ///< choice among equal-cost output ports
  std::uint64_t seed = 1;                                    ///< random stream (marking, pim); also salts the ECMP hash

  /// Throws std::invalid_argument naming the field when out of range.
  void validate() const;
  /// VL a packet of service level `sl` travels on.
  int vl_of(int sl) const;
  /// The forwarding mode of the packets that arrive on `port`.
  ForwardingMode forwarding_of(int port) const;
  /// output_queued or cioq: packets wait at their input until the crossbar writes them
  /// into their output queue at `speedup`.
  bool crosses_to_output_queues() const {
    return buffer == BufferOrganisation::output_queued || buffer == BufferOrganisation::cioq;
  }
};

std::string_view to_string(ForwardingMode m);
std::string_view to_string(BufferOrganisation b);

/// Where each destination endpoint hangs: its group (the endpoints of one switch, which
/// every other switch reaches through the same ports on minimal paths) and its port on
/// that switch. One per fabric, shared by its switches: their tables hold an entry per
/// group instead of one per endpoint.
struct EndpointHomes {
  std::vector<std::int32_t> group;  ///< per endpoint: 0..groups-1
  std::vector<std::int32_t> port;   ///< per endpoint: its port on its switch
  int groups = 0;
};

class Switch : public sc_core::sc_module {
 public:
  using InSocket = FabricTargetSocket<Switch>;
  using OutSocket = FabricInitiatorSocket<Switch>;

  sc_core::sc_vector<InSocket> in;    ///< ingress from links, one per port
  sc_core::sc_vector<OutSocket> out;  ///< egress to links, one per port

  Switch(sc_core::sc_module_name name, const SwitchParams& params, PacketPool& pool, stats::Registry& stats);

  /// Where the fabric's endpoints hang, shared by every switch; `own_group` is this
  /// switch's group (-1: it has no endpoint). Call before set_routes.
  void set_endpoint_homes(std::shared_ptr<const EndpointHomes> homes, int own_group);
  /// Forwarding table: packets for the endpoints of `group` (another switch's) leave on
  /// one of `ports` (equal cost).
  void set_routes(int group, const std::vector<int>& ports);
  /// Where the packets of a flow in a steady state leave toward `dst`: all on `port`, or
  /// spread evenly over `*spread` from index `first` (hw::RoutePolicy::steady_index).
  /// Read without the switch's state, from any thread: fast-forward counts the packets it
  /// skips on the links they would have crossed. -1 without a route.
  struct SteadyRoute {
    int port = -1;
    const std::vector<int>* spread = nullptr;
    std::size_t first = 0;
  };
  SteadyRoute steady_route(int src, int dst, std::uint32_t flow) const;
  /// Counts `packets` of `bytes` in all as received and forwarded on output `port`: the
  /// packets fast-forward skips (between windows, or in the switch's lane).
  void count_skipped(int port, std::uint64_t packets, std::uint64_t bytes);
  /// Binds output `port` to its link and the downstream receive buffer per VL it fills.
  void attach_egress(int port, const Link* link, std::uint64_t downstream_buffer_per_vl);
  /// Binds input `port` to its incoming link.
  void attach_ingress(int port, const Link* link);

  const SwitchParams& params() const { return params_; }
  /// Least time from a transmit decision to the packet's first bit on the wire.
  const sc_core::sc_time& least_start_delay() const { return grant_to_wire_; }
  /// Least time from a call returning credits for a packet of an input to the credit packet
  /// leaving. A packet sent on returns them when its tail has left the buffer, from the
  /// transmit decision that makes the call: at least the grant-to-wire time later. A frame
  /// dropped for bit errors (`bit_errors`: the input's link corrupts frames) returns them
  /// from its admission at once.
  sc_core::sc_time least_credit_delay(bool bit_errors) const {
    return bit_errors ? credit_return_latency_ : grant_to_wire_ + credit_return_latency_;
  }
  /// Packets held in the switch now (queued or still arriving).
  std::uint64_t packets_buffered() const;
  /// Clock edges the switch woke on: the simulator's effort, reported outside the model's statistics.
  std::uint64_t activations() const { return activations_; }
  /// Head-of-queue packets that cannot be sent now, with the reason.
  std::vector<BlockedHead> blocked_heads() const;
  /// Packets that entered the switch so far.
  std::uint64_t packets_received() const { return received_; }
  /// Packets forwarded to an egress link so far.
  std::uint64_t packets_forwarded() const { return forwarded_.value(); }
  /// Packets dropped (admission, PFC headroom, bit errors) so far.
  std::uint64_t packets_dropped() const { return dropped_; }
  /// Buffer occupancy now, per port (all VLs): bytes accounted to each input and bytes
  /// queued for each output (`ports` entries each). Admissions a switch folded into a
  /// later wake are in only once settled (settle_admissions()).
  void occupancy(std::vector<std::uint64_t>& ingress, std::vector<std::uint64_t>& egress) const;
  /// Time output `port` spent paused on `vl` by its downstream [s].
  double egress_paused_seconds(int port, int vl) const;
  /// Time output `port` had a packet ready on `vl`, its wire free and no credits for it [s].
  double credit_stall_seconds(int port, int vl) const;
  // Run-time invariants (sim/invariants.h).
  /// Transmit side of output `port`: its credits per VL toward the downstream buffer.
  const TxPort& egress_port(int port) const { return outputs_.at(port).tx; }
  /// Credit blocks input `port` holds for its upstream transmitter, per VL (credit links).
  const hw::CreditLedger& ingress_credits(int port) const { return inputs_.at(port).credits_held; }
  /// Every buffer this organisation bounds, with its high-water mark.
  std::vector<BufferBound> buffer_bounds() const;
  /// Ingress drops by cause; they add up to packets_dropped().
  const DropCounts& drop_counts() const { return drops_; }
  /// Admits the arrivals whose admission was folded into a wake after `at` but whose
  /// header edge came before it (`inclusive`: or at it), as an edge-by-edge switch did on
  /// those edges, for what reads the switch from outside at `at`: the occupancy sampler
  /// (before the switches act at its instant) and the results at the end of a run (the
  /// marks, routes and buffers of those arrivals). Nothing the switch decides changes:
  /// from the header edge to the folded wake nothing else is admitted before and nothing
  /// is sent.
  void settle_admissions(const sc_core::sc_time& at, bool inclusive);
  /// The header time of the earliest arrival not yet admitted (sc_max_time(): none): a
  /// folded admission is dated at its header's clock edge, not before it.
  sc_core::sc_time first_unadmitted_header() const;

  /// Per-hop latency breakdown (`output.latency_breakdown`; the pool keeps breakdowns):
  /// each packet forwarded gets this hop's parts, and those created from `from` on are
  /// summed per output port.
  void keep_latency_breakdown(const sc_core::sc_time& from);
  /// The parts of this switch's hops summed per output port (empty when off).
  const std::vector<LatencySums>& latency_sums() const { return latency_sums_; }

  /// Depth in words (buffer cells) of each input FIFO of a switch with `p` (input_fifo):
  /// the input buffer in whole cells, or on a credit link (`credit_links`) enough for every
  /// frame the credits admit.
  static std::uint64_t input_fifo_depth(const SwitchParams& p, bool credit_links);

  /// Records the switch's ports (ingress and egress bytes, credits, PAUSE, packet hops)
  /// in `trace` (output.trace), each port's track named <switch>.port<k>.
  void set_trace(FabricTrace* trace);

  /// The RTL blocks of the switch (allocator, VL arbiters, write-port arbiters, input
  /// FIFOs, credit managers) by hierarchy and model name (switch.rtl_trace_scope).
  std::vector<RtlBlockName> rtl_blocks() const;
  /// Closes the waveforms of the RTL blocks (switch.rtl_trace) that record one and says
  /// what they wrote (results.json "simulator"."waveforms"); the run must be over.
  std::vector<RtlWaveformRecord> finish_waveforms();

 private:
  // The tests' hooks: fault injection and the every-edge reference (tests/switch_test_access.h).
  friend struct SwitchTestAccess;

  using Entry = sw::Entry;
  using EntryQueue = sw::EntryQueue;
  using Queue = sw::Queue;
  using Head = sw::Head;
  using Release = sw::Release;
  using InputPort = sw::InputPort;
  using OutputPort = sw::OutputPort;
  using Candidate = sw::Candidate;
  using DueArrival = sw::DueArrival;
  // A port's counters in port_counters_: kPortCounters of its own, then kVlCounters per VL.
  enum PortCounter : int { kConflicts, kHighWater, kCrcDrops, kEgressHighWater, kPortCounters };
  enum VlCounter : int { kDrops, kPauseSent, kPauseReceived, kMarks, kVlCounters };
  stats::Counter& port_counter(int port, PortCounter c) {
    return port_counters_[static_cast<std::size_t>(port * counters_per_port_ + c)];
  }
  stats::Counter& vl_counter(int port, int vl, VlCounter c) {
    return port_counters_[static_cast<std::size_t>(port * counters_per_port_ + kPortCounters + vl * kVlCounters + c)];
  }
  /// The counter in `slot` of the switch's statistics table (switch.cpp, counter_layout).
  const stats::Counter& counter_in_slot(std::uint32_t slot) const;

  /// One wake, on a core edge: the pipeline, unit by unit.
  void on_edge();
  void end_of_elaboration() override;

  // tlm/switch/ingress_unit.cpp: arrivals, admission, release, credits and PAUSE upstream
  tlm::tlm_sync_enum ingress(int port, Packet& p, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  /// Applies the buffer releases due by `now` (PFC resume) and refreshes PAUSEs due.
  void process_releases(const sc_core::sc_time& now);
  /// Admits the arrivals whose header edge is before `limit`, at `now`.
  void admit_arrivals(const sc_core::sc_time& now, const sc_core::sc_time& limit);
  /// When a packet admitted becomes eligible for allocation.
  sc_core::sc_time pipeline_ready(const Entry& e) const;
  /// Whether the ingress pipeline of `e` starts from its tail (its port's forwarding mode).
  bool ready_from_tail(const Entry& e) const;
  /// Whether routed packet `e` goes onto an egress faster than its ingress (fast_to_slow
  /// and adaptive store and forward it).
  bool speeds_up(const Entry& e) const;
  /// Admission of one arrival: whether the switch keeps it.
  bool admit(Entry& e, const sc_core::sc_time& now);
  void drop_corrupted(const Entry& e, const sc_core::sc_time& now);
  /// Route lookup and SL->VL.
  void classify(Entry& e, const sc_core::sc_time& now);
  /// Physical space where the buffer organisation keeps `e`.
  bool buffer_has_room(const Entry& e);
  /// Credit, PFC or lossy admission given the buffer's room (`fits`); PFC may send PAUSE.
  bool flow_control_admits(const Entry& e, int in_vl, bool fits, const sc_core::sc_time& now, bool& headroom_exceeded);
  /// Charges an admitted packet to its input (and the shared pool).
  void charge_input(const Entry& e);
  /// ECN/FECN: RED on the depth of the output queue the packet joins.
  void mark_congestion(const Entry& e, int in_vl);
  void send_pause(int in_port, int vl, std::uint16_t quanta, const sc_core::sc_time& now);
  /// After PFC accounting on input `in_port` changed: whether it is in pausing_.
  void note_pausing(int in_port);
  void return_credit(int in_port, int vl, std::uint32_t frame_bytes, const sc_core::sc_time& delay);
  void count_drop(FlowControl fc, bool headroom_exceeded);
  /// The trace: admitted `e`'s bytes join its input's and its output's counts at `at`.
  void trace_admitted(const Entry& e, const sc_core::sc_time& at) {
    trace_->ingress(trace_track_ + e.in, at, e.charged);
    trace_->egress(trace_track_ + e.out, at, e.charged);
  }

  // tlm/switch/input_fifo.cpp: the input FIFO cores (input_fifo)
  /// Whether the input FIFO cores run: input_fifo, unless a fault overfills the buffer.
  bool input_fifo_cores() const { return !input_fifos_.empty() && fault_ != AccountingFault::overfill_buffer; }
  sw::InputFifo& input_fifo(int in_port, int vl) { return input_fifos_[static_cast<std::size_t>(in_port) * params_.vls + vl]; }
  const sw::InputFifo& input_fifo(int in_port, int vl) const {
    return input_fifos_[static_cast<std::size_t>(in_port) * params_.vls + vl];
  }
  void make_input_fifos();
  /// Credit links: deep enough for every frame the credits admit, in whole cells.
  void size_input_fifos_for_credits(int port);
  /// switch.input_fifo_impl rtl | lockstep: the RTL block of every input FIFO, at its final depth.
  void make_input_fifo_blocks();
  /// The hierarchy name of the input FIFO of (`in_port`, `vl`): <switch>.port3.vl0.input_fifo.
  std::string input_fifo_hierarchy(int in_port, int vl) const;
  /// Throws the logic_error for `fault` (with its two figures), naming the switch, port, VL and time.
  [[noreturn]] void input_fifo_fault(int in_port, int vl, const sc_core::sc_time& at, sw::FifoFault fault,
                                     std::uint64_t a, std::uint64_t b) const;
  /// Admission: room in the input's buffer for `e`'s cells beside the words its cores hold.
  bool input_fifo_has_room(const Entry& e) const;
  /// Writes the words of the newest packet whose tail is in by `at`.
  void input_fifo_sync(sw::InputFifo& f, int in_port, int vl, const sc_core::sc_time& at) {
    if (f.tail_words > 0 && f.tail_at <= at) input_fifo_write_tail(f, in_port, vl);
  }
  void input_fifo_write_tail(sw::InputFifo& f, int in_port, int vl);
  /// Header admission of `e` at `at`: its head word (cut-through), the rest pending its tail.
  void input_fifo_admit(const Entry& e, const sc_core::sc_time& at);
  /// Granted packet `id` is at the core's head and readable by `at`: it is read from there.
  void input_fifo_check_head(sw::InputFifo& f, std::uint64_t id, int in_port, int vl, const sc_core::sc_time& at);
  /// The allocator granted `e`'s read at `now`.
  void input_fifo_grant(const Entry& e, const sc_core::sc_time& now);
  /// `r`'s tail has left the buffer: its words leave the core.
  void input_fifo_release(const Release& r);

  // tlm/switch/queues.cpp: the queues and their ready lists
  int queue_index(int in, int out, int vl) const;
  /// VOQ: the queue slot of (in, out, vl), taken from the pool when the queue is empty.
  int voq_slot(int in_port, int out_port, int vl);
  /// VOQ: gives back the slot of queue `q`, just emptied, held by input `in`.
  void release_voq(int q, int in_port);
  /// Charges admitted entry `i` to its output and queues it (output_queued: at its input
  /// for the crossbar).
  void enqueue(std::uint32_t i);
  /// Links entry `i` into its queue (in ready order).
  void link(std::uint32_t i);
  void head_changed(int q, int prev_out);
  void refresh_heads_ready(int op);
  /// Input FIFO or VOQ: packets wait at their input (read port) and go through the allocator.
  bool input_queued() const { return input_queued_; }

  // tlm/switch/egress_unit.cpp: credits and PAUSEs from downstream, the VL per output
  /// Output `port`'s egress scheduler; `hierarchy` names it (errors, waveforms).
  static std::unique_ptr<hw::EgressScheduler> make_egress_scheduler(const SwitchParams& p, const std::string& hierarchy);
  tlm::tlm_sync_enum egress_bw(int port, Packet& p, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  /// Applies the credits and PAUSE frames due at the transmitters.
  void update_transmitters(const sc_core::sc_time& now);
  /// Per free output, the egress scheduler's VL among the heads that may leave.
  void choose_vls(const sc_core::sc_time& now);
  void track_credit_stalls(int op, const sc_core::sc_time& now);
  /// Latency breakdown: the VLs of output `op` whose heads flow control holds, from this walk on.
  void track_blocked_vls(int op, const sc_core::sc_time& now);
  /// Latency breakdown: time (`op`, `vl`) has had heads that only flow control held, up to `now`.
  sc_core::sc_time blocked_time(int op, int vl, const sc_core::sc_time& now) const;
  /// Latency breakdown: `e` became the head of its queue at `now`.
  void note_head(const Entry& e, const sc_core::sc_time& now);
  /// Latency breakdown: the parts of `e`'s hop, granted at `now`, its wire free at
  /// `wire_free`, its first bit out at `start`.
  void account_hop(const Entry& e, const sc_core::sc_time& now, const sc_core::sc_time& wire_free,
                   const sc_core::sc_time& start);

  // tlm/switch/crossbar.cpp: crossbar writes, switch allocation, transmit
  /// output_queued, cioq: grants the crossbar write ports due by now + to_allocator, edge
  /// by edge. Every packet not admitted yet asks after that (it is ready at the next edge
  /// + to_allocator at the earliest), so the requests for those grants are all known.
  void cross_to_output_queues(const sc_core::sc_time& now);
  /// From when a write port or input busy until `t` can be granted, a cycle ahead: the
  /// first edge at or after it is the first it can be granted on.
  sc_core::sc_time crossing_grant_time(const sc_core::sc_time& t) const {
    return t > clock_.period() ? t - clock_.period() : t;
  }
  /// Calls f(head, slot) for the head of each queue of input `p` waiting for the
  /// crossbar: its crossing FIFO (slot -1) or each of its VOQs.
  template <class F>
  void for_each_crossing_head(int p, F&& f) const {
    const InputPort& ip = inputs_[p];
    if (!ip.crossing.empty()) f(entries_[ip.crossing.front()], -1);
    for (const sw::HeldVoq& h : ip.voqs) f(entries_[queues_[h.queue].front()], h.queue);
  }
  /// The first edge a waiting head can be granted a write port on: the edge of the next
  /// matching, end of time when none.
  sc_core::sc_time first_crossing_edge() const;
  /// first_crossing_edge, kept until a packet joins the crossing queues or crosses (the
  /// only changes to the heads, read and write ports it reads): most wakes do neither.
  const sc_core::sc_time& next_crossing();
  /// One request-grant-accept round on `edge` (`later`: not the edge's first round, which
  /// leaves the pointers where they are); crosses what is accepted. Whether a grant
  /// went unaccepted.
  bool match_crossings(const sc_core::sc_time& edge, bool later);
  /// Writes input `in_port`'s head for output `out_port` into its output queue through
  /// the write port granted on `edge`.
  void cross(int in_port, int out_port, const sc_core::sc_time& edge);
  /// The edge a crossbar grant due at `edge` is decided on.
  sc_core::sc_time crossing_edge(const sc_core::sc_time& edge) const {
    return clock_.edge_at_or_after(edge > to_allocator_ ? edge - to_allocator_ : sc_core::SC_ZERO_TIME);
  }
  void allocate_input_queues(const sc_core::sc_time& now);
  void serve_output_queues(const sc_core::sc_time& now);
  void transmit(int q, const sc_core::sc_time& now);

  // tlm/switch/wake_planner.cpp: which edge to wake on
  void wake_at(const sc_core::sc_time& t);
  /// Whether admission can fold for input `ip` (attach_ingress) and for the output-side
  /// buffer the inputs share (end_of_elaboration).
  void plan_folding(const InputPort& ip);
  void plan_folding_for_output_buffer();
  /// After an arrival on `port`: the wake its admission needs.
  void wake_for_arrival(int port, const sc_core::sc_time& header_edge);
  /// After a credit return or PAUSE frame on an output, taking effect at `at`.
  void wake_for_downstream(const tlm::tlm_phase& phase, const sc_core::sc_time& at);
  /// When input `port` next needs the switch awake for admission: its first header edge,
  /// or with admission folded the first wake after it where nothing shows before.
  /// Inline: schedule_next asks for every input with arrivals on every wake.
  const sc_core::sc_time& admission_wake(int port) {
    InputPort& ip = inputs_[port];
    if (!plan_.fold_admission || plan_.edge_decides) return entries_[ip.arrivals.front()].header_edge;
    if (!ip.folded_wake_valid) fold_admission_wake(ip);
    return ip.folded_wake;
  }
  void fold_admission_wake(InputPort& ip) const;
  /// out_due after output `op`'s wire or its heads' ready time changed.
  void refresh_due(int op) {
    plan_.out_due[op] = std::max(plan_.free_edge(outputs_[op].tx.busy_until()), outputs_[op].heads_ready);
  }
  /// Whether head `h` is ready and (input-side queues) its read port frees by `horizon`.
  bool can_leave(const Head& h, const sc_core::sc_time& now, const sc_core::sc_time& horizon) const;
  /// What the heads waiting now ask of the next wake-ups; `next` is the edge after now.
  sw::EdgeOutlook edge_decides(const sc_core::sc_time& now, const sc_core::sc_time& next) const;
  /// Asks for the earliest edge after now with work; `next_edge`: the core edge after now.
  void schedule_next(const sc_core::sc_time& now, const sc_core::sc_time& next_edge);

  SwitchParams params_;
  PacketPool& pool_;
  ClockDomain clock_;
  sc_core::sc_time to_allocator_, grant_to_wire_, credit_return_latency_;
  // Forwarding table, per destination group (EndpointHomes): its one port (>= 0),
  // kNoRoute, kHostPort (the group of this switch: the endpoint's own port), or for
  // equal-cost ports -2 - the index of their list in route_groups_ (the distinct lists:
  // a leaf's remote destinations share one list of uplinks). An entry is 4 bytes per
  // destination switch, not per endpoint, and a single-port route reads nothing else.
  static constexpr std::int32_t kNoRoute = -1;
  static constexpr std::int32_t kHostPort = std::numeric_limits<std::int32_t>::min();
  std::shared_ptr<const EndpointHomes> homes_;
  std::vector<std::int32_t> route_entry_;
  std::vector<std::vector<int>> route_groups_;
  std::map<std::vector<int>, std::int32_t> route_group_index_;  // set_routes only
  std::int32_t last_route_group_ = kNoRoute;                    // set_routes only: the list it set last
  bool has_route(int dst) const {
    return homes_ && dst >= 0 && dst < static_cast<int>(homes_->group.size()) &&
           route_entry_[homes_->group[dst]] != kNoRoute;
  }
  /// The output port of `p` (its destination has a route), arriving at `at`.
  int route(const Packet& p, const sc_core::sc_time& at) {
    const std::int32_t r = route_entry_[homes_->group[p.dst]];
    if (r >= 0) return r;  // what the route policy picks from one candidate
    if (r == kHostPort) return homes_->port[p.dst];
    return route_policy_.select({p.src, p.dst, p.flow}, route_groups_[-2 - r], egress_queued_, seconds(at));
  }
  hw::RoutePolicy route_policy_;
  std::vector<std::uint64_t> egress_queued_;  // bytes queued per output (adaptive routing)
  std::vector<InputPort> inputs_;
  std::vector<sc_core::sc_time> read_free_;  // per input: when its read port frees (read by every wake's walks)
  std::vector<OutputPort> outputs_;
  NodePool<Entry> entries_;  // every packet in the switch, arrived or queued
  // VOQ: a slot per queue holding packets, taken when it fills and given back when it
  // empties. A switch holds few packets at once, so few of its ports^2 x VLs queues
  // are non-empty: head and tail registers for every one would take 384 KiB per
  // radix-64 switch with 4 VLs. Input FIFOs and output queues: a fixed slot each.
  std::vector<Queue> queues_;
  std::vector<int> free_queues_;  // VOQ slots given back, the last one taken first
  // Ready lists: the non-empty queues, per output their head leaves on, in the order
  // they last became non-empty (the order every decision walks them in).
  std::vector<std::vector<Head>> out_queues_;  // per output: its queues' heads
  std::uint64_t next_seq_ = 0;
  // Work sets: the per-wake loops visit these ports only.
  PortSet out_heads_;    // outputs with a non-empty ready list (out_queues_)
  PortSet arriving_;     // inputs with arrivals not yet admitted
  PortSet stalling_;     // outputs with an open credit stall (OutputPort::open_stalls)
  // Latency breakdown (keep_latency_breakdown): per output port, per (output, VL) the
  // time heads waited for flow control alone, the VLs waiting now (bit per VL) and since when.
  bool breakdown_ = false;
  sc_core::sc_time breakdown_from_;
  std::vector<LatencySums> latency_sums_;
  std::vector<sc_core::sc_time> blocked_total_, blocked_since_;
  std::vector<std::uint32_t> blocked_open_;
  PortSet tx_changing_;  // outputs whose TxPort has credit returns or PAUSE frames to apply (TxPort::settled)
  PortSet pausing_;      // PFC inputs with a priority that pauses its upstream (note_pausing)
  PortSet crossing_;     // output_queued, cioq: inputs with packets waiting for the crossbar
  sc_core::sc_time next_crossing_;  // the edge the next crossbar grant is due on (next_crossing)
  bool crossing_stale_ = false;     // a packet joined the crossing queues or crossed since next_crossing_
  std::unique_ptr<hw::SwitchAllocator> allocator_;
  std::unique_ptr<hw::SharedBuffer> shared_;
  std::vector<sw::InputFifo> input_fifos_;  // input_fifo: per input x VL
  std::uint64_t input_fifo_cells_ = 0;      // input_fifo: the input buffer in whole cells
  std::uint64_t input_fifo_bytes_ = 0;      // input_fifo: those cells in bytes
  Fifo<Release> releases_;  // in order of `at`, equal times in the order they were made
  std::vector<stats::Counter> port_counters_;  // per port, side by side (port_counter, vl_counter)
  int counters_per_port_ = 0;
  // Scratch of one edge's egress decision, kept to spare the allocator on every edge.
  std::vector<std::vector<std::uint32_t>> heads_;  // per output, per VL: eligible head frame bytes
  std::vector<std::uint8_t> has_head_;             // per output: some VL has an eligible head
  std::vector<std::uint8_t> blocked_;              // per output x VL: a head waits for credits
  std::vector<std::uint8_t> any_blocked_;          // per output: some VL blocked this edge
  std::vector<int> chosen_;                        // outputs that chose a VL this edge, ascending
  std::vector<DueArrival> due_;                    // this wake's admissions, in admission order
  // Input-side queues: this edge's heads that could leave (choose_vls), by output; then
  // those on their output's chosen VL, the allocator's requests (allocate_input_queues).
  std::vector<Candidate> eligible_;
  std::vector<int> requests_per_output_;
  std::mt19937_64 rng_;
  WakeEvent wake_;
  sw::WakePlanner plan_;
  bool input_queued_ = false;   // buffer is input_fifo or voq
  const sc_core::sc_time end_of_time_ = sc_core::sc_max_time();  // EdgeOutlook::leave when no head can leave

  std::uint64_t in_switch_ = 0;
  stats::Counter forwarded_;  // <switch>.forwarded_packets, beside in_switch_ (both written per transmit)
  std::uint64_t activations_ = 0;
  std::uint64_t received_ = 0, dropped_ = 0;
  DropCounts drops_;
  AccountingFault fault_ = AccountingFault::none;
  FabricTrace* trace_ = nullptr;  // null: not traced (set_trace)
  int trace_track_ = 0;           // port k's track: trace_track_ + k
  static inline bool every_edge_for_test_ = false;
};

}  // namespace fabricsim::tlm_fabric
