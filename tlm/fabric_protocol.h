// The fabric TLM-2.0 protocol: a protocol-traits type (`fabric_protocol_types`) whose
// payload is a plain `Packet`, not tlm_generic_payload (a fabric packet has no address
// or byte lanes, and a flat struct keeps the per-packet cost low). Forward path:
// BEGIN_HEADER (transmitter -> link) and END_TAIL (link -> receiver, once per packet,
// with `header_at` and `tail_at`); backward path: CREDIT_RETURN and PFC_PAUSE.
// docs/architecture.md, "The fabric TLM-2.0 protocol", gives each phase's delay.
#pragma once

#include <cstdint>

#include <systemc>
#include <tlm>

namespace fabricsim::tlm_fabric {

/// What a protocol message is.
enum class PacketKind : std::uint8_t { data, credit_update, pfc_pause };

/// Transport operation a packet carries (IB BTH opcode family / RoCEv2 the same).
enum class RdmaOp : std::uint8_t {
  raw,            ///< synthetic traffic: no transport
  write,          ///< RDMA WRITE segment
  send,           ///< SEND segment
  read_request,   ///< RDMA READ request (RETH: length)
  read_response,  ///< RDMA READ response segment
  ack,            ///< acknowledgement: every PSN below ack_psn received
  nak,            ///< sequence-error NAK: ack_psn is the first missing PSN
  cnp,            ///< congestion notification (RoCEv2 CNP / IB BECN)
};

/// ECN codepoint in the IP header (RFC 3168); IB uses the FECN/BECN bits instead.
enum class Ecn : std::uint8_t { not_ect = 0, ect1 = 1, ect0 = 2, ce = 3 };

/// One packet (or flow-control message) and the header fields the fabric reads.
/// Two cache lines: what a switch reads of a packet it forwards (and a NIC of every
/// packet) is in the first, the rest of what endpoints read in the second.
struct alignas(64) Packet {
  // First line: the current hop and the header a switch reads.
  sc_core::sc_time header_at;      ///< current hop: header ready at the receiver
  sc_core::sc_time tail_at;        ///< current hop: last bit at the receiver
  sc_core::sc_time injected;       ///< first bit left the source NIC
  int src = 0;                     ///< source endpoint
  int dst = 0;                     ///< destination endpoint
  std::uint32_t payload_bytes = 0; ///< payload carried (framing added by the link)
  std::uint32_t frame_bytes = 0;   ///< current hop: header + payload + trailer on this link (what buffers and credits count)
  std::uint32_t flow = 0;          ///< flow / queue-pair id
  std::uint32_t psn = 0;           ///< packet sequence number within the flow
  std::uint32_t qp = 0;            ///< destination queue pair number
  std::uint16_t hops = 0;          ///< switches traversed
  PacketKind kind = PacketKind::data;
  std::uint8_t sl = 0;             ///< IB service level / Ethernet priority (PCP)
  std::uint8_t vl = 0;             ///< IB virtual lane / Ethernet traffic class
  Ecn ecn = Ecn::not_ect;          ///< IP ECN bits (RoCEv2)
  bool fecn = false;               ///< IB forward explicit congestion notification
  bool becn = false;               ///< IB backward explicit congestion notification
  bool corrupted = false;          ///< a bit error hit it on the last link: the receiver's CRC check drops it
  bool last_of_message = false;    ///< tail packet of its message
  RdmaOp op = RdmaOp::raw;         ///< transport operation
  // Second line: what endpoints and flow control read.
  std::uint64_t id = 0;            ///< unique per run: (source endpoint << 40) | its count (PacketSource)
  std::uint64_t message = 0;       ///< message id (unique per run)
  std::uint64_t read_bytes = 0;    ///< READ request: bytes to read; WRITE, SEND and raw data: bytes of the whole message
  std::uint64_t wr_id = 0;         ///< work request the packet belongs to (statistics)
  std::uint64_t credit_blocks = 0; ///< CREDIT_RETURN: blocks freed
  sc_core::sc_time created;        ///< message posted at the source
  sc_core::sc_time message_start;  ///< flow start: raw message posted / RDMA message's first segment ready in the NIC
  std::uint32_t ack_psn = 0;       ///< ACK/NAK: PSN acknowledged up to (exclusive) / first missing
  std::uint16_t pause_quanta = 0;  ///< PFC_PAUSE: pause time in 512-bit-time quanta, 0 = resume
  bool pooled = false;             ///< in a free list of its PacketPool (released, not acquired again)
};
static_assert(sizeof(Packet) == 128, "a packet is two cache lines");

/// Protocol traits binding Packet to TLM-2.0 sockets.
struct fabric_protocol_types {
  using tlm_payload_type = Packet;
  using tlm_phase_type = tlm::tlm_phase;
};

TLM_DECLARE_EXTENDED_PHASE(BEGIN_HEADER);
TLM_DECLARE_EXTENDED_PHASE(END_TAIL);
TLM_DECLARE_EXTENDED_PHASE(CREDIT_RETURN);
TLM_DECLARE_EXTENDED_PHASE(PFC_PAUSE);

/// Socket bus width is meaningless for packets; one value keeps sockets bindable.
inline constexpr unsigned kSocketWidth = 32;

}  // namespace fabricsim::tlm_fabric
