// Progress of long runs on a terminal: one line, rewritten in place, on stderr.
//   simulated 41.2 us / 100 us (41%)  wall 12.3 s  rate 3.35 us/s  ETA 17.6 s
// Quiet when stderr is not a terminal (CI logs, pipes) unless --verbose; never with --quiet.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace fabricsim::sim {

/// --quiet / default / --verbose of `fabricsim run` and `fabricsim sweep`.
enum class Verbosity { quiet, normal, verbose };

class Progress {
 public:
  /// Shown on a terminal at `normal`, always at `verbose` (one line per update when `out`
  /// is not a terminal), never at `quiet`.
  explicit Progress(Verbosity verbosity, std::FILE* out = stderr);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool enabled() const { return enabled_; }
  /// Seconds since construction.
  double wall_seconds() const;
  /// `done` of `total`: simulated ns when `label` is empty, else counted items (e.g. label
  /// "points"). Rewrites the line, at most a few times per wall-second unless `force`.
  void update(double done, double total, const std::string& label, bool force = false);
  /// Ends the line (a terminal keeps the last state on its own line).
  void finish();

  /// The line's text, e.g. "simulated 41.2 us / 100 us (41%)  wall 12.3 s  rate 3.35 us/s  ETA 17.6 s"
  /// for `time_units` (done / total in ns), else "points 5 / 24 (21%)  wall ... rate 0.5 /s  ETA ...".
  static std::string text(double done, double total, double wall_s, bool time_units, const std::string& label);

 private:
  bool enabled_ = false;
  bool tty_ = false;
  bool open_line_ = false;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace fabricsim::sim
