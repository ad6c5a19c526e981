// A FIFO in one contiguous buffer: a vector and the index of its first live element.
// The model's queues are many, mostly empty and read cold: unlike std::deque (a map and
// a node even while empty), a queue is 32 bytes, empty() and front() read one line, and
// nothing is allocated until the first push. References stay valid until the next
// push_back, pop_front, erase or clear (pop_front compacts once the dead elements are as
// many as the live): hold none across a call that may add to or take from the queue.
#pragma once

#include <cstddef>
#include <iterator>
#include <utility>
#include <vector>

namespace fabricsim::tlm_fabric {

template <class T>
class Fifo {
 public:
  using iterator = typename std::vector<T>::iterator;
  using const_iterator = typename std::vector<T>::const_iterator;

  bool empty() const { return head_ == items_.size(); }
  std::size_t size() const { return items_.size() - head_; }
  T& front() { return items_[head_]; }
  const T& front() const { return items_[head_]; }
  T& back() { return items_.back(); }
  const T& back() const { return items_.back(); }
  T& operator[](std::size_t i) { return items_[head_ + i]; }
  const T& operator[](std::size_t i) const { return items_[head_ + i]; }
  iterator begin() { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  const_iterator end() const { return items_.end(); }

  void push_back(const T& v) { items_.push_back(v); }
  void push_back(T&& v) { items_.push_back(std::move(v)); }
  void pop_front() {
    if (++head_ == items_.size()) {
      items_.clear();
      head_ = 0;
    } else if (head_ >= 32 && 2 * head_ >= items_.size()) {
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }
  void clear() {
    items_.clear();
    head_ = 0;
  }
  /// Removes [first, last) of the live elements (the erase of an erase-remove).
  void erase(const_iterator first, const_iterator last) { items_.erase(first, last); }
  /// Inserts `v` before `pos`, a position among the live elements or end().
  void insert(const_iterator pos, const T& v) { items_.insert(pos, v); }
  /// In a queue kept in order of key(element): inserts `v` behind every element whose
  /// key is no later than its own (searched from the back, where it nearly always goes).
  template <class Key>
  void insert_sorted(const T& v, Key key) {
    auto pos = items_.end();
    const auto k = key(v);
    while (pos != begin() && k < key(*std::prev(pos))) --pos;
    items_.insert(pos, v);
  }

 private:
  std::vector<T> items_;
  std::size_t head_ = 0;  // items_ before it have left
};

}  // namespace fabricsim::tlm_fabric
