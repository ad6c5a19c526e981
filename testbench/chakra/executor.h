// Runs a Chakra execution trace (trace.h) on the fabric's NICs. Each rank's nodes run
// as a DAG: a node is issued once every data and control dependency has completed.
// Compute nodes take the rank's one compute stream, one at a time in ready order;
// communication runs beside compute. A collective starts once every member of its
// process group has issued it and runs as a collectives.h transfer graph over the
// members' endpoints; a send and its receive (matched by source, destination and tag,
// in order) are a graph of one RDMA WRITE started once both are issued. Both complete
// when their last transfer is visible at the destination host; the graphs run on a
// CollectiveEngine (collective_engine.h), the one `collective:` runs on
// (docs/workloads.md).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <queue>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "testbench/chakra/trace.h"
#include "testbench/collective_engine.h"
#include "testbench/collectives.h"
#include "testbench/training/gpu.h"
#include "tlm/nic.h"
#include "tlm/wake_queue.h"

namespace fabricsim::chakra {

/// Ranks in one server reach each other through a scale-up port per GPU (NVLink-like)
/// instead of the fabric: latency + bytes / bandwidth, serialised at the sending and at
/// the receiving GPU's port. Off when gpus_per_server is 0. The defaults are `server.
/// scale_up`'s (sim/config_params.cpp): NVLink 4 at 450 GB/s each way per H100 SXM GPU.
struct ScaleUp {
  int gpus_per_server = 0;                                ///< endpoints e and f share a server when e / g == f / g
  double bandwidth_bps = 3600e9;                          ///< per GPU port, each direction [b/s]
  sc_core::sc_time latency = sc_core::sc_time(1, sc_core::SC_US);  ///< per transfer (assumption)
};

struct ExecutorParams {
  std::vector<int> ranks;              ///< endpoint of each trace rank
  testbench::CollectiveAlgorithm algorithm = testbench::CollectiveAlgorithm::ring;  ///< AllReduce algorithm
  int channels = 1;                    ///< rings / QP sets of ring collectives
  std::uint64_t chunk = 512 * 1024;    ///< pipeline chunk of the double binary tree and the broadcast chain [B]
  int tree_slots = 8;                  ///< double binary tree: chunks in flight per edge
  double reduce_bandwidth_bps = 8e12;  ///< per-rank reduction throughput [b/s]
  sc_core::sc_time step_latency;       ///< software latency per transfer
  int sl = 0;                          ///< service level of every QP
  /// Times a node without a duration: training::Gpu::seconds(precision, num_ops,
  /// tensor_size), a roofline (Williams, Waterman and Patterson, CACM 52(4), 2009).
  /// One GPU kind for every rank.
  training::Gpu gpu = training::gpu_preset("h100-sxm").value;
  training::Precision precision = training::Precision::bf16;
  ScaleUp scale_up;
  testbench::FastForwardParams fast_forward;  ///< simulation.fast_forward
  std::vector<int> qps_made;                  ///< testbench::EngineParams::qps_made
};

/// The collective a trace's collective type runs as, and the bytes per rank its transfer
/// graph takes (nccl-tests "size") for a node's comm_size on `members` ranks. Throws
/// TraceError naming the file and node for the types the executor does not run (reduce,
/// gather, scatter) and for a halving-doubling AllReduce over a group whose size is not
/// a power of two.
void check_runnable(const Trace& trace, const ExecutorParams& params);

class Executor : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Executor);
  /// `nics[e]` is endpoint e's NIC; `endpoint_lane[e]` the wake-queue lane it wakes in
  /// (empty: all in lane 0).
  Executor(sc_core::sc_module_name name, std::vector<tlm_fabric::Nic*> nics, std::shared_ptr<const Trace> trace,
           const ExecutorParams& params, std::vector<int> endpoint_lane = {});

  /// Every node of every rank completed.
  bool finished() const { return finished_; }
  /// Why the run stopped short (a cross-rank deadlock), empty otherwise.
  const std::string& error() const { return error_; }
  /// results.json "chakra" (docs/results.md).
  nlohmann::json report() const;
  /// A short table: per rank and per collective.
  std::string table() const;
  /// The longest lookahead lanes may run the trace with (CollectiveEngine).
  sc_core::sc_time least_completion_delay() const { return engine_->least_completion_delay(); }
  /// The transfers fast-forward landed without packets.
  testbench::FastForwardReport fast_forward_report() const { return engine_->fast_forward_report(); }
  /// Records the trace's transfers (sends, collectives) as steps per endpoint in `trace` (output.trace).
  void set_trace(tlm_fabric::FabricTrace* trace) { engine_->set_trace(trace); }

 private:
  struct Interval {
    sc_core::sc_time from, to;
  };
  struct ReadyCompute {
    sc_core::sc_time ready;
    std::uint32_t position;  // in the rank's execution order: ties go in that order
    std::uint32_t node;
    bool operator>(const ReadyCompute& o) const { return std::tie(ready, position) > std::tie(o.ready, o.position); }
  };
  struct Rank {
    const RankTrace* trace = nullptr;
    std::vector<std::vector<std::uint32_t>> dependents;
    std::vector<std::uint32_t> missing;     // dependencies not yet completed
    std::vector<std::uint32_t> position;    // in trace->order
    std::vector<sc_core::sc_time> issued;
    std::vector<std::uint8_t> state;        // 0 waiting, 1 issued, 2 done
    std::size_t remaining = 0;
    std::priority_queue<ReadyCompute, std::vector<ReadyCompute>, std::greater<>> ready;
    bool computing = false;
    sc_core::sc_time compute_s;
    std::vector<Interval> compute, comm;
    sc_core::sc_time last_end;
  };
  // A collective or a send/receive pair being run: its transfer graph over
  // `members` (trace ranks, the graph's participants in order) runs on the engine.
  struct Instance {
    bool collective = false;
    CollectiveType type = CollectiveType::all_reduce;
    std::string group;
    std::uint64_t comm_size = 0, size = 0;  // the node's bytes; the graph's (nccl-tests size)
    std::vector<int> members;
    std::vector<std::pair<int, std::uint32_t>> nodes;  // (rank, node) completed at the end
    sc_core::sc_time start, end;
    testbench::CollectiveOp op = testbench::CollectiveOp::allreduce;
  };
  // A process group: its members, and per collective sequence number the nodes issued.
  struct Group {
    std::string name;
    std::vector<int> members;
    std::map<std::uint64_t, std::vector<std::pair<int, std::uint32_t>>> issued;
  };
  struct CollectiveNode {
    int group = 0;
    std::uint64_t seq = 0;
  };
  struct Event {
    sc_core::sc_time at;
    std::uint64_t seq;
    int rank;             // node completion: rank and node; instance end: -1, node = graph id; scale-up landing: -2, node = wr
    std::uint64_t node;
    // Events of one time by what they are, not by when they were pushed: a graph's end
    // is pushed when its lane's window ends, which depends on the lanes.
    bool operator>(const Event& o) const {
      return std::tie(at, rank, node, seq) > std::tie(o.at, o.rank, o.node, o.seq);
    }
  };
  void run();
  void issue(int rank, std::uint32_t node, const sc_core::sc_time& now);
  void complete(int rank, std::uint32_t node, const sc_core::sc_time& now);
  void match_p2p(int src, int dst, std::int64_t tag, const sc_core::sc_time& now);
  void start(Instance inst, testbench::Schedule schedule, const sc_core::sc_time& now);
  /// A transfer over the scale-up ports: lands at latency + bytes / bandwidth after both
  /// ports are free.
  void post_scale_up(std::uint64_t wr, std::uint64_t bytes, int src_endpoint, int dst_endpoint, const sc_core::sc_time& now);
  void end_instance(std::uint64_t id, const sc_core::sc_time& now);
  void dispatch_compute(const sc_core::sc_time& now);
  void push_event(const sc_core::sc_time& at, int rank, std::uint64_t node);
  /// No event, transfer or compute left but nodes remain: stop with the error.
  void check_stuck(const sc_core::sc_time& now);
  std::string describe(int rank, std::uint32_t node) const;
  sc_core::sc_time node_compute_time(const Node& n) const;
  bool same_server(int a, int b) const;

  std::vector<tlm_fabric::Nic*> nics_;
  std::shared_ptr<const Trace> trace_;
  ExecutorParams params_;
  std::vector<Rank> ranks_;
  std::vector<Group> groups_;
  std::unordered_map<std::uint64_t, CollectiveNode> collective_node_;  // (rank << 32 | node) -> group, seq
  // Sends and receives issued and not yet matched, per (source, destination, tag).
  std::map<std::tuple<int, int, std::int64_t>, std::vector<std::uint32_t>> sends_, recvs_;
  std::map<std::uint64_t, Instance> instances_;  // in flight, by engine graph id (the order they started)
  std::vector<Instance> collectives_done_;       // for the report
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::uint64_t event_seq_ = 0;
  std::vector<int> to_dispatch_, dispatching_;           // ranks whose compute stream may start a node
  std::vector<sc_core::sc_time> up_port_free_, down_port_free_;  // scale-up, per endpoint
  std::vector<testbench::CollectiveEngine::Bypassed> scale_up_ready_;  // run: scratch
  std::size_t remaining_ = 0;
  bool started_ = false;
  bool finished_ = false;
  std::string error_;
  sc_core::sc_time end_;
  // Issues and completes nodes, runs compute and the scale-up ports: through the
  // WakeQueue, between the lanes' windows (it reads every rank); the engine posts and
  // lands the transfers in the NICs' lanes.
  tlm_fabric::WakeEvent wake_{[this] { run(); }, /*reads_every_lane=*/true};
  std::unique_ptr<testbench::CollectiveEngine> engine_;
};

}  // namespace fabricsim::chakra
