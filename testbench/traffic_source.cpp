#include "testbench/traffic_source.h"

#include <cmath>

namespace fabricsim::testbench {

using sc_core::sc_time;

TrafficSource::TrafficSource(sc_core::sc_module_name name, tlm_fabric::Nic& nic, const GeneratorParams& params)
    : sc_module(name), nic_(nic), params_(params), rng_(params.seed) {
  SC_METHOD(fire);
  sensitive << next_;
  dont_initialize();
  // Poisson sources start at a random phase so they do not fire in lockstep.
  sc_time first = params_.start;
  if (params_.arrival == ArrivalProcess::poisson) first += draw_gap();
  if (first < params_.stop && !params_.destinations.empty()) next_.notify(first);
}

sc_time TrafficSource::draw_gap() {
  if (params_.arrival == ArrivalProcess::periodic) return params_.mean_interarrival;
  // Inverse-CDF exponential from 53 random bits: identical on every platform.
  const double u = static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0);
  const double gap = -std::log1p(-u) * params_.mean_interarrival.to_seconds();
  const double res = sc_core::sc_get_time_resolution().to_seconds();
  return sc_core::sc_get_time_resolution() * static_cast<double>(std::llround(gap / res));
}

void TrafficSource::fire() {
  tlm_fabric::Message m;
  const auto n = params_.destinations.size();
  m.dst = n == 1 ? params_.destinations[0] : params_.destinations[rng_() % n];
  m.flow = params_.flow;
  m.bytes = params_.message_size.in_bytes();
  nic_.post(m);
  ++posted_;
  if (params_.max_messages != 0 && posted_ >= params_.max_messages) return;
  const sc_time gap = draw_gap();
  if (sc_core::sc_time_stamp() + gap < params_.stop) next_.notify(gap);
}

}  // namespace fabricsim::testbench
