// Link-level credit accounting at a transmitter (IBTA vol.1 7.9.4): the
// receiver's buffer is counted in blocks of 64 bytes; a packet may start only
// when the transmitter holds enough blocks for the whole packet.
#pragma once

#include <cstdint>

namespace fabricsim::hw {

/// Credits held by a transmitter for one receive buffer (one VL).
class CreditCounter {
 public:
  /// block_bytes: credit granularity; capacity_blocks: receiver buffer in blocks.
  CreditCounter(std::uint32_t block_bytes, std::uint64_t capacity_blocks);

  /// Blocks a packet of `bytes` consumes (rounded up).
  std::uint64_t blocks_for(std::uint64_t bytes) const;
  /// True when a packet of `bytes` may start now.
  bool can_send(std::uint64_t bytes) const { return blocks_for(bytes) <= available_; }
  /// Takes the blocks for a packet; throws std::logic_error when not enough are held.
  void consume(std::uint64_t bytes);
  /// Returns blocks advertised by the receiver; throws when more than capacity would be held.
  void restore(std::uint64_t blocks);

  std::uint64_t available() const { return available_; }
  std::uint64_t capacity() const { return capacity_; }
  std::uint32_t block_bytes() const { return block_bytes_; }

 private:
  std::uint32_t block_bytes_;
  std::uint64_t capacity_;
  std::uint64_t available_;
};

}  // namespace fabricsim::hw
