// Free-list of packets: one allocation per packet slot for the whole run, so
// the hot path never calls the allocator. Sources acquire, sinks release.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tlm/fabric_protocol.h"
#include "tlm/latency_breakdown.h"
#include "tlm/sim_time.h"

namespace fabricsim::tlm_fabric {

class PacketPool {
 public:
  PacketPool() : shards_(1) {}
  /// One free list per wake-queue lane (WakeQueue::set_lanes), each used by its lane's
  /// thread only: a packet goes back to the list of the lane that releases it.
  void set_lanes(int lanes) { shards_.resize(static_cast<std::size_t>(lanes)); }
  /// Before the first packet: each slot keeps a PacketBreakdown beside its packet
  /// (breakdown_of), the senders clearing it at injection.
  void keep_breakdowns() { breakdowns_ = true; }
  bool keeps_breakdowns() const { return breakdowns_; }
  /// A cleared packet (id 0: PacketSource numbers them).
  Packet* acquire() {
    Shard& s = shards_[static_cast<std::size_t>(detail::lane)];
    Packet* p;
    if (s.free.empty()) {
      s.slots.push_back(breakdowns_ ? Slot(&(new PacketWithBreakdown)->packet, &delete_with_breakdown)
                                    : Slot(new Packet, &delete_packet));
      p = s.slots.back().get();
    } else {
      p = s.free.back();
      s.free.pop_back();
      *p = Packet{};
    }
    return p;
  }
  /// Returns a delivered (or dropped) packet to the pool.
  void release(Packet* p) {
    p->pooled = true;  // acquire() clears it with the rest of the packet
    shards_[static_cast<std::size_t>(detail::lane)].free.push_back(p);
  }
  /// Packets acquired and not yet released.
  std::uint64_t in_use() const {
    std::uint64_t slots = 0, free = 0;
    for (const Shard& s : shards_) {
      slots += s.slots.size();
      free += s.free.size();
    }
    return slots - free;
  }
  /// Whether a packet acquired and not yet released has its tail reaching the receiver of
  /// its current hop after `now`: it is being serialised or is on a wire.
  bool arriving_after(const sc_core::sc_time& now) const {
    for (const Shard& s : shards_)
      for (const auto& p : s.slots)
        if (!p->pooled && p->tail_at > now) return true;
    return false;
  }

 private:
  static void delete_packet(Packet* p) { delete p; }
  static void delete_with_breakdown(Packet* p) { delete &reinterpret_cast<PacketWithBreakdown&>(*p); }
  using Slot = std::unique_ptr<Packet, void (*)(Packet*)>;
  struct alignas(64) Shard {
    std::vector<Slot> slots;
    std::vector<Packet*> free;
  };
  std::vector<Shard> shards_;
  bool breakdowns_ = false;
};

/// Where an endpoint's packets come from: the pool, and ids of the endpoint's own,
/// (endpoint << 40) | its count, as messages are numbered (Nic::post). They depend on
/// nothing but the endpoint's own order of sending, so they are the same whatever lane
/// runs it and whatever the order of the blocks of one instant (packets.csv).
class PacketSource {
 public:
  PacketSource(PacketPool& pool, int endpoint) : pool_(pool), next_id_(static_cast<std::uint64_t>(endpoint) << 40) {}
  /// A cleared packet with the endpoint's next id.
  Packet* acquire() {
    Packet* p = pool_.acquire();
    p->id = next_id_++;
    return p;
  }
  /// Returns a delivered (or dropped) packet to the pool.
  void release(Packet* p) { pool_.release(p); }
  bool keeps_breakdowns() const { return pool_.keeps_breakdowns(); }

 private:
  PacketPool& pool_;
  std::uint64_t next_id_;
};

}  // namespace fabricsim::tlm_fabric
