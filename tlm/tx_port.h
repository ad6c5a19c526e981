// Transmit side of a port (switch egress or NIC): the transmitter's view of
// its link (busy until the previous packet's gap has gone out) and of the
// receiver's buffer (link-level credits that come back over the reverse path).
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include <systemc>
#include <tlm>

#include "hw/credit.h"
#include "hw/phy.h"
#include "tlm/fabric_protocol.h"

namespace fabricsim::tlm_fabric {

using InitiatorSocket = tlm::tlm_initiator_socket<kSocketWidth, fabric_protocol_types>;
using TargetSocket = tlm::tlm_target_socket<kSocketWidth, fabric_protocol_types>;

class TxPort {
 public:
  /// Binds the port to its link timing and the receiver buffer it may fill.
  void attach(InitiatorSocket* socket, const hw::PhyTiming* link, std::uint32_t credit_block_bytes,
              std::uint64_t receiver_buffer_bytes);
  bool attached() const { return socket_ != nullptr; }

  const hw::PhyTiming& link() const { return *link_; }
  /// When the transmitter may put the next first bit on the wire.
  const sc_core::sc_time& busy_until() const { return busy_until_; }
  /// Enough credits for a packet of this payload.
  bool has_credits(std::uint32_t payload_bytes) const;
  /// Sends `p` with its first bit at now + start_delay; takes credits, marks busy.
  void send(Packet& p, const sc_core::sc_time& start_delay);
  /// Records a credit return that takes effect at `at`.
  void credit_returned(const sc_core::sc_time& at, std::uint64_t blocks);
  /// Applies credit returns due at or before `now`; true if any were applied.
  bool apply_credits(const sc_core::sc_time& now);
  /// Earliest pending credit return into `at`; false when none is pending.
  bool next_credit(sc_core::sc_time& at) const;
  const hw::CreditCounter& credits() const { return credits_; }

 private:
  struct PendingCredit {
    sc_core::sc_time at;
    std::uint64_t blocks;
    bool operator>(const PendingCredit& o) const { return at > o.at; }
  };
  InitiatorSocket* socket_ = nullptr;
  const hw::PhyTiming* link_ = nullptr;
  hw::CreditCounter credits_{64, 0};
  sc_core::sc_time busy_until_ = sc_core::SC_ZERO_TIME;
  std::priority_queue<PendingCredit, std::vector<PendingCredit>, std::greater<>> pending_;
};

}  // namespace fabricsim::tlm_fabric
