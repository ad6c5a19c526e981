// hw/ core: packet FIFO with cut-through and store-and-forward read modes (the
// reference model of rtl/packet_fifo.sv).
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "hw/packet_fifo.h"

namespace {

using fabricsim::hw::FifoMode;
using fabricsim::hw::FifoWord;
using fabricsim::hw::PacketFifo;
using fabricsim::hw::PacketFifoParams;

PacketFifo make(std::size_t depth, FifoMode mode) { return PacketFifo(PacketFifoParams{depth, mode}); }

/// Pushes a packet of `words` words with payloads first, first+1, ...
void push_packet(PacketFifo& f, int words, std::uint64_t first) {
  for (int w = 0; w < words; ++w) f.push(FifoWord{first + static_cast<std::uint64_t>(w), w == words - 1});
}

TEST(PacketFifo, CutThroughHeadReadableOnceItsFirstWordIsIn) {
  auto f = make(8, FifoMode::kCutThrough);
  EXPECT_FALSE(f.can_pop());
  f.push(FifoWord{10, false});
  ASSERT_TRUE(f.can_pop());
  EXPECT_EQ(f.front(), (FifoWord{10, false}));
  EXPECT_EQ(f.packets(), 0u);
}

TEST(PacketFifo, StoreAndForwardWaitsForTheLastWord) {
  auto f = make(8, FifoMode::kStoreAndForward);
  f.push(FifoWord{1, false});
  f.push(FifoWord{2, false});
  EXPECT_FALSE(f.can_pop());
  EXPECT_THROW(f.front(), std::logic_error);
  EXPECT_THROW(f.pop(), std::logic_error);
  f.push(FifoWord{3, true});
  ASSERT_TRUE(f.can_pop());
  EXPECT_EQ(f.packets(), 1u);
  EXPECT_EQ(f.pop(), (FifoWord{1, false}));
  EXPECT_EQ(f.pop(), (FifoWord{2, false}));
  EXPECT_EQ(f.pop(), (FifoWord{3, true}));
  EXPECT_TRUE(f.empty());
  EXPECT_EQ(f.packets(), 0u);
}

TEST(PacketFifo, StoreAndForwardHoldsTheNextPacketUntilItIsComplete) {
  auto f = make(8, FifoMode::kStoreAndForward);
  push_packet(f, 2, 100);
  f.push(FifoWord{200, false});  // second packet, incomplete
  EXPECT_EQ(f.pop().data, 100u);
  EXPECT_EQ(f.pop().data, 101u);
  EXPECT_FALSE(f.can_pop()) << "the incomplete second packet must not start";
  f.push(FifoWord{201, true});
  EXPECT_EQ(f.pop(), (FifoWord{200, false}));
}

TEST(PacketFifo, CutThroughReaderStallsWhenItCatchesUpWithTheWriter) {
  auto f = make(4, FifoMode::kCutThrough);
  f.push(FifoWord{1, false});
  EXPECT_EQ(f.pop().data, 1u);
  EXPECT_FALSE(f.can_pop()) << "mid-packet underrun: nothing stored";
  f.push(FifoWord{2, true});
  EXPECT_EQ(f.pop(), (FifoWord{2, true}));
}

TEST(PacketFifo, FullRefusesWordsAndKeepsOrderAcrossTheWrap) {
  auto f = make(3, FifoMode::kCutThrough);
  std::uint64_t next_in = 0, next_out = 0;
  for (int round = 0; round < 10; ++round) {
    while (f.can_push()) f.push(FifoWord{next_in++, next_in % 2 == 0});
    EXPECT_EQ(f.words(), 3u);
    EXPECT_THROW(f.push(FifoWord{999, true}), std::logic_error);
    EXPECT_EQ(f.words(), 3u) << "a refused word must not change the FIFO";
    EXPECT_EQ(f.pop().data, next_out++);
    EXPECT_EQ(f.pop().data, next_out++);
  }
}

TEST(PacketFifo, PacketCountFollowsLastWords) {
  auto f = make(16, FifoMode::kCutThrough);
  push_packet(f, 3, 0);
  push_packet(f, 1, 10);
  push_packet(f, 2, 20);
  EXPECT_EQ(f.words(), 6u);
  EXPECT_EQ(f.packets(), 3u);
  f.pop();
  f.pop();
  EXPECT_EQ(f.packets(), 3u) << "a partly read packet is still stored";
  f.pop();
  EXPECT_EQ(f.packets(), 2u);
}

TEST(PacketFifo, ModeChangeAppliesToTheNextRead) {
  auto f = make(8, FifoMode::kCutThrough);
  f.push(FifoWord{5, false});
  EXPECT_TRUE(f.can_pop());
  f.set_mode(FifoMode::kStoreAndForward);
  EXPECT_FALSE(f.can_pop());
  f.set_mode(FifoMode::kCutThrough);
  EXPECT_TRUE(f.can_pop());
}

/// The word-level FIFO the runs must behave as: a deque of words.
struct WordModel {
  std::deque<FifoWord> words;
  std::size_t depth;
  FifoMode mode;
  std::size_t packets() const {
    std::size_t n = 0;
    for (const FifoWord& w : words) n += w.last ? 1 : 0;
    return n;
  }
  bool can_pop() const { return !words.empty() && (mode == FifoMode::kCutThrough || packets() > 0); }
};

void expect_same(const PacketFifo& f, const WordModel& m, int step) {
  ASSERT_EQ(f.words(), m.words.size()) << "step " << step;
  ASSERT_EQ(f.packets(), m.packets()) << "step " << step;
  ASSERT_EQ(f.can_push(), m.words.size() < m.depth) << "step " << step;
  ASSERT_EQ(f.can_pop(), m.can_pop()) << "step " << step;
  if (m.can_pop()) {
    ASSERT_EQ(f.front(), m.words.front()) << "step " << step;
  }
}

TEST(PacketFifo, RunsBehaveAsAWordFifoUnderRandomWordOperations) {
  // Single-word pushes with few distinct data values merge into runs and split on pops.
  std::mt19937_64 rng(7);
  PacketFifo f = make(12, FifoMode::kCutThrough);
  WordModel m{{}, 12, FifoMode::kCutThrough};
  for (int step = 0; step < 20000; ++step) {
    const auto r = rng() % 10;
    if (r < 5 && m.words.size() < m.depth) {
      const FifoWord w{rng() % 3, rng() % 4 == 0};
      f.push(w);
      m.words.push_back(w);
    } else if (r < 9 && m.can_pop()) {
      ASSERT_EQ(f.pop(), m.words.front()) << "step " << step;
      m.words.pop_front();
    } else if (r == 9) {
      m.mode = m.mode == FifoMode::kCutThrough ? FifoMode::kStoreAndForward : FifoMode::kCutThrough;
      f.set_mode(m.mode);
    }
    expect_same(f, m, step);
  }
}

TEST(PacketFifo, BulkOperationsEqualRepeatedWordOperations) {
  // The same random packet traffic through push_words/pop_packet and through push/pop.
  std::mt19937_64 rng(11);
  for (FifoMode mode : {FifoMode::kCutThrough, FifoMode::kStoreAndForward}) {
    PacketFifo bulk = make(40, mode), single = make(40, mode);
    std::uint64_t id = 0;
    std::size_t tail = 0;  // words of the newest packet still to write
    for (int step = 0; step < 20000; ++step) {
      const auto r = rng() % 3;
      if (r == 0 && tail == 0) {
        // A packet's head words now, the rest (with its last word) later.
        const std::size_t n = 1 + rng() % 9, head = rng() % (n + 1);
        if (!bulk.can_push(n)) continue;
        ++id;
        bulk.push_words(head, id, head == n);
        for (std::size_t w = 0; w < head; ++w) single.push(FifoWord{id, w + 1 == n});
        tail = n - head;
      } else if (r == 1 && tail > 0) {
        bulk.push_words(tail, id, true);
        for (std::size_t w = 0; w < tail; ++w) single.push(FifoWord{id, w + 1 == tail});
        tail = 0;
      } else if (r == 2 && bulk.packets() > 0) {
        ASSERT_EQ(bulk.front(), single.front());
        const std::size_t n = bulk.pop_packet();
        std::size_t popped = 0;
        for (bool last = false; !last; ++popped) last = single.pop().last;
        ASSERT_EQ(n, popped) << "step " << step;
      }
      ASSERT_EQ(bulk.words(), single.words()) << "step " << step;
      ASSERT_EQ(bulk.packets(), single.packets()) << "step " << step;
      ASSERT_EQ(bulk.can_pop(), single.can_pop()) << "step " << step;
      if (single.can_pop()) {
        ASSERT_EQ(bulk.front(), single.front()) << "step " << step;
      }
    }
  }
}

TEST(PacketFifo, RefusedBulkOperationsChangeNothing) {
  auto f = make(6, FifoMode::kStoreAndForward);
  f.push_words(4, 1, false);
  EXPECT_TRUE(f.can_push(2));
  EXPECT_FALSE(f.can_push(3));
  EXPECT_THROW(f.push_words(3, 1, true), std::logic_error);
  EXPECT_EQ(f.words(), 4u) << "a refused packet must not be stored in part";
  EXPECT_THROW(f.pop_packet(), std::logic_error) << "its last word is not stored";
  EXPECT_EQ(f.words(), 4u);
  f.push_words(2, 1, true);
  EXPECT_EQ(f.packets(), 1u);
  EXPECT_EQ(f.pop(), (FifoWord{1, false}));
  EXPECT_EQ(f.pop_packet(), 5u) << "the rest of a partly read packet";
  EXPECT_TRUE(f.empty());
  EXPECT_THROW(f.pop_packet(), std::logic_error);
}

TEST(PacketFifo, DeepFifoHoldsPacketsOfManyWords) {
  // A 4096-word input buffer: occupancy in words, storage in segments.
  auto f = make(4096, FifoMode::kStoreAndForward);
  for (std::uint64_t id = 0; id < 64; ++id) f.push_words(64, id, true);
  EXPECT_FALSE(f.can_push());
  EXPECT_EQ(f.packets(), 64u);
  for (std::uint64_t id = 0; id < 64; ++id) {
    ASSERT_EQ(f.front(), (FifoWord{id, false}));
    ASSERT_EQ(f.pop_packet(), 64u);
  }
  EXPECT_TRUE(f.empty());
}

TEST(PacketFifo, DepthOutsideRangeIsRejected) {
  EXPECT_THROW(make(0, FifoMode::kCutThrough), std::invalid_argument);
  EXPECT_THROW(make(1, FifoMode::kCutThrough), std::invalid_argument);
  try {
    make(1, FifoMode::kStoreAndForward);
    FAIL() << "depth 1 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("depth_words"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(make(2, FifoMode::kStoreAndForward));
}

}  // namespace
