// Packet FIFO with cut-through and store-and-forward read modes: the reference
// model of rtl/packet_fifo.sv. A buffer of fixed-size words, each flagged when it
// ends its packet. Cut-through lets the head word leave as soon as it is stored,
// so a packet may leave while its tail still arrives; store-and-forward holds
// it until the packet's last word is stored (Kermani and Kleinrock, virtual cut-through, 1979).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace fabricsim::hw {

/// The deepest packet FIFO, in words.
inline constexpr std::size_t kMaxFifoDepthWords = std::size_t{1} << 40;

/// When a stored packet may start to leave the FIFO.
enum class FifoMode {
  kCutThrough,       ///< head word readable once stored
  kStoreAndForward,  ///< head word readable once its packet's last word is stored
};

/// Shape of a packet FIFO, checked by the PacketFifo constructor.
struct PacketFifoParams {
  std::size_t depth_words = 16;            ///< capacity in words, 2..2^40 (RTL: Depth)
  FifoMode mode = FifoMode::kCutThrough;   ///< initial read mode (RTL: saf_i)
  /// Throws std::invalid_argument naming the offending field.
  void validate() const;
};

/// One stored word.
struct FifoWord {
  std::uint64_t data = 0;  ///< payload (RTL: DataW <= 64 bits)
  bool last = false;       ///< ends its packet
  bool operator==(const FifoWord& other) const { return data == other.data && last == other.last; }
};

/// Packet FIFO. One clock cycle of the RTL twin is: read can_push()/can_pop()/front()
/// from the state, then pop() if the reader takes the word, then push() if a word is
/// offered and can_push() was true (no read-to-write bypass when full).
///
/// The words are stored as runs: one entry per stored segment of equal words (data,
/// word count, whether its final word ends a packet), so memory follows the packets
/// held, not the depth. A packet written as its head word and then the rest is two
/// runs. The bulk operations equal repeating the word operations.
class PacketFifo {
 public:
  explicit PacketFifo(const PacketFifoParams& p);

  /// Room for one more word.
  bool can_push() const { return words_ < depth_; }
  /// Room for `n` more words.
  bool can_push(std::size_t n) const { return depth_ - words_ >= n; }
  /// Stores a word; throws std::logic_error when full.
  void push(const FifoWord& w) { push_words(1, w.data, w.last); }
  /// Stores `n` words carrying `data`, the final one flagged `last` when set: n push()
  /// calls. Throws std::logic_error, storing none, unless can_push(n).
  void push_words(std::size_t n, std::uint64_t data, bool last) {
    if (!can_push(n)) refuse_write(n);
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
    if (count_ == capacity_ || n > kMaxRunWords) {
      append_runs(n, data, last);
      return;
    }
    run(count_++) = Run{data, static_cast<std::uint32_t>(n), last};
  }
  /// The head word may leave under the current mode.
  bool can_pop() const {
    // Store-and-forward: the head belongs to the oldest packet, which is complete
    // exactly when some stored word ends a packet.
    return words_ > 0 && (mode_ == FifoMode::kCutThrough || packets_ > 0);
  }
  /// The head word; throws std::logic_error unless can_pop().
  FifoWord front() const {
    if (!can_pop()) refuse_read();
    const Run& r = run(0);
    return FifoWord{r.data, r.last && r.words == 1};
  }
  /// Removes and returns the head word; throws std::logic_error unless can_pop().
  FifoWord pop();
  /// Removes the head packet through its last word (pop() until a word flagged last)
  /// and returns its word count; throws std::logic_error, removing none, unless that
  /// last word is stored.
  std::size_t pop_packet() {
    // The oldest packet is complete exactly when some stored word ends a packet.
    if (packets_ == 0) refuse_read();
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

  /// Changes the read mode; applies from the next can_pop(). Meant for packet boundaries.
  void set_mode(FifoMode m) { mode_ = m; }
  FifoMode mode() const { return mode_; }
  /// Words stored.
  std::size_t words() const { return words_; }
  /// Complete packets stored (words flagged last); a partly read packet still counts.
  std::size_t packets() const { return packets_; }
  /// Capacity in words.
  std::size_t depth() const { return depth_; }
  bool empty() const { return words_ == 0; }

 private:
  /// `words` equal words carrying `data`; the final one ends a packet when `last`.
  struct Run {
    std::uint64_t data;
    std::uint32_t words;
    bool last;
  };
  static constexpr std::size_t kMaxRunWords = std::numeric_limits<std::uint32_t>::max();
  Run& run(std::size_t i) { return runs_[(first_ + i) & (capacity_ - 1)]; }
  const Run& run(std::size_t i) const { return runs_[(first_ + i) & (capacity_ - 1)]; }
  void drop_front_run() {
    first_ = (first_ + 1) & (capacity_ - 1);
    --count_;
  }
  /// push_words when the ring is full or the words need more than one run.
  void append_runs(std::size_t n, std::uint64_t data, bool last);
  [[noreturn]] void refuse_write(std::size_t n) const;
  [[noreturn]] void refuse_read() const;

  std::vector<Run> runs_;     ///< ring of runs (none until the first is stored)
  std::size_t capacity_ = 0;  ///< runs_.size(), a power of two
  std::size_t first_ = 0;     ///< ring slot of the oldest run
  std::size_t count_ = 0;     ///< runs stored
  std::size_t depth_;
  std::size_t words_ = 0;
  std::size_t packets_ = 0;
  FifoMode mode_;
};

}  // namespace fabricsim::hw
