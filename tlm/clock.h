// Core-clock arithmetic for event-driven, clock-aligned blocks: a block wakes
// only on the edges where it has work, never every cycle.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include <systemc>

#include "hw/units.h"

namespace fabricsim::tlm_fabric {

/// A clock with edges at k * period (k integer) from time zero.
class ClockDomain {
 public:
  explicit ClockDomain(hw::Frequency f)
      : period_s_(f.period().in_seconds()),
        tick_(sc_core::sc_get_time_resolution()),
        tick_s_(tick_.to_seconds()),
        period_(at(1)) {}
  /// Period as sc_time (rounded to the kernel resolution).
  const sc_core::sc_time& period() const { return period_; }
  /// First edge at or after t.
  sc_core::sc_time edge_at_or_after(const sc_core::sc_time& t) const {
    // Edges are rounded to the kernel resolution, so compare against the
    // rounded edge times, not the exact ones.
    auto k = static_cast<std::uint64_t>(std::floor(t.to_double() * tick_s_ / period_s_));  // estimate, corrected below
    if (k > 0 && at(k - 1) >= t) --k;
    while (at(k) < t) ++k;
    return at(k);
  }
  /// Time of edge k (computed from k, so rounding never accumulates).
  sc_core::sc_time at(std::uint64_t k) const {
    return tick_ * static_cast<double>(round_half_up(static_cast<double>(k) * period_s_ / tick_s_));
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
  sc_core::sc_time period_;
};

/// Wakes the fabric's blocks (switches, NICs) at the times they ask for, from one
/// SystemC method process and one kernel event: the TLM-2.0 payload-event-queue
/// pattern (tlm_utils::peq_with_cb_and_phase) applied to wake-ups. A block's wake costs
/// a heap entry here instead of a kernel timed notification and process switch, and
/// the blocks due at one instant run in a fixed order (the order they registered in),
/// not in the kernel's heap order, so which other blocks wake at that instant never
/// changes the order of those that do.
class WakeQueue {
 public:
  /// The process-wide queue (SystemC elaborates once per process).
  static WakeQueue& instance();
  /// Registers a block's wake-up; returns its handle.
  int add(std::function<void()> on_wake);
  /// Forgets block `client` (being destroyed): no more calls.
  void remove(int client);
  /// Calls block `client` at `t` (now if `t` has passed); a block has at most one
  /// wake pending, the earliest asked for.
  void notify_at(int client, const sc_core::sc_time& t);

 private:
  WakeQueue();
  void dispatch();
  void arm(const sc_core::sc_time& t, const sc_core::sc_time& now);
  struct Due {
    sc_core::sc_time at;
    int client;
    bool operator>(const Due& o) const { return at != o.at ? at > o.at : client > o.client; }
  };
  struct Client {
    std::function<void()> on_wake;
    sc_core::sc_time at;   // pending wake, valid when `pending`
    bool pending = false;
  };
  std::vector<Due> due_;  // min-heap on (at, client); entries replaced by an earlier wake are skipped
  std::vector<Client> clients_;
  sc_core::sc_event event_;
  sc_core::sc_time armed_at_;  // the kernel event is notified for this time, when `armed_`
  bool armed_ = false;
  bool dispatching_ = false;
};

/// A block's wake-up: calls `on_wake` at each time notified (through the WakeQueue).
class WakeEvent {
 public:
  explicit WakeEvent(std::function<void()> on_wake) : client_(WakeQueue::instance().add(std::move(on_wake))) {}
  ~WakeEvent() { WakeQueue::instance().remove(client_); }
  WakeEvent(const WakeEvent&) = delete;
  WakeEvent& operator=(const WakeEvent&) = delete;
  /// Wake at `t` (now if `t` has passed); an earlier pending wake stands.
  void notify_at(const sc_core::sc_time& t) { WakeQueue::instance().notify_at(client_, t); }

 private:
  int client_;
};

}  // namespace fabricsim::tlm_fabric
