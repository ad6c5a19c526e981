// What the RTL blocks of a run record as waveforms: folder, format, which blocks, the
// time window and the size limit (switch.rtl_trace*, `fabricsim run --trace*`). Plain
// data, in every build; the recorder itself (tlm/rtl_waveform.h) exists only with RTL, in
// library fabricsim_rtl_waveform beside the Verilator runtime.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "hw/param_spec.h"

namespace fabricsim::tlm_fabric {

/// File format of a waveform.
enum class WaveformFormat {
  fst,  ///< GTKWave's compressed format, written as the run goes
  vcd,  ///< IEEE 1364 value change dump, converted from the FST when the block closes it
};

/// The configuration names of WaveformFormat (switch.rtl_trace_format).
const hw::EnumNames<WaveformFormat>& waveform_format_names();

/// Waveform options of the RTL blocks of a run. `dir` empty: no waveforms.
struct WaveformOptions {
  std::string dir;                                              ///< folder of the files; empty: none
  WaveformFormat format = WaveformFormat::fst;                  ///< file format
  std::vector<std::string> scopes;                              ///< blocks to record (wants()); empty: every RTL block
  std::uint64_t from_ps = 0;                                    ///< first time recorded [ps]
  std::uint64_t to_ps = std::numeric_limits<std::uint64_t>::max();  ///< last time recorded [ps]
  std::uint64_t max_bytes = 0;                                  ///< per file: recording stops near this size [B]; 0: no limit

  bool enabled() const { return !dir.empty(); }
  /// Whether the block `hierarchy_name` (e.g. fabric.sw0.allocator), an instance of the RTL
  /// model `model_name` (e.g. islip_allocator), is recorded: `scopes` is empty, or an entry
  /// is a glob (fnmatch: `*`, `?`, `[...]`) matching the whole hierarchy name, or is the
  /// model name itself (every instance of that model).
  bool wants(std::string_view hierarchy_name, std::string_view model_name) const;
  /// ".fst" or ".vcd" (inline: the Verilator-side recorder uses it without fabricsim_tlm).
  std::string_view extension() const { return format == WaveformFormat::vcd ? ".vcd" : ".fst"; }
};

/// An RTL block a scope may name: its hierarchy name and its RTL model name.
struct RtlBlockName {
  std::string hierarchy;  ///< e.g. fabric.sw0.allocator
  std::string model;      ///< e.g. islip_allocator
};

/// A finished waveform of an RTL block (results.json "simulator"."waveforms").
struct RtlWaveformRecord {
  std::string block;           ///< hierarchy name, e.g. fabric.sw0.allocator
  std::string file;            ///< the .fst or .vcd written
  bool limit_reached = false;  ///< recording stopped at switch.rtl_trace_max_size
};

/// The entries of options.scopes that match none of `blocks` (to warn about).
std::vector<std::string> unmatched_scopes(const WaveformOptions& options, const std::vector<RtlBlockName>& blocks);

}  // namespace fabricsim::tlm_fabric
