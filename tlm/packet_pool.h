// Free-list of packets: one allocation per packet slot for the whole run, so
// the hot path never calls the allocator. Sources acquire, sinks release.
#pragma once

#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include "tlm/fabric_protocol.h"
#include "tlm/sim_time.h"

namespace fabricsim::tlm_fabric {

class PacketPool {
 public:
  PacketPool() : shards_(1) {}
  /// One free list per wake-queue lane (WakeQueue::set_lanes), each used by its lane's
  /// thread only: a packet goes back to the list of the lane that releases it. Ids are
  /// then unique per lane (lane + lanes x its count), not in creation order.
  void set_lanes(int lanes) { shards_.resize(static_cast<std::size_t>(lanes)); }
  /// A cleared packet with a fresh id.
  Packet* acquire() {
    Shard& s = shards_[static_cast<std::size_t>(detail::lane)];
    Packet* p;
    if (s.free.empty()) {
      s.slots.push_back(std::make_unique<Packet>());
      p = s.slots.back().get();
    } else {
      p = s.free.back();
      s.free.pop_back();
      *p = Packet{};
    }
    p->id = s.created++ * shards_.size() + static_cast<std::uint64_t>(detail::lane);
    return p;
  }
  /// Returns a delivered (or dropped) packet to the pool.
  void release(Packet* p) { shards_[static_cast<std::size_t>(detail::lane)].free.push_back(p); }
  /// Packets acquired and not yet released.
  std::uint64_t in_use() const {
    std::uint64_t slots = 0, free = 0;
    for (const Shard& s : shards_) {
      slots += s.slots.size();
      free += s.free.size();
    }
    return slots - free;
  }
  /// Packets created so far.
  std::uint64_t created() const {
    return std::accumulate(shards_.begin(), shards_.end(), std::uint64_t{0},
                           [](std::uint64_t n, const Shard& s) { return n + s.created; });
  }

 private:
  struct alignas(64) Shard {
    std::vector<std::unique_ptr<Packet>> slots;
    std::vector<Packet*> free;
    std::uint64_t created = 0;
  };
  std::vector<Shard> shards_;
};

}  // namespace fabricsim::tlm_fabric
