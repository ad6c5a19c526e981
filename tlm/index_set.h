// IndexSet: a set of small indices as a bitset, walked in ascending order from any start
// around to it: the RDMA engine's QPs with work, visited in its round-robin order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fabricsim::tlm_fabric {

class IndexSet {
 public:
  /// Room for indices 0..size-1 (members kept).
  void resize(std::size_t size) { words_.resize((size + 63) / 64); }
  void insert(std::size_t i) { words_[i >> 6] |= bit(i); }
  void erase(std::size_t i) { words_[i >> 6] &= ~bit(i); }
  bool contains(std::size_t i) const { return (i >> 6) < words_.size() && (words_[i >> 6] & bit(i)); }
  /// Calls f(i) for the members from `from` up, then from 0 up to `from` (exclusive),
  /// until f returns true; `from` is below the size. f may erase the member it is given
  /// (a member it inserts may or may not be visited in this walk).
  template <class F>
  void cycle_from(std::size_t from, F&& f) const {
    const std::size_t words = words_.size(), first = from >> 6;
    const std::uint64_t at_or_after = ~std::uint64_t{0} << (from & 63);  // bits of the first word from `from` on
    for (std::size_t k = 0; k <= words && words > 0; ++k) {
      const std::size_t w = (first + k) % words;
      std::uint64_t bits = words_[w];
      if (k == 0) bits &= at_or_after;
      if (k == words) bits &= ~at_or_after;  // back at the first word: the bits before `from`
      for (; bits; bits &= bits - 1)
        if (f(w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits)))) return;
    }
  }

 private:
  static std::uint64_t bit(std::size_t i) { return std::uint64_t{1} << (i & 63); }
  std::vector<std::uint64_t> words_;
};

}  // namespace fabricsim::tlm_fabric
