// Single-resource arbiter implementations behind hw::Arbiter: the hw/ core (tlm), its
// Verilated RTL twin through the pin-level transactor (rtl), or both on the same requests,
// compared every round (lockstep). The output_queued switch's write-port arbiters
// (tlm/switch/crossbar.cpp) and the NIC's VL arbiter (tlm/nic.cpp) call whichever they get
// exactly as they call the C++ core. docs/cosim.md ("Arbiters") gives the pin mapping.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hw/arbiter.h"
#include "hw/units.h"
#include "tlm/rtl_allocator.h"  // AllocatorImpl: tlm | rtl | lockstep, RtlAllocatorMismatch
#include "tlm/waveform_options.h"

namespace fabricsim::tlm_fabric {

/// One Verilated arbiter model built into this binary (or added by test code).
struct RtlArbiterModel {
  std::string name;          ///< registration name (`*_rtl_variant`), e.g. rr_arbiter
  std::string top;           ///< RTL top module
  std::string policy;        ///< hw::make_arbiter policy it twins (lockstep reference)
  int requesters = 0;        ///< NumReq it was Verilated with
  std::string registration;  ///< rtl/models/<name>.cmake
  bool test_only = false;    ///< added by test code (add_rtl_models)
};

/// Arbiter models in this process's table (empty without -DFABRICSIM_RTL=ON).
std::vector<RtlArbiterModel> rtl_arbiter_models();

/// What stops a configuration from using an RTL arbiter.
struct RtlArbiterProblem {
  enum class Key { none, impl, rtl_variant, size };
  Key key = Key::none;  ///< the caller names its own key: <block>_impl, <block>_rtl_variant, or its size key
  std::string what;
};

/// Checks that `variant` is an arbiter twinning `policy` with `requesters` inputs;
/// `requesters` = 0 skips the size check. The message lists what this build has.
RtlArbiterProblem check_rtl_arbiter(std::string_view policy, std::string_view variant, int requesters);

/// Everything needed to build one arbiter.
struct ArbiterSpec {
  std::string hierarchy;                 ///< e.g. fabric.sw0.port3.write_arbiter (errors, waveform names)
  std::string policy = "round_robin";    ///< hw::arbiter_names()
  int requesters = 1;
  AllocatorImpl impl = AllocatorImpl::tlm;
  std::string rtl_variant = "rr_arbiter";
  std::string impl_key;                  ///< its config key, e.g. switch.write_arbiter_impl (errors)
  hw::Frequency clock;                   ///< cycle numbering in messages, drawn period; zero: none (1 ns drawn)
  WaveformOptions waveform;              ///< waveform of the RTL block (wants() the hierarchy name); dir empty: none
};

/// Builds the arbiter. Throws std::invalid_argument when the RTL model asked for is not
/// built (listing the builds) or this binary has no RTL twins.
std::unique_ptr<hw::Arbiter> make_arbiter_block(const ArbiterSpec& spec);

/// Closes the waveform of `arbiter` if it is an RTL or lockstep arbiter recording one
/// (make_arbiter_block with spec.waveform) and says what it wrote; nullopt otherwise.
std::optional<RtlWaveformRecord> finish_waveform(hw::Arbiter& arbiter);
/// The RTL block of `arbiter` (hierarchy and model name); nullopt for the hw core alone.
std::optional<RtlBlockName> rtl_block(const hw::Arbiter& arbiter);

}  // namespace fabricsim::tlm_fabric
