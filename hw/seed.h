// Seed derivation: every random stream in a run comes from the run seed and a
// stream number, so the same seed gives the same results bit for bit.
#pragma once

#include <cstdint>

namespace fabricsim::hw {

/// SplitMix64 (Steele, Lea, Flood, OOPSLA 2014) of seed and stream: decorrelated per-stream seeds.
inline std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// Uniform double in [0, 1) from the top 53 bits of a 64-bit draw (platform independent).
inline double unit_interval(std::uint64_t draw) { return static_cast<double>(draw >> 11) * (1.0 / 9007199254740992.0); }

}  // namespace fabricsim::hw
