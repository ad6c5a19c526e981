// Per-hop latency breakdown (`output.latency_breakdown`): where a packet's network
// latency goes, from its first bit leaving the source NIC to its tail at the
// destination. Each part is a difference of two instants on the packet's path, so the
// parts add up to the latency exactly, to the kernel tick:
//   link:   first bit out -> first bit in: propagation, fec; first bit in -> header
//           in (each switch) or tail in (destination): serialisation;
//   switch: header in -> ready for the allocator: pipeline (store-and-forward: the
//           tail's wait is serialisation); -> head of its queue: queueing; head ->
//           grant: flow_control while its (output, VL) is blocked by credits or PAUSE,
//           arbitration the rest (the allocator, the egress VL scheduler, the crossbar
//           write port, a busy wire); grant -> wire: pipeline (grant_to_wire), then
//           serialisation where the forwarding mode waits for the ingress tail.
// The state rides beside the packet in its pool slot, only when the breakdown is on.
#pragma once

#include <array>
#include <cstdint>
#include <type_traits>

#include <nlohmann/json.hpp>
#include <systemc>

#include "hw/phy.h"
#include "tlm/fabric_protocol.h"

namespace fabricsim::tlm_fabric {

/// The parts of a packet's network latency.
enum class LatencyPart : std::uint8_t { pipeline, queueing, arbitration, flow_control, serialisation, propagation, fec };
inline constexpr int kLatencyParts = 7;
/// Their names in results.json and packets.csv (`<name>_ps`), in enum order.
inline constexpr std::array<const char*, kLatencyParts> kLatencyPartNames{
    "pipeline", "queueing", "arbitration", "flow_control", "serialisation", "propagation", "fec"};

/// Ticks per part.
using LatencyParts = std::array<std::int64_t, kLatencyParts>;

/// Adds the interval [from, to] to `part`.
inline void add_part(LatencyParts& parts, LatencyPart part, const sc_core::sc_time& from, const sc_core::sc_time& to) {
  parts[static_cast<std::size_t>(part)] += static_cast<std::int64_t>(to.value()) - static_cast<std::int64_t>(from.value());
}

/// A packet's parts so far and where its current hop stands.
struct alignas(64) PacketBreakdown {
  LatencyParts ticks{};
  sc_core::sc_time first_bit_in;   ///< current hop: the first bit reaches the receiver (sent + propagation + FEC)
  // In a switch:
  sc_core::sc_time head_since;     ///< it became the head of its queue
  sc_core::sc_time blocked_before; ///< its (output, VL)'s flow-control-blocked time when it did
  sc_core::sc_time ready_admitted; ///< output_queued: ready for the crossbar, before the write port's grant

  /// The first bit leaves a transmitter onto `link` at `at`.
  void sent(const hw::PhyTiming& link, const sc_core::sc_time& at);
  /// The header (switch) or tail (destination) is in at `at`: the rest of the hop is serialisation.
  void arrived(const sc_core::sc_time& at) { add_part(ticks, LatencyPart::serialisation, first_bit_in, at); }
  std::int64_t total() const;
};

/// A pool slot with the breakdown beside its packet (PacketPool, breakdown on).
struct alignas(64) PacketWithBreakdown {
  Packet packet;
  PacketBreakdown breakdown;
};

/// The breakdown of a packet from a pool with the breakdown on.
inline PacketBreakdown& breakdown_of(Packet& p) { return reinterpret_cast<PacketWithBreakdown&>(p).breakdown; }
inline const PacketBreakdown& breakdown_of(const Packet& p) {
  return reinterpret_cast<const PacketWithBreakdown&>(p).breakdown;
}
static_assert(std::is_standard_layout_v<PacketWithBreakdown>, "breakdown_of: the packet starts its slot");

/// Parts summed over packets (a switch port, a switch, a tier, the fabric's deliveries).
struct LatencySums {
  std::uint64_t packets = 0;
  LatencyParts ticks{};

  void add(const LatencyParts& parts) {
    ++packets;
    for (int k = 0; k < kLatencyParts; ++k) ticks[k] += parts[k];
  }
  LatencySums& operator+=(const LatencySums& o);
  /// {"packets": n, "mean_ns": {part: mean}}; `with_links` false: a switch's own parts only.
  nlohmann::json to_json(bool with_links) const;
};

}  // namespace fabricsim::tlm_fabric
