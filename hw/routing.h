// Route selection among equal-cost next hops: the decision of the route-lookup
// stage once the forwarding table has given the candidate output ports.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hw/param_spec.h"

namespace fabricsim::hw {

/// How a switch picks one of several equal-cost output ports.
enum class RoutingAlgorithm {
  d_mod_k,   ///< deterministic: destination mod k (D-mod-k, Zahavi et al.)
  ecmp,      ///< hash of (src, dst, flow): one path per flow, collisions show
  flowlet,   ///< re-hash a flow after an idle gap > flowlet_timeout (LetFlow, NSDI 2017)
  spray,     ///< per packet, round robin over the candidates
  random_spray,  ///< per packet, a uniformly random candidate (random packet spraying)
  adaptive,  ///< per packet, the candidate with the least queued bytes (ties by hash)
};
std::string_view to_string(RoutingAlgorithm a);
const std::vector<RoutingAlgorithm>& all_routing_algorithms();
/// The configuration names of RoutingAlgorithm (routing.algorithm).
const EnumNames<RoutingAlgorithm>& routing_algorithm_names();

struct RoutingParams {
  RoutingAlgorithm algorithm = RoutingAlgorithm::ecmp;  ///< selection policy
  std::uint64_t hash_seed = 0;                          ///< ECMP hash seed
  bool per_switch_hash = true;                          ///< salt the hash per switch; false: every switch hashes alike (polarisation)
  double flowlet_timeout_s = 1e-6;                      ///< idle gap that starts a new flowlet [s]
  /// D-mod-k at tree level l picks up-port (dst / divisor) mod k, the divisor being the
  /// product of the up-port counts of the levels below (1 at the leaves), so each level
  /// reads the next digit of the destination (Zahavi et al.).
  std::uint64_t d_mod_k_divisor = 1;
};

/// The keys of `routing:`.
const ParamBlock& routing_params();

/// Header fields the hash reads.
struct RouteKey {
  int src = 0;
  int dst = 0;
  std::uint32_t flow = 0;
};

class RoutePolicy {
 public:
  RoutePolicy(const RoutingParams& params, std::uint64_t switch_salt);
  /// Picks one of `candidates` (output ports, non-empty); `queued_bytes[port]` is
  /// each output's queue depth (adaptive); `now_s` the packet's arrival time (flowlet).
  int select(const RouteKey& key, const std::vector<int>& candidates, const std::vector<std::uint64_t>& queued_bytes,
             double now_s);
  /// Where the packets of a flow in a steady state go, read without the policy's state
  /// (any thread): every one to `candidates[index]` when `single_path()`, else spread
  /// evenly over the candidates from `index` on. Adaptive routing takes its tie-break,
  /// the hash, while the candidates' queues are even; spraying shares a steady load
  /// evenly, and flowlets re-hashed over many messages come to the same.
  std::size_t steady_index(const RouteKey& key, std::size_t k) const;
  bool single_path() const {
    return params_.algorithm == RoutingAlgorithm::d_mod_k || params_.algorithm == RoutingAlgorithm::ecmp ||
           params_.algorithm == RoutingAlgorithm::adaptive;
  }

 private:
  std::uint64_t hash(const RouteKey& key, std::uint64_t extra) const;
  struct Flowlet {
    double last_s = -1;
    std::uint64_t epoch = 0;
  };
  RoutingParams params_;
  std::uint64_t salt_;
  std::uint64_t spray_next_ = 0;  // spray: the next candidate; random_spray: the draw count
  std::uint64_t spray_seed_;      // random_spray: this switch's stream
  std::unordered_map<std::uint64_t, Flowlet> flowlets_;
};

}  // namespace fabricsim::hw
