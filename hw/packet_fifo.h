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

/// When a stored packet may start to leave the FIFO.
enum class FifoMode {
  kCutThrough,       ///< head word readable once stored
  kStoreAndForward,  ///< head word readable once its packet's last word is stored
};

/// Shape of a packet FIFO, checked by the PacketFifo constructor.
struct PacketFifoParams {
  std::size_t depth_words = 16;            ///< capacity in words, 2..1<<20 (RTL: Depth)
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
class PacketFifo {
 public:
  explicit PacketFifo(const PacketFifoParams& p);

  /// Room for one more word.
  bool can_push() const { return words_ < slots_.size(); }
  /// Stores a word; throws std::logic_error when full.
  void push(const FifoWord& w);
  /// The head word may leave under the current mode.
  bool can_pop() const;
  /// The head word; throws std::logic_error unless can_pop().
  const FifoWord& front() const;
  /// Removes and returns the head word; throws std::logic_error unless can_pop().
  FifoWord pop();

  /// Changes the read mode; applies from the next can_pop(). Meant for packet boundaries.
  void set_mode(FifoMode m) { mode_ = m; }
  FifoMode mode() const { return mode_; }
  /// Words stored.
  std::size_t words() const { return words_; }
  /// Complete packets stored (words flagged last); a partly read packet still counts.
  std::size_t packets() const { return packets_; }
  /// Capacity in words.
  std::size_t depth() const { return slots_.size(); }
  bool empty() const { return words_ == 0; }

 private:
  std::vector<FifoWord> slots_;  ///< ring buffer, like the RTL storage
  std::size_t head_ = 0;         ///< slot of the oldest word
  std::size_t words_ = 0;
  std::size_t packets_ = 0;
  FifoMode mode_;
};

}  // namespace fabricsim::hw
