// Reset, clocking, handshake, latency and waveform drawing of a registered RTL block.
#include "tlm/rtl_transactor.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <string_view>
#include <utility>

#include <systemc>

namespace fabricsim::tlm_fabric {

std::string describe_time(const sc_core::sc_time& t, hw::Frequency clock) {
  const double edge = t.to_seconds() * clock.in_hertz();
  std::ostringstream s;
  s << "core-clock cycle " << std::llround(edge) << " (t = " << t.to_seconds() * 1e9 << " ns)";
  return s.str();
}

std::uint64_t to_ps(const sc_core::sc_time& t) { return static_cast<std::uint64_t>(std::llround(t.to_seconds() * 1e12)); }

std::filesystem::path make_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create waveform folder '" + dir + "': " + ec.message());
  return std::filesystem::path(dir);
}

std::string mismatch_waveform_path(const std::string& trace_dir, const std::string& stem) {
  const std::filesystem::path dir = make_dir(trace_dir.empty() ? std::filesystem::temp_directory_path().string() : trace_dir);
  return (dir / (stem + ".lockstep_mismatch.fst")).string();
}

std::string describe_waveforms(std::size_t rounds, const std::function<std::string()>& write_window,
                               const std::function<std::string()>& close_trace) {
  std::ostringstream s;
  try {
    s << "\n  waveform of the " << rounds << " round" << (rounds == 1 ? "" : "s")
      << " up to the mismatch: " << write_window();
  } catch (const std::exception& e) {
    s << "\n  (no mismatch waveform: " << e.what() << ")";
  }
  const std::string full = close_trace();
  if (!full.empty()) s << "\n  full RTL waveform (--trace): " << full;
  return s.str();
}

std::vector<std::size_t> match_debug_state(const std::vector<hw::StateVector>& core_state, const RtlModelInfo& model,
                                           const std::string& who) {
  std::vector<std::size_t> out;
  for (const auto& name : model.debug_state) {
    const auto it = std::find_if(core_state.begin(), core_state.end(), [&](const auto& v) { return v.name == name; });
    if (it == core_state.end()) {
      std::string valid;
      for (const auto& v : core_state) valid += (valid.empty() ? "" : ", ") + v.name;
      throw std::invalid_argument(who + ": RTL " + model.name + " (" + model.registration + ") declares DEBUG " + name +
                                  ", but hw core '" + model.twin + "' has no such state; it has: " +
                                  (valid.empty() ? "(none)" : valid));
    }
    out.push_back(static_cast<std::size_t>(it - core_state.begin()));
  }
  return out;
}

std::uint64_t element(const PortWords& w, int bits, int k) {
  const std::size_t lo = static_cast<std::size_t>(k) * static_cast<std::size_t>(bits);
  const std::size_t word = lo / 32;
  std::uint64_t v = word < w.size() ? w[word] : 0;
  if (word + 1 < w.size()) v |= std::uint64_t{w[word + 1]} << 32;
  return (v >> (lo % 32)) & ((std::uint64_t{1} << bits) - 1);
}

RtlTransactor::RtlTransactor(std::unique_ptr<RtlPins> pins, const RtlTiming& timing, int inputs, int outputs,
                             std::uint64_t period_ps)
    : pins_(std::move(pins)), timing_(timing), inputs_(inputs), outputs_(outputs), period_ps_(std::max<std::uint64_t>(period_ps, 2)),
      out_(static_cast<std::size_t>(outputs)), idle_(static_cast<std::size_t>(inputs)) {
  pins_->commit(false);
  pins_->clock(false);
  pins_->reset(timing_.reset_active_high);
  pins_->eval();
  if (timing_.reset_sync) {  // held over reset_cycles rising edges
    for (int c = 0; c < std::max(timing_.reset_cycles, 1); ++c) {
      pins_->clock(true);
      pins_->eval();
      pins_->clock(false);
      pins_->eval();
    }
  }
  pins_->reset(!timing_.reset_active_high);
  pins_->eval();
  for (int k = 0; k < outputs; ++k) out_[static_cast<std::size_t>(k)].assign(static_cast<std::size_t>(pins_->words(k)), 0);
}

RtlTransactor::~RtlTransactor() {
  try {
    trace_close();
  } catch (const std::exception& e) {
    std::cerr << "fabricsim: warning: " << e.what() << "\n";
  }
}

void RtlTransactor::configure(const std::vector<PortWords>& config) {
  for (std::size_t k = 0; k < config.size(); ++k) pins_->put(inputs_ + static_cast<int>(k), config[k]);
  pins_->eval();
}

bool RtlTransactor::evaluate(const std::vector<PortWords>& in, std::uint64_t t_ps) {
  close();
  if (drawing_) {
    flush_idle(t_ps);
    t_ps = std::max(t_ps, next_free_);  // two rounds on one edge: keep time increasing
  }
  t_ = t_ps;
  advance(t_);
  for (std::size_t k = 0; k < in.size(); ++k) pins_->put(static_cast<int>(k), in[k]);
  pins_->commit(false);
  pins_->clock(false);
  pins_->eval();
  edges_ = 0;
  const bool strobe = timing_.handshake == RtlHandshake::strobe;
  bool valid = strobe || pins_->valid();
  // A registered block: the outputs follow `latency` edges later (a valid/ready one may
  // raise valid after fewer); the inputs are held meanwhile.
  if (timing_.latency > 0) {
    valid = strobe;
    while (edges_ < timing_.latency) {
      const std::uint64_t t = t_ + static_cast<std::uint64_t>(edges_) * period_ps_;
      dump(t);
      advance(t + period_ps_ / 2);
      pins_->clock(true);
      pins_->eval();
      dump(t + period_ps_ / 2);
      advance(t + period_ps_);
      pins_->clock(false);
      pins_->eval();
      ++edges_;
      if (!strobe && pins_->valid()) {
        valid = true;
        break;
      }
    }
  }
  for (int k = 0; k < outputs_; ++k) {
    PortWords& w = out_[static_cast<std::size_t>(k)];
    if (valid) {
      pins_->get(k, w);
    } else {
      std::fill(w.begin(), w.end(), 0);
    }
  }
  open_ = true;
  return valid;
}

void RtlTransactor::commit() {
  if (!open_) return;
  open_ = false;
  edge(true);
}

void RtlTransactor::close() {
  if (!open_) return;
  open_ = false;
  edge(false);
}

/// The round's last cycle: the commit (strobe or ready) from its start, the rising edge
/// at half a period; drawn blocks then show idle (all-zero) inputs from the next period
/// unless the next round starts first (flush_idle).
void RtlTransactor::edge(bool commit) {
  const std::uint64_t t = t_ + static_cast<std::uint64_t>(edges_) * period_ps_;
  advance(t);
  pins_->commit(commit);
  if (drawing_) {
    pins_->eval();
    dump(t);
  }
  advance(t + period_ps_ / 2);
  pins_->clock(true);
  pins_->eval();
  if (!drawing_) return;
  dump(t + period_ps_ / 2);
  idle_at_ = t + period_ps_;
  next_free_ = t + period_ps_ / 2 + 1;
}

void RtlTransactor::advance(std::uint64_t ps) {
  if (drawing_) pins_->trace_advance(ps);
}

void RtlTransactor::dump(std::uint64_t ps) {
  if (drawing_) pins_->trace_dump(ps);
}

// The idle cycle is drawn only when it precedes the next round: the pins keep the round's
// values until then, so drawing changes nothing the block computes.
void RtlTransactor::flush_idle(std::uint64_t next_round) {
  if (idle_at_ != 0 && idle_at_ < next_round) {
    advance(idle_at_);
    for (std::size_t k = 0; k < idle_.size(); ++k) pins_->put(static_cast<int>(k), idle_[k]);  // empty: all zero
    pins_->commit(false);
    pins_->clock(false);
    pins_->eval();
    dump(idle_at_);
  }
  idle_at_ = 0;
}

std::string RtlTransactor::trace_open(const std::string& stem, const WaveformOptions& options) {
  std::string path = pins_->trace_open(stem, options);
  drawing_ = true;
  return path;
}

bool RtlTransactor::trace_close() {
  if (!drawing_) return pins_->trace_limit_reached();
  close();
  flush_idle(UINT64_MAX);
  drawing_ = false;
  pins_->trace_close();
  return pins_->trace_limit_reached();
}

// ---------------------------------------------------------------------------------------------

RtlReplayWindow::RtlReplayWindow(std::unique_ptr<RtlTransactor> lagging, int inputs, std::size_t rounds)
    : lagging_(std::move(lagging)) {
  slots_.assign(rounds + 1, Round{std::vector<PortWords>(static_cast<std::size_t>(inputs)), 0, false});
}

void RtlReplayWindow::apply(const Round& r) {
  lagging_->evaluate(r.in, r.t);
  if (r.committed) lagging_->commit();
}

void RtlReplayWindow::push(const std::vector<PortWords>& in, std::uint64_t t_ps) {
  if (count_ == slots_.size()) {
    apply(slots_[head_]);
    head_ = (head_ + 1) % slots_.size();
    --count_;
  }
  Round& r = slots_[(head_ + count_) % slots_.size()];
  for (std::size_t k = 0; k < in.size(); ++k) r.in[k] = in[k];
  r.t = t_ps;
  r.committed = false;
  ++count_;
}

void RtlReplayWindow::commit_newest() { slots_[(head_ + count_ - 1) % slots_.size()].committed = true; }

RtlRun::RtlRun(const RtlModel& model, int inputs, int outputs, std::vector<PortWords> config, hw::Frequency clock,
               const WaveformOptions& waveform, const std::string& hierarchy, bool keep_window,
               std::size_t window_rounds)
    : model_(model), inputs_(inputs), outputs_(outputs), config_(std::move(config)),
      period_ps_(static_cast<std::uint64_t>(std::llround(1e12 / clock.in_hertz()))), hierarchy_(hierarchy),
      trace_dir_(waveform.dir),
      stem_(hierarchy + "." + model.info.name) {
  const bool trace = waveform.enabled() && waveform.wants(hierarchy, model.info.name);
  rtl_ = make_transactor(trace);
  rtl_->coverage_scope(hierarchy);
  if (trace) trace_path_ = rtl_->trace_open((make_dir(waveform.dir) / stem_).string(), waveform);
  if (keep_window) window_ = std::make_unique<RtlReplayWindow>(make_transactor(true), inputs, window_rounds);
}

std::unique_ptr<RtlTransactor> RtlRun::make_transactor(bool traceable) const {
  auto t = std::make_unique<RtlTransactor>(model_.make(traceable), model_.info.timing, inputs_, outputs_, period_ps_);
  if (!config_.empty()) t->configure(config_);
  return t;
}

void RtlRun::evaluate(const std::vector<PortWords>& in, const sc_core::sc_time& t) {
  ++rounds_;
  round_at_ = t;
  rtl_->evaluate(in, to_ps(t));
  if (window_) window_->push(in, to_ps(t));
}

void RtlRun::commit() {
  if (window_) window_->commit_newest();
  rtl_->commit();
}

const RtlTransactor& RtlRun::write_window(std::string& path) {
  path = mismatch_waveform_path(trace_dir_, stem_);
  return window_->write(path.substr(0, path.size() - std::string_view(".fst").size()));
}

bool RtlRun::close_trace() {
  if (rtl_->trace_close()) limit_reached_ = true;
  return limit_reached_;
}

std::optional<RtlWaveformRecord> RtlRun::finish_waveform() {
  if (trace_path_.empty()) return std::nullopt;
  const bool limit_reached = close_trace();
  return RtlWaveformRecord{hierarchy_, trace_path_, limit_reached};
}

const RtlTransactor& RtlReplayWindow::write(const std::string& stem) {
  lagging_->trace_open(stem, WaveformOptions{});  // FST, every round, no size limit
  for (std::size_t k = 0; k < count_; ++k) apply(slots_[(head_ + k) % slots_.size()]);
  lagging_->trace_close();
  return *lagging_;
}

}  // namespace fabricsim::tlm_fabric
