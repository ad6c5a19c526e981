#include "tlm/tx_port.h"

namespace fabricsim::tlm_fabric {

void TxPort::attach(InitiatorSocket* socket, const hw::PhyTiming* link, std::uint32_t credit_block_bytes,
                    std::uint64_t receiver_buffer_bytes) {
  socket_ = socket;
  link_ = link;
  credits_ = hw::CreditCounter(credit_block_bytes, receiver_buffer_bytes / credit_block_bytes);
}

bool TxPort::has_credits(std::uint32_t payload_bytes) const {
  return credits_.can_send(link_->frame_bytes(payload_bytes));
}

void TxPort::send(Packet& p, const sc_core::sc_time& start_delay) {
  credits_.consume(link_->frame_bytes(p.payload_bytes));
  tlm::tlm_phase phase = BEGIN_HEADER;
  sc_core::sc_time delay = start_delay;
  (*socket_)->nb_transport_fw(p, phase, delay);
  // The link answers END_REQ with the time the wire is free again.
  busy_until_ = sc_core::sc_time_stamp() + delay;
}

void TxPort::credit_returned(const sc_core::sc_time& at, std::uint64_t blocks) {
  pending_.push({at, blocks});
}

bool TxPort::apply_credits(const sc_core::sc_time& now) {
  bool any = false;
  while (!pending_.empty() && pending_.top().at <= now) {
    credits_.restore(pending_.top().blocks);
    pending_.pop();
    any = true;
  }
  return any;
}

bool TxPort::next_credit(sc_core::sc_time& at) const {
  if (pending_.empty()) return false;
  at = pending_.top().at;
  return true;
}

}  // namespace fabricsim::tlm_fabric
