// A Verilated RTL block as the transactors see it: its pins by role (RtlPins) and its
// registration (RtlModelInfo: kind, twin, sizes, clock/reset/handshake convention, debug
// ports), as rtl/models/<name>.cmake declares them. No Verilator header here: each
// model's adapter (generated from rtl/kinds/<kind>.cpp.in into the model's own library)
// implements RtlPins, and the generated table rtl_models.cpp lists the entries.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tlm/waveform_options.h"

namespace fabricsim::tlm_fabric {

/// Port contents as 32-bit words, bit 0 of word 0 first (the Verilated port layout).
using PortWords = std::vector<std::uint32_t>;

/// How the block takes the commit of a round (docs/cosim.md, transactor convention).
enum class RtlHandshake {
  strobe,       ///< a commit input held high in the committing cycle
  valid_ready,  ///< outputs count once a valid output is high; ready high at the edge commits
};

/// Clock, reset and handshake convention of one block.
struct RtlTiming {
  bool reset_active_high = false;  ///< reset pin level that resets
  bool reset_sync = false;         ///< synchronous: held for reset_cycles rising edges
  int reset_cycles = 1;            ///< rising edges with a synchronous reset held
  RtlHandshake handshake = RtlHandshake::strobe;
  int latency = 0;                 ///< rising edges from the inputs to the outputs (0 = combinational)
};

/// One registered (model, size) build.
struct RtlModelInfo {
  std::string name;   ///< registration name, e.g. islip_allocator (switch.rtl_variant)
  std::string kind;   ///< kind of block, e.g. allocator (which roles its pins play)
  std::string twin;   ///< hw core it twins, the lockstep reference (e.g. the allocator policy islip)
  std::string top;    ///< RTL top module
  std::vector<int> sizes;  ///< the kind's sizes (allocator: ports, iterations)
  RtlTiming timing;
  /// Core state names with a debug output port (RtlPins::get role outputs + k), in order.
  std::vector<std::string> debug_state;
  std::vector<std::string> debug_ports;  ///< the RTL port of each debug_state entry
  std::string registration;  ///< the rtl/models/<name>.cmake file it came from
  bool test_only = false;    ///< added by test code, not in the fabricsim binary's table
};

/// The pins of one Verilated block, by role: the kind's inputs and outputs are numbered in
/// the order rtl/kinds/<kind>.cmake lists them; debug ports follow the outputs.
///
/// Waveform (tlm/rtl_waveform.h; every adapter inherits it from VerilatedRtlPins in
/// tlm/rtl_verilated.h, a kind template writes nothing for it). Pins made traceable record
/// every signal of the block; the transactor drives the protocol, per change of the pins:
///   trace_advance(t);  put/commit/clock, eval();  trace_dump(t);
/// trace_advance(t) says the values so far hold until t (the window's start gets the values
/// holding there); trace_dump(t) records the values from t on. Times increase.
class RtlPins {
 public:
  virtual ~RtlPins() = default;
  virtual void clock(bool high) = 0;
  virtual void reset(bool level) = 0;   ///< the reset pin's level (RtlTiming gives the active one)
  virtual void commit(bool high) = 0;   ///< the strobe, or the ready input
  virtual bool valid() const = 0;       ///< the valid output (always true for a strobe block)
  virtual void put(int input, const PortWords& words) = 0;
  virtual void get(int output, PortWords& words) const = 0;  ///< outputs, then debug ports
  virtual int words(int output) const = 0;                   ///< 32-bit words of an output's port
  virtual void eval() = 0;
  /// Opens `stem` + options.extension() (folder created) with the options' format, window
  /// and size limit (options.dir and scopes are the caller's business); returns that path.
  /// Throws std::runtime_error when the file cannot be written.
  virtual std::string trace_open(const std::string& stem, const WaveformOptions& options) = 0;
  virtual void trace_advance(std::uint64_t ps) = 0;  ///< the values so far hold until `ps`
  virtual void trace_dump(std::uint64_t ps) = 0;     ///< records the values from `ps` on
  /// Finishes the file (a VCD is converted here); idempotent; throws std::runtime_error
  /// when the conversion fails.
  virtual void trace_close() = 0;
  /// Recording stopped at the size limit (warned once on stderr); valid after trace_close().
  virtual bool trace_limit_reached() const = 0;
  /// Enters the block's coverage points, under its hierarchy name, into the run's RTL
  /// coverage (tlm/rtl_coverage.h); nothing in a build without coverage.
  virtual void coverage_scope(const std::string& /*hierarchy*/) {}
};

/// A factory of one block's pins, reset not yet applied; `traceable` enables its FST.
using MakeRtlPins = std::unique_ptr<RtlPins> (*)(bool traceable);

struct RtlModel {
  RtlModelInfo info;
  MakeRtlPins make = nullptr;
};

/// The models registered without TEST_ONLY (generated rtl_models.cpp, library
/// fabricsim_rtl_models); only in builds with -DFABRICSIM_RTL=ON.
std::vector<RtlModel> builtin_rtl_models();
/// The TEST_ONLY models (generated rtl_test_models.cpp, library fabricsim_rtl_test_models,
/// linked only by tests), for test code to add to its process's table.
std::vector<RtlModel> test_only_rtl_models();

}  // namespace fabricsim::tlm_fabric
