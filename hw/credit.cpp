#include "hw/credit.h"

#include <stdexcept>
#include <string>

namespace fabricsim::hw {

CreditCounter::CreditCounter(std::uint32_t block_bytes, std::uint64_t capacity_blocks)
    : block_bytes_(block_bytes), capacity_(capacity_blocks), available_(capacity_blocks) {
  if (block_bytes == 0) throw std::invalid_argument("credit block size must be positive");
}

std::uint64_t CreditCounter::blocks_for(std::uint64_t bytes) const {
  return (bytes + block_bytes_ - 1) / block_bytes_;
}

void CreditCounter::consume(std::uint64_t bytes) {
  const std::uint64_t need = blocks_for(bytes);
  if (need > available_)
    throw std::logic_error("credit underflow: need " + std::to_string(need) + " blocks, hold " +
                           std::to_string(available_));
  available_ -= need;
}

void CreditCounter::restore(std::uint64_t blocks) {
  // Credit conservation: the receiver can never return more than it was lent.
  if (available_ + blocks > capacity_)
    throw std::logic_error("credit overflow: " + std::to_string(available_ + blocks) +
                           " blocks exceed the receiver buffer of " + std::to_string(capacity_));
  available_ += blocks;
}

}  // namespace fabricsim::hw
