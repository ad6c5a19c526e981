// The switch's egress unit: per output, the egress scheduler's VL choice, the
// transmitter toward the downstream buffer, the bytes queued for it and its credit
// stalls. The VL stage is Switch members in egress_unit.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>

#include "hw/egress_scheduler.h"
#include "hw/arbiter.h"
#include "sim/stats.h"
#include "tlm/tx_port.h"

namespace fabricsim::tlm_fabric::sw {

/// One output port. Aligned to a cache line, which holds what every wake reads of an
/// output it walks: the fields up to and with the start of tx (TxPort keeps its hot
/// fields first).
struct alignas(64) OutputPort {
  // Earliest ready time among the heads that leave here, end of time when none: before
  // it no head of this output can leave, and a wake skips its heads.
  sc_core::sc_time heads_ready = sc_core::sc_max_time();
  std::uint32_t open_stalls = 0;           // VLs blocked on credits now (bit per VL)
  int chosen_vl = -1;                      // this edge's egress scheduler choice
  std::unique_ptr<hw::EgressScheduler> scheduler;  // none with one VL (make_egress_scheduler)
  TxPort tx;
  // Queued for this output, in all and per VL: a line of its own, which every packet
  // queued and sent here writes.
  alignas(64) std::uint64_t bytes = 0;
  std::uint64_t high_water = 0;
  stats::Counter egress_packets, egress_bytes;  // port<p>.egress_packets, .egress_payload_bytes
  std::array<std::uint64_t, hw::kMaxDataVls> vl_bytes{};
  sc_core::sc_time write_free;             // output write port (output_queued, cioq)
  std::unique_ptr<hw::Arbiter> write_arbiter;  // output_queued, cioq: the inputs asking for the write port (round robin)
  std::vector<sc_core::sc_time> stall_since;  // per VL with an open stall: since when
  std::vector<double> stall_s;
};

/// A head that may leave on this edge: its queue, input, output and VL.
struct Candidate {
  int queue;
  int in, out, vl;
};

}  // namespace fabricsim::tlm_fabric::sw
