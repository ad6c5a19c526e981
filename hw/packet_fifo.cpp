#include "hw/packet_fifo.h"

#include <limits>
#include <stdexcept>
#include <string>

namespace fabricsim::hw {

namespace {
constexpr std::size_t kMaxRunWords = std::numeric_limits<std::uint32_t>::max();
}  // namespace

void PacketFifoParams::validate() const {
  // Two words at least: with one slot a cut-through packet could never stream.
  if (depth_words < 2 || depth_words > kMaxFifoDepthWords)
    throw std::invalid_argument("PacketFifoParams.depth_words = " + std::to_string(depth_words) +
                                " outside 2.." + std::to_string(kMaxFifoDepthWords) + " words");
}

PacketFifo::PacketFifo(const PacketFifoParams& p) : depth_(p.depth_words), mode_(p.mode) { p.validate(); }

void PacketFifo::push_words(std::size_t n, std::uint64_t data, bool last) {
  if (!can_push(n))
    throw std::logic_error("packet FIFO overflow: " + std::to_string(n) + " words offered, " +
                           std::to_string(depth_ - words_) + " of " + std::to_string(depth_) + " free");
  if (n == 0) return;
  words_ += n;
  if (last) ++packets_;
  // Words continuing the newest run's packet with the same data extend it.
  if (count_ > 0) {
    Run& back = run(count_ - 1);
    if (!back.last && back.data == data && n <= kMaxRunWords - back.words) {
      back.words += static_cast<std::uint32_t>(n);
      back.last = last;
      return;
    }
  }
  for (;;) {
    if (count_ == runs_.size()) {
      std::vector<Run> grown(runs_.empty() ? 4 : 2 * runs_.size());
      for (std::size_t i = 0; i < count_; ++i) grown[i] = run(i);
      runs_.swap(grown);
      first_ = 0;
    }
    const std::size_t take = n < kMaxRunWords ? n : kMaxRunWords;
    n -= take;
    run(count_++) = Run{data, static_cast<std::uint32_t>(take), last && n == 0};
    if (n == 0) return;
  }
}

bool PacketFifo::can_pop() const {
  if (words_ == 0) return false;
  // Store-and-forward: the head belongs to the oldest packet, which is complete
  // exactly when some stored word ends a packet.
  return mode_ == FifoMode::kCutThrough || packets_ > 0;
}

FifoWord PacketFifo::front() const {
  if (!can_pop())
    throw std::logic_error(words_ == 0 ? "packet FIFO is empty"
                                       : "packet FIFO head packet is incomplete (store-and-forward)");
  const Run& r = run(0);
  return FifoWord{r.data, r.last && r.words == 1};
}

void PacketFifo::drop_front_run() {
  first_ = (first_ + 1) & (runs_.size() - 1);
  --count_;
}

FifoWord PacketFifo::pop() {
  const FifoWord w = front();
  Run& r = run(0);
  --words_;
  if (w.last) --packets_;
  if (--r.words == 0) drop_front_run();
  return w;
}

std::size_t PacketFifo::pop_packet() {
  // The oldest packet is complete exactly when some stored word ends a packet.
  if (packets_ == 0)
    throw std::logic_error(words_ == 0 ? "packet FIFO is empty" : "packet FIFO head packet is incomplete");
  std::size_t n = 0;
  for (bool last = false; !last;) {
    const Run& r = run(0);
    n += r.words;
    last = r.last;
    drop_front_run();
  }
  words_ -= n;
  --packets_;
  return n;
}

}  // namespace fabricsim::hw
