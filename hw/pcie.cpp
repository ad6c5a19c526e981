#include "hw/pcie.h"

#include <stdexcept>
#include <string>

namespace fabricsim::hw {

std::string_view to_string(MemoryTarget t) { return t == MemoryTarget::host ? "host" : "gpu"; }

void PcieParams::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument(what); };
  if (generation < 3 || generation > 6) fail("generation must be 3..6");
  if (width != 1 && width != 2 && width != 4 && width != 8 && width != 16) fail("width must be 1, 2, 4, 8 or 16");
  auto pow2 = [](std::uint32_t v) { return v >= 128 && v <= 4096 && (v & (v - 1)) == 0; };
  if (!pow2(max_payload)) fail("max_payload must be a power of two in 128..4096 B");
  if (!pow2(max_read_request)) fail("max_read_request must be a power of two in 128..4096 B");
  if (read_tags < 1 || read_tags > 1024) fail("read_tags must be in 1..1024");
  if (tlp_overhead > 64) fail("tlp_overhead must be at most 64 B");
}

PcieTiming::PcieTiming(const PcieParams& p) : p_(p) {
  p_.validate();
  // PCIe base spec: Gen3-5 use 128b/130b; Gen6 PAM4 FLIT mode carries 236 TLP bytes per 256-byte FLIT.
  static const double kGtPerLane[] = {0, 0, 0, 8, 16, 32, 64};
  const double efficiency = p_.generation >= 6 ? 236.0 / 256.0 : 128.0 / 130.0;
  link_rate_ = Bandwidth::gbps(kGtPerLane[p_.generation] * p_.width * efficiency);
}

Time PcieTiming::transfer(std::uint64_t payload, std::uint32_t max_tlp) const {
  const std::uint64_t tlps = payload == 0 ? 1 : (payload + max_tlp - 1) / max_tlp;
  return Size::bytes(payload + tlps * p_.tlp_overhead) / link_rate_;
}

Bandwidth PcieTiming::write_throughput() const {
  return link_rate_ * (static_cast<double>(p_.max_payload) / (p_.max_payload + p_.tlp_overhead));
}

Bandwidth PcieTiming::read_throughput() const { return write_throughput(); }

Time PcieTiming::read_latency(MemoryTarget t) const {
  return t == MemoryTarget::host ? p_.host_read_latency : p_.gpu_read_latency;
}

Time PcieTiming::write_latency(MemoryTarget t) const {
  return t == MemoryTarget::host ? p_.host_write_latency : p_.gpu_write_latency;
}

}  // namespace fabricsim::hw
