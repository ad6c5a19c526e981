// Switch allocator implementations behind hw::SwitchAllocator: the hw/ C++ core
// (tlm), its Verilated RTL twin driven through a pin-level transactor (rtl), or
// both on the same requests with the grants compared every round (lockstep).
// The switch (tlm/switch/crossbar.cpp) calls whichever it gets exactly as it calls
// the C++ core. docs/cosim.md gives the pin mapping, the cycle alignment (one call
// round is one RTL transaction, tlm/rtl_transactor.h) and why the models are
// Verilated with --cc.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "hw/allocator.h"
#include "hw/units.h"
#include "tlm/rtl_model.h"
#include "tlm/waveform_options.h"

namespace fabricsim::tlm_fabric {

/// Which implementation of the switch allocator a switch uses.
enum class AllocatorImpl {
  tlm,       ///< the hw/ C++ core (hw::make_allocator)
  rtl,       ///< the Verilated RTL twin through the pin-level transactor
  lockstep,  ///< both on the same requests; a grant mismatch stops the simulation
};

/// The configuration names of AllocatorImpl (switch.allocator_impl).
const hw::EnumNames<AllocatorImpl>& allocator_impl_names();
std::string_view to_string(AllocatorImpl impl);

/// One Verilated allocator model built into this binary.
struct RtlAllocatorModel {
  std::string name;    ///< registration name (switch.rtl_variant), e.g. islip_allocator
  std::string top;     ///< RTL top module
  std::string policy;  ///< hw::make_allocator policy it twins (lockstep reference)
  int ports = 0;       ///< inputs = outputs
  int iterations = 0;  ///< request-grant-accept iterations
  std::string registration;  ///< its registration file (rtl/models/<name>.cmake)
  bool test_only = false;  ///< added by test code (add_rtl_models), not in the fabricsim binary
};

/// Models built into this binary (empty when built without -DFABRICSIM_RTL=ON), then
/// those test code added.
std::vector<RtlAllocatorModel> rtl_allocator_models();

/// Adds the allocator, arbiter, VL arbiter (add_rtl_vl_arbiter_models) and packet FIFO
/// (add_rtl_packet_fifo_models) models among `models` (test_only_rtl_models()) to this
/// process's table, marked test_only. For test code: the fabricsim binary never calls it. Throws
/// std::logic_error when one (name, ports, iterations) is there already.
void add_rtl_models(const std::vector<RtlModel>& models);

/// What stops a configuration from using an RTL allocator, and the config key to blame.
struct RtlAllocatorProblem {
  std::string key;   ///< switch.<key>: allocator_impl, allocator, rtl_variant, ports or allocator_iterations
  std::string what;  ///< empty: no problem
};

/// Checks that an RTL model exists for `policy` as `variant` with `ports` x `ports` and
/// `iterations`; `ports` = 0 skips the size check (the radix is not known yet). The
/// message lists what this build has.
RtlAllocatorProblem check_rtl_allocator(std::string_view policy, std::string_view variant, int ports,
                                        int iterations);

/// Everything needed to build a switch's allocator.
struct SwitchAllocatorSpec {
  std::string instance;                                ///< switch name (errors, waveform file names)
  std::string policy = "islip";                        ///< hw::allocator_names()
  hw::AllocatorParams shape;                           ///< inputs = outputs = radix, iterations, seed
  AllocatorImpl impl = AllocatorImpl::tlm;             ///< which implementation
  std::string rtl_variant = "islip_allocator";         ///< RTL top (rtl_allocator_models())
  hw::Frequency core_clock = hw::Frequency::ghz(1.5);  ///< edge numbering in errors, waveform timing [Hz]
  WaveformOptions waveform;                            ///< waveform of the RTL model (wants() the hierarchy name); dir empty: none
  bool compare_state = true;                           ///< lockstep: also compare the declared debug ports
  std::string hierarchy;                               ///< the allocator's hierarchy name; empty: instance + ".allocator"
};

/// Builds the allocator. Throws std::invalid_argument when the RTL model asked for is
/// not built (listing the builds) or this binary has no RTL twins at all.
std::unique_ptr<hw::SwitchAllocator> make_switch_allocator(const SwitchAllocatorSpec& spec);

/// Closes the waveform of `allocator` if it is an RTL or lockstep allocator recording one
/// (make_switch_allocator with spec.waveform) and says what it wrote; nullopt otherwise.
/// The allocator keeps working, undrawn.
std::optional<RtlWaveformRecord> finish_waveform(hw::SwitchAllocator& allocator);

/// Thrown by a lockstep allocator when the RTL twin and the hw core disagree (and by an
/// RTL allocator whose block returns an illegal matching): the block's hierarchy name, the
/// core-clock cycle and time, the requests, both grant sets (or the first state element
/// that differs) and the waveform written.
class RtlAllocatorMismatch : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace fabricsim::tlm_fabric
