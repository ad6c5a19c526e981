// The collective engine: runs transfer graphs (collectives.h Schedule) on the NICs of
// their participants, several at once. A transfer is posted on its source's NIC once
// every transfer it depends on has landed at its source, plus the software step latency
// and the reduction of what it carries; a graph ends when its last transfer is visible
// at its destination host. `collective:` (CollectiveRunner) and the Chakra executor run
// every collective and send/receive through one engine (docs/workloads.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <systemc>

#include "testbench/collectives.h"
#include "tlm/nic.h"
#include "tlm/wake_queue.h"

namespace fabricsim::testbench {

struct EngineParams {
  sc_core::sc_time step_latency;          ///< software / kernel latency per transfer at a rank
  double reduce_bandwidth_bps = 8e12;     ///< per-rank reduction throughput [b/s]
  sc_core::sc_time aggregation_latency;   ///< per aggregation node and chunk (in-network reduction)
  double aggregation_bandwidth_bps = 0;   ///< reduction throughput of an aggregation node [b/s]; 0: no limit
  int sl = 0;                             ///< service level of every QP and raw message
  FastForwardParams fast_forward;         ///< off by default
  /// Per endpoint, the QPs made before the engine's on a NIC another process makes (a
  /// null entry of the NICs: the engine numbers its QPs there after them); empty: none.
  std::vector<int> qps_made;
};

/// Lanes: each participant's transfers wait and post in its NIC's wake-queue lane, a
/// landing releases its dependents in the source's lane (a call deferred to that lane
/// when it is another), and a graph starts and ends between the lanes' windows: its end
/// is found at a window's end, at the time its last landing is visible, so the lanes'
/// lookahead must not exceed least_completion_delay(). With one lane all of this runs at
/// once, in the same order.
class CollectiveEngine {
 public:
  /// A graph's id: the work-request id of its transfer 0 (transfer i posts as id + i).
  using GraphId = std::uint64_t;
  struct Hooks {
    /// Graph `id` has ended at `end` (between windows, or at once on one lane).
    std::function<void(GraphId id, const sc_core::sc_time& end)> done;
    /// Transfers from endpoint `src` to `dst` the owner carries itself (scale-up ports):
    /// they wait in bypassed() instead of a NIC and land through land().
    std::function<bool(int src, int dst)> bypass;
    /// A bypassed transfer is ready at the time given (between windows).
    std::function<void(const sc_core::sc_time&)> bypass_ready;
  };
  /// A bypassed transfer, ready to go.
  struct Bypassed {
    std::uint64_t wr;  ///< its work-request id: its graph's id + its index
    int src, dst;      ///< endpoints
    std::uint64_t bytes;
  };

  /// `nics[e]` is endpoint e's NIC; `endpoint_lane[e]` the wake-queue lane it wakes in
  /// (empty: all in lane 0); the engine takes the RDMA completions of `endpoints`' NICs.
  CollectiveEngine(std::vector<tlm_fabric::Nic*> nics, std::vector<int> endpoint_lane, const std::vector<int>& endpoints,
                   const EngineParams& params, Hooks hooks);
  CollectiveEngine(const CollectiveEngine&) = delete;
  CollectiveEngine& operator=(const CollectiveEngine&) = delete;

  /// Runs `schedule` from `now` (not inside a window): participant p is endpoint
  /// `endpoints[p]`, participants from `ranks` on are aggregation ports. `raw`: every
  /// transfer is a raw message (in-network reduction) landed through on_flow(), else an
  /// RDMA WRITE on the QP of its (source, destination, channel), made now if new.
  GraphId start(Schedule schedule, std::vector<int> endpoints, int ranks, bool raw, const sc_core::sc_time& now);
  /// A flow record of the fabric: lands a raw transfer.
  void on_flow(const tlm_fabric::FlowRecord& f);
  /// The bypassed transfers ready by `now`, in start order then graph order (not inside a window).
  void bypassed(const sc_core::sc_time& now, std::vector<Bypassed>& out);
  /// The bypassed transfer `wr` landed, visible at `visible` (not inside a window).
  void land(std::uint64_t wr, const sc_core::sc_time& visible);
  /// Graphs under way.
  std::size_t running() const { return runs_.size(); }
  /// The least time from a landing's completion to the host seeing it, over `endpoints`'
  /// NICs: the longest lookahead lanes may run the engine with.
  sc_core::sc_time least_completion_delay() const;
  int lanes() const { return static_cast<int>(lanes_.size()); }
  /// Records each transfer posted on a NIC, from its post to its landing, as a step of its
  /// source endpoint in `trace` (output.trace).
  void set_trace(tlm_fabric::FabricTrace* trace);
  /// The transfers fast-forward landed without packets so far (not inside a window).
  FastForwardReport fast_forward_report() const;
  /// A WRITE of `bytes` from `src` (QP `qpn`) to `dst` sent without its packets (posted at
  /// `now`): its packets counted as sent, on its NIC and the links they would have
  /// crossed; in the source's lane, or between windows.
  void count_skipped_send(int src, int dst, std::uint32_t qpn, std::uint64_t bytes, const sc_core::sc_time& now);
  /// The same message delivered at `f.end`: the destination NIC counts its packets as
  /// received and reports the flow; in the destination's lane, or between windows.
  void deliver_skipped(const tlm_fabric::FlowRecord& f);

 private:
  // Per graph and lane: the transfers landing at the lane's participants, those landed,
  // and the latest landing as the hosts see it (written by its lane only).
  struct alignas(64) LaneCount {
    std::size_t expected = 0, landed = 0;
    sc_core::sc_time last_visible;
  };
  // A stream's last transfers' times from post (ps): to its first segment, to its last
  // byte in at the destination NIC, to the landing the host sees.
  struct StreamSample {
    std::int64_t start = 0, end = 0, visible = 0;
  };
  static std::int64_t ticks(const sc_core::sc_time& t) { return static_cast<std::int64_t>(t.value()); }
  struct Stream {
    int dst = -1;
    std::uint64_t bytes = 0, reduce_bytes = 0;
    std::vector<StreamSample> last;  // ring of params_.fast_forward.window samples
    std::size_t seen = 0;            // samples since (dst, bytes) last changed
    StreamSample mean() const;
    bool carries(const Schedule::Step& t) const { return dst == t.dst && bytes == t.bytes && reduce_bytes == t.reduce_bytes; }
    bool steady(std::size_t window, double tolerance) const;
  };
  // A landing without packets, due at its last byte's time at the destination NIC.
  struct VirtualLanding {
    sc_core::sc_time end;
    std::uint64_t wr;
    sc_core::sc_time start, visible;
    bool operator>(const VirtualLanding& o) const { return std::tie(end, wr) > std::tie(o.end, o.wr); }
  };
  struct Run {
    GraphId id = 0;
    Schedule schedule;
    std::vector<int> endpoints;
    int ranks = 0;
    bool raw = false;
    sc_core::sc_time start;
    // Per transfer, one byte, written only in its destination's lane: whether it landed
    // (a ring's graph is a formula: this is all a ring AllReduce keeps per transfer).
    std::vector<std::uint8_t> landed;
    std::vector<LaneCount> lanes;
    // Fast-forward: transfers posted in (virtual_after, virtual_until] land without packets.
    bool fast = false;  // the graph may fast-forward (params_.fast_forward.on, RDMA transfers)
    sc_core::sc_time virtual_after = sc_core::sc_max_time(), virtual_until = sc_core::sc_max_time();
    int channels = 1;
    std::vector<Stream> streams;  // per (source participant, channel)
    bool virtual_at(const sc_core::sc_time& now) const { return virtual_after < now && now <= virtual_until; }
    bool fast_forwarding() const { return virtual_after != sc_core::sc_max_time() && virtual_until == sc_core::sc_max_time(); }
  };
  // A transfer ready at `first`, by its work-request id: ascending ids are start order,
  // then graph order.
  using ReadyEntry = std::pair<sc_core::sc_time, std::uint64_t>;
  using ReadyQueue = std::priority_queue<ReadyEntry, std::vector<ReadyEntry>, std::greater<>>;
  // The participants of one wake-queue lane: their transfers whose dependencies have all
  // landed and that are not posted yet, earliest ready first (post_ready() touches only
  // these, never a whole graph), and their transfers with inputs missing.
  struct alignas(64) Lane {  // (lanes write theirs on their own threads: no line shared)
    Lane(CollectiveEngine& engine, std::size_t endpoints);
    tlm_fabric::WakeEvent wake;
    ReadyQueue eligible;
    std::vector<std::uint64_t> batch;
    std::vector<int> kicked;            // post_ready: endpoints posted to, in first-post order
    std::vector<bool> to_kick;          // per endpoint: in kicked
    InputJoin waiting;
    std::vector<ReadyEntry> bypassed;   // released in a window: to bypassed_ at its end
    // Fast-forward: landings without packets at this lane's participants; the posts and
    // landings of packet transfers, taken in by check_fast_forward between windows.
    std::priority_queue<VirtualLanding, std::vector<VirtualLanding>, std::greater<>> virtual_landings;
    std::vector<std::pair<std::uint64_t, sc_core::sc_time>> posts;  // (wr, post time)
    std::vector<std::pair<std::uint64_t, StreamSample>> landings;    // (wr, absolute times in kernel ticks)
    std::vector<std::pair<std::uint64_t, sc_core::sc_time>> changes; // (wr, post time): off its stream in fast-forward
    FastForwardReport skipped;
  };
  void post_ready(Lane& lane);
  // Fast-forward (engine_fast_forward.cpp).
  /// Transfer i of `run`, posted now from `lane`, lands without packets after its stream's
  /// steady time; false when its stream has none (a new destination or size).
  bool post_virtual(Lane& lane, Run& run, std::size_t i, const sc_core::sc_time& now);
  /// Lands the virtual transfers of `lane` due by `now`.
  void land_virtual(Lane& lane, const sc_core::sc_time& now);
  void add_virtual(Lane& lane, const VirtualLanding& v);
  /// Between windows, every check interval while a graph samples: takes in the lanes'
  /// samples and sends a graph whose streams are all steady to fast-forward.
  void check_fast_forward();
  /// Graphs in fast-forward go back to packets from `now` and sample anew: all of them
  /// (a graph starts), or `run`.
  void resume_packets(const sc_core::sc_time& now);
  void resume_packets(Run& run, const sc_core::sc_time& now);
  void start_sampling(Run& run, const sc_core::sc_time& now);
  /// `run` ends: the posts and landings of its transfers that no check has taken in go.
  void forget_samples(const Run& run);
  void on_completion(int endpoint, const tlm_fabric::Completion& c);
  void land(Run& run, std::size_t i, const sc_core::sc_time& visible);
  /// Transfer j's inputs: one more landed, visible at `visible` (in j's source lane).
  void release(Run& run, std::size_t j, const sc_core::sc_time& visible);
  /// Transfer j of `run` is ready at `ready`: to its source lane's queue, or bypassed.
  void ready(Run& run, std::size_t j, const sc_core::sc_time& ready);
  /// A landing's release of a transfer in another lane, made in that lane before its next
  /// window; crosses processes as (work request, visible time) through release_receiver_.
  struct Release {
    CollectiveEngine* engine;
    std::uint64_t wr;
    sc_core::sc_time::value_type visible;
    void operator()() const { engine->release(wr, sc_core::sc_time::from_value(visible)); }
    void pack(tlm_fabric::WakeQueue::Bytes& out) const;
  };
  void release(std::uint64_t wr, const sc_core::sc_time& visible);
  /// Between windows: ends every graph whose transfers have all landed (in every
  /// process's lanes), takes in the lanes' bypassed transfers.
  void window_ended();
  /// Whether every transfer of `run` landing in this process's lanes has landed; `end`:
  /// the latest of them visible at its host, from the graph's start.
  bool landed_here(const Run& run, sc_core::sc_time& end) const;
  /// The graphs of `runs` whose transfers have all landed, in every process, each with the
  /// latest landing visible at its host (in every process at once: a collective call).
  std::vector<std::pair<Run*, sc_core::sc_time>> landed_everywhere(const std::vector<Run*>& runs) const;
  /// Whether every transfer of `run` has landed; then it ends (not inside a window).
  bool end_if_done(Run& run);
  /// `run` ends at `end`: its state goes, the owner hears of it.
  void end_run(Run& run, const sc_core::sc_time& end);
  /// The graph work request `wr` belongs to, or null.
  Run* run_of(std::uint64_t wr) const;
  Lane& lane_of_endpoint(int e) { return *lanes_[static_cast<std::size_t>(endpoint_lane_[static_cast<std::size_t>(e)])]; }
  /// QPs from endpoint `a`: by (destination endpoint x 64 + channel), ascending: 12 bytes
  /// a QP where a hash map's node and bucket took about 40, and an all-to-all has a QP
  /// per pair of ranks (2,048 ranks: 4.2 million).
  struct QpEntry {
    std::uint32_t peer;       // destination endpoint x 64 + channel
    std::int32_t qp;          // at the source
    std::int32_t responder;   // at the destination
    bool operator<(const QpEntry& o) const { return peer < o.peer; }
  };
  static std::uint32_t peer_key(int dst, int channel) { return static_cast<std::uint32_t>(dst) * 64 + channel; }
  const QpEntry& qp_for(int a, int b, int channel) const;
  /// Makes every QP of `run` that does not exist yet, in graph order, with room for all
  /// of them reserved at each NIC first.
  void make_qps(const Run& run);

  std::vector<tlm_fabric::Nic*> nics_;
  std::vector<int> endpoint_lane_;
  std::vector<int> endpoints_;
  EngineParams params_;
  Hooks hooks_;
  tlm_fabric::FabricTrace* trace_ = nullptr;  // null: not traced
  std::vector<int> trace_track_;              // per endpoint
  std::vector<std::vector<QpEntry>> qps_;      // per source endpoint
  std::vector<int> qps_elsewhere_;             // per endpoint whose NIC another process makes: its QPs
  std::vector<std::unique_ptr<Run>> runs_;     // under way, ascending id
  std::size_t raw_runs_ = 0;
  std::uint64_t next_id_ = 0;
  ReadyQueue bypassed_;                        // bypassed transfers, between windows
  std::vector<std::unique_ptr<Lane>> lanes_;
  int release_receiver_ = -1;                  // the wake queue's handle of Release calls as bytes
  // Fast-forward: post times of the packet transfers of graphs under way whose landings
  // no check has taken in yet (between windows only).
  std::unordered_map<std::uint64_t, sc_core::sc_time> pending_posts_;
  std::vector<std::pair<std::uint64_t, StreamSample>> taken_;  // check_fast_forward's scratch
  std::unique_ptr<tlm_fabric::WakeEvent> check_;                  // made when a graph first samples
  FastForwardReport report_;                                      // engaged, paused
};

}  // namespace fabricsim::testbench
