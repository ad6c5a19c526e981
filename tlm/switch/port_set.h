// PortSet: the ports a switch's per-wake loops visit.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace fabricsim::tlm_fabric {

inline constexpr int kMaxPorts = 256;  // a switch's radix at most (SwitchParams::validate)

/// A set of port indices (radix <= 256), walked in ascending port order: the per-wake
/// loops visit only the ports with work, in the order a walk over every port would.
class PortSet {
 public:
  void resize(int ports) { words_used_ = static_cast<std::size_t>((ports + 63) / 64); }
  void insert(int p) { words_[static_cast<std::size_t>(p >> 6)] |= bit(p); }
  void erase(int p) { words_[static_cast<std::size_t>(p >> 6)] &= ~bit(p); }
  bool contains(int p) const { return (words_[static_cast<std::size_t>(p >> 6)] & bit(p)) != 0; }
  bool empty() const {
    for (std::size_t i = 0; i < words_used_; ++i)
      if (words_[i]) return false;
    return true;
  }
  /// Calls f(port) for each member, ascending; f may erase members as it goes.
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t i = 0; i < words_used_; ++i)
      for (std::uint64_t w = words_[i]; w; w &= w - 1) f(static_cast<int>(i * 64) + __builtin_ctzll(w));
  }
  /// Whether pred(port) holds for some member (ascending, stops at the first).
  template <class F>
  bool any_of(F&& pred) const {
    for (std::size_t i = 0; i < words_used_; ++i)
      for (std::uint64_t w = words_[i]; w; w &= w - 1)
        if (pred(static_cast<int>(i * 64) + __builtin_ctzll(w))) return true;
    return false;
  }
  /// Members of either set.
  PortSet operator|(const PortSet& o) const {
    PortSet u = *this;
    for (std::size_t i = 0; i < words_used_; ++i) u.words_[i] |= o.words_[i];
    return u;
  }

 private:
  static std::uint64_t bit(int p) { return std::uint64_t{1} << (p & 63); }
  std::array<std::uint64_t, kMaxPorts / 64> words_{};
  std::size_t words_used_ = 0;
};

}  // namespace fabricsim::tlm_fabric
