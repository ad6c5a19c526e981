// Arbiter implementations: hw/ core, Verilated RTL twin, or both in lockstep. The arbiter
// kind of transactor: the requests as the req role's bits, the grant as gnt's one-hot
// bits; clock, reset, handshake and drawing are RtlTransactor's.
#include "tlm/rtl_arbiter.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "tlm/rtl_block.h"

#if FABRICSIM_RTL
#include "tlm/rtl_transactor.h"
#include "tlm/sim_time.h"
#endif

namespace fabricsim::tlm_fabric {

namespace {

#if FABRICSIM_RTL

/// The arbiter kind's roles (rtl/kinds/arbiter.cmake): input req, output gnt.
constexpr int kReq = 0, kGnt = 0;

/// "{0,3,5}": set bits of a req or gnt port.
std::string describe_bits(const PortWords& w, int n) {
  std::string out;
  for (int b = 0; b < n; ++b)
    if (static_cast<std::size_t>(b / 32) < w.size() && ((w[b / 32] >> (b % 32)) & 1U))
      out += (out.empty() ? "" : ",") + std::to_string(b);
  return "{" + out + "}";
}

std::string describe_grant(int g) { return g == hw::kNoGrant ? std::string("none") : std::to_string(g); }

/// The drawn cycle: the block's clock, or 1 ns for a block without one (the NIC's).
hw::Frequency drawn_clock(hw::Frequency clock) { return clock.in_hertz() > 0 ? clock : hw::Frequency::ghz(1); }

/// The RTL twin as an hw::Arbiter: one round (clear, add_request..., arbitrate,
/// update_state) is one transaction of the block. arbitrate() is const in the core's
/// interface (it changes no arbitration state); the transactor's round is mutable.
class RtlArbiter final : public hw::Arbiter {
 public:
  RtlArbiter(const ArbiterSpec& spec, const RtlModel& model, bool keep_window)
      : spec_(spec), n_(spec.requesters), req_((n_ + 31) / 32, 0), in_(1),
        rtl_(model, 1, 1, {}, drawn_clock(spec.clock), spec.waveform, spec.hierarchy, keep_window) {}

  void add_request(const hw::ArbiterRequest& r) override {
    if (r.input < 0 || r.input >= n_)
      throw std::out_of_range(spec_.hierarchy + ": arbiter request from input " + std::to_string(r.input) +
                              " outside 0.." + std::to_string(n_ - 1));
    std::uint32_t& w = req_[static_cast<std::size_t>(r.input / 32)];
    const std::uint32_t bit = std::uint32_t{1} << (r.input % 32);
    if (!(w & bit)) ++count_;
    w |= bit;
  }

  int arbitrate() const override {
    const int g = evaluate();
    check_legal(g);
    return g;
  }

  void update_state(int winner) override {
    if (!open_) return;
    open_ = false;
    if (winner == hw::kNoGrant) return;  // left uncommitted: the next round closes it, the pointer stays
    if (winner != grant_)
      throw std::logic_error(spec_.hierarchy + ": update_state(" + std::to_string(winner) + ") after the RTL granted " +
                             describe_grant(grant_) + ": an RTL arbiter commits only its own grant");
    rtl_.commit();
  }

  void clear() override {
    std::fill(req_.begin(), req_.end(), 0);
    count_ = 0;
  }

  int request_count() const override { return count_; }

  /// This round's grant as the block drives it: the lowest set gnt bit, or kNoGrant.
  /// `gnt_bits()` holds the whole port (legality is the caller's).
  int evaluate() const {
    open_ = true;
    in_[kReq] = req_;
    rtl_.evaluate(in_, sim_now());
    grant_ = lowest(rtl_.output(kGnt));
    return grant_;
  }

  const PortWords& requests() const { return req_; }
  const PortWords& gnt_bits() const { return rtl_.output(kGnt); }
  int n() const { return n_; }
  /// Set bits of this round's gnt port (1 for a legal grant, 0 for none).
  int granted() const {
    const PortWords& w = gnt_bits();
    int set = 0;
    for (int b = 0; b < n_; ++b) set += static_cast<std::size_t>(b / 32) < w.size() && ((w[b / 32] >> (b % 32)) & 1U);
    return set;
  }
  /// The block's rounds, waveforms and debug ports.
  RtlRun& run() const { return rtl_; }

  /// Lockstep: writes the rounds up to and including the current one (replayed on the
  /// lagging instance) next to the --trace waveforms, or in the temp folder.
  std::string write_window() const {
    std::string path;
    const RtlTransactor& replayed = rtl_.write_window(path);
    if (replayed.output(kGnt) != gnt_bits())
      throw std::runtime_error("replaying the window gave grant " + describe_bits(replayed.output(kGnt), n_) +
                               "; the block's state depends on more than reset and its inputs; " + path +
                               " is not faithful");
    return path;
  }

 private:
  int lowest(const PortWords& w) const {
    for (std::size_t k = 0; k < w.size(); ++k)
      if (w[k] != 0) {
        const int b = static_cast<int>(k * 32) + __builtin_ctz(w[k]);
        return b < n_ ? b : hw::kNoGrant;
      }
    return hw::kNoGrant;
  }

  /// A grant that is not one-hot or goes to a requester that did not ask would corrupt
  /// the caller: stop with the round that shows it.
  void check_legal(int g) const {
    const PortWords& w = gnt_bits();
    const int set = granted();
    const bool asked = g == hw::kNoGrant || (req_[static_cast<std::size_t>(g / 32)] >> (g % 32)) & 1U;
    if (set <= 1 && asked && (g != hw::kNoGrant || count_ == 0)) return;
    throw RtlAllocatorMismatch(spec_.hierarchy + ": RTL arbiter " + rtl_.model().name + " returned an illegal grant at " +
                               describe_time(rtl_.round_time(), spec_.clock) + ", arbitration round " +
                               std::to_string(rtl_.rounds()) +
                               "\n  requests:  " + describe_bits(req_, n_) + "\n  RTL grant: " + describe_bits(w, n_) +
                               "\n  (one-hot, to a requester that asked, and some grant when any asked)");
  }

  ArbiterSpec spec_;
  int n_;
  PortWords req_;
  int count_ = 0;
  mutable std::vector<PortWords> in_;  // the input roles: req
  mutable RtlRun rtl_;
  mutable bool open_ = false;          // arbitrated, not yet committed
  mutable int grant_ = hw::kNoGrant;   // the open round's grant
};

/// The hw core and the RTL twin on the same requests; the grant compared every round, the
/// pointer (DEBUG ports) after every committing edge.
class LockstepArbiter final : public hw::Arbiter {
 public:
  LockstepArbiter(const ArbiterSpec& spec, const RtlModel& model)
      : spec_(spec), core_(hw::make_arbiter(model.info.twin, spec.requesters)),
        rtl_(std::make_unique<RtlArbiter>(spec, model, true)) {
    core_->debug_state(core_state_);
    compared_ = match_debug_state(core_state_, model.info, spec.hierarchy);
  }

  void add_request(const hw::ArbiterRequest& r) override {
    core_->add_request(r);
    rtl_->add_request(r);
  }

  int arbitrate() const override {
    const int core = core_->arbitrate();
    const int rtl = rtl_->evaluate();
    if (core != rtl || rtl_->granted() > 1 || rtl_->request_count() != core_->request_count())
      fail("mismatch", "\n  hw core grant:  " + describe_grant(core) + "\n  RTL grant:      " +
                           describe_bits(rtl_->gnt_bits(), rtl_->n()));
    return core;
  }

  void update_state(int winner) override {
    core_->update_state(winner);
    rtl_->update_state(winner);
    if (compared_.empty() || winner == hw::kNoGrant) return;
    core_->debug_state(core_state_);
    for (std::size_t k = 0; k < compared_.size(); ++k) {
      const hw::StateVector& v = core_state_[compared_[k]];
      rtl_->run().debug(static_cast<int>(k), port_);
      for (std::size_t e = 0; e < v.values.size(); ++e) {
        const std::uint64_t rtl = element(port_, v.bits, static_cast<int>(e));
        if (rtl == v.values[e]) continue;
        fail("state divergence", " after the committing edge\n  state:          " + v.name + "[" + std::to_string(e) +
                                     "]: hw core " + std::to_string(v.values[e]) + ", RTL " + std::to_string(rtl) +
                                     " (debug port " + rtl_->run().model().debug_ports.at(k) + ")" +
                                     "\n  grant (equal):  " + describe_grant(winner));
      }
    }
  }

  void clear() override {
    core_->clear();
    rtl_->clear();
  }

  int request_count() const override { return core_->request_count(); }
  void debug_state(std::vector<hw::StateVector>& out) const override { core_->debug_state(out); }
  RtlArbiter& rtl() const { return *rtl_; }

 private:
  [[noreturn]] void fail(const char* what, const std::string& detail) const {
    const RtlRun& b = rtl_->run();
    const RtlModelInfo& m = b.model();
    std::ostringstream s;
    s << "lockstep " << what << " in " << spec_.hierarchy << " at " << describe_time(b.round_time(), spec_.clock)
      << ", arbitration round " << b.rounds() << ": hw core '" << m.twin << "' and RTL " << m.name << " (top "
      << m.top << ", " << m.sizes.at(0) << " requesters) disagree" << detail
      << "\n  requests:       " << describe_bits(rtl_->requests(), rtl_->n());
    s << describe_waveforms(b.window_rounds(), [this] { return rtl_->write_window(); },
                            [this] {
                              rtl_->run().close_trace();
                              return rtl_->run().trace_path();
                            });
    throw RtlAllocatorMismatch(s.str());
  }

  ArbiterSpec spec_;
  std::unique_ptr<hw::Arbiter> core_;
  std::unique_ptr<RtlArbiter> rtl_;
  std::vector<std::size_t> compared_;  // per debug port: its vector in core_state_
  std::vector<hw::StateVector> core_state_;
  PortWords port_;
};

#endif  // FABRICSIM_RTL

RtlArbiterModel arbiter_model(const RtlModelInfo& info) {
  return {info.name, info.top, info.twin, info.sizes.at(0), info.registration, info.test_only};
}

}  // namespace

std::vector<RtlArbiterModel> rtl_arbiter_models() {
  std::vector<RtlArbiterModel> out;
  for (const auto& e : rtl_model_table("arbiter")) out.push_back(arbiter_model(e.info));
  return out;
}

RtlArbiterProblem check_rtl_arbiter(std::string_view policy, std::string_view variant, int requesters) {
  using Key = RtlArbiterProblem::Key;
  const auto models = rtl_arbiter_models();
  if (models.empty()) return {Key::impl, "this build has no RTL twins of arbiters; rebuild with -DFABRICSIM_RTL=ON"};
  std::vector<RtlArbiterModel> of_variant;
  std::string names;
  for (const auto& m : models) {
    if (m.name == variant) of_variant.push_back(m);
    const std::string name = m.name + (m.test_only ? " (test only)" : "");
    if (names.find(name) == std::string::npos) names += (names.empty() ? "" : ", ") + name;
  }
  const std::string v(variant);
  if (of_variant.empty()) return {Key::rtl_variant, "no RTL arbiter '" + v + "' in this build; valid: " + names};
  if (of_variant.front().policy != policy)
    return {Key::rtl_variant, "the RTL twin " + v + " implements arbiter '" + of_variant.front().policy + "', not '" +
                                  std::string(policy) + "'"};
  if (requesters <= 0) return {};
  std::string sizes;
  for (const auto& m : of_variant) {
    if (m.requesters == requesters) return {};
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(m.requesters);
  }
  return {Key::size, "no RTL build of " + v + " for " + std::to_string(requesters) +
                         " requesters (Verilator fixes parameters at build time); this build has: " + sizes +
                         ". Add the size to SIZES in " + of_variant.front().registration + " (docs/cosim.md)"};
}

std::optional<RtlWaveformRecord> finish_waveform([[maybe_unused]] hw::Arbiter& arbiter) {
#if FABRICSIM_RTL
  if (auto* rtl = rtl_twin_of<RtlArbiter, LockstepArbiter>(arbiter)) return rtl->run().finish_waveform();
#endif
  return std::nullopt;
}

std::optional<RtlBlockName> rtl_block([[maybe_unused]] const hw::Arbiter& arbiter) {
#if FABRICSIM_RTL
  if (const auto* rtl = rtl_twin_of<RtlArbiter, LockstepArbiter>(arbiter)) return rtl->run().name();
#endif
  return std::nullopt;
}

std::unique_ptr<hw::Arbiter> make_arbiter_block(const ArbiterSpec& spec) {
  if (spec.impl == AllocatorImpl::tlm) return hw::make_arbiter(spec.policy, spec.requesters);
  const RtlArbiterProblem p = check_rtl_arbiter(spec.policy, spec.rtl_variant, spec.requesters);
  if (p.key != RtlArbiterProblem::Key::none)
    throw std::invalid_argument(spec.hierarchy + ": " + spec.impl_key + " " + std::string(to_string(spec.impl)) + ": " +
                                p.what);
#if FABRICSIM_RTL
  const RtlModel& model = *find_rtl_model("arbiter", spec.rtl_variant, {spec.requesters});
  if (spec.impl == AllocatorImpl::lockstep) return std::make_unique<LockstepArbiter>(spec, model);
  return std::make_unique<RtlArbiter>(spec, model, false);
#else
  return nullptr;  // unreachable: check_rtl_arbiter reports the missing RTL build
#endif
}

}  // namespace fabricsim::tlm_fabric
