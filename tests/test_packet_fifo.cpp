// hw/ core: packet FIFO with cut-through and store-and-forward read modes (the
// reference model of rtl/packet_fifo.sv).
#include <gtest/gtest.h>

#include <cstdint>
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
