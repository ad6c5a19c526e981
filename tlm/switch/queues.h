// The switch's queues: a packet's descriptor (one entry of the descriptor RAM from
// arrival to transmission), the queues it is linked into (an input's arrivals, an input
// FIFO, VOQ or output queue, an input's crossing queue), the heads the egress reads and
// the buffer releases due. The queue operations are Switch members in queues.cpp.
#pragma once

#include <cstdint>

#include <systemc>

#include "tlm/fabric_protocol.h"
#include "tlm/linked_queue.h"

namespace fabricsim::tlm_fabric::sw {

/// A packet's descriptor from arrival to transmission: one slot of the switch's entry
/// pool, linked into its input's arrivals, then into its queue.
struct Entry {  // 64 bytes: one cache line of the pool
  Packet* packet;
  sc_core::sc_time header_at, tail_at, ready;
  sc_core::sc_time header_edge;  // first core edge after the header: admission
  std::uint32_t frame_bytes;     // as buffered (ingress framing)
  std::uint32_t charged;         // bytes charged to buffers (whole cells)
  std::int16_t in, out;          // ports (out -1 until routed)
  std::uint8_t vl;
  bool corrupted;                // packet->corrupted, for admission's look ahead without the packet
  std::uint32_t next;            // the entry behind it in its queue (NodePool, LinkedQueue)
};
static_assert(sizeof(Entry) == 64, "an entry is one cache line");

/// A switch queue in ready order, or an input's arrivals in header order: 12 bytes.
using EntryQueue = LinkedQueue<Entry>;

/// A switch queue with its order key: when it last became non-empty (the order the ready
/// lists keep), in the line the queue's head is read from when it does.
struct Queue : EntryQueue {
  std::uint64_t seq = 0;
};

/// VOQ (voq, cioq): one (output, VL) queue an input holds packets in, and the queue slot
/// it has while it does.
struct HeldVoq {
  std::int16_t out;
  std::uint8_t vl;
  int queue;
};

/// A queue's head as the per-wake walks read it, copied into its output's ready list: a
/// walk reads one array, not each queue, entry and packet.
struct Head {
  sc_core::sc_time ready;
  int queue;
  int in, vl;                   // input, VL on the output
  std::uint32_t credit_blocks;  // what flow control on the output counts (TxPort::can_send_blocks)
  std::uint32_t frame_bytes;    // as buffered: what the egress scheduler counts
};

/// A packet's buffer space freed once its tail has left the buffer.
struct Release {
  sc_core::sc_time at;
  int in, out, vl;
  int queue_vl;  // the VL of the queue it left (input FIFO)
  std::uint64_t charged;
};

}  // namespace fabricsim::tlm_fabric::sw
