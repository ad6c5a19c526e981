// Per-flow completion time (FCT) and slowdown. A flow is one message: a raw
// message, or an RDMA WRITE / SEND (traffic with transport rdma, perftest,
// collective transfers). Its FCT runs from when its first segment is ready to
// leave the source NIC to when its last byte has arrived at the destination NIC;
// the ideal FCT is the zero-load closed form of the same message on its path,
// and slowdown = FCT / ideal (docs/workloads.md, "Flow completion time").
//
// CODE FLOW
//   Nic / RdmaEngine flow handler -> FlowRecord (src, dst, bytes, start, end)
//   -> Fabric passes the records that start after the warm-up to FlowStats::add:
//      flows that complete at the same instant wait for it to pass and go in the
//      order of (src, dst, flow, start): the means are float sums, and the order of
//      same-time completions on different NICs is the kernel's, not the model's
//   -> IdealFct of the record -> FCT and slowdown into distributions, overall and
//      per size bucket (no record is kept beyond the instant: memory does not grow)
//   -> FlowStats::to_json(): results.json "flows"
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/phy.h"
#include "sim/stats.h"
#include "sim/topology.h"
#include "tlm/rdma_engine.h"
#include "tlm/switch.h"

namespace fabricsim::sim {

/// Zero-load closed form of a message's network time on a minimal path:
///
///   ideal = (k - 1) x occupancy(MTU) at the slowest link of the path      (serialization at the bottleneck)
///         + per switch: link header delay (cut-through) or the last segment's tail delay
///           (store-and-forward, or cut-through onto a faster link) + pipeline cycles / core clock
///         + tail delay of the last segment on the last link
///
/// with k = ceil(bytes / MTU) segments; header and tail delays include serialization,
/// propagation and FEC (hw::PhyTiming). Exact at zero load up to the core-clock edge
/// rounding of each switch (at most two cycles per switch).
class IdealFct {
 public:
  /// `host_links[e]`: endpoint e's cable; `fabric_link`: every switch-switch cable.
  IdealFct(const TopologyGraph& graph, std::vector<hw::PhyTiming> host_links, const hw::PhyTiming& fabric_link,
           const tlm_fabric::SwitchParams& switch_params, std::uint64_t mtu);
  /// Ideal FCT [s] of `bytes` from endpoint `src` to `dst`.
  double seconds(int src, int dst, std::uint64_t bytes) const;
  /// Switches on a minimal path from `src` to `dst` (0 back to back).
  int switch_hops(int src, int dst) const;

 private:
  const TopologyGraph& graph_;
  std::vector<hw::PhyTiming> host_links_;
  hw::PhyTiming fabric_link_;
  tlm_fabric::SwitchParams switch_;
  std::uint64_t mtu_;
  mutable std::vector<std::vector<int>> distances_;    // per switch, filled on first use: to every switch, in switch-switch hops
  /// The answers of `seconds` last asked: a fabric completes flows between the same pairs
  /// with the same sizes over and over. A slot per (src, dst) pair where the pairs are
  /// few enough (kMemoSlots), else direct mapped by (src, dst, bytes).
  struct Memo {
    int src = -1, dst = -1;
    std::uint64_t bytes = 0;
    double seconds = 0;
  };
  static constexpr std::size_t kMemoSlots = 16384;  // a power of two
  mutable std::vector<Memo> memo_ = std::vector<Memo>(kMemoSlots);
  std::size_t endpoints_;  // slot per pair when endpoints_ squared fits kMemoSlots, else 0
  double compute_seconds(int src, int dst, std::uint64_t bytes) const;
};

/// FCT and slowdown of the flows as they complete, overall and per size bucket.
class FlowStats {
 public:
  explicit FlowStats(IdealFct ideal) : ideal_(std::move(ideal)) {}
  /// One completed flow (completion times never decrease from one call to the next).
  void add(const tlm_fabric::FlowRecord& f);
  /// results.json "flows": count, FCT and slowdown summaries, overall and per size bucket.
  nlohmann::json to_json() const;

 private:
  static constexpr std::size_t kSizeBuckets = 4;
  /// Adds the flows of the last completion instant, in (src, dst, flow, start) order.
  void add_instant() const;
  IdealFct ideal_;
  // The figures are complete once the last instant is added, which to_json does.
  mutable std::vector<tlm_fabric::FlowRecord> instant_;  // completed at the same time, not yet added
  mutable stats::Distribution fct_us_, slowdown_;
  mutable std::array<stats::Distribution, kSizeBuckets> bucket_fct_us_, bucket_slowdown_;
};

}  // namespace fabricsim::sim
