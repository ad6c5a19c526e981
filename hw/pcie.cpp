#include "hw/pcie.h"

#include <stdexcept>
#include <string>
#include <utility>

namespace fabricsim::hw {

const EnumNames<MemoryTarget>& memory_target_names() {
  static const EnumNames<MemoryTarget> names{{MemoryTarget::host, "host"}, {MemoryTarget::gpu, "gpu"}};
  return names;
}

std::string_view to_string(MemoryTarget t) { return name_of(memory_target_names(), t); }

const hw::ParamBlock& pcie_params() {
  using hw::ParamType;
  static const hw::ParamBlock block{
      "nic.pcie",
      "the NIC's PCIe link and memory latencies (every latency is an assumption, set it for your platform)",
      {{"generation", ParamType::integer, "", "5", "3", "6", {}, "",
        "8, 16, 32, 64 GT/s per lane; 128b/130b up to Gen5, Gen6 FLIT 236/256"},
       {"width", ParamType::integer, "", "16", "1", "16", {}, "1, 2, 4, 8 or 16",
        "lanes"},
       {"max_payload", ParamType::size, "", "256B", "128B", "4KiB", {}, "power of two",
        "MPS: largest write / completion TLP payload"},
       {"max_read_request", ParamType::size, "", "512B", "128B", "4KiB", {}, "power of two",
        "MRRS: largest read request"},
       {"read_tags", ParamType::integer, "", "256", "1", "1024", {}, "",
        "outstanding read requests"},
       {"tlp_overhead", ParamType::size, "", "24B", "0B", "64B", {}, "",
        "per TLP: framing, sequence number, 4DW header, LCRC"},
       {"host_read_latency", ParamType::time, "", "700ns", "0s", "100us", {}, "",
        "read request -> first completion, host memory"},
       {"gpu_read_latency", ParamType::time, "", "900ns", "0s", "100us", {}, "",
        "the same for GPU memory"},
       {"host_write_latency", ParamType::time, "", "300ns", "0s", "100us", {}, "",
        "posted write -> visible in host memory"},
       {"gpu_write_latency", ParamType::time, "", "400ns", "0s", "100us", {}, "",
        "the same for GPU memory"},
       {"doorbell_latency", ParamType::time, "", "250ns", "0s", "100us", {}, "",
        "host MMIO doorbell write -> seen by the NIC"}}};
  return block;
}

void PcieParams::validate() const {
  const ParamBlock& spec = pcie_params();
  spec["generation"].check(generation);
  spec["width"].check(width);
  if ((width & (width - 1)) != 0) throw std::invalid_argument("width must be 1, 2, 4, 8 or 16");
  for (const auto& [key, v] : {std::pair{"max_payload", max_payload}, {"max_read_request", max_read_request}}) {
    spec[key].check_quantity(Size::bytes(v));
    if ((v & (v - 1)) != 0) throw std::invalid_argument(std::string(key) + " must be a power of two in " + spec[key].range_text());
  }
  spec["read_tags"].check(read_tags);
  spec["tlp_overhead"].check_quantity(Size::bytes(tlp_overhead));
  for (const auto& [key, t] : {std::pair{"host_read_latency", host_read_latency}, {"gpu_read_latency", gpu_read_latency},
                               {"host_write_latency", host_write_latency}, {"gpu_write_latency", gpu_write_latency},
                               {"doorbell_latency", doorbell_latency}})
    spec[key].check_quantity(t);
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
