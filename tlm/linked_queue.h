// NodePool and LinkedQueue: FIFOs whose elements live in one pool per owner, linked by
// index, as a switch's buffer manager keeps packet descriptors in one descriptor RAM with
// a link per descriptor and a head and tail pointer per queue. A switch has many queues
// (VOQ: ports^2 x VLs) but holds few packets: an entry stays in one slot from arrival to
// transmission, a queue is 12 bytes, and a freed slot is the next one taken (still in
// cache). T has a member `std::uint32_t next`, which the pool and the queues own. Slots
// never move: references stay valid until the slot is given back.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace fabricsim::tlm_fabric {

inline constexpr std::uint32_t kNoNode = 0xffffffffu;

template <class T>
class NodePool {
 public:
  T& operator[](std::uint32_t i) { return chunks_[i >> kChunkBits][i & kChunkMask]; }
  const T& operator[](std::uint32_t i) const { return chunks_[i >> kChunkBits][i & kChunkMask]; }
  /// A slot holding a copy of `v`, unlinked; the slot given back last.
  std::uint32_t add(const T& v) {
    if (free_ == kNoNode) grow();
    const std::uint32_t i = free_;
    T& slot = (*this)[i];
    free_ = slot.next;
    slot = v;
    slot.next = kNoNode;
    return i;
  }
  /// Gives slot `i` back (unlinked from any queue).
  void remove(std::uint32_t i) {
    (*this)[i].next = free_;
    free_ = i;
  }
  /// Slots allocated (in use or free).
  std::size_t capacity() const { return chunks_.size() << kChunkBits; }

 private:
  static constexpr std::uint32_t kChunkBits = 6;  // 64 slots a chunk
  static constexpr std::uint32_t kChunkMask = (1u << kChunkBits) - 1;
  void grow() {
    const auto base = static_cast<std::uint32_t>(capacity());
    chunks_.push_back(std::make_unique<T[]>(std::size_t{1} << kChunkBits));
    // Lowest index first.
    for (std::uint32_t k = (1u << kChunkBits); k-- > 0;) remove(base + k);
  }
  std::vector<std::unique_ptr<T[]>> chunks_;
  std::uint32_t free_ = kNoNode;
};

template <class T>
class LinkedQueue {
 public:
  bool empty() const { return head_ == kNoNode; }
  std::uint32_t size() const { return size_; }
  /// The first slot (kNoNode when empty).
  std::uint32_t front() const { return head_; }
  void push_back(NodePool<T>& pool, std::uint32_t i) {
    pool[i].next = kNoNode;
    if (empty()) head_ = i;
    else pool[tail_].next = i;
    tail_ = i;
    ++size_;
  }
  /// Unlinks the first slot and returns it (still the caller's to give back).
  std::uint32_t pop_front(NodePool<T>& pool) {
    const std::uint32_t i = head_;
    head_ = pool[i].next;
    --size_;
    return i;
  }
  /// In a queue kept in order of key(element): links slot `i` behind every element whose
  /// key is no later than its own (nearly always at the back).
  template <class Key>
  void insert_sorted(NodePool<T>& pool, std::uint32_t i, Key key) {
    const auto& k = key(pool[i]);
    if (empty() || !(k < key(pool[tail_]))) {
      push_back(pool, i);
      return;
    }
    std::uint32_t prev = kNoNode, at = head_;
    while (!(k < key(pool[at]))) {
      prev = at;
      at = pool[at].next;
    }
    pool[i].next = at;
    if (prev == kNoNode) head_ = i;
    else pool[prev].next = i;
    ++size_;
  }
  /// Calls f(element) front to back until it returns false.
  template <class F>
  void walk(const NodePool<T>& pool, F&& f) const {
    for (std::uint32_t i = head_; i != kNoNode; i = pool[i].next)
      if (!f(pool[i])) return;
  }

 private:
  std::uint32_t head_ = kNoNode, tail_ = kNoNode, size_ = 0;  // tail_ means something only when not empty()
};

}  // namespace fabricsim::tlm_fabric
