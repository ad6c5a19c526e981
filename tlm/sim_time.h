// The kernel's current time, read inline.
#pragma once

#include <systemc>

namespace fabricsim::tlm_fabric {

/// sc_core::sc_time_stamp() without the call into the SystemC library: the blocks read
/// the time several times per packet (a tenth of a percent of S2's instructions each).
inline const sc_core::sc_time& sim_now() { return sc_core::sc_get_curr_simcontext()->time_stamp(); }

}  // namespace fabricsim::tlm_fabric
