// Per-flow completion time (FCT) and slowdown. A flow is one message: a raw
// message, or an RDMA WRITE / SEND (traffic with transport rdma, perftest,
// collective transfers). Its FCT runs from when its first segment is ready to
// leave the source NIC to when its last byte has arrived at the destination NIC;
// the ideal FCT is the zero-load closed form of the same message on its path,
// and slowdown = FCT / ideal (docs/workloads.md, "Flow completion time").
//
// CODE FLOW
//   Nic / RdmaEngine flow handler -> FlowRecord (src, dst, bytes, start, end)
//   -> Fabric keeps the records that start after the warm-up
//   -> flow_results(): IdealFct per record -> FCT, slowdown percentiles, per size bucket
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/phy.h"
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
  mutable std::map<int, std::vector<int>> distances_;   // from a switch, in switch-switch hops
};

/// results.json "flows": count, FCT and slowdown percentiles, overall and per size bucket.
nlohmann::json flow_results(const std::vector<tlm_fabric::FlowRecord>& flows, const IdealFct& ideal);

}  // namespace fabricsim::sim
