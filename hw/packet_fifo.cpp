#include "hw/packet_fifo.h"

#include <stdexcept>
#include <string>

namespace fabricsim::hw {

void PacketFifoParams::validate() const {
  // Two words at least: with one slot a cut-through packet could never stream.
  if (depth_words < 2 || depth_words > kMaxFifoDepthWords)
    throw std::invalid_argument("PacketFifoParams.depth_words = " + std::to_string(depth_words) +
                                " outside 2.." + std::to_string(kMaxFifoDepthWords) + " words");
}

PacketFifo::PacketFifo(const PacketFifoParams& p) : depth_(p.depth_words), mode_(p.mode) { p.validate(); }

void PacketFifo::refuse_write(std::size_t n) const {
  throw std::logic_error("packet FIFO overflow: " + std::to_string(n) + " words offered, " +
                         std::to_string(depth_ - words_) + " of " + std::to_string(depth_) + " free");
}

void PacketFifo::refuse_read() const {
  if (words_ == 0) throw std::logic_error("packet FIFO is empty");
  throw std::logic_error(mode_ == FifoMode::kStoreAndForward ? "packet FIFO head packet is incomplete (store-and-forward)"
                                                             : "packet FIFO head packet is incomplete");
}

void PacketFifo::append_runs(std::size_t n, std::uint64_t data, bool last) {
  while (n > 0) {
    if (count_ == capacity_) {
      std::vector<Run> grown(capacity_ == 0 ? 4 : 2 * capacity_);
      for (std::size_t i = 0; i < count_; ++i) grown[i] = run(i);
      runs_.swap(grown);
      capacity_ = runs_.size();
      first_ = 0;
    }
    const std::size_t take = n < kMaxRunWords ? n : kMaxRunWords;
    n -= take;
    run(count_++) = Run{data, static_cast<std::uint32_t>(take), last && n == 0};
  }
}

FifoWord PacketFifo::pop() {
  const FifoWord w = front();
  Run& r = run(0);
  --words_;
  if (w.last) --packets_;
  if (--r.words == 0) drop_front_run();
  return w;
}

}  // namespace fabricsim::hw
