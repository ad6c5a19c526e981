// The switch's input FIFO (buffer organisation input_fifo): per input and VL, the
// hw::PacketFifo core holding the packets' buffer cells, one word per cell carrying the
// packet id, or its RTL twin in its place (switch.input_fifo_impl rtl | lockstep,
// tlm/rtl_packet_fifo.h). The TLM model keeps the timing; the FIFO decides occupancy and
// whether the granted head may be read. Its operations are Switch members in input_fifo.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>

#include "hw/packet_fifo.h"
#include "tlm/rtl_packet_fifo.h"

namespace fabricsim::tlm_fabric::sw {

/// What an input FIFO disagreed with (Switch::input_fifo_fault).
enum class FifoFault { count, overflow, unreadable, other_head, nothing_read, tail_missing, words };

/// One (input, VL) input FIFO: the core (or the RTL block in its place), the words of its
/// newest packet still arriving, and the packets granted but not yet released.
struct InputFifo {
  explicit InputFifo(const hw::PacketFifoParams& p) : core(p) {}
  hw::PacketFifo core;  // the FIFO under tlm; its mode is the switch's under every impl
  // rtl | lockstep: the FIFO instead of the core (built at end_of_elaboration, when the
  // depth is final); null under tlm.
  std::unique_ptr<PacketFifoBlock> block;
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

  // The FIFO's operations, on the block when there is one; writes and reads take their time.
  bool can_push(std::size_t n) const { return block ? block->can_push(n) : core.can_push(n); }
  void push_words(std::size_t n, std::uint64_t data, bool last, const sc_core::sc_time& at) {
    if (block)
      block->push_words(n, data, last, at);
    else
      core.push_words(n, data, last);
  }
  bool can_pop() const { return block ? block->can_pop() : core.can_pop(); }
  hw::FifoWord front() const { return block ? block->front() : core.front(); }
  std::size_t pop_packet(const sc_core::sc_time& at) { return block ? block->pop_packet(at) : core.pop_packet(); }
  std::size_t words() const { return block ? block->words() : core.words(); }
  std::size_t packets() const { return block ? block->packets() : core.packets(); }
};

}  // namespace fabricsim::tlm_fabric::sw
