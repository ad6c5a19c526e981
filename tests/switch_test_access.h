// The tests' hooks into tlm_fabric::Switch (its friend): what no configuration can ask for.
#pragma once

#include "tlm/switch.h"

namespace fabricsim::tlm_fabric {

struct SwitchTestAccess {
  /// Breaks one piece of `sw`'s accounting (AccountingFault), so a test can show that the
  /// run-time invariant watching it catches it.
  static void inject_fault(Switch& sw, AccountingFault f) {
    sw.fault_ = f;
    // The fault drops at admission: on the packet's own edge.
    if (f == AccountingFault::drop_lossless) sw.plan_.fold_admission = false;
  }
  /// Switches built after this wake on every core edge while they hold a packet (the
  /// allocator runs every cycle, as in hardware), with no wake-up cut: the reference the
  /// event-driven wake-ups must reproduce exactly.
  static void wake_every_edge(bool on) { Switch::every_edge_for_test_ = on; }
  /// The input FIFO core of (`port`, `vl`) (buffer input_fifo).
  static hw::PacketFifo& input_fifo_core(Switch& sw, int port, int vl) { return sw.input_fifo(port, vl).core; }
  /// Input `port`'s buffer as its input FIFO cores hold it, with the words still arriving
  /// of packets admitted, in bytes; and as the input counts it.
  static std::uint64_t input_fifo_bytes(const Switch& sw, int port) {
    std::uint64_t words = 0;
    for (int vl = 0; vl < sw.params_.vls; ++vl) words += sw.input_fifo(port, vl).words() + sw.input_fifo(port, vl).tail_words;
    return words * sw.params_.cell_bytes;
  }
  static std::uint64_t input_bytes(const Switch& sw, int port) { return sw.inputs_[port].bytes; }
};

}  // namespace fabricsim::tlm_fabric
