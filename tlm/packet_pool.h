// Free-list of packets: one allocation per packet slot for the whole run, so
// the hot path never calls the allocator. Sources acquire, sinks release.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tlm/fabric_protocol.h"

namespace fabricsim::tlm_fabric {

class PacketPool {
 public:
  /// A cleared packet with a fresh id.
  Packet* acquire() {
    Packet* p;
    if (free_.empty()) {
      slots_.push_back(std::make_unique<Packet>());
      p = slots_.back().get();
    } else {
      p = free_.back();
      free_.pop_back();
      *p = Packet{};
    }
    p->id = next_id_++;
    return p;
  }
  /// Returns a delivered (or dropped) packet to the pool.
  void release(Packet* p) { free_.push_back(p); }
  /// Packets acquired and not yet released.
  std::uint64_t in_use() const { return slots_.size() - free_.size(); }
  /// Packets created so far.
  std::uint64_t created() const { return next_id_; }

 private:
  std::vector<std::unique_ptr<Packet>> slots_;
  std::vector<Packet*> free_;
  std::uint64_t next_id_ = 0;
};

}  // namespace fabricsim::tlm_fabric
