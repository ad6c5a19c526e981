// Traffic generator: posts messages to one NIC at an offered load with
// Poisson, periodic, Bernoulli (slotted) or on/off (bursty) arrivals, to a
// destination drawn per message from weighted candidates, with a fixed size or
// one drawn from a weighted size distribution. One generator per source
// (synthetic patterns) or per explicit flow.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <systemc>

#include "hw/param_spec.h"
#include "hw/units.h"
#include "tlm/nic.h"
#include "tlm/wake_queue.h"

namespace fabricsim::testbench {

/// How message arrival times are drawn.
enum class ArrivalProcess {
  poisson,    ///< exponential gaps with the load's mean
  periodic,   ///< fixed gaps
  bernoulli,  ///< slotted: each message-time slot carries a message with probability = load
  on_off,     ///< bursts of back-to-back messages (geometric length), idle gaps keep the mean load
};
/// The configuration names of ArrivalProcess (traffic.arrival).
const hw::EnumNames<ArrivalProcess>& arrival_process_names();
std::string_view to_string(ArrivalProcess a);

/// A weighted choice (destination or message size).
struct Weighted {
  std::uint64_t value = 0;
  double weight = 1.0;
};

/// Index drawn from weighted choices with u in [0, 1): the first choice whose running
/// weight sum exceeds u x the total (the last one if rounding leaves none).
std::size_t weighted_index(const std::vector<Weighted>& choices, double u);

/// Where a generator's messages go: weighted endpoints, or (uniform traffic) each
/// endpoint but the source, kept as that rule instead of a table of n - 1 entries.
class Destinations {
 public:
  Destinations() = default;
  /// Endpoint ids with weights (one: fixed).
  explicit Destinations(std::vector<Weighted> weighted) : weighted_(std::move(weighted)) {}
  /// Endpoints 0 .. endpoints - 1 except `source`, equally likely.
  static Destinations all_but(int source, int endpoints);
  /// Number of choices.
  std::size_t size() const;
  /// Endpoint of choice i < size() (all_but: ascending endpoint order).
  int endpoint(std::size_t i) const;
  /// A choice from u in [0, 1). all_but in O(1): floor(u (n - 1)), the same index as
  /// weighted_index over n - 1 weights of 1 (its running subtractions of 1 are exact).
  std::size_t draw(double u) const;

 private:
  std::vector<Weighted> weighted_;
  int source_ = -1;   // all_but: the excluded endpoint (-1: weighted list)
  int endpoints_ = 0;
};

/// One generator's behaviour, resolved by the fabric builder.
struct GeneratorParams {
  Destinations destinations;                ///< where messages go (one choice: fixed)
  std::vector<Weighted> sizes;              ///< message bytes with weights (one: fixed)
  std::uint32_t flow = 0;                   ///< flow id carried by its packets
  std::vector<int> sls{0};                  ///< service levels: message i on sls[i mod size] (round robin)
  double load = 0.5;                        ///< offered load, fraction of the link wire rate
  sc_core::sc_time slot;                    ///< wire time of the mean message at line rate
  ArrivalProcess arrival = ArrivalProcess::poisson;
  double burst_length = 8;                  ///< on_off: mean messages per burst
  sc_core::sc_time start;                   ///< first message no earlier than this
  sc_core::sc_time stop;                    ///< no message at or after this
  std::uint64_t max_messages = 0;           ///< 0: unlimited
  std::uint64_t seed = 1;                   ///< stream seed (derived per generator)
  std::vector<int> qps;                     ///< RDMA transport: local QP per (destination, sl), destination-major; empty: raw packets
};

class TrafficSource : public sc_core::sc_module {
 public:
  TrafficSource(sc_core::sc_module_name name, tlm_fabric::Nic& nic, const GeneratorParams& params);
  std::uint64_t messages_posted() const { return posted_; }

 private:
  void fire();
  sc_core::sc_time draw_gap();
  std::uint64_t draw(const std::vector<Weighted>& choices);
  double uniform();

  tlm_fabric::Nic& nic_;
  GeneratorParams params_;
  std::mt19937_64 rng_;
  tlm_fabric::WakeEvent next_;  // the next message (through the WakeQueue: no kernel event per source)
  // draw_gap's constants (library calls each, once per message before).
  const sc_core::sc_time resolution_ = sc_core::sc_get_time_resolution();
  const double resolution_s_ = resolution_.to_seconds();
  const double slot_s_ = params_.slot.to_seconds();
  std::uint64_t posted_ = 0;
  bool in_burst_ = false;
};

}  // namespace fabricsim::testbench
