#include "hw/congestion_control.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fabricsim::hw {

std::string_view to_string(CcKind k) {
  switch (k) {
    case CcKind::none: return "none";
    case CcKind::dcqcn: return "dcqcn";
    case CcKind::ib_cc: return "ib_cc";
  }
  return "?";
}

const std::vector<CcKind>& all_cc_kinds() {
  static const std::vector<CcKind> v{CcKind::none, CcKind::dcqcn, CcKind::ib_cc};
  return v;
}

void DcqcnParams::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument(what); };
  if (!(g > 0 && g <= 1)) fail("g must be in (0, 1]");
  if (alpha_timer.in_seconds() <= 0 || rate_timer.in_seconds() <= 0) fail("DCQCN timers must be positive");
  if (byte_counter.in_bytes() == 0) fail("byte_counter must be positive");
  if (fast_recovery_steps < 1) fail("fast_recovery_steps must be at least 1");
  if (min_rate.bps() <= 0) fail("min_rate must be positive");
}

void IbCcParams::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument(what); };
  if (ccti_increase < 1 || ccti_limit < 1 || ccti_limit > 16383) fail("ccti_increase >= 1 and ccti_limit in 1..16383");
  if (ccti_timer.in_seconds() <= 0) fail("ccti_timer must be positive");
}

namespace {

class NoCc final : public CongestionControl {
 public:
  explicit NoCc(double line) : line_(line) {}
  double rate_bps(double) override { return line_; }
  double inter_packet_delay_s(double) override { return 0; }
  void on_notification(double) override {}
  void on_bytes_sent(std::uint64_t, double) override {}
  CcKind kind() const override { return CcKind::none; }

 private:
  double line_;
};

// DCQCN reaction point (sender), Zhu et al. 2015, Fig. 6 / Algorithm 1.
class Dcqcn final : public CongestionControl {
 public:
  Dcqcn(const DcqcnParams& p, double line) : p_(p), line_(line), rc_(line), rt_(line) {
    p_.validate();
    next_rate_ = p_.rate_timer.in_seconds();
    next_alpha_ = p_.alpha_timer.in_seconds();
  }
  double rate_bps(double now) override {
    advance(now);
    return rc_;
  }
  double inter_packet_delay_s(double) override { return 0; }
  void on_notification(double now) override {
    advance(now);
    // Cut: remember the target, reduce by alpha/2, raise alpha, restart the increase machinery.
    rt_ = rc_;
    rc_ = std::max(rc_ * (1 - alpha_ / 2), p_.min_rate.bps());
    alpha_ = (1 - p_.g) * alpha_ + p_.g;
    timer_events_ = byte_events_ = 0;
    bytes_ = 0;
    next_rate_ = now + p_.rate_timer.in_seconds();
    next_alpha_ = now + p_.alpha_timer.in_seconds();
    cut_ = true;
  }
  void on_bytes_sent(std::uint64_t bytes, double now) override {
    advance(now);
    bytes_ += bytes;
    while (bytes_ >= p_.byte_counter.in_bytes()) {
      bytes_ -= p_.byte_counter.in_bytes();
      ++byte_events_;
      increase();
    }
  }
  CcKind kind() const override { return CcKind::dcqcn; }

 private:
  void advance(double now) {
    // Timer expiries in time order up to now. Until the first cut the rate is
    // at line rate and alpha only decays, so skip the walk.
    if (!cut_) return;
    while (next_rate_ <= now || next_alpha_ <= now) {
      if (next_alpha_ <= next_rate_) {
        alpha_ *= (1 - p_.g);
        next_alpha_ += p_.alpha_timer.in_seconds();
      } else {
        ++timer_events_;
        increase();
        next_rate_ += p_.rate_timer.in_seconds();
      }
      if (rc_ >= line_ && rt_ >= line_ && alpha_ < 1e-6) {
        cut_ = false;  // fully recovered: nothing left to evolve
        break;
      }
    }
  }
  void increase() {
    const int f = p_.fast_recovery_steps;
    const int hi = std::max(timer_events_, byte_events_), lo = std::min(timer_events_, byte_events_);
    if (hi < f) {
      // Fast recovery: halve the gap to the target.
    } else if (lo > f) {
      rt_ += (lo - f) * p_.hyper_increase.bps();  // hyper increase
    } else {
      rt_ += p_.additive_increase.bps();          // additive increase
    }
    rt_ = std::min(rt_, line_);
    rc_ = std::min((rt_ + rc_) / 2, line_);
  }

  DcqcnParams p_;
  double line_, rc_, rt_, alpha_ = 1.0;
  double next_rate_, next_alpha_;
  int timer_events_ = 0, byte_events_ = 0;
  std::uint64_t bytes_ = 0;
  bool cut_ = false;
};

// IB CC: congestion control table index driven by BECNs and a recovery timer.
class IbCc final : public CongestionControl {
 public:
  IbCc(const IbCcParams& p, double line) : p_(p), line_(line) { p_.validate(); }
  double rate_bps(double now) override {
    advance(now);
    return line_;
  }
  double inter_packet_delay_s(double now) override {
    advance(now);
    return ccti_ * p_.ipd_unit.in_seconds();
  }
  void on_notification(double now) override {
    advance(now);
    ccti_ = std::min(ccti_ + p_.ccti_increase, p_.ccti_limit);
    if (ccti_ > 0 && next_ < 0) next_ = now + p_.ccti_timer.in_seconds();
  }
  void on_bytes_sent(std::uint64_t, double) override {}
  CcKind kind() const override { return CcKind::ib_cc; }

 private:
  void advance(double now) {
    while (ccti_ > 0 && next_ >= 0 && next_ <= now) {
      --ccti_;
      next_ = ccti_ > 0 ? next_ + p_.ccti_timer.in_seconds() : -1;
    }
  }
  IbCcParams p_;
  double line_;
  int ccti_ = 0;
  double next_ = -1;
};

}  // namespace

std::unique_ptr<CongestionControl> make_congestion_control(CcKind kind, const DcqcnParams& dcqcn,
                                                           const IbCcParams& ib, double line_rate_bps) {
  switch (kind) {
    case CcKind::none: return std::make_unique<NoCc>(line_rate_bps);
    case CcKind::dcqcn: return std::make_unique<Dcqcn>(dcqcn, line_rate_bps);
    case CcKind::ib_cc: return std::make_unique<IbCc>(ib, line_rate_bps);
  }
  throw std::invalid_argument("unknown congestion control");
}

}  // namespace fabricsim::hw
