// The switch's input FIFO (buffer organisation input_fifo): per input and VL, the
// hw::PacketFifo core holding the packets' buffer cells, one word per cell carrying the
// packet id. The TLM model keeps the timing; the core decides occupancy and whether the
// granted head may be read. Its operations are Switch members in input_fifo.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include <systemc>

#include "hw/packet_fifo.h"

namespace fabricsim::tlm_fabric::sw {

/// One (input, VL) input FIFO: the core, the words of its newest packet still arriving,
/// and the packets granted but not yet released.
struct InputFifo {
  explicit InputFifo(const hw::PacketFifoParams& p) : core(p) {}
  hw::PacketFifo core;
  // The newest packet's words after those stored at its header, written once its tail
  // is in (tail_words 0: none pending).
  sc_core::sc_time tail_at;
  std::uint64_t tail_id = 0;
  std::uint32_t tail_words = 0;
  // Packets granted, oldest first, until their tail leaves the buffer; `checked` once
  // the core showed it readable at the head (packets granted while the one ahead still
  // leaves are checked when it has left).
  struct Granted {
    std::uint64_t id;
    bool checked;
  };
  std::vector<Granted> granted;
};

}  // namespace fabricsim::tlm_fabric::sw
