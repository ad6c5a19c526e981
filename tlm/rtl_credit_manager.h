// Credit accounting of a link transmitter as a replaceable block: the Verilated twin of
// rtl/credit_manager.sv (one hw::CreditCounter per VL) driven through a pin-level
// transactor (rtl), or it and the hw core on the same calls, compared every edge
// (lockstep). The hw core itself (tlm) is TxPort's counters, with no block at all: the
// transmitter consults a block only when one is set. docs/cosim.md ("Credit manager")
// gives the pin mapping and the cycle alignment: each consume or restore is one edge,
// a can_send query a combinational read before the next edge.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tlm/rtl_allocator.h"
#include "tlm/rtl_model.h"

namespace fabricsim::tlm_fabric {

/// Per-VL link credits of one transmitter, called exactly as hw::CreditCounter.
class CreditManagerBlock {
 public:
  virtual ~CreditManagerBlock() = default;
  /// A packet of `blocks` credit blocks may start on `vl` now.
  virtual bool can_send(int vl, std::uint64_t blocks) = 0;
  /// Takes the credits of a packet of `bytes` on `vl` (throws std::logic_error when not held).
  virtual void consume(int vl, std::uint64_t bytes) = 0;
  /// Returns `blocks` on `vl` (throws std::logic_error when more than the capacity would be held).
  virtual void restore(int vl, std::uint64_t blocks) = 0;
  /// Closes the block's waveform (switch.rtl_trace), if it records one, and says what it
  /// wrote (results.json "simulator"."waveforms"); the run must be over.
  virtual std::optional<RtlWaveformRecord> finish_waveform() { return std::nullopt; }
  /// The RTL block's hierarchy and model names (switch.rtl_trace_scope); nullopt: no block.
  virtual std::optional<RtlBlockName> rtl_block() const { return std::nullopt; }
};

/// One Verilated credit manager built into this binary.
struct RtlCreditManagerModel {
  std::string name;               ///< registration name (link.credit_manager_rtl_variant)
  std::string top;                ///< RTL top module
  int vls = 0;                    ///< data VLs
  int block_bytes = 0;            ///< credit block size the model is built for [B]
  std::string registration;       ///< rtl/models/<name>.cmake
  bool test_only = false;         ///< added by test code
};

/// Models built into this binary, then those test code added.
std::vector<RtlCreditManagerModel> rtl_credit_manager_models();
/// Adds the credit manager models among `models` (test_only_rtl_models()), for test code.
void add_rtl_credit_manager_models(const std::vector<RtlModel>& models);

/// What stops a configuration from using an RTL credit manager.
struct RtlCreditManagerProblem {
  std::string key;   ///< link.<key> (credit_manager_impl, credit_manager_rtl_variant, credit_block) or vls
  std::string what;  ///< empty: no problem
};
/// Checks that `variant` is built for `vls` (0: not known yet, skipped) and `block_bytes`.
RtlCreditManagerProblem check_rtl_credit_manager(std::string_view variant, int vls, std::uint32_t block_bytes);

/// Everything needed to build a transmitter's credit manager block.
struct CreditManagerSpec {
  std::string hierarchy;                       ///< e.g. fabric.sw0.port3.credit_manager
  AllocatorImpl impl = AllocatorImpl::tlm;     ///< tlm: no block
  std::string rtl_variant = "credit_manager";  ///< rtl_credit_manager_models()
  int vls = 1;
  std::uint32_t block_bytes = 64;
  std::uint64_t capacity_blocks = 0;           ///< receiver buffer per VL, in blocks
  WaveformOptions waveform;                    ///< waveform of the RTL model (wants() the hierarchy name); dir empty: none
};

/// The block for `spec`, or nullptr for tlm. Throws std::invalid_argument naming the
/// hierarchy when the model asked for is not built (listing the builds) or the capacity
/// does not fit its counters.
std::unique_ptr<CreditManagerBlock> make_credit_manager(const CreditManagerSpec& spec);

/// Thrown when the RTL twin and the hw core disagree (lockstep) or the twin refuses a call
/// the transmitter made: the hierarchy name, edge, time, inputs, both outputs, the waveform.
class RtlCreditManagerMismatch : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace fabricsim::tlm_fabric
