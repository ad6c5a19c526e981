// Core-clock arithmetic for event-driven, clock-aligned blocks: a block wakes
// only on the edges where it has work, never every cycle.
#pragma once

#include <cstdint>

#include <systemc>

#include "hw/units.h"
#include "tlm/sim_time.h"

namespace fabricsim::tlm_fabric {

/// A clock with edges at k * period (k integer) from time zero.
class ClockDomain {
 public:
  explicit ClockDomain(hw::Frequency f)
      : period_s_(f.period().in_seconds()),
        tick_(sc_core::sc_get_time_resolution()),
        tick_s_(tick_.to_seconds()),
        edges_per_tick_(tick_s_ / period_s_),
        period_(at(1)) {}
  /// Period as sc_time (rounded to the kernel resolution).
  const sc_core::sc_time& period() const { return period_; }
  /// First edge at or after t.
  sc_core::sc_time edge_at_or_after(const sc_core::sc_time& t) const {
    // Edges are rounded to the kernel resolution, so compare against the
    // rounded edge times, not the exact ones.
    auto k = static_cast<std::uint64_t>(t.to_double() * edges_per_tick_);  // estimate, corrected below
    sc_core::sc_time edge = at(k);
    if (edge == t) return edge;
    if (edge < t) {
      do edge = at(++k);
      while (edge < t);
      return edge;
    }
    for (; k > 0; --k) {
      const sc_core::sc_time before = at(k - 1);
      if (before < t) break;
      edge = before;
    }
    return edge;
  }
  /// First edge after t. Not t + period(): rounded to the kernel resolution the edges
  /// are not evenly spaced (1.5 GHz at 1 ps: 667, 666, 667 ps apart).
  sc_core::sc_time edge_after(const sc_core::sc_time& t) const { return edge_at_or_after(t + tick_); }
  /// Time of edge k (computed from k, so rounding never accumulates). A whole number of
  /// ticks, kept in integers: sc_time's `* double` (through a volatile double) gave the
  /// same value below 2^53 ticks, at a store and a load per edge.
  sc_core::sc_time at(std::uint64_t k) const {
    const auto ticks = static_cast<sc_core::sc_time::value_type>(round_half_up(static_cast<double>(k) * period_s_ / tick_s_));
    return from_ticks(ticks * tick_.value());
  }
  /// `cycles` periods as a duration.
  sc_core::sc_time cycles(std::uint64_t n) const { return at(n); }

 private:
  /// std::llround for 0 <= x < 2^63, inline (it is on every edge computation): the
  /// truncation is floor(x), and x - floor(x) is exact, so the result is llround's.
  static std::int64_t round_half_up(double x) {
    const auto t = static_cast<std::int64_t>(x);
    return x - static_cast<double>(t) >= 0.5 ? t + 1 : t;
  }
  double period_s_;
  sc_core::sc_time tick_;  // the kernel's time resolution (fixed once elaboration starts)
  double tick_s_;
  double edges_per_tick_;  // only for a first guess at an edge's index
  sc_core::sc_time period_;
};

}  // namespace fabricsim::tlm_fabric
