// Traffic generator: posts messages to one NIC with Poisson or periodic
// arrivals at an offered load, to a fixed destination or one drawn uniformly
// per message. One generator per source (pattern) or per explicit flow.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <systemc>

#include "hw/units.h"
#include "tlm/nic.h"

namespace fabricsim::testbench {

/// How message arrival times are drawn.
enum class ArrivalProcess { poisson, periodic };

/// One generator's behaviour, resolved by the fabric builder.
struct GeneratorParams {
  std::vector<int> destinations;            ///< one is drawn uniformly per message (size 1: fixed)
  std::uint32_t flow = 0;                   ///< flow id carried by its packets
  hw::Size message_size = hw::Size::kib(64);///< bytes per message
  sc_core::sc_time mean_interarrival;       ///< mean time between message posts
  ArrivalProcess arrival = ArrivalProcess::poisson;
  sc_core::sc_time start;                   ///< first message no earlier than this
  sc_core::sc_time stop;                    ///< no message at or after this
  std::uint64_t max_messages = 0;           ///< 0: unlimited
  std::uint64_t seed = 1;                   ///< stream seed (derived per generator)
};

class TrafficSource : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(TrafficSource);
  TrafficSource(sc_core::sc_module_name name, tlm_fabric::Nic& nic, const GeneratorParams& params);
  std::uint64_t messages_posted() const { return posted_; }

 private:
  void fire();
  sc_core::sc_time draw_gap();

  tlm_fabric::Nic& nic_;
  GeneratorParams params_;
  std::mt19937_64 rng_;
  sc_core::sc_event next_;
  std::uint64_t posted_ = 0;
};

}  // namespace fabricsim::testbench
