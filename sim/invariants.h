// Run-time invariants of a fabric, checked at the end of every run and reported under
// "scoreboard" in results.json (a failure is exit code 3): credit conservation per link
// and VL, buffer high-water marks against their sizes, drop causes per switch. Each costs
// one pass over the ports, so they stay on. docs/robustness.md explains each one.
#pragma once

#include <string>
#include <vector>

#include "sim/fabric.h"

namespace fabricsim::sim {

/// One scoreboard line: what was checked, whether it held, the numbers.
struct InvariantCheck {
  std::string check;
  bool ok = true;
  std::string detail;
};

/// On every credit link and VL: the transmitter's credits available + credits on
/// the reverse wire + blocks the receiver holds = the receiver's buffer in blocks.
std::vector<InvariantCheck> check_credit_conservation(const Fabric& fabric);
/// No switch buffer ever held more than its size (input buffers, output queues).
std::vector<InvariantCheck> check_buffer_bounds(const Fabric& fabric);
/// Every ingress drop has a cause (CRC, lossy, PFC headroom exceeded), and no
/// credit or PFC class dropped a packet without its headroom being exceeded.
std::vector<InvariantCheck> check_lossless_drops(const Fabric& fabric);
/// All of the above, in that order.
std::vector<InvariantCheck> check_invariants(const Fabric& fabric);

}  // namespace fabricsim::sim
