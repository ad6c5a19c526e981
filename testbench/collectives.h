// Collectives over RDMA (nccl-tests conventions). Each algorithm is expanded into a
// dependency graph of transfers (RDMA WRITEs from rank to rank): a transfer is posted once
// every transfer it depends on has landed at its source rank, plus the reduction of what
// it carries and a per-step software latency; the collective ends when the last transfer
// has landed. docs/workloads.md, "Collectives", gives each algorithm's graph and source.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "hw/param_spec.h"
#include "hw/units.h"
#include "tlm/nic.h"
#include "tlm/wake_queue.h"

namespace fabricsim::testbench {

class CollectiveEngine;

enum class CollectiveOp { allreduce, reduce_scatter, allgather, alltoall };
enum class CollectiveAlgorithm { ring, double_binary_tree, halving_doubling, direct, sharp };
/// The configuration names of CollectiveOp (collective.op).
const hw::EnumNames<CollectiveOp>& collective_op_names();
/// The configuration names of CollectiveAlgorithm (collective.algorithm, training.algorithm).
const hw::EnumNames<CollectiveAlgorithm>& collective_algorithm_names();
std::string_view to_string(CollectiveOp o);
std::string_view to_string(CollectiveAlgorithm a);

/// A data-parallel training step (PyTorch DDP / Horovod style): forward
/// compute, backward compute that produces gradient buckets one after the
/// other, an AllReduce per bucket (in bucket order, each as soon as its bucket
/// is ready when `overlap`, else after the whole backward pass), then the
/// optimizer once every AllReduce has finished.
struct TrainingParams {
  bool enabled = false;
  sc_core::sc_time forward;                  ///< forward pass compute time
  sc_core::sc_time backward;                 ///< backward pass compute time (buckets evenly spread over it)
  sc_core::sc_time optimizer;                ///< optimizer step after the gradients are reduced
  std::vector<std::uint64_t> buckets;        ///< gradient bucket sizes [B], in the order they become ready
  int steps = 1;                             ///< training steps simulated
  bool overlap = true;                       ///< overlap communication with the backward pass
};

/// The aggregation tree of an in-network reduction: one aggregation node per switch of
/// the tree, reached through one aggregation port per tree edge (the side facing each
/// child and the side facing the parent), so a node takes every child's data and sends
/// every child its copy at line rate at once. Participants 0..n-1 are the ranks, n + i
/// is aggregation port i.
struct AggregationTree {
  std::vector<int> rank_node;   ///< node of each rank (its switch's)
  std::vector<int> rank_port;   ///< per rank: the participant of the port facing it
  std::vector<int> parent;      ///< per node: its parent node, -1 at the root
  std::vector<int> up_port;     ///< per node: the participant of its port facing the parent (-1 at the root)
  std::vector<int> child_port;  ///< per node: the participant of the parent's port facing it (-1 at the root)
  std::vector<int> endpoints;   ///< per aggregation port i: its endpoint id in the fabric
};

/// Steady-state fast-forward of transfer streams (`simulation.fast_forward`): once every
/// stream of a graph (a source rank's transfers on one channel, to one destination, of one
/// size) has taken the same time from post to landing within `tolerance` over its last
/// `window` transfers, the graph's further transfers on those streams land after that
/// time without their packets (docs/performance.md, "Fast-forward").
struct FastForwardParams {
  bool on = false;
  int window = 4;            ///< transfers per stream the steady state is judged over
  double tolerance = 0.01;   ///< (longest - shortest) / mean post-to-landing time allowed
  /// Counts a skipped WRITE of `bytes` from endpoint `src` (its QP `qpn`) to `dst` on the
  /// links its packets and ACKs would have crossed; called in the source's lane when the
  /// transfer is posted, or between windows (the fabric's; none: not counted).
  std::function<void(int src, int dst, std::uint32_t qpn, std::uint64_t bytes)> count_links;
};

/// What fast-forward skipped: transfers landed without packets.
struct FastForwardReport {
  std::uint64_t transfers = 0, bytes = 0;
  std::uint64_t engaged = 0;  ///< times a graph went to fast-forward
  std::uint64_t iterations = 0;  ///< repeated iterations of a collective replayed from the first
  std::uint64_t resumed = 0;  ///< times one went back to packets: another graph started, or a stream changed
};

struct CollectiveParams {
  CollectiveOp op = CollectiveOp::allreduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
  std::vector<std::uint64_t> sizes{1 << 20};          ///< bytes per rank (nccl-tests "size")
  int iterations = 1;                                 ///< timed iterations per size
  int channels = 1;                                   ///< parallel rings / QP sets
  std::uint64_t tree_chunk = 512 * 1024;              ///< double binary tree pipeline chunk [B]
  int tree_slots = 8;                                 ///< chunks in flight per tree edge (NCCL_STEPS buffer slots)
  std::vector<int> ranks;                             ///< endpoint of each rank (placement resolved)
  double reduce_bandwidth_bps = 8e12;                 ///< per-rank reduction throughput [b/s]
  sc_core::sc_time step_latency;                      ///< software / kernel latency per transfer
  int sl = 0;                                         ///< service level
  AggregationTree tree;                               ///< sharp: filled by the fabric builder
  sc_core::sc_time aggregation_latency;               ///< sharp: per aggregation node and chunk, inputs in -> result out
  double aggregation_bandwidth_bps = 0;               ///< sharp: reduction throughput of an aggregation node [b/s]; 0: no limit
  TrainingParams training;                            ///< when enabled: a training step instead of a size sweep
  FastForwardParams fast_forward;                     ///< simulation.fast_forward (not for sharp's raw messages)
  std::vector<int> qps_made;                          ///< EngineParams::qps_made
};

/// nccl-tests bus-bandwidth factor: AllReduce 2(n-1)/n, ReduceScatter/AllGather/AlltoAll (n-1)/n.
double bus_factor(CollectiveOp op, int ranks);

/// One transfer of the dependency graph, with its dependency list (Schedule::operator[]).
struct Transfer {
  int src = 0, dst = 0;                ///< ranks
  std::uint64_t bytes = 0;
  int channel = 0;
  std::vector<int> deps;               ///< transfers that must have landed at `src` first
  std::uint64_t reduce_bytes = 0;      ///< reduced at `src` before sending
};

/// The transfer graph of one collective. The regular algorithms (ring, recursive
/// halving-doubling, direct all-to-all: at most one dependency per transfer) are a
/// formula, nothing stored per transfer (a ring AllReduce on 2048 ranks has 8.4 million
/// transfers); the others are stored compactly: the transfers in one array, every
/// dependency list in one flat array indexed by offsets (compressed sparse rows), and
/// the reverse lists (who waits for transfer i) built once the graph is complete.
class Schedule {
 public:
  /// A transfer without its dependency list.
  struct Step {
    int src = 0, dst = 0;              ///< ranks (or aggregation ports, sharp)
    int channel = 0;
    std::uint64_t bytes = 0;
    std::uint64_t reduce_bytes = 0;    ///< reduced at `src` before sending
  };
  /// Read-only view of one index list: a range of a stored list, or a formula's one index.
  struct Indices {
    const int* first = nullptr;
    const int* last = nullptr;
    int one = -1;                      ///< the single index when first is null (-1: none)
    const int* begin() const { return first ? first : &one; }
    const int* end() const { return first ? last : &one + (one >= 0 ? 1 : 0); }
    std::size_t size() const { return static_cast<std::size_t>(end() - begin()); }
  };

  /// Ring over n ranks, `steps` steps per channel of `chunk` bytes each (steps
  /// reduce_from..reduce_to reduce what they send): step s of rank r goes to r+1 once
  /// step s-1 of rank r-1 has landed at r. Transfer ch * steps * n + s * n + r.
  static Schedule ring(int n, int channels, std::uint64_t chunk, int steps, int reduce_from, int reduce_to);
  /// Rabenseifner over n = 2^k ranks: reduce-scatter by recursive halving, allgather by
  /// recursive doubling; each step waits for what landed at its rank the step before.
  /// Transfer step * n + r.
  static Schedule halving_doubling(int n, std::uint64_t bytes);
  /// Direct all-to-all: every rank sends bytes / n to every other at once, no
  /// dependencies. Transfer r * (n - 1) + k - 1 goes from r to r + k.
  static Schedule direct(int n, std::uint64_t bytes);

  /// Appends a transfer that waits for `deps` (indices of earlier transfers); returns its
  /// index (a stored graph only).
  int add(const Step& step, std::initializer_list<int> deps = {}) { return add(step, deps.begin(), deps.size()); }
  int add(const Step& step, const std::vector<int>& deps) { return add(step, deps.data(), deps.size()); }

  std::size_t size() const { return form_ == Form::graph ? steps_.size() : size_; }
  bool empty() const { return size() == 0; }
  Step step(std::size_t i) const;
  Indices deps(std::size_t i) const;
  /// Transfers that wait for transfer i, ascending (a stored graph: after index_dependents()).
  Indices dependents(std::size_t i) const;
  /// Bytes the destination reduces once transfer i lands, before its result is final: a
  /// ring ReduceScatter sums its last received chunk into its block (p-1 reductions in
  /// all; Thakur, Rabenseifner and Gropp, IJHPCA 19(1), 2005).
  std::uint64_t reduce_at_landing(std::size_t i) const;
  /// Room for `transfers` more transfers with `deps` more dependencies in all (no regrowth).
  void reserve(std::size_t transfers, std::size_t deps);
  /// Builds the reverse lists of a stored graph; call once every transfer is added.
  void index_dependents();
  /// Transfer i with a copy of its dependency list (inspection and tests).
  Transfer operator[](std::size_t i) const;

 private:
  enum class Form { graph, ring, halving_doubling, direct };
  int add(const Step& step, const int* deps, std::size_t count);
  // A formula's transfers as a grid: transfer (channel * steps + step) * width + column.
  // Ring and halving-doubling: the column is the sending rank; direct: the step is the
  // sending rank and the column k - 1 (it sends to rank + k).
  struct Cell {
    int channel, step, column;
  };
  Cell cell(std::size_t i) const;
  int index(int channel, int step, int column) const;
  /// Ring, halving-doubling: the rank `rank` sends to (direction +1) or receives from
  /// (-1) at `step`.
  int peer(int step, int rank, int direction) const;
  /// Halving-doubling: the rank r exchanges with at `level`.
  int partner(int level, int r) const {
    return level < levels_ ? r ^ (n_ >> (level + 1)) : r ^ (1 << (level - levels_));
  }

  Form form_ = Form::graph;
  // A formula's parameters (ring: bytes_ is the chunk; halving-doubling and direct: the
  // bytes per rank).
  std::size_t size_ = 0;
  int n_ = 0, steps_per_channel_ = 0, width_ = 0, reduce_from_ = 0, reduce_to_ = 0, levels_ = 0;
  std::uint64_t bytes_ = 0;
  // A stored graph.
  std::vector<Step> steps_;
  std::vector<std::uint32_t> dep_begin_{0};        // deps of i: deps_[dep_begin_[i] .. dep_begin_[i + 1])
  std::vector<int> deps_;
  std::vector<std::uint32_t> dependent_begin_;
  std::vector<int> dependents_;
};

/// Transfers with some but not all of their inputs landed: how many are missing, and the
/// time the latest landed input makes each ready. A transfer waits for its latest input.
class InputJoin {
 public:
  /// One input of the transfer `key` (of `inputs` in all) counted, ready at `ready`; the
  /// transfer's ready time once it was the last missing input, else nothing.
  std::optional<sc_core::sc_time> land(std::size_t inputs, std::uint64_t key, const sc_core::sc_time& ready);
  void clear() { waiting_.clear(); }

 private:
  struct Waiting {
    std::uint32_t missing;
    sc_core::sc_time ready;
  };
  std::unordered_map<std::uint64_t, Waiting> waiting_;
};

/// Time to reduce `bytes` at `bps` (0: free).
sc_core::sc_time reduction_time(std::uint64_t bytes, double bps);

/// Builds the transfer graph of one collective of `bytes` per rank on `n` ranks.
Schedule build_schedule(const CollectiveParams& p, int n, std::uint64_t bytes);
/// Broadcast from participant 0 as a pipelined chain (NCCL's ring broadcast): `bytes` in
/// chunks of at most `chunk`; chunk k goes from participant j to j + 1 once it has landed
/// at j. Transfer k * (n - 1) + j.
Schedule broadcast_chain(int n, std::uint64_t bytes, std::uint64_t chunk);
/// Dissemination barrier (Hensgen, Finkel and Manber, Int. J. Parallel Programming 17(1),
/// 1988): ceil(log2 n) rounds; in round k participant i sends a `token`-byte message to
/// i + 2^k (mod n) once round k - 1's message from i - 2^(k-1) has landed at it; every
/// participant has passed once its last round's message has landed. Transfer k * n + i.
Schedule dissemination_barrier(int n, std::uint64_t token);

/// Runs the collective: one transfer graph after the other (per size and iteration, or
/// per gradient bucket of a training step) on a CollectiveEngine over the ranks'
/// endpoints. A collective ends and the next starts between the lanes' windows, at the
/// time the last landing is visible, so the lanes' lookahead must not exceed
/// least_completion_delay().
class CollectiveRunner : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(CollectiveRunner);
  /// `nics[e]` is endpoint e's NIC; `endpoint_lane[e]` the wake-queue lane it wakes in
  /// (empty: all in lane 0).
  CollectiveRunner(sc_core::sc_module_name name, std::vector<tlm_fabric::Nic*> nics, const CollectiveParams& params,
                   std::vector<int> endpoint_lane = {});
  ~CollectiveRunner() override;

  bool finished() const { return finished_; }
  nlohmann::json report() const;
  /// Training mode: per step its time, compute time, communication and exposed communication.
  nlohmann::json training_report() const;
  /// sharp: a raw message arrived (the fabric forwards every flow record here).
  void on_flow(const tlm_fabric::FlowRecord& f);
  /// nccl-tests style table.
  std::string table() const;
  /// The least time from a landing's completion to the host seeing it, over the ranks'
  /// NICs: the longest lookahead lanes may run this collective with.
  sc_core::sc_time least_completion_delay() const;
  /// The transfers fast-forward landed without packets.
  FastForwardReport fast_forward_report() const;
  /// Records the collective's transfers as steps per endpoint in `trace` (output.trace).
  void set_trace(tlm_fabric::FabricTrace* trace);

 private:
  struct SizeResult {
    std::uint64_t bytes;
    std::vector<double> times_us;
  };
  void start_iteration(const sc_core::sc_time& now);
  // Fast-forward's memo of repeated iterations: the first iteration of a size, run on
  // the fabric alone, records its time and its flows (per lane, relative to its start);
  // the size's later iterations replay them: the fabric between two iterations is idle,
  // so the same graph takes the same course.
  struct Memo {
    std::uint64_t bytes = 0;
    sc_core::sc_time duration;
    std::vector<tlm_fabric::FlowRecord> flows;  // times from the iteration's start, in end order
    std::uint64_t bytes_moved = 0;              // of the flows
  };
  static constexpr std::size_t kMaxMemoFlows = std::size_t{1} << 20;
  bool replays() const;
  void replay(const sc_core::sc_time& now);
  /// Hands the replayed flows due by now to their NICs' flow handlers, as the fabric
  /// reports its own at their ends; after the last, the iteration ends.
  void replay_flows();
  void keep_memo(const sc_core::sc_time& end);
  /// The engine's graph ended at `end`.
  void ended(const sc_core::sc_time& end);
  void run();
  void next_training_job(const sc_core::sc_time& now);

  CollectiveParams params_;
  std::vector<int> participants_;                  // endpoint of each participant: the ranks, then aggregation ports
  std::size_t size_index_ = 0;
  sc_core::sc_time iteration_start_;
  bool running_ = false;                           // a collective is under way (its end wakes wake_)
  sc_core::sc_time next_start_;                    // between collectives: when the next may start
  std::vector<SizeResult> results_;
  std::optional<Memo> memo_;
  bool recording_ = false;                                      // the memo's iteration runs
  std::vector<std::vector<tlm_fabric::FlowRecord>> recorded_;   // its flows so far, per lane
  FastForwardReport replayed_;
  std::size_t replay_next_ = 0;                                 // the replay's next flow in the memo
  // Starts and ends collectives: through the WakeQueue, like the blocks, between the
  // lanes' windows.
  tlm_fabric::WakeEvent wake_{[this] { run(); }, /*reads_every_lane=*/true};
  tlm_fabric::WakeEvent replay_wake_{[this] { replay_flows(); }, /*reads_every_lane=*/true};
  std::unique_ptr<CollectiveEngine> engine_;
  bool finished_ = false;
  // training mode
  struct StepResult {
    double step_us, compute_us, comm_us, exposed_us;
  };
  std::vector<StepResult> steps_;
  int step_ = 0;
  std::size_t bucket_ = 0;
  sc_core::sc_time step_start_, last_job_end_;
  double comm_s_ = 0;
  bool training_started_ = false;
};

}  // namespace fabricsim::testbench
