// NIC DMA engine on the PCIe link: two serial timelines (NIC->host carries
// posted writes; host->NIC carries read completions; the small read requests
// and doorbells add busy time but never queue behind reservations made for
// later) and a pool of read tags bounding outstanding reads. A retransmission's
// re-read has a read path of its own, served ahead of the reads reserved for
// posted work. Timings are computed analytically when an operation is issued,
// so DMA costs no events.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include <systemc>

#include "hw/pcie.h"
#include "tlm/recent.h"

namespace fabricsim::tlm_fabric {

class DmaEngine {
 public:
  explicit DmaEngine(const hw::PcieParams& params);
  const hw::PcieTiming& timing() const { return timing_; }

  /// When the NIC sees a host doorbell (MMIO write) rung at `now`.
  sc_core::sc_time doorbell(const sc_core::sc_time& now);
  /// DMA read of `bytes` issued at `now` in max-read-request pieces; `ready[i]` (room for
  /// ceil(bytes / chunk) times) = when bytes [i*chunk, (i+1)*chunk) have arrived at the
  /// NIC. Returns the last.
  sc_core::sc_time read(const sc_core::sc_time& now, std::uint64_t bytes, std::uint64_t chunk,
                        hw::MemoryTarget target, sc_core::sc_time* ready = nullptr);
  /// DMA read of a retransmission's payload (or a repeated READ's data) issued at `now`,
  /// as read() but ahead of the reads reserved for posted work: it queues only behind
  /// earlier re-reads (with tags of its own), and the posted reads reserved after it lose
  /// its completions' wire time.
  sc_core::sc_time reread(const sc_core::sc_time& now, std::uint64_t bytes, hw::MemoryTarget target,
                          std::uint64_t chunk = 0, sc_core::sc_time* ready = nullptr);
  /// Posted DMA write issued at `now`; returns when the data is visible in memory.
  sc_core::sc_time write(const sc_core::sc_time& now, std::uint64_t bytes, hw::MemoryTarget target);

  /// Busy time of each direction so far [s] (utilisation = busy / elapsed).
  double upstream_busy_s() const { return up_busy_s_; }
  double downstream_busy_s() const { return down_busy_s_; }

 private:
  sc_core::sc_time read_latency(hw::MemoryTarget target) const {
    return target == hw::MemoryTarget::host ? host_read_latency_ : gpu_read_latency_;
  }
  sc_core::sc_time write_latency(hw::MemoryTarget target) const {
    return target == hw::MemoryTarget::host ? host_write_latency_ : gpu_write_latency_;
  }
  /// A transfer's wire time (completions or posted writes in MPS-sized TLPs), as kernel
  /// time and in seconds.
  struct Wire {
    sc_core::sc_time time;
    double seconds = 0;
  };
  Wire wire(std::uint64_t bytes) const;
  // A sequence of reads served in issue order: the downstream wire's free time for it and
  // its read tags' free times, oldest first. A tag is given back when its read's last
  // completion arrives, and completions arrive in issue order on the path's timeline, so
  // tags come back in the order they were taken: the earliest free tag is always the one
  // at `next_tag` (a ring, no heap).
  struct ReadPath {
    sc_core::sc_time down_free;
    std::vector<sc_core::sc_time> tags;
    std::size_t next_tag = 0;
  };
  /// read() on `path`; `wire_total` (if given) gets its completions' wire time.
  sc_core::sc_time read_on(ReadPath& path, const sc_core::sc_time& now, std::uint64_t bytes, std::uint64_t chunk,
                           hw::MemoryTarget target, sc_core::sc_time* ready,
                           sc_core::sc_time* wire_total = nullptr);

  hw::PcieTiming timing_;
  // Fixed per link, converted once: the memory write and read latencies. What a posted
  // write reads (for every packet an RDMA WRITE lands) comes first, side by side.
  sc_core::sc_time host_write_latency_, gpu_write_latency_;
  sc_core::sc_time up_free_;
  double up_busy_s_ = 0;
  RecentTwo<std::uint64_t, Wire> recent_writes_;  // wire() of the sizes written last (payloads, CQEs)
  sc_core::sc_time host_read_latency_, gpu_read_latency_;
  double request_wire_s_ = 0;                     // a read request TLP on the upstream link [s]
  RecentTwo<std::uint64_t, Wire> recent_reads_;   // wire() of the read pieces issued last (MRRS, a read's last piece)
  ReadPath posted_;   // WQE fetches, payloads of posted work, READ responses
  ReadPath resends_;  // retransmissions' re-reads (tags made at the first)
  double down_busy_s_ = 0;
};

}  // namespace fabricsim::tlm_fabric
