// The fabric's trace (`output.trace`, `fabricsim run --trace perfetto|vcd`): packet hops as
// slices, buffer occupancy, credits and PAUSE state as counters, a collective's transfers
// as steps per endpoint, written as a Chrome JSON trace (Perfetto UI) and a VCD (GTKWave). Blocks hold a
// FabricTrace pointer, null when tracing is off, and call it where their state changes.
// Events are kept per wake-queue lane as fixed-size records. As the model's time passes
// they go out to the files in the order of (time, track, order on the track), where a
// slice's time is its end: every event before the horizon (the earliest time any block can
// still record) is final, so the files hold the same bytes with any number of lanes and
// the memory held is that of the events near the horizon. The events go out at the same
// points as packets.csv's rows: after each parallel window, and in step with the kernel
// when a lane holds kKeep events. Occupancy and credits are recorded as changes at the
// time they take effect and summed in time order when written.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <systemc>

#include "hw/param_spec.h"
#include "tlm/fabric_protocol.h"

namespace fabricsim::tlm_fabric {

/// What the fabric trace records (output.trace*; `fabricsim run --trace*`).
struct TraceOptions {
  bool perfetto = false;                ///< write trace.perfetto.json
  bool vcd = false;                     ///< write fabric.vcd
  std::vector<std::string> scopes;      ///< globs on switch, port and NIC hierarchy names; empty: all
  std::vector<int> endpoints;           ///< packets from or to these endpoints, and their NICs; empty: all
  std::vector<std::pair<int, int>> flows;  ///< packets of these (source, destination) pairs; empty: all
  std::uint64_t from_ps = 0;            ///< first time recorded [ps]
  std::uint64_t to_ps = std::numeric_limits<std::uint64_t>::max();  ///< last time recorded [ps]
  std::uint64_t max_bytes = 0;          ///< per file: writing stops before this size [B]; 0: no limit
  // With endpoints or flows, the counters are those of the ports and NICs their packets cross.

  bool enabled() const { return perfetto || vcd; }
  /// Whether a block named `hierarchy` (e.g. fabric.sw0.port3), inside `parent` (its
  /// switch, e.g. fabric.sw0; empty for a NIC), is recorded by the scopes.
  bool wants(std::string_view hierarchy, std::string_view parent) const;
};

/// A finished trace file (results.json "trace").
struct TraceFileRecord {
  std::string kind;            ///< perfetto or vcd
  std::string file;            ///< its name in the results folder
  std::uint64_t events = 0;    ///< events written
  bool limit_reached = false;  ///< writing stopped at output.trace_max_size
};

class FabricTrace {
 public:
  /// `lanes`: the wake queue's lanes (blocks record from their lane's thread).
  FabricTrace(TraceOptions options, int lanes);
  ~FabricTrace();
  FabricTrace(const FabricTrace&) = delete;
  FabricTrace& operator=(const FabricTrace&) = delete;

  // Elaboration (one thread): the tracks. A track is a switch port or a NIC; -1: out of scope.
  /// A switch port `port_name` (fabric.sw0.port3) of `device` (fabric.sw0) with `vls` VLs.
  int add_port(const std::string& device, const std::string& port_name, int vls);
  /// A NIC `name` (fabric.ep0), endpoint `endpoint`, with `vls` VLs.
  int add_nic(const std::string& name, int endpoint, int vls);
  /// The collective steps of endpoint `endpoint` (a process `collective`, a row per endpoint).
  int add_endpoint_steps(int endpoint);
  /// Whether `track` is recorded (in scope).
  bool on(int track) const;
  /// The credits a transmitter starts with on `vl` (the counter's first value).
  void initial_credits(int track, int vl, std::uint64_t blocks);
  /// The transmitter of `track` obeys PFC PAUSE frames (its PAUSE counters).
  void pfc(int track);
  /// A block that records changes dated before the model's time (a switch admitting
  /// arrivals at their clock edges in a later wake): `earliest` says the earliest time it
  /// can still record at. Read between windows and in step with the kernel.
  void lags(std::function<sc_core::sc_time()> earliest);
  /// The globs of options.scopes that match no switch, switch port or NIC.
  std::vector<std::string> unmatched_scopes() const;
  /// A few names the scopes can match (a switch, one of its ports, a NIC), for messages.
  std::vector<std::string> scope_examples() const;
  /// Whether a packet the endpoint and flow filters keep crossed a track in scope (true without them).
  bool kept_packets() const;
  /// Opens the files in `dir` (the tracks are made) and writes what is known before the run.
  void open(const std::string& dir);

  // Recording, from the lane's thread of the track's block.
  /// Ingress bytes of a switch port change by `delta` at `at`.
  void ingress(int track, const sc_core::sc_time& at, std::int64_t delta) { counter(track, kIngress, 0, at, delta); }
  /// Egress bytes of a switch port change by `delta` at `at`.
  void egress(int track, const sc_core::sc_time& at, std::int64_t delta) { counter(track, kEgress, 0, at, delta); }
  /// Credits (blocks) of a transmitter on `vl` change by `delta` at `at` (a return: when it
  /// takes effect).
  void credits(int track, int vl, const sc_core::sc_time& at, std::int64_t delta) { counter(track, kCredits, vl, at, delta); }
  /// A PAUSE window [from, until) replaces the running one on `vl` (from == until: resume);
  /// windows come in time order.
  void pause(int track, int vl, const sc_core::sc_time& from, const sc_core::sc_time& until);
  /// When a switch forwards a packet: its header in, first bit out, tail out of the
  /// buffer, and the decision.
  struct HopTimes {
    const sc_core::sc_time &header_in, &first_bit_out, &tail_out, &now;
  };
  /// A switch sends `p` from input `in` to output `out`: its `charged` bytes leave the
  /// egress count now and the ingress count when its tail leaves the buffer; its hop
  /// from its header in to its first bit out.
  void forwarded(int in, int out, const Packet& p, const HopTimes& t, std::uint64_t charged) {
    egress(out, t.now, -static_cast<std::int64_t>(charged));
    ingress(in, t.tail_out, -static_cast<std::int64_t>(charged));
    switch_hop(in, out, p, t.header_in, t.first_bit_out);
  }
  /// Packet `p` waited in a switch, from input `in`, for output `out` from its header in to
  /// its first bit out.
  void switch_hop(int in, int out, const Packet& p, const sc_core::sc_time& header_in,
                  const sc_core::sc_time& first_bit_out);
  /// Packet `p` on the cable of transmitter `track`, from its first bit out to its tail in.
  void link_hop(int track, const Packet& p, const sc_core::sc_time& first_bit_out, const sc_core::sc_time& tail_in);
  /// NIC `track` delivered `p` (its tail in at `at`): the last hop, from its header in.
  void delivered(int track, const Packet& p, const sc_core::sc_time& at);

  /// A transfer of a collective: its index in the graph, its ranks and bytes.
  struct Step {
    std::uint64_t transfer;
    int src_rank, dst_rank;
    std::uint64_t bytes;
  };
  /// Steps track `track` (its source endpoint) posted transfer `wr` at `at`.
  void step_posted(int track, std::uint64_t wr, const Step& step, const sc_core::sc_time& at);
  /// Transfer `wr` landed, visible at `at` (the destination's lane): its step ends.
  void step_landed(std::uint64_t wr, const sc_core::sc_time& at);

  /// Between parallel windows: writes the events before the window's end (and the lagging blocks').
  void window_ended();
  /// Writes every event left and closes the files (the run is over: `end` its time); says
  /// what they hold.
  std::vector<TraceFileRecord> finish(const sc_core::sc_time& end);
  /// The most events held in memory at once (recorded, not yet written).
  std::uint64_t held_high_water() const { return held_high_water_; }
  /// The file names of `options` (trace.perfetto.json, fabric.vcd).
  static std::vector<std::string> file_names(const TraceOptions& options);

  enum Signal : std::uint8_t { kIngress, kEgress, kCredits, kPause };
  // crossed: a track a kept packet crossed, with endpoint or flow filters: its counters from then on.
  enum class Kind : std::uint8_t { counter, switch_hop, link_hop, delivered, step, step_posted, step_landed, crossed };
  /// One recorded event: 56 bytes.
  struct Event {
    std::uint64_t ts;     ///< [ps]
    std::uint64_t value;  ///< counter: its change (PAUSE: its value); slice: its end [ps], its time in the order
    std::uint64_t packet; ///< slice: the packet's number; step: the transfer's index; posted, landed: its wr
    std::int32_t track;
    std::int32_t src, dst;
    std::uint32_t payload;
    std::uint32_t seq;    ///< order on its lane (the track's block records in one lane)
    Kind kind;
    std::uint8_t signal, vl, op;
  };
  struct Track;

 private:
  /// A change of a counter: by `delta` (occupancy, credits) or to `delta` (PAUSE), at `at`.
  void counter(int track, Signal s, int vl, const sc_core::sc_time& at, std::int64_t delta) {
    counter_ps(track, s, vl, to_ps(at), delta);
  }
  void counter_ps(int track, Signal s, int vl, std::uint64_t ps, std::int64_t delta);
  std::uint64_t to_ps(const sc_core::sc_time& t) const {
    return static_cast<std::uint64_t>(static_cast<double>(t.value()) * ps_per_tick_ + 0.5);
  }
  bool wants_packet(const Packet& p) const;
  /// A kept packet crossed `track`, its event at `ps`: with packet filters its counters are written from then on.
  void cross(int track, std::uint64_t ps);
  void add(Event e);
  /// Writes the events before `horizon` [ps] and those of the lagging blocks' (all: `last`).
  void flush(std::uint64_t horizon, bool last);
  /// The values at the window's start (the first flush past it).
  void start();
  void write_events(std::vector<Event>::iterator begin, std::vector<Event>::iterator end);
  // In step with the kernel: a lane holding this many events writes those before now.
  static constexpr std::size_t kKeep = 4096;
  struct Lane;
  struct Output;
  TraceOptions options_;
  std::vector<Track> tracks_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::unique_ptr<Output> out_;
  std::vector<std::function<sc_core::sc_time()>> lagging_;
  std::uint64_t held_high_water_ = 0;
  std::vector<char> endpoint_wanted_;  // per endpoint (options_.endpoints), empty: all
  std::vector<std::uint64_t> flows_;   // (src << 32 | dst), sorted
  double ps_per_tick_ = 1;
};

}  // namespace fabricsim::tlm_fabric
