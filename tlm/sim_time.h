// The model's current time, read inline.
#pragma once

#include <systemc>

namespace fabricsim::tlm_fabric {

namespace detail {
/// The wake queue's time while it runs blocks ahead of the kernel's (WakeQueue::dispatch:
/// between two wakes with nothing else for the kernel to do it steps the time itself).
struct QueueTime {
  sc_core::sc_time now;
  bool ahead = false;
};
inline QueueTime queue_time;
}  // namespace detail

/// The model's time: the kernel's (sc_time_stamp(), without the call into the SystemC
/// library: the blocks read the time several times per packet), or the wake queue's
/// while it runs blocks ahead of the kernel. Blocks and testbenches read time here only.
inline const sc_core::sc_time& sim_now() {
  return detail::queue_time.ahead ? detail::queue_time.now : sc_core::sc_get_curr_simcontext()->time_stamp();
}

}  // namespace fabricsim::tlm_fabric
