#include "sim/progress.h"

#include <unistd.h>

#include <cmath>

namespace fabricsim::sim {

namespace {

std::string format(const char* fmt, double v, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v, unit);
  return buf;
}

// Simulated time with an SI unit: 41.2 us, 3.10 ms.
std::string sim_time(double ns) {
  if (ns < 1e3) return format("%.0f %s", ns, "ns");
  if (ns < 1e6) return format("%.1f %s", ns / 1e3, "us");
  if (ns < 1e9) return format("%.2f %s", ns / 1e6, "ms");
  return format("%.3f %s", ns / 1e9, "s");
}

std::string wall_time(double s) {
  if (s < 60) return format("%.1f %s", s, "s");
  if (s < 3600) return format("%.1f %s", s / 60, "min");
  return format("%.1f %s", s / 3600, "h");
}

}  // namespace

Progress::Progress(Verbosity verbosity, std::FILE* out)
    : out_(out), start_(std::chrono::steady_clock::now()), last_(start_ - std::chrono::hours(1)) {
  tty_ = isatty(fileno(out)) != 0;
  enabled_ = verbosity == Verbosity::verbose || (verbosity == Verbosity::normal && tty_);
}

Progress::~Progress() { finish(); }

double Progress::wall_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

std::string Progress::text(double done, double total, double wall_s, bool time_units, const std::string& label) {
  const double fraction = total > 0 ? std::min(1.0, done / total) : 0.0;
  std::string t = label.empty() ? "" : label + " ";
  if (time_units)
    t += "simulated " + sim_time(done) + " / " + sim_time(total);
  else
    t += format("%.0f%s", done, "") + " / " + format("%.0f%s", total, "");
  t += format(" (%.0f%s)", 100 * fraction, "%");
  t += "  wall " + wall_time(wall_s);
  const double rate = wall_s > 0 ? done / wall_s : 0.0;
  t += "  rate " + (time_units ? sim_time(rate) + "/s" : format("%.2f %s", rate, "/s"));
  if (rate > 0 && done < total)
    t += "  ETA " + wall_time((total - done) / rate);
  else if (done >= total)
    t += "  done";
  else
    t += "  ETA ?";
  return t;
}

void Progress::update(double done, double total, const std::string& label, bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  // A terminal line redraws 4 times a second; a log gets a line every 2 s.
  const auto period = tty_ ? std::chrono::milliseconds(250) : std::chrono::milliseconds(2000);
  if (!force && now - last_ < period) return;
  last_ = now;
  const std::string t = text(done, total, wall_seconds(), label.empty(), label);
  if (tty_) {
    std::fprintf(out_, "\r%s\033[K", t.c_str());
    open_line_ = true;
  } else {
    std::fprintf(out_, "%s\n", t.c_str());
  }
  std::fflush(out_);
}

void Progress::finish() {
  if (open_line_) std::fprintf(out_, "\n");
  open_line_ = false;
  std::fflush(out_);
}

}  // namespace fabricsim::sim
