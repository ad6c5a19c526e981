// PCIe host-interface arithmetic: per-direction link rate from generation and
// width, TLP overheads at a max payload size, read splitting at the max read
// request size, and the latency of each memory target (host DRAM, GPU memory).
// Pure functions; tlm/dma_engine.h turns them into timelines.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "hw/param_spec.h"
#include "hw/units.h"

namespace fabricsim::hw {

/// Where DMA reads and writes land.
enum class MemoryTarget { host, gpu };
std::string_view to_string(MemoryTarget t);
/// The configuration names of MemoryTarget (nic.memory).
const EnumNames<MemoryTarget>& memory_target_names();

struct PcieParams {
  int generation = 5;                              ///< 3..6 (8, 16, 32, 64 GT/s per lane)
  int width = 16;                                  ///< lanes: 1, 2, 4, 8 or 16
  std::uint32_t max_payload = 256;                 ///< MPS [B]: largest write / completion TLP payload
  std::uint32_t max_read_request = 512;            ///< MRRS [B]: largest read request
  int read_tags = 256;                             ///< outstanding read requests, 1..1024
  std::uint32_t tlp_overhead = 24;                 ///< per TLP: framing, sequence, 4DW header, LCRC [B]
  Time host_read_latency = Time::ns(700);          ///< read request -> first completion, host memory
  Time gpu_read_latency = Time::ns(900);           ///< same for GPU memory (GPUDirect RDMA, assumption)
  Time host_write_latency = Time::ns(300);         ///< posted write -> visible in host memory
  Time gpu_write_latency = Time::ns(400);          ///< same for GPU memory (assumption)
  Time doorbell_latency = Time::ns(250);           ///< host MMIO doorbell write -> seen by the NIC
  void validate() const;                           ///< throws std::invalid_argument naming the field
};

/// The keys of `nic.pcie:`.
const ParamBlock& pcie_params();

/// Derived PCIe timing.
class PcieTiming {
 public:
  explicit PcieTiming(const PcieParams& p);
  const PcieParams& params() const { return p_; }
  /// Signalling rate x width x line-code efficiency, per direction (128b/130b to Gen5; Gen6 FLIT 236/256).
  Bandwidth link_rate() const { return link_rate_; }
  /// Time to move `payload` bytes as TLPs of at most `max_tlp` payload each, overheads included.
  Time transfer(std::uint64_t payload, std::uint32_t max_tlp) const;
  /// Payload throughput of a long DMA write (MPS-sized TLPs).
  Bandwidth write_throughput() const;
  /// Payload throughput of long DMA read completions (MPS-sized completion TLPs).
  Bandwidth read_throughput() const;
  Time read_latency(MemoryTarget t) const;
  Time write_latency(MemoryTarget t) const;

 private:
  PcieParams p_;
  Bandwidth link_rate_;
};

}  // namespace fabricsim::hw
