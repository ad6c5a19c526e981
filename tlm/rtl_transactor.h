// The kind-independent half of every TLM <-> pin transactor: reset, the clock, the
// handshake and the output latency of a registered RTL block (RtlTiming), its waveform
// drawing (RtlPins' trace protocol), and lockstep's lagging replay window. A kind (tlm/rtl_allocator.cpp) only maps
// its C++ calls to the words of its input and output roles. One call round is one
// transaction: inputs held, `latency` rising edges with the commit low (or until the valid
// output rises), the outputs read, then the edge that commits (or, for a round the caller
// never commits, the same edge with the commit low). docs/cosim.md has the convention table.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <systemc>

#include "hw/arbiter.h"  // StateVector
#include "hw/units.h"
#include "tlm/rtl_model.h"

namespace fabricsim::tlm_fabric {

// Shared by the kinds' transactors (tlm/rtl_allocator.cpp, tlm/rtl_vl_arbiter.cpp).
/// "core-clock cycle 665 (t = 443.333 ns)": the edge index and time of `t`, for messages.
std::string describe_time(const sc_core::sc_time& t, hw::Frequency clock);
/// `t` in whole picoseconds (waveform time).
std::uint64_t to_ps(const sc_core::sc_time& t);
/// Creates the waveform folder `dir` (std::runtime_error if it cannot).
std::filesystem::path make_dir(const std::string& dir);
/// Where lockstep writes its mismatch window: `<trace_dir, else the system temp
/// folder>/<stem>.lockstep_mismatch.fst`.
std::string mismatch_waveform_path(const std::string& trace_dir, const std::string& stem);
/// The lockstep report's waveform lines: the window `write_window` writes (or why it could
/// not), then the full --trace waveform when `trace_path` is set (close it first).
std::string describe_waveforms(std::size_t rounds, const std::function<std::string()>& write_window,
                               const std::function<std::string()>& close_trace);
/// For each DEBUG entry of `model`, the index of the core's state vector of that name in
/// `core_state`; std::invalid_argument naming `who`, the registration and the core's
/// states when the core has no such state.
std::vector<std::size_t> match_debug_state(const std::vector<hw::StateVector>& core_state, const RtlModelInfo& model,
                                           const std::string& who);
/// Element `k` of a debug port packing `bits`-wide elements (at most 32), element 0 at bit 0.
std::uint64_t element(const PortWords& w, int bits, int k);

/// One block driven round by round through its pins.
class RtlTransactor {
 public:
  /// Applies the reset; `inputs`/`outputs` are the kind's role counts, debug ports follow
  /// the outputs; `period_ps` spaces the drawn cycles.
  RtlTransactor(std::unique_ptr<RtlPins> pins, const RtlTiming& timing, int inputs, int outputs,
                std::uint64_t period_ps);
  ~RtlTransactor();

  /// Starts a round at `t_ps` (closing an open one first): drives `in`, clocks the latency
  /// edges and reads the outputs (all zero when a valid/ready block never raised valid).
  /// Returns whether the outputs are valid.
  bool evaluate(const std::vector<PortWords>& in, std::uint64_t t_ps);
  /// The round's output role `k`, as read by evaluate().
  const PortWords& output(int k) const { return out_[static_cast<std::size_t>(k)]; }
  /// The committing edge of the open round (nothing if none is open).
  void commit();
  /// Ends an open round with a non-committing edge.
  void close();
  /// Drives the static configuration inputs (numbered after the per-round ones) and holds
  /// them for the whole run; call once, after construction (the reset).
  void configure(const std::vector<PortWords>& config);
  /// Reads debug port `k` (after the last edge).
  void debug(int k, PortWords& words) const { pins_->get(outputs_ + k, words); }

  /// Draws the following cycles, at the times evaluate() gives, into `stem` + the format's
  /// extension, within the options' window and size limit (RtlPins::trace_open); returns
  /// the file.
  std::string trace_open(const std::string& stem, const WaveformOptions& options);
  /// Closes the open round and the waveform; returns whether it stopped at its size limit.
  bool trace_close();
  /// Enters the block's coverage points under `hierarchy` (RtlPins::coverage_scope).
  void coverage_scope(const std::string& hierarchy) { pins_->coverage_scope(hierarchy); }

 private:
  void edge(bool commit);
  void advance(std::uint64_t ps);
  void dump(std::uint64_t ps);
  void flush_idle(std::uint64_t next_round);

  std::unique_ptr<RtlPins> pins_;
  RtlTiming timing_;
  int inputs_, outputs_;
  std::uint64_t period_ps_;
  std::vector<PortWords> out_, idle_;
  bool open_ = false;       // evaluated, not yet committed or closed
  bool drawing_ = false;
  std::uint64_t t_ = 0;     // the open round's start
  int edges_ = 0;           // latency edges clocked in the open round
  std::uint64_t idle_at_ = 0;    // pending idle-inputs dump, 0 = none
  std::uint64_t next_free_ = 0;  // earliest time the next round may be drawn at
};

/// Lockstep: a second instance of the block that follows a window of rounds behind, so that
/// on a mismatch the rounds leading to it can be replayed into a waveform.
class RtlReplayWindow {
 public:
  static constexpr std::size_t kRounds = 32;  ///< rounds shown before the mismatching one, by default

  /// Keeps `rounds` rounds before the newest (a block whose transactions span many cycles
  /// wants more than kRounds).
  RtlReplayWindow(std::unique_ptr<RtlTransactor> lagging, int inputs, std::size_t rounds = kRounds);

  /// Records this round's inputs (the newest); the oldest beyond the window is applied.
  void push(const std::vector<PortWords>& in, std::uint64_t t_ps);
  void commit_newest();
  /// Rounds recorded (the newest included).
  std::size_t size() const { return count_; }
  /// Replays the recorded rounds into the FST `stem`.fst (no window, no size limit: the
  /// mismatch is the point), the newest last (committed if it was); returns the
  /// transactor, holding the newest round's outputs and state.
  const RtlTransactor& write(const std::string& stem);

 private:
  struct Round {
    std::vector<PortWords> in;
    std::uint64_t t = 0;
    bool committed = false;
  };
  void apply(const Round& r);

  std::unique_ptr<RtlTransactor> lagging_;
  std::vector<Round> slots_;  // ring, oldest at head_
  std::size_t head_ = 0, count_ = 0;
};

/// One registered block as a kind's C++ class drives it: the transactor (static
/// configuration applied; drawn into `<waveform.dir>/<hierarchy>.<model>` + the format's
/// extension when the options are enabled and want the block), lockstep's replay window,
/// and the round count and time its messages cite.
class RtlRun {
 public:
  /// `keep_window`: lockstep's replay window, of `window_rounds` rounds before the newest.
  RtlRun(const RtlModel& model, int inputs, int outputs, std::vector<PortWords> config, hw::Frequency clock,
         const WaveformOptions& waveform, const std::string& hierarchy, bool keep_window,
         std::size_t window_rounds = RtlReplayWindow::kRounds);

  /// Starts the next round at `t`: drives `in`, reads the outputs.
  void evaluate(const std::vector<PortWords>& in, const sc_core::sc_time& t);
  /// The committing edge of the open round.
  void commit();
  /// Ends the open round now with a non-committing edge (an input-driven state change).
  void close() { rtl_->close(); }
  const PortWords& output(int k) const { return rtl_->output(k); }
  const sc_core::sc_time& round_time() const { return round_at_; }
  std::uint64_t rounds() const { return rounds_; }  ///< rounds so far (1 = first)
  const std::string& trace_path() const { return trace_path_; }
  const RtlModelInfo& model() const { return model_.info; }
  /// Its hierarchy and model name (scopes, warnings).
  RtlBlockName name() const { return {hierarchy_, model_.info.name}; }
  /// Debug port `k` (RtlModelInfo::debug_state) after the last edge.
  void debug(int k, PortWords& words) const { rtl_->debug(k, words); }
  /// Rounds a mismatch waveform holds now (the current one included).
  std::size_t window_rounds() const { return window_ ? window_->size() : 0; }
  /// Lockstep: replays the window into mismatch_waveform_path(waveform.dir,
  /// <hierarchy>.<model>), set in `path`; returns the lagging transactor, holding the
  /// newest round's outputs.
  const RtlTransactor& write_window(std::string& path);
  /// Completes and closes the --trace waveform (idempotent); returns whether it stopped at
  /// its size limit.
  bool close_trace();
  /// Closes the --trace waveform and says what it wrote; nullopt when it records none.
  std::optional<RtlWaveformRecord> finish_waveform();

 private:
  std::unique_ptr<RtlTransactor> make_transactor(bool traceable) const;

  const RtlModel& model_;
  int inputs_, outputs_;
  std::vector<PortWords> config_;
  std::uint64_t period_ps_;
  std::string hierarchy_, trace_dir_, stem_, trace_path_;
  std::unique_ptr<RtlTransactor> rtl_;
  std::unique_ptr<RtlReplayWindow> window_;
  bool limit_reached_ = false;
  std::uint64_t rounds_ = 0;
  sc_core::sc_time round_at_;  // the last round's start
};

}  // namespace fabricsim::tlm_fabric
