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

/// What an input FIFO core disagreed with (Switch::input_fifo_fault).
enum class FifoFault { count, overflow, unreadable, other_head, nothing_read, tail_missing, words };

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
  // A granted packet at the core's head (checked there) leaves until its tail has left
  // the buffer; the ids of the packets granted behind it, oldest first from
  // waiting[first_waiting], are checked as each reaches the head.
  bool reading = false;
  std::uint32_t first_waiting = 0;
  std::vector<std::uint64_t> waiting;
};

}  // namespace fabricsim::tlm_fabric::sw
