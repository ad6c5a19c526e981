// The values of a pure function for the last two keys it was asked: per-packet
// arithmetic that depends only on a size (a frame's times on a link, a PCIe
// transfer's wire time) is done once per size in use; a link or a DMA engine sees
// few sizes (MTU segments, ACKs, a message's last segment, CQEs).
#pragma once

#include <utility>

namespace fabricsim::tlm_fabric {

template <class Key, class Value>
class RecentTwo {
 public:
  /// Starts with `key` -> `value` in both places.
  RecentTwo(const Key& key, const Value& value) : key_{key, key}, value_{value, value} {}
  /// The value of `key`: remembered, or `compute(key)` (replacing the one asked least recently).
  template <class F>
  const Value& get(const Key& key, F&& compute) {
    if (key_[0] == key) return value_[0];
    std::swap(key_[0], key_[1]);
    std::swap(value_[0], value_[1]);
    if (!(key_[0] == key)) {
      key_[0] = key;
      value_[0] = compute(key);
    }
    return value_[0];
  }

 private:
  Key key_[2];  // most recent first
  Value value_[2];
};

}  // namespace fabricsim::tlm_fabric
