#include "tlm/latency_breakdown.h"

#include "tlm/link.h"

namespace fabricsim::tlm_fabric {

void PacketBreakdown::sent(const hw::PhyTiming& link, const sc_core::sc_time& at) {
  const sc_core::sc_time propagation = to_sc(link.propagation());
  const sc_core::sc_time fec = to_sc(link.fec_latency());
  ticks[static_cast<std::size_t>(LatencyPart::propagation)] += static_cast<std::int64_t>(propagation.value());
  ticks[static_cast<std::size_t>(LatencyPart::fec)] += static_cast<std::int64_t>(fec.value());
  first_bit_in = at + propagation + fec;
}

std::int64_t PacketBreakdown::total() const {
  std::int64_t sum = 0;
  for (const std::int64_t t : ticks) sum += t;
  return sum;
}

LatencySums& LatencySums::operator+=(const LatencySums& o) {
  packets += o.packets;
  for (int k = 0; k < kLatencyParts; ++k) ticks[k] += o.ticks[k];
  return *this;
}

nlohmann::json LatencySums::to_json(bool with_links) const {
  nlohmann::json mean = nlohmann::json::object();
  const double tick_ns = sc_core::sc_get_time_resolution().to_seconds() * 1e9;
  for (int k = 0; k < kLatencyParts; ++k) {
    const auto part = static_cast<LatencyPart>(k);
    if (!with_links && (part == LatencyPart::propagation || part == LatencyPart::fec)) continue;
    mean[kLatencyPartNames[k]] = packets == 0 ? 0.0 : static_cast<double>(ticks[k]) * tick_ns / static_cast<double>(packets);
  }
  return {{"packets", packets}, {"mean_ns", mean}};
}

}  // namespace fabricsim::tlm_fabric
