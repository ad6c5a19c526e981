#include "testbench/traffic_source.h"

#include <algorithm>
#include <cmath>

#include "hw/seed.h"
#include "tlm/sim_time.h"

namespace fabricsim::testbench {

using sc_core::sc_time;

const hw::EnumNames<ArrivalProcess>& arrival_process_names() {
  static const hw::EnumNames<ArrivalProcess> names{{ArrivalProcess::poisson, "poisson"},
                                                   {ArrivalProcess::periodic, "periodic"},
                                                   {ArrivalProcess::bernoulli, "bernoulli"},
                                                   {ArrivalProcess::on_off, "on_off"}};
  return names;
}

std::string_view to_string(ArrivalProcess a) { return hw::name_of(arrival_process_names(), a); }

TrafficSource::TrafficSource(sc_core::sc_module_name name, tlm_fabric::Nic& nic, const GeneratorParams& params)
    : sc_module(name), nic_(nic), params_(params), rng_(params.seed), next_([this] { fire(); }) {
  // Random processes start at a random phase so sources do not fire in lockstep.
  sc_time first = params_.start;
  if (params_.arrival != ArrivalProcess::periodic) first += draw_gap();
  if (first < params_.stop && params_.destinations.size() > 0) next_.notify_at(tlm_fabric::sim_now() + first);
}

double TrafficSource::uniform() { return hw::unit_interval(rng_()); }

std::size_t weighted_index(const std::vector<Weighted>& choices, double u) {
  double total = 0;
  for (const auto& c : choices) total += c.weight;
  double x = u * total;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (x < choices[i].weight) return i;
    x -= choices[i].weight;
  }
  return choices.size() - 1;
}

Destinations Destinations::all_but(int source, int endpoints) {
  Destinations d;
  d.source_ = source;
  d.endpoints_ = endpoints;
  return d;
}

std::size_t Destinations::size() const {
  return source_ < 0 ? weighted_.size() : static_cast<std::size_t>(endpoints_ - 1);
}

int Destinations::endpoint(std::size_t i) const {
  if (source_ < 0) return static_cast<int>(weighted_[i].value);
  const int e = static_cast<int>(i);
  return e < source_ ? e : e + 1;
}

std::size_t Destinations::draw(double u) const {
  if (source_ < 0) return weighted_index(weighted_, u);
  const std::size_t n = size();
  return std::min(static_cast<std::size_t>(u * static_cast<double>(n)), n - 1);
}

std::uint64_t TrafficSource::draw(const std::vector<Weighted>& choices) {
  return choices.size() == 1 ? choices[0].value : choices[weighted_index(choices, uniform())].value;
}

sc_time TrafficSource::draw_gap() {
  const double slot = slot_s_;
  const double load = params_.load;
  double gap = 0;
  switch (params_.arrival) {
    case ArrivalProcess::periodic: gap = slot / load; break;
    case ArrivalProcess::poisson: gap = -std::log1p(-uniform()) * slot / load; break;
    case ArrivalProcess::bernoulli: {
      // Geometric number of slots until the next success, p = load.
      const double slots = load >= 1.0 ? 1.0 : 1.0 + std::floor(std::log1p(-uniform()) / std::log1p(-load));
      gap = slots * slot;
      break;
    }
    case ArrivalProcess::on_off: {
      // Burst ends after each message with probability 1/L; idle gaps are geometric
      // with mean L (1 - load) / load slots, so the long-run load is `load`.
      const double l = params_.burst_length;
      gap = slot;
      if (!in_burst_ || uniform() < 1.0 / l) {
        const double mean_idle = l * (1.0 - load) / load;
        if (mean_idle > 0) gap += -std::log1p(-uniform()) * mean_idle * slot;
        in_burst_ = true;
      }
      break;
    }
  }
  const auto ticks = std::max<long long>(1, std::llround(gap / resolution_s_));
  return resolution_ * static_cast<double>(ticks);
}

void TrafficSource::fire() {
  tlm_fabric::Message m;
  const std::size_t pick = params_.destinations.size() == 1 ? 0 : params_.destinations.draw(uniform());
  m.dst = params_.destinations.endpoint(pick);
  m.bytes = draw(params_.sizes);
  m.flow = params_.flow;
  const std::size_t level = posted_ % params_.sls.size();
  m.sl = params_.sls[level];
  if (params_.qps.empty()) {
    nic_.post(m);
  } else {
    // RDMA transport: each message is an RDMA WRITE on the QP to its destination.
    nic_.rdma().post(params_.qps[pick * params_.sls.size() + level], {tlm_fabric::RdmaOpcode::write, m.bytes, posted_}, tlm_fabric::sim_now());
    nic_.kick();
  }
  ++posted_;
  if (params_.max_messages != 0 && posted_ >= params_.max_messages) return;
  const sc_time next = tlm_fabric::sim_now() + draw_gap();
  if (next < params_.stop) next_.notify_at(next);
}

}  // namespace fabricsim::testbench
