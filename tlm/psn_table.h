// The NIC's packet sequence numbers per raw packet stream (peer endpoint, flow, SL):
// the next PSN to send, and the next one expected, looked up once per packet.
#pragma once

#include <cstdint>
#include <vector>

namespace fabricsim::tlm_fabric {

/// Stream key -> PSN, open addressing in one array (std::unordered_map took two
/// divisions and a node per lookup: 6% of the k-ary n-tree benchmark).
class PsnTable {
 public:
  /// The PSN of stream `key`, 0 for a stream not seen before.
  std::uint32_t& operator[](std::uint64_t key) {
    // At most half full after an insertion: a probe meets a free slot soon.
    if (2 * (used_ + 1) > slots_.size()) rehash(slots_.empty() ? 16 : 2 * slots_.size());
    for (std::size_t i = index(key);; i = (i + 1) & (slots_.size() - 1)) {
      Slot& s = slots_[i];
      if (s.used && s.key == key) return s.psn;
      if (!s.used) {
        s = {key, 0, true};
        ++used_;
        return s.psn;
      }
    }
  }
  /// Streams seen.
  std::size_t size() const { return used_; }

 private:
  struct Slot {
    std::uint64_t key = 0;
    std::uint32_t psn = 0;
    bool used = false;
  };
  // Fibonacci hashing: the key's high product bits pick the slot.
  std::size_t index(std::uint64_t key) const { return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_); }
  void rehash(std::size_t capacity) {
    std::vector<Slot> old(capacity);
    old.swap(slots_);
    shift_ = 64;
    for (std::size_t c = capacity; c > 1; c >>= 1) --shift_;
    for (const Slot& s : old) {
      if (!s.used) continue;
      std::size_t i = index(s.key);
      while (slots_[i].used) i = (i + 1) & (slots_.size() - 1);
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;  // a power of two
  std::size_t used_ = 0;
  int shift_ = 64;
};

}  // namespace fabricsim::tlm_fabric
