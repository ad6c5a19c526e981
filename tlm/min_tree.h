// MinTree: the least of n values that change one at a time, O(log n) per change and
// O(1) to read. An RDMA engine keeps in one the earliest time each of its QPs could send
// next (RdmaEngine::next_ready), so finding when to wake does not walk the QPs: an
// all-to-all gives a NIC a QP per peer.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace fabricsim::tlm_fabric {

template <class T>
class MinTree {
 public:
  /// `none`: the value of an empty slot, not less than any value set.
  explicit MinTree(const T& none) : none_(none) {}

  const T& none() const { return none_; }
  /// n slots (the slots added hold `none`); growing is amortised O(1) per slot.
  void resize(std::size_t n) {
    if (n > leaves_) {
      std::size_t leaves = std::max<std::size_t>(leaves_, 1);
      while (leaves < n) leaves *= 2;
      std::vector<T> tree(2 * leaves, none_);
      std::copy(tree_.begin() + static_cast<std::ptrdiff_t>(leaves_), tree_.begin() + static_cast<std::ptrdiff_t>(leaves_ + size_),
                tree.begin() + static_cast<std::ptrdiff_t>(leaves));
      for (std::size_t k = leaves - 1; k >= 1; --k) tree[k] = std::min(tree[2 * k], tree[2 * k + 1]);
      tree_ = std::move(tree);
      leaves_ = leaves;
    }
    for (std::size_t i = n; i < size_; ++i) set(i, none_);
    size_ = n;
  }
  void set(std::size_t i, const T& v) {
    std::size_t k = leaves_ + i;
    if (!(tree_[k] < v) && !(v < tree_[k])) return;
    tree_[k] = v;
    // Up while the least below a node changes.
    for (k /= 2; k >= 1; k /= 2) {
      const T& least = std::min(tree_[2 * k], tree_[2 * k + 1]);
      if (!(tree_[k] < least) && !(least < tree_[k])) break;
      tree_[k] = least;
    }
  }
  const T& get(std::size_t i) const { return tree_[leaves_ + i]; }
  /// The least value; `none` without slots or when every slot holds it.
  const T& min() const { return leaves_ ? tree_[1] : none_; }

 private:
  T none_;
  std::size_t size_ = 0;
  std::size_t leaves_ = 0;  // a power of two, at least size_ (0 before the first slot)
  std::vector<T> tree_;     // tree_[1] the root, node k's children 2k and 2k + 1, slot i at leaves_ + i
};

}  // namespace fabricsim::tlm_fabric
