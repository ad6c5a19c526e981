// IB VL arbiter implementations behind hw::EgressScheduler: the hw/ C++ core (tlm), its
// Verilated RTL twin rtl/vl_arbiter.sv driven through the pin-level transactor (rtl), or
// both on the same head packets, compared every decision (lockstep). The switch's egress
// unit (tlm/switch/egress_unit.cpp) calls whichever it gets as it calls the core.
// docs/cosim.md ("The VL arbiter") gives the pin mapping and the cycle alignment.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hw/egress_scheduler.h"
#include "hw/units.h"
#include "tlm/rtl_allocator.h"  // AllocatorImpl, RtlAllocatorProblem, RtlAllocatorMismatch

namespace fabricsim::tlm_fabric {

/// Checks that an RTL VL arbiter `variant` exists for `vls` VLs with tables of up to
/// `entries` rows; `vls` = 0 skips the size check. The message lists what this build has.
RtlAllocatorProblem check_rtl_vl_arbiter(std::string_view variant, int vls, int entries);

/// Everything needed to build an output port's VL arbiter.
struct VlArbiterSpec {
  std::string hierarchy;                               ///< e.g. fabric.sw0.port3.vl_arbiter (errors, waveform names)
  hw::IbVlArbParams params;                            ///< tables, limit, vls (validated)
  AllocatorImpl impl = AllocatorImpl::tlm;             ///< which implementation
  std::string rtl_variant = "vl_arbiter";              ///< registered model (kind vl_arbiter)
  hw::Frequency core_clock = hw::Frequency::ghz(1.5);  ///< edge numbering in errors, waveform timing [Hz]
  WaveformOptions waveform;                            ///< waveform of the RTL model (wants() the hierarchy name); dir empty: none
  bool compare_state = true;                           ///< lockstep: also compare the declared debug ports
};

/// Adds the VL arbiter models among `models` to this process's table, marked test_only
/// (add_rtl_models() calls it; for test code). Throws std::logic_error on a duplicate.
void add_rtl_vl_arbiter_models(const std::vector<RtlModel>& models);

/// Builds the VL arbiter. Throws std::invalid_argument when the RTL model asked for is
/// not built (listing the builds) or this binary has no RTL twins at all.
std::unique_ptr<hw::EgressScheduler> make_vl_arbiter(const VlArbiterSpec& spec);

/// Closes the waveform of `scheduler` if it is an RTL or lockstep VL arbiter recording one
/// (make_vl_arbiter with spec.waveform) and says what it wrote; nullopt otherwise.
std::optional<RtlWaveformRecord> finish_waveform(hw::EgressScheduler& scheduler);
/// The hierarchy and model names of `scheduler` if it is an RTL or lockstep VL arbiter
/// (switch.rtl_trace_scope); nullopt otherwise.
std::optional<RtlBlockName> rtl_block(const hw::EgressScheduler& scheduler);

}  // namespace fabricsim::tlm_fabric
