// Reset, clocking, handshake, latency and waveform drawing of a registered RTL block.
#include "tlm/rtl_transactor.h"

#include <algorithm>
#include <utility>

namespace fabricsim::tlm_fabric {

RtlTransactor::RtlTransactor(std::unique_ptr<RtlPins> pins, const RtlTiming& timing, int inputs, int outputs,
                             std::uint64_t period_ps)
    : pins_(std::move(pins)), timing_(timing), outputs_(outputs), period_ps_(std::max<std::uint64_t>(period_ps, 2)),
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

RtlTransactor::~RtlTransactor() { trace_close(); }

bool RtlTransactor::evaluate(const std::vector<PortWords>& in, std::uint64_t t_ps) {
  close();
  if (drawing_) {
    flush_idle(t_ps);
    t_ps = std::max(t_ps, next_free_);  // two rounds on one edge: keep time increasing
  }
  t_ = t_ps;
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
      pins_->clock(true);
      pins_->eval();
      dump(t + period_ps_ / 2);
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
/// at half a period; drawn blocks then see idle (all-zero) inputs from the next period.
void RtlTransactor::edge(bool commit) {
  const std::uint64_t t = t_ + static_cast<std::uint64_t>(edges_) * period_ps_;
  pins_->commit(commit);
  if (drawing_) {
    pins_->eval();
    dump(t);
  }
  pins_->clock(true);
  pins_->eval();
  if (!drawing_) return;
  dump(t + period_ps_ / 2);
  for (std::size_t k = 0; k < idle_.size(); ++k) pins_->put(static_cast<int>(k), idle_[k]);  // empty: all zero
  pins_->commit(false);
  pins_->clock(false);
  pins_->eval();
  idle_at_ = t + period_ps_;
  next_free_ = t + period_ps_ / 2 + 1;
}

void RtlTransactor::dump(std::uint64_t ps) {
  if (drawing_) pins_->trace_dump(ps);
}

void RtlTransactor::flush_idle(std::uint64_t next_round) {
  if (idle_at_ != 0 && idle_at_ < next_round) pins_->trace_dump(idle_at_);
  idle_at_ = 0;
}

void RtlTransactor::trace_open(const std::string& path) {
  pins_->trace_open(path);
  drawing_ = true;
}

void RtlTransactor::trace_close() {
  if (!drawing_) return;
  close();
  flush_idle(UINT64_MAX);
  pins_->trace_close();
  drawing_ = false;
}

// ---------------------------------------------------------------------------------------------

RtlReplayWindow::RtlReplayWindow(std::unique_ptr<RtlTransactor> lagging, int inputs) : lagging_(std::move(lagging)) {
  slots_.assign(kRounds + 1, Round{std::vector<PortWords>(static_cast<std::size_t>(inputs)), 0, false});
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

const RtlTransactor& RtlReplayWindow::write(const std::string& path) {
  lagging_->trace_open(path);
  for (std::size_t k = 0; k < count_; ++k) apply(slots_[(head_ + k) % slots_.size()]);
  lagging_->trace_close();
  return *lagging_;
}

}  // namespace fabricsim::tlm_fabric
