// tlm/linked_queue.h: queues sharing one pool behave as separate ordered queues
// (a std::vector per queue is the reference), slots never move, a freed slot is reused.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "tlm/linked_queue.h"

namespace {

using fabricsim::tlm_fabric::kNoNode;
using fabricsim::tlm_fabric::LinkedQueue;
using fabricsim::tlm_fabric::NodePool;

struct Item {
  int key = 0;
  int id = 0;
  std::uint32_t next = kNoNode;
};

std::vector<int> ids(const LinkedQueue<Item>& q, const NodePool<Item>& pool) {
  std::vector<int> out;
  q.walk(pool, [&](const Item& x) {
    out.push_back(x.id);
    return true;
  });
  return out;
}

TEST(LinkedQueue, ManyQueuesInOnePoolMatchSeparateQueues) {
  std::mt19937_64 rng(5);
  NodePool<Item> pool;
  constexpr int kQueues = 40;
  std::vector<LinkedQueue<Item>> queues(kQueues);
  std::vector<std::vector<Item>> reference(kQueues);
  int next_id = 0;
  for (int step = 0; step < 50000; ++step) {
    const int q = static_cast<int>(rng() % kQueues);
    auto& ref = reference[q];
    if (rng() % 100 < 55) {
      // Keys mostly rising (a queue in ready order), sometimes earlier than the back.
      const int back = ref.empty() ? 0 : ref.back().key;
      const Item x{back + static_cast<int>(rng() % 5) - 1, next_id++};
      const std::uint32_t slot = pool.add(x);
      if (rng() % 2) {
        queues[q].insert_sorted(pool, slot, [](const Item& i) { return i.key; });
        // Behind every element with a key no later than its own.
        const auto at = std::upper_bound(ref.begin(), ref.end(), x, [](const Item& a, const Item& b) { return a.key < b.key; });
        ref.insert(at, x);
      } else if (ref.empty() || ref.back().key <= x.key) {
        queues[q].push_back(pool, slot);
        ref.push_back(x);
      } else {
        pool.remove(slot);
      }
    } else if (!ref.empty()) {
      const std::uint32_t slot = queues[q].pop_front(pool);
      EXPECT_EQ(pool[slot].id, ref.front().id);
      ref.erase(ref.begin());
      pool.remove(slot);
    }
    ASSERT_EQ(queues[q].size(), ref.size());
    ASSERT_EQ(queues[q].empty(), ref.empty());
    if (!ref.empty()) {
      ASSERT_EQ(pool[queues[q].front()].id, ref.front().id);
    }
    if (step % 97 == 0) {
      for (int k = 0; k < kQueues; ++k) {
        std::vector<int> want;
        for (const Item& x : reference[k]) want.push_back(x.id);
        ASSERT_EQ(ids(queues[k], pool), want) << "queue " << k << " step " << step;
      }
    }
  }
}

TEST(LinkedQueue, SlotsStayPutAndTheLastFreedIsTakenFirst) {
  NodePool<Item> pool;
  LinkedQueue<Item> q;
  const std::uint32_t first = pool.add({1, 1});
  q.push_back(pool, first);
  const Item* where = &pool[first];
  for (int i = 2; i < 1000; ++i) q.push_back(pool, pool.add({i, i}));  // the pool grows
  EXPECT_EQ(&pool[first], where);
  EXPECT_EQ(where->id, 1);
  EXPECT_GE(pool.capacity(), 999u);
  const std::uint32_t a = q.pop_front(pool);
  const std::uint32_t b = q.pop_front(pool);
  pool.remove(a);
  pool.remove(b);
  EXPECT_EQ(pool.add({0, 0}), b);
  EXPECT_EQ(pool.add({0, 0}), a);
  // The walk stops where asked.
  int seen = 0;
  q.walk(pool, [&](const Item& x) { return ++seen, x.id < 10; });
  EXPECT_EQ(seen, 8);  // ids 3..10
}

}  // namespace
