// The model's current time, read inline.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include <systemc>

namespace fabricsim::tlm_fabric {

namespace detail {
/// The wake queue's time while it runs blocks ahead of the kernel's on this thread
/// (WakeQueue::dispatch: between two wakes with nothing else for the kernel to do it
/// steps the time itself; in parallel windows each lane has its own), null otherwise.
/// A pointer: a thread-local without a constructor costs one load to read.
inline thread_local const sc_core::sc_time* queue_now = nullptr;
/// The wake-queue lane this thread runs (PacketPool, Link: what belongs to a lane).
inline thread_local int lane = 0;
}  // namespace detail

/// The model's time: the kernel's (sc_time_stamp(), without the call into the SystemC
/// library: the blocks read the time several times per packet), or the wake queue's
/// while it runs blocks ahead of the kernel. Blocks and testbenches read time here only.
inline const sc_core::sc_time& sim_now() {
  return detail::queue_now ? *detail::queue_now : sc_core::sc_get_curr_simcontext()->time_stamp();
}

/// The time of `ticks` kernel time units, inline: sc_time::from_value is a call into the
/// library that also touches the kernel's shared time parameters, and a switch makes
/// several edge times per packet. sc_time is standard-layout with its value as its only
/// member, so the object and that member are pointer-interconvertible: the value is
/// written through a pointer to it (SimTime.FromTicksAndSecondsMatchTheLibrary checks it).
inline sc_core::sc_time from_ticks(sc_core::sc_time::value_type ticks) {
  static_assert(std::is_standard_layout_v<sc_core::sc_time> &&
                    sizeof(sc_core::sc_time) == sizeof(sc_core::sc_time::value_type),
                "sc_time holds its value and nothing else");
  sc_core::sc_time t;
  *reinterpret_cast<sc_core::sc_time::value_type*>(&t) = ticks;
  return t;
}

namespace detail {
/// The kernel's time resolution in femtoseconds (a power of ten, fixed once a time is made).
inline double resolution_fs() {
  static const double fs = std::round(sc_core::sc_time::from_value(1).to_seconds() * 1e15);
  return fs;
}
}  // namespace detail

/// `t` in seconds, exactly as sc_time::to_seconds() computes it (the value times the
/// resolution in femtoseconds, times 1e-15), inline: the library call looks up the
/// simulation context on every call, a line the parallel lanes share (several per packet).
inline double seconds(const sc_core::sc_time& t) {
  return static_cast<double>(t.value()) * detail::resolution_fs() * 1e-15;
}

/// The time of `s` seconds, exactly as sc_time(s, SC_SEC) makes it (s times the
/// resolutions per second, plus a half, truncated), inline: the library's constructor
/// looks up the simulation context, and a rate limiter makes one per packet.
inline sc_core::sc_time from_seconds(double s) {
  if (s == 0) return sc_core::SC_ZERO_TIME;
  static const double per_second = 1e15 / detail::resolution_fs();
  const double ticks = s * per_second + 0.5;  // two roundings, as the library (-ffp-contract=off)
  return from_ticks(static_cast<sc_core::sc_time::value_type>(static_cast<std::int64_t>(ticks)));
}

}  // namespace fabricsim::tlm_fabric
