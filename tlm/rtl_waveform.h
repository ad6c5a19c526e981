// The waveform of one Verilated block (RTL builds only): an FST written as the run goes,
// restricted to a time window and a size, converted to VCD at close when asked for.
// The transactor that steps the block owns one per recorded block (WaveformOptions::wants).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include <verilated.h>
#include <verilated_fst_c.h>

#include "tlm/waveform_options.h"

namespace fabricsim::tlm_fabric {

/// Records one Verilated model instance. Protocol, per change of the model's values:
///   advance(t);  set inputs, eval();  dump(t);
/// advance(t) says the values seen so far hold until t (so the window's start `from`
/// gets the values holding there even when no dump falls on it); dump(t) records the
/// values from t on. Dumps outside [from, to] are not recorded; the first one recorded
/// carries every signal. Times strictly increase across recorded dumps.
class Waveform {
 public:
  explicit Waveform(WaveformOptions options) : options_(std::move(options)) {}
  /// Closes the file; a failed VCD conversion is reported on stderr (the FST is kept).
  ~Waveform();
  Waveform(const Waveform&) = delete;
  Waveform& operator=(const Waveform&) = delete;

  /// Traces `model` (every signal) into `stem` + extension (e.g. DIR/fabric.sw0.islip_allocator
  /// -> .fst / .vcd). Call before the model's first dump. Throws std::runtime_error when the
  /// file cannot be written.
  template <class M>
  void open(M& model, const std::string& stem) {
    model.contextp()->traceEverOn(true);
    model.trace(&fst_, 99);
    open_file(stem);
  }

  /// The model's current values hold until `ps` (call before changing them for time `ps`).
  void advance(std::uint64_t ps);
  /// Records the model's current values as those from `ps` on.
  void dump(std::uint64_t ps);
  /// Finishes the file (VCD: converts the FST, then deletes it). Idempotent. Throws
  /// std::runtime_error when the conversion fails.
  void close();

  bool is_open() const { return fst_.isOpen(); }
  /// The file the user gets (.fst or .vcd).
  const std::string& path() const { return path_; }
  /// Recording stopped at the size limit (a warning was printed once).
  bool limit_reached() const { return limit_reached_; }

 private:
  void open_file(const std::string& stem);
  void record(std::uint64_t ps);
  void check_size();
  void stop_at_limit(std::uint64_t ps);
  void convert_to_vcd();

  WaveformOptions options_;
  VerilatedFstC fst_;
  std::string path_;      // what the user gets
  std::string fst_path_;  // what VerilatedFstC writes (path_ unless VCD)
  bool recorded_ = false;       // a dump is in the file
  std::uint64_t last_ps_ = 0;   // time of the last recorded dump
  bool stopped_ = false;        // past `to` or at the size limit: nothing more is recorded
  bool limit_reached_ = false;
  // Size limit: the FST is flushed every flush_every_ recorded dumps and its size read after.
  std::uint64_t flush_every_ = 64, since_flush_ = 0, flushed_bytes_ = 0;
  bool flush_pending_ = false;
};

}  // namespace fabricsim::tlm_fabric
