// The switch's ingress unit: per input, the arrivals waiting for admission, the buffer
// accounting, PFC state and credits held for the upstream transmitter. Admission,
// release and credit return are Switch members in ingress_unit.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>

#include "hw/arbiter.h"
#include "hw/credit.h"
#include "hw/flow_control.h"
#include "tlm/fabric_socket.h"
#include "tlm/link.h"
#include "tlm/switch/queues.h"

namespace fabricsim::tlm_fabric {
enum class ForwardingMode;  // tlm/switch.h
}  // namespace fabricsim::tlm_fabric

namespace fabricsim::tlm_fabric::sw {

/// One input port. Aligned to a cache line, which holds what admission reads of an input
/// on every wake: its arrivals, first header, folded wake and buffer count.
struct alignas(64) InputPort {
  EntryQueue arrivals;                     // not yet through admission, by header time
  // arrivals.front().header_at, the end of time when none: a wake passes over an input
  // whose next header is not in yet without reading the queue's own allocation.
  sc_core::sc_time first_header = sc_core::sc_max_time();
  // Switch::admission_wake with admission folded and no edge deciding, kept until the
  // arrivals, the buffer or its high-water mark change (stale()).
  sc_core::sc_time folded_wake;
  std::uint64_t bytes = 0;
  FlowControl fc = FlowControl::credit;    // link->params().flow_control, kept beside what each packet reads
  ForwardingMode forwarding{};             // SwitchParams::forwarding_of(port), read per packet
  bool folded_wake_valid = false;
  bool folded_on_count = false;            // folded_wake is an arrival's edge for its count (a release can move it)
  void stale() { folded_wake_valid = false; }
  std::uint64_t high_water = 0;
  const Link* link = nullptr;
  FabricCall upstream;                     // in[port]'s transmitter, once bound
  hw::CreditLedger credits_held;           // credit links: blocks not yet returned upstream
  std::vector<hw::PfcIngress> pfc;         // per VL (pfc links)
  std::vector<sc_core::sc_time> pause_sent_at;
  // PFC: a PAUSE still needed is re-sent this long after the last (half its quanta at
  // the link's rate), set with the link.
  sc_core::sc_time pause_refresh;
  EntryQueue crossing;                     // output_queued: admitted, not yet through the crossbar
  std::vector<HeldVoq> voqs;               // voq, cioq: the queues holding this input's packets
  std::unique_ptr<hw::Arbiter> accept_arbiter;  // cioq: among the write ports granting it (round robin)
};

/// An arrival due for admission on this wake, in the order edge-by-edge admission takes.
struct DueArrival {
  sc_core::sc_time edge;
  int in;
  bool operator<(const DueArrival& o) const { return edge != o.edge ? edge < o.edge : in < o.in; }
};

}  // namespace fabricsim::tlm_fabric::sw
