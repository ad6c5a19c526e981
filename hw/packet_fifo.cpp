#include "hw/packet_fifo.h"

#include <stdexcept>
#include <string>

namespace fabricsim::hw {

namespace {
constexpr std::size_t kMaxDepthWords = std::size_t{1} << 20;
}  // namespace

void PacketFifoParams::validate() const {
  // Two words at least: with one slot a cut-through packet could never stream.
  if (depth_words < 2 || depth_words > kMaxDepthWords)
    throw std::invalid_argument("PacketFifoParams.depth_words = " + std::to_string(depth_words) +
                                " outside 2.." + std::to_string(kMaxDepthWords) + " words");
}

PacketFifo::PacketFifo(const PacketFifoParams& p) : mode_(p.mode) {
  p.validate();
  slots_.resize(p.depth_words);
}

void PacketFifo::push(const FifoWord& w) {
  if (!can_push())
    throw std::logic_error("packet FIFO overflow: all " + std::to_string(slots_.size()) +
                           " words are in use");
  slots_[(head_ + words_) % slots_.size()] = w;
  ++words_;
  if (w.last) ++packets_;
}

bool PacketFifo::can_pop() const {
  if (words_ == 0) return false;
  // Store-and-forward: the head belongs to the oldest packet, which is complete
  // exactly when some stored word ends a packet.
  return mode_ == FifoMode::kCutThrough || packets_ > 0;
}

const FifoWord& PacketFifo::front() const {
  if (!can_pop())
    throw std::logic_error(words_ == 0 ? "packet FIFO is empty"
                                       : "packet FIFO head packet is incomplete (store-and-forward)");
  return slots_[head_];
}

FifoWord PacketFifo::pop() {
  const FifoWord w = front();
  head_ = (head_ + 1) % slots_.size();
  --words_;
  if (w.last) --packets_;
  return w;
}

}  // namespace fabricsim::hw
