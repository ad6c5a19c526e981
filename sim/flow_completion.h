// Per-flow completion time (FCT) and slowdown (docs/workloads.md, "Flow completion
// time and slowdown"). A flow is one message: a raw message, or an RDMA WRITE / SEND.
// The NICs' FlowRecords that start after the warm-up go to FlowStats::add, which orders
// same-instant completions by (src, dst, flow, start) and puts FCT and slowdown against
// IdealFct into distributions, overall and per size bucket: results.json "flows".
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

/// Zero-load closed form of a message's network time on a minimal path: the k - 1 first
/// MTU segments serialised at the slowest link, each switch's header or tail delay and
/// pipeline, the last segment's tail delay on the last link (the formula is in
/// docs/workloads.md). Exact at zero load up to the core-clock edge rounding of each
/// switch (at most two cycles per switch).
class IdealFct {
 public:
  /// `host_links[e]`: endpoint e's cable; `fabric_link`: every switch-switch cable;
  /// `by_level[l]`: the switches of tier l (the last entry for the levels above). A
  /// minimal path climbs from the leaves and descends again, so its hop i is at tier
  /// min(i, hops - 1 - i); a switch's own overrides (switch.instances) are not seen.
  IdealFct(const TopologyGraph& graph, std::vector<hw::PhyTiming> host_links, const hw::PhyTiming& fabric_link,
           std::vector<tlm_fabric::SwitchParams> by_level, std::uint64_t mtu);
  /// Ideal FCT [s] of `bytes` from endpoint `src` to `dst`.
  double seconds(int src, int dst, std::uint64_t bytes) const;
  /// Switches on a minimal path from `src` to `dst` (0 back to back).
  int switch_hops(int src, int dst) const;

 private:
  const TopologyGraph& graph_;
  std::vector<hw::PhyTiming> host_links_;
  hw::PhyTiming fabric_link_;
  std::vector<tlm_fabric::SwitchParams> by_level_;
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
