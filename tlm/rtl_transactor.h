// The kind-independent half of every TLM <-> pin transactor: reset, the clock, the
// handshake and the output latency of a registered RTL block (RtlTiming), its FST
// drawing, and lockstep's lagging replay window. A kind (tlm/rtl_allocator.cpp) only maps
// its C++ calls to the words of its input and output roles. One call round is one
// transaction: inputs held, `latency` rising edges with the commit low (or until the valid
// output rises), the outputs read, then the edge that commits (or, for a round the caller
// never commits, the same edge with the commit low). docs/cosim.md has the convention table.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tlm/rtl_model.h"

namespace fabricsim::tlm_fabric {

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
  /// Reads debug port `k` (after the last edge).
  void debug(int k, PortWords& words) const { pins_->get(outputs_ + k, words); }

  /// Draws every following cycle into `path` at the times evaluate() gives.
  void trace_open(const std::string& path);
  /// Closes the open round and the waveform.
  void trace_close();

 private:
  void edge(bool commit);
  void dump(std::uint64_t ps);
  void flush_idle(std::uint64_t next_round);

  std::unique_ptr<RtlPins> pins_;
  RtlTiming timing_;
  int outputs_;
  std::uint64_t period_ps_;
  std::vector<PortWords> out_, idle_;
  bool open_ = false;       // evaluated, not yet committed or closed
  bool drawing_ = false;
  std::uint64_t t_ = 0;     // the open round's start
  int edges_ = 0;           // latency edges clocked in the open round
  std::uint64_t idle_at_ = 0;    // pending idle-inputs dump, 0 = none
  std::uint64_t next_free_ = 0;  // earliest time the next round may be drawn at
};

/// Lockstep: a second instance of the block that follows kRounds rounds behind, so that
/// on a mismatch the rounds leading to it can be replayed into a waveform.
class RtlReplayWindow {
 public:
  static constexpr std::size_t kRounds = 32;  ///< rounds shown before the mismatching one

  RtlReplayWindow(std::unique_ptr<RtlTransactor> lagging, int inputs);

  /// Records this round's inputs (the newest); the oldest beyond the window is applied.
  void push(const std::vector<PortWords>& in, std::uint64_t t_ps);
  void commit_newest();
  /// Rounds recorded (the newest included).
  std::size_t size() const { return count_; }
  /// Replays the recorded rounds into `path`, the newest last (committed if it was);
  /// returns the transactor, holding the newest round's outputs and state.
  const RtlTransactor& write(const std::string& path);

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

}  // namespace fabricsim::tlm_fabric
