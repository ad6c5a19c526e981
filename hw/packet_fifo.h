// Packet FIFO with cut-through and store-and-forward read modes: the reference
// model of rtl/packet_fifo.sv. A buffer of fixed-size words, each flagged when it
// ends its packet. Cut-through lets the head word leave as soon as it is stored,
// so a packet may leave while its tail still arrives; store-and-forward holds
// it until the packet's last word is stored (Kermani and Kleinrock, virtual cut-through, 1979).
#pragma once

#include <cstddef>
#include <cstdint>
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
  void push_words(std::size_t n, std::uint64_t data, bool last);
  /// The head word may leave under the current mode.
  bool can_pop() const;
  /// The head word; throws std::logic_error unless can_pop().
  FifoWord front() const;
  /// Removes and returns the head word; throws std::logic_error unless can_pop().
  FifoWord pop();
  /// Removes the head packet through its last word (pop() until a word flagged last)
  /// and returns its word count; throws std::logic_error, removing none, unless that
  /// last word is stored.
  std::size_t pop_packet();

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
  Run& run(std::size_t i) { return runs_[(first_ + i) & (runs_.size() - 1)]; }
  const Run& run(std::size_t i) const { return runs_[(first_ + i) & (runs_.size() - 1)]; }
  void drop_front_run();

  std::vector<Run> runs_;  ///< ring of runs, a power of two long (none while empty)
  std::size_t first_ = 0;  ///< ring slot of the oldest run
  std::size_t count_ = 0;  ///< runs stored
  std::size_t depth_;
  std::size_t words_ = 0;
  std::size_t packets_ = 0;
  FifoMode mode_;
};

}  // namespace fabricsim::hw
