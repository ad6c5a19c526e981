#include "hw/routing.h"

#include <stdexcept>

#include "hw/seed.h"

namespace fabricsim::hw {

namespace {
constexpr std::uint64_t kRandomSprayStream = 1;  // random_spray's stream of the switch seed
}  // namespace

const EnumNames<RoutingAlgorithm>& routing_algorithm_names() {
  static const EnumNames<RoutingAlgorithm> names{{RoutingAlgorithm::d_mod_k, "d_mod_k"},
                                                 {RoutingAlgorithm::ecmp, "ecmp"},
                                                 {RoutingAlgorithm::flowlet, "flowlet"},
                                                 {RoutingAlgorithm::spray, "spray"},
                                                 {RoutingAlgorithm::random_spray, "random_spray"},
                                                 {RoutingAlgorithm::adaptive, "adaptive"}};
  return names;
}

std::string_view to_string(RoutingAlgorithm a) { return name_of(routing_algorithm_names(), a); }

const ParamBlock& routing_params() {
  static const ParamBlock block{
      "routing",
      "how a switch picks one of several equal-cost output ports",
      {{"algorithm", ParamType::name, "", "ecmp", "", "", names_of(routing_algorithm_names()), "",
        "selection policy, see below"},
       {"hash_seed", ParamType::integer, "", "0", "0", "9223372036854775807", {}, "",
        "seed of the ECMP hash"},
       {"per_switch_hash", ParamType::boolean, "", "true", "", "", {}, "",
        "salt the hash per switch; `false`: every switch hashes alike (polarisation)"},
       {"flowlet_timeout", ParamType::time, "", "1us", "0s", "1s", {}, "",
        "`flowlet`: idle gap after which a flow may take a new path"}}};
  return block;
}

const std::vector<RoutingAlgorithm>& all_routing_algorithms() {
  static const std::vector<RoutingAlgorithm> v{RoutingAlgorithm::d_mod_k, RoutingAlgorithm::ecmp,
                                               RoutingAlgorithm::flowlet, RoutingAlgorithm::spray,
                                               RoutingAlgorithm::random_spray, RoutingAlgorithm::adaptive};
  return v;
}

RoutePolicy::RoutePolicy(const RoutingParams& params, std::uint64_t switch_salt)
    : params_(params), salt_(params.per_switch_hash ? switch_salt : 0),
      spray_seed_(mix_seed(switch_salt ^ params.hash_seed, kRandomSprayStream)) {
  if (params_.flowlet_timeout_s < 0) throw std::invalid_argument("flowlet_timeout must not be negative");
}

std::uint64_t RoutePolicy::hash(const RouteKey& key, std::uint64_t extra) const {
  // A mixing hash of the 5-tuple stand-ins; the same seed and salt give the same paths.
  std::uint64_t h = mix_seed(params_.hash_seed ^ salt_, static_cast<std::uint64_t>(key.src));
  h = mix_seed(h, static_cast<std::uint64_t>(key.dst));
  h = mix_seed(h, key.flow);
  return extra ? mix_seed(h, extra) : h;
}

int RoutePolicy::select(const RouteKey& key, const std::vector<int>& candidates,
                        const std::vector<std::uint64_t>& queued_bytes, double now_s) {
  const std::size_t k = candidates.size();
  if (k == 1) return candidates[0];
  switch (params_.algorithm) {
    case RoutingAlgorithm::d_mod_k:
      return candidates[static_cast<std::size_t>(static_cast<std::uint64_t>(key.dst) / params_.d_mod_k_divisor % k)];
    case RoutingAlgorithm::ecmp: return candidates[hash(key, 0) % k];
    case RoutingAlgorithm::flowlet: {
      const std::uint64_t id = hash(key, 0);
      Flowlet& f = flowlets_[id];
      if (f.last_s >= 0 && now_s - f.last_s > params_.flowlet_timeout_s) ++f.epoch;
      f.last_s = now_s;
      return candidates[hash(key, f.epoch + 1) % k];
    }
    case RoutingAlgorithm::spray: return candidates[spray_next_++ % k];
    // Each switch draws from its own stream (per_switch_hash does not apply: switches
    // drawing alike would still split uniformly); the modulo bias is below 2^-58 for k < 64.
    case RoutingAlgorithm::random_spray: return candidates[mix_seed(spray_seed_, spray_next_++) % k];
    case RoutingAlgorithm::adaptive: {
      std::size_t best = hash(key, 0) % k;
      for (std::size_t i = 0; i < k; ++i)
        if (queued_bytes[candidates[i]] < queued_bytes[candidates[best]]) best = i;
      return candidates[best];
    }
  }
  return candidates[0];
}

std::size_t RoutePolicy::steady_index(const RouteKey& key, std::size_t k) const {
  if (params_.algorithm == RoutingAlgorithm::d_mod_k)
    return static_cast<std::size_t>(static_cast<std::uint64_t>(key.dst) / params_.d_mod_k_divisor % k);
  return hash(key, 0) % k;
}

}  // namespace fabricsim::hw
