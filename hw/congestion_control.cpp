#include "hw/congestion_control.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fabricsim::hw {

const EnumNames<CcKind>& cc_kind_names() {
  static const EnumNames<CcKind> names{{CcKind::none, "none"}, {CcKind::dcqcn, "dcqcn"}, {CcKind::ib_cc, "ib_cc"}};
  return names;
}

std::string_view to_string(CcKind k) { return name_of(cc_kind_names(), k); }

const hw::ParamBlock& dcqcn_params() {
  using hw::ParamType;
  static const hw::ParamBlock block{
      "nic.congestion_control.dcqcn",
      "DCQCN (Zhu et al., SIGCOMM 2015)",
      {{"g", ParamType::number, "", "0.00390625", "1e-6", "1", {}, "",
        "alpha gain (1/256 by default)"},
       {"alpha_timer", ParamType::time, "", "55us", "100ns", "1s", {}, "",
        "alpha decays each period without a CNP"},
       {"rate_timer", ParamType::time, "", "60us", "100ns", "1s", {}, "",
        "rate-increase timer period"},
       {"byte_counter", ParamType::size, "", "300000B", "64B", "1GiB", {}, "",
        "a rate-increase event every this many bytes sent"},
       {"fast_recovery_steps", ParamType::integer, "", "5", "1", "100", {}, "",
        "increase events spent in fast recovery (F)"},
       {"additive_increase", ParamType::bandwidth, "", "40Mb/s", "0b/s", "1Tb/s", {}, "",
        "R_AI"},
       {"hyper_increase", ParamType::bandwidth, "", "200Mb/s", "0b/s", "1Tb/s", {}, "",
        "R_HAI"},
       {"min_rate", ParamType::bandwidth, "", "100Mb/s", "1Kb/s", "1Tb/s", {}, "",
        "floor of the current rate"},
       {"cnp_interval", ParamType::time, "", "50us", "0s", "1s", {}, "",
        "receiver: at most one CNP per QP per interval"}}};
  return block;
}

const hw::ParamBlock& ib_cc_params() {
  using hw::ParamType;
  static const hw::ParamBlock block{
      "nic.congestion_control.ib_cc",
      "InfiniBand congestion control (IBTA vol. 1 annex A10)",
      {{"ccti_increase", ParamType::integer, "", "1", "1", "1000", {}, "",
        "CCT index step per BECN"},
       {"ccti_limit", ParamType::integer, "", "127", "1", "16383", {}, "",
        "largest CCT index"},
       {"ccti_timer", ParamType::time, "", "10us", "1ns", "1s", {}, "",
        "the index drops by one per period"},
       {"ipd_unit", ParamType::time, "", "10ns", "0s", "100us", {}, "",
        "CCT[i] = i x `ipd_unit` of idle after each packet (linear table)"}}};
  return block;
}

void DcqcnParams::validate() const {
  const ParamBlock& spec = dcqcn_params();
  spec["g"].check(g);
  spec["alpha_timer"].check_quantity(alpha_timer);
  spec["rate_timer"].check_quantity(rate_timer);
  spec["byte_counter"].check_quantity(byte_counter);
  spec["fast_recovery_steps"].check(fast_recovery_steps);
  spec["additive_increase"].check_quantity(additive_increase);
  spec["hyper_increase"].check_quantity(hyper_increase);
  spec["min_rate"].check_quantity(min_rate);
  spec["cnp_interval"].check_quantity(cnp_interval);
}

void IbCcParams::validate() const {
  const ParamBlock& spec = ib_cc_params();
  spec["ccti_increase"].check(ccti_increase);
  spec["ccti_limit"].check(ccti_limit);
  spec["ccti_timer"].check_quantity(ccti_timer);
  spec["ipd_unit"].check_quantity(ipd_unit);
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
