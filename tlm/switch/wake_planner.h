// The switch's wake planner: on which core edge the switch wakes next, and which
// admissions fold into a later wake (docs/switch.md, "Timing"). Its rules are
// Switch members in wake_planner.cpp; this is the state they keep.
#pragma once

#include <vector>

#include <systemc>

namespace fabricsim::tlm_fabric::sw {

/// What the heads waiting now ask of the next wake-ups (Switch::edge_decides).
struct EdgeOutlook {
  bool decides;             ///< an edge with only a credit return or release due could decide something
  bool next_edge;           ///< the next edge decides something by itself
  sc_core::sc_time leave;   ///< first edge after now a head could leave on; end of time if none
};

/// The wake planner's state. Event driven, it wakes the switch only on edges that can
/// change a decision; every edge (the reference tests compare against) is the trivial
/// planner: it wakes on each edge while the switch holds a packet and folds nothing.
struct WakePlanner {
  enum class Mode { event_driven, every_edge };
  Mode mode = Mode::event_driven;
  bool every_edge() const { return mode == Mode::every_edge; }
  // Admission without an edge of its own (Switch::admission_wake).
  bool fold_admission = false;
  // An edge with only a credit return or a release due would change something.
  bool edge_decides = false;
  // Some output got a PAUSE frame (TxPort pause changes to wake for).
  bool pause_received = false;
  // Grant to wire and a cycle: the egress decides one cycle ahead.
  sc_core::sc_time ahead;
  // Per output: the first edge a head of it could be decided on, its wire free before
  // the grant reaches it and its first head ready (Switch::refresh_due). The per-wake
  // walks pass over an output not due without reading it.
  std::vector<sc_core::sc_time> out_due;

  /// The first edge whose grant finds a wire (or read port) busy until `busy` free by
  /// the time it reaches it.
  sc_core::sc_time free_edge(const sc_core::sc_time& busy) const {
    return busy > ahead ? busy - ahead : sc_core::SC_ZERO_TIME;
  }
};

}  // namespace fabricsim::tlm_fabric::sw
