// Link-level credit accounting at a transmitter (IBTA vol.1 7.9.4): the
// receiver's buffer is counted in blocks of 64 bytes; a packet may start only
// when the transmitter holds enough blocks for the whole packet.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace fabricsim::hw {

/// Data virtual lanes a port can have (IBTA: VL0..VL14; VL15 is management).
constexpr int kMaxDataVls = 15;

/// Credits held by a transmitter for one receive buffer (one VL).
class CreditCounter {
 public:
  /// block_bytes: credit granularity; capacity_blocks: receiver buffer in blocks.
  CreditCounter(std::uint32_t block_bytes, std::uint64_t capacity_blocks);
  /// A counter of no buffer, in 64-byte blocks (a VL not in use).
  CreditCounter() : CreditCounter(64, 0) {}

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

/// The receiver's side of link credits, per VL: blocks of its buffer that hold a
/// packet whose credits have not been returned yet. With the transmitter's
/// CreditCounter it closes the credit conservation invariant of a link and VL:
/// available + returning (on the reverse wire) + held = capacity.
class CreditLedger {
 public:
  explicit CreditLedger(int vls = 0) : vls_(vls) {
    if (vls < 0 || vls > kMaxDataVls)
      throw std::invalid_argument("credit ledger for " + std::to_string(vls) + " VLs (at most " +
                                  std::to_string(kMaxDataVls) + ")");
  }
  /// A packet of `blocks` arrived on `vl` (its tail is on the way in).
  void hold(int vl, std::uint64_t blocks) { held_[index(vl)] += blocks; }
  /// Its credits go back to the transmitter; throws std::logic_error when more than held.
  void give_back(int vl, std::uint64_t blocks) {
    std::uint64_t& h = held_[index(vl)];
    if (blocks > h) throw std::logic_error("credit return exceeds the blocks held on VL " + std::to_string(vl));
    h -= blocks;
  }
  std::uint64_t held(int vl) const { return held_[index(vl)]; }
  int vls() const { return vls_; }

 private:
  std::size_t index(int vl) const {
    if (vl < 0 || vl >= vls_) throw std::out_of_range("credit ledger: VL " + std::to_string(vl) + " of " + std::to_string(vls_));
    return static_cast<std::size_t>(vl);
  }
  // In place, not on the heap: a receiver touches it for every packet and credit. The
  // count first, beside the first VLs.
  int vls_;
  std::array<std::uint64_t, kMaxDataVls> held_{};
};

}  // namespace fabricsim::hw
