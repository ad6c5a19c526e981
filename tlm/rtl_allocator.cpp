// Switch allocator implementations: hw/ core, Verilated RTL twin, or both in lockstep.
// The allocator kind of transactor: requests and grants as the req/gnt roles' bit
// matrices; clock, reset, handshake and drawing are RtlTransactor's.
#include "tlm/rtl_allocator.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <sstream>

#include <systemc>

#include "tlm/rtl_block.h"
#include "tlm/rtl_packet_fifo.h"
#include "tlm/rtl_vl_arbiter.h"
#include "tlm/sim_time.h"

#if FABRICSIM_RTL
#include "tlm/rtl_transactor.h"
#endif

namespace fabricsim::tlm_fabric {

const hw::EnumNames<AllocatorImpl>& allocator_impl_names() {
  static const hw::EnumNames<AllocatorImpl> names{
      {AllocatorImpl::tlm, "tlm"}, {AllocatorImpl::rtl, "rtl"}, {AllocatorImpl::lockstep, "lockstep"}};
  return names;
}

std::string_view to_string(AllocatorImpl impl) { return hw::name_of(allocator_impl_names(), impl); }

namespace {

/// "8x8 k=1, 16x16 k=4": the parameter sets of one RTL top.
std::string join_sizes(const std::vector<RtlAllocatorModel>& models) {
  std::string out;
  for (const auto& m : models)
    out += (out.empty() ? "" : ", ") + std::to_string(m.ports) + "x" + std::to_string(m.ports) + " k=" +
           std::to_string(m.iterations);
  return out;
}

#if FABRICSIM_RTL

/// Request or grant matrix of an N x N allocator: bit i*N + o is input i -> output o,
/// packed in 32-bit words, the layout of the RTL's req_i / gnt_o ports.
class BitMatrix {
 public:
  explicit BitMatrix(int n) : n_(n), words_((static_cast<std::size_t>(n) * n + 31) / 32, 0) {}
  int n() const { return n_; }
  void set(int i, int o) {
    const std::size_t b = static_cast<std::size_t>(i) * n_ + o;
    words_[b / 32] |= std::uint32_t{1} << (b % 32);
  }
  bool test(int i, int o) const {
    const std::size_t b = static_cast<std::size_t>(i) * n_ + o;
    return (words_[b / 32] >> (b % 32)) & 1U;
  }
  void reset() { std::fill(words_.begin(), words_.end(), 0); }
  /// Clears the bits past N*N in the last word (a port's unused high bits).
  void trim() {
    const std::size_t used = static_cast<std::size_t>(n_) * n_ % 32;
    if (used != 0) words_.back() &= (std::uint32_t{1} << used) - 1;
  }
  /// Takes a port's words; bits past N*N (a wider port) are dropped.
  void assign(const std::vector<std::uint32_t>& w) {
    const std::size_t n = words_.size();
    words_ = w;
    words_.resize(n, 0);
    trim();
  }
  const std::vector<std::uint32_t>& words() const { return words_; }
  std::vector<std::uint32_t>& words() { return words_; }
  bool operator==(const BitMatrix& o) const { return words_ == o.words_; }

  /// Set bits as connections, by input then output (bit order), into `out`.
  void connections(std::vector<hw::Grant>& out) const {
    out.clear();
    for (std::size_t w = 0; w < words_.size(); ++w)
      for (std::uint32_t bits = words_[w]; bits != 0; bits &= bits - 1) {
        const int b = static_cast<int>(w * 32) + __builtin_ctz(bits);
        out.push_back(hw::Grant{b / n_, b % n_});
      }
  }

 private:
  int n_;
  std::vector<std::uint32_t> words_;
};

/// "in0->{3,5} in2->{1}" (requests) for messages.
std::string describe_requests(const BitMatrix& req) {
  std::ostringstream s;
  bool any = false;
  for (int i = 0; i < req.n(); ++i) {
    bool first = true;
    for (int o = 0; o < req.n(); ++o) {
      if (!req.test(i, o)) continue;
      s << (first ? (any ? " in" : "in") + std::to_string(i) + "->{" : ",") << o;
      first = false;
      any = true;
    }
    if (!first) s << "}";
  }
  return any ? s.str() : "(none)";
}

/// "0->3 1->7" (grants) for messages.
std::string describe_grants(const std::vector<hw::Grant>& grants) {
  std::ostringstream s;
  for (std::size_t k = 0; k < grants.size(); ++k) s << (k ? " " : "") << grants[k].input << "->" << grants[k].output;
  return grants.empty() ? "(none)" : s.str();
}

/// The allocator kind's roles (rtl/kinds/allocator.cmake): input req, output gnt; sizes
/// ports, iterations.
constexpr int kReq = 0, kGnt = 0;

RtlAllocatorModel allocator_model(const RtlModelInfo& info) {
  return {info.name, info.top, info.twin, info.sizes.at(0), info.sizes.at(1), info.registration, info.test_only};
}

const RtlModel* find_model(std::string_view name, int ports, int iterations) {
  return find_rtl_model("allocator", name, {ports, iterations});
}

/// The RTL twin as a hw::SwitchAllocator: one call round (clear, add_request..., arbitrate,
/// update_state) is one transaction of the block (RtlTransactor).
class RtlAllocator final : public hw::SwitchAllocator {
 public:
  RtlAllocator(const SwitchAllocatorSpec& spec, const RtlModel& model, bool keep_window)
      : spec_(spec), n_(spec.shape.inputs), req_(n_), gnt_(n_), in_(1),
        rtl_((check_square(spec), model), 1, 1, {}, spec.core_clock, spec.waveform, hierarchy(spec), keep_window) {}

  void add_request(const hw::AllocRequest& r) override {
    if (r.input < 0 || r.input >= n_ || r.output < 0 || r.output >= n_)
      throw std::out_of_range("allocator request " + std::to_string(r.input) + " -> " + std::to_string(r.output) +
                              " outside " + std::to_string(n_) + " inputs x " + std::to_string(n_) + " outputs");
    req_.set(r.input, r.output);
  }

  const std::vector<hw::Grant>& arbitrate() override {
    check_legal(evaluate());
    return grants_;
  }

  void update_state() override {
    if (!open_) return;
    open_ = false;
    rtl_.commit();
  }

  void clear() override {
    req_.reset();
    grants_.clear();
  }

  std::string_view name() const override { return spec_.policy; }

  /// This round's matching as the block drives it (every set gnt bit, by input then
  /// output), not checked for legality; valid until the next evaluate() or clear().
  const std::vector<hw::Grant>& evaluate() {
    open_ = true;
    in_[kReq] = req_.words();
    rtl_.evaluate(in_, sim_now());
    gnt_.assign(rtl_.output(kGnt));
    gnt_.connections(grants_);
    return grants_;
  }

  const BitMatrix& requests() const { return req_; }
  /// The last evaluate()'s matching.
  const std::vector<hw::Grant>& grants() const { return grants_; }
  RtlRun& run() { return rtl_; }
  const RtlRun& run() const { return rtl_; }

  static std::string hierarchy(const SwitchAllocatorSpec& spec) {
    return spec.hierarchy.empty() ? spec.instance + ".allocator" : spec.hierarchy;
  }

  /// Lockstep: writes the rounds up to and including the current one (replayed on the
  /// lagging instance) next to the --trace waveforms, or in the temp folder; returns the file.
  std::string write_window() {
    std::string path;
    BitMatrix replayed(n_);
    replayed.assign(rtl_.write_window(path).output(kGnt));
    // The replay must reach the state the run had: else the waveform would show something else.
    if (!(replayed == gnt_)) {
      std::vector<hw::Grant> grants;
      replayed.connections(grants);
      throw std::runtime_error("replaying the window did not reproduce the mismatch (grants " +
                               describe_grants(grants) + "); the block's state depends on more "
                               "than reset and its inputs; " + path + " is not faithful");
    }
    return path;
  }

 private:
  static void check_square(const SwitchAllocatorSpec& spec) {
    if (spec.shape.inputs != spec.shape.outputs)
      throw std::invalid_argument(spec.instance + ": the RTL allocator is square, got " +
                                  std::to_string(spec.shape.inputs) + " inputs x " +
                                  std::to_string(spec.shape.outputs) + " outputs");
  }

  /// An RTL block driving two connections on one input or output, or one nobody asked
  /// for, would corrupt the switch: stop with the round that shows it.
  void check_legal(const std::vector<hw::Grant>& grants) const {
    std::vector<bool> in_used(n_, false), out_used(n_, false);
    for (const auto& g : grants) {
      const bool bad = in_used[g.input] || out_used[g.output] || !req_.test(g.input, g.output);
      in_used[g.input] = out_used[g.output] = true;
      if (!bad) continue;
      throw RtlAllocatorMismatch(spec_.instance + ": RTL allocator " + rtl_.model().name + " returned an illegal matching at " +
                                 describe_time(rtl_.round_time(), spec_.core_clock) + ", allocation round " +
                                 std::to_string(rtl_.rounds()) + "\n  requests:   " + describe_requests(req_) +
                                 "\n  RTL grants: " + describe_grants(grants) +
                                 "\n  (each grant must be requested, at most one per input and per output)");
    }
  }

  std::vector<hw::Grant> grants_;  // the last evaluate()'s matching
  SwitchAllocatorSpec spec_;
  int n_;
  BitMatrix req_, gnt_;
  std::vector<PortWords> in_;  // the input roles: req
  RtlRun rtl_;
  bool open_ = false;  // arbitrated, not yet committed
};

/// The hw core and the RTL twin on the same requests; grants compared every round, and
/// the state the registration exposes through debug ports after every committing edge.
class LockstepAllocator final : public hw::SwitchAllocator {
 public:
  LockstepAllocator(const SwitchAllocatorSpec& spec, const RtlModel& model)
      : spec_(spec), hierarchy_(RtlAllocator::hierarchy(spec)),
        core_(hw::make_allocator(model.info.twin, spec.shape)),
        rtl_(std::make_unique<RtlAllocator>(spec, model, true)) {
    if (!spec.compare_state || model.info.debug_state.empty()) return;
    core_->debug_state(core_state_);
    compared_ = match_debug_state(core_state_, model.info, spec.instance);
  }

  void add_request(const hw::AllocRequest& r) override {
    core_->add_request(r);
    rtl_->add_request(r);
  }

  const std::vector<hw::Grant>& arbitrate() override {
    const std::vector<hw::Grant>& core = core_->arbitrate();
    const std::vector<hw::Grant>& rtl = rtl_->evaluate();
    if (core != rtl) fail_grants(core, rtl);
    return core;
  }

  void update_state() override {
    core_->update_state();
    rtl_->update_state();
    if (!compared_.empty()) compare_state();
  }

  void clear() override {
    core_->clear();
    rtl_->clear();
  }

  std::string_view name() const override { return spec_.policy; }

  RtlAllocator& rtl() { return *rtl_; }

 private:
  /// The first element of the declared state where the RTL's debug port differs.
  void compare_state() {
    core_->debug_state(core_state_);
    for (std::size_t k = 0; k < compared_.size(); ++k) {
      const hw::StateVector& v = core_state_[compared_[k]];
      rtl_->run().debug(static_cast<int>(k), port_);
      for (std::size_t e = 0; e < v.values.size(); ++e) {
        const std::uint64_t rtl = element(port_, v.bits, static_cast<int>(e));
        if (rtl != v.values[e]) fail_state(k, v, e, rtl);
      }
    }
  }

  std::string header(const char* what) const {
    std::ostringstream s;
    const auto& m = rtl_->run().model();
    s << "lockstep " << what << " in " << hierarchy_ << " at " << describe_time(rtl_->run().round_time(), spec_.core_clock)
      << ", allocation round " << rtl_->run().rounds() << ": hw core '" << m.twin << "' and RTL " << m.name << " (top "
      << m.top << ", " << m.sizes.at(0) << "x" << m.sizes.at(0) << ", " << m.sizes.at(1) << " iteration"
      << (m.sizes.at(1) == 1 ? "" : "s") << ") disagree";
    return s.str();
  }

  [[noreturn]] void fail_state(std::size_t k, const hw::StateVector& v, std::size_t e, std::uint64_t rtl) {
    std::ostringstream s;
    s << header("state divergence") << " after the committing edge\n  state:          " << v.name << "[" << e
      << "]: hw core " << v.values[e] << ", RTL " << rtl << " (debug port " << rtl_debug_port(k) << ")"
      << "\n  requests:       " << describe_requests(rtl_->requests())
      << "\n  grants (equal): " << describe_grants(rtl_->grants());
    finish(s);
  }

  std::string rtl_debug_port(std::size_t k) const {
    const auto& ports = rtl_->run().model().debug_ports;
    return k < ports.size() ? ports[k] : rtl_->run().model().debug_state[k];
  }

  [[noreturn]] void fail_grants(const std::vector<hw::Grant>& core, const std::vector<hw::Grant>& rtl) {
    std::ostringstream s;
    s << header("mismatch") << "\n  requests:       " << describe_requests(rtl_->requests())
      << "\n  hw core grants: " << describe_grants(core) << "\n  RTL grants:     " << describe_grants(rtl);
    for (int i = 0; i < spec_.shape.inputs; ++i) {
      auto of = [i](const std::vector<hw::Grant>& g) {
        std::string out;
        for (const auto& x : g)
          if (x.input == i) out += (out.empty() ? "" : ",") + std::to_string(x.output);
        return out.empty() ? std::string("-") : out;
      };
      if (of(core) != of(rtl)) s << "\n  input " << i << ": hw core -> " << of(core) << ", RTL -> " << of(rtl);
    }
    finish(s);
  }

  [[noreturn]] void finish(std::ostringstream& s) {
    s << describe_waveforms(rtl_->run().window_rounds(), [this] { return rtl_->write_window(); },
                            [this] {
                              rtl_->run().close_trace();
                              return rtl_->run().trace_path();
                            });
    throw RtlAllocatorMismatch(s.str());
  }

  SwitchAllocatorSpec spec_;
  std::string hierarchy_;
  std::unique_ptr<hw::SwitchAllocator> core_;
  std::unique_ptr<RtlAllocator> rtl_;
  std::vector<std::size_t> compared_;     // per debug port: its vector in core_state_
  std::vector<hw::StateVector> core_state_;
  PortWords port_;
};

#endif  // FABRICSIM_RTL

}  // namespace

std::optional<RtlWaveformRecord> finish_waveform([[maybe_unused]] hw::SwitchAllocator& allocator) {
#if FABRICSIM_RTL
  if (auto* rtl = rtl_twin_of<RtlAllocator, LockstepAllocator>(allocator)) return rtl->run().finish_waveform();
#endif
  return std::nullopt;
}

std::vector<RtlAllocatorModel> rtl_allocator_models() {
  std::vector<RtlAllocatorModel> out;
#if FABRICSIM_RTL
  for (const auto& e : rtl_model_table("allocator")) out.push_back(allocator_model(e.info));
#endif
  return out;
}

void add_rtl_models(const std::vector<RtlModel>& models) {
  add_rtl_vl_arbiter_models(models);
  add_rtl_packet_fifo_models(models);
  add_rtl_models_of("allocator", models);
  add_rtl_models_of("arbiter", models);
}

RtlAllocatorProblem check_rtl_allocator(std::string_view policy, std::string_view variant, int ports,
                                        int iterations) {
  const auto models = rtl_allocator_models();
  if (models.empty()) return {"allocator_impl", "this build has no RTL twins; rebuild with -DFABRICSIM_RTL=ON"};
  std::vector<RtlAllocatorModel> of_variant;
  std::vector<std::string> tops;
  for (const auto& m : models) {
    if (m.name == variant) of_variant.push_back(m);
    const std::string name = m.name + (m.test_only ? " (test only)" : "");
    if (std::find(tops.begin(), tops.end(), name) == tops.end()) tops.push_back(name);
  }
  const std::string v(variant);
  if (of_variant.empty()) {
    std::string valid;
    for (const auto& t : tops) valid += (valid.empty() ? "" : ", ") + t;
    return {"rtl_variant", "no RTL allocator '" + v + "' in this build; valid: " + valid};
  }
  if (of_variant.front().policy != policy)
    return {"allocator", "the RTL twin " + v + " implements allocator '" + of_variant.front().policy + "', not '" +
                             std::string(policy) + "'; set switch.allocator: " + of_variant.front().policy +
                             " or switch.allocator_impl: tlm"};
  if (ports <= 0) return {};
  bool radix_built = false;
  for (const auto& m : of_variant) {
    if (m.ports == ports && m.iterations == iterations) return {};
    radix_built = radix_built || m.ports == ports;
  }
  return {radix_built ? "allocator_iterations" : "ports",
          "no RTL build of " + v + " for " + std::to_string(ports) + "x" + std::to_string(ports) + " ports with " +
              std::to_string(iterations) + " iteration" + (iterations == 1 ? "" : "s") +
              " (Verilator fixes parameters at build time); this build has: " + join_sizes(of_variant) +
              ". Add the size to SIZES in " + of_variant.front().registration + " (docs/cosim.md)"};
}

std::unique_ptr<hw::SwitchAllocator> make_switch_allocator(const SwitchAllocatorSpec& spec) {
  if (spec.impl == AllocatorImpl::tlm) return hw::make_allocator(spec.policy, spec.shape);
  const RtlAllocatorProblem p = check_rtl_allocator(spec.policy, spec.rtl_variant, spec.shape.inputs,
                                                    spec.shape.iterations);
  if (!p.what.empty())
    throw std::invalid_argument(spec.instance + ": switch.allocator_impl " + std::string(to_string(spec.impl)) +
                                ": switch." + p.key + ": " + p.what);
#if FABRICSIM_RTL
  const RtlModel& model = *find_model(spec.rtl_variant, spec.shape.inputs, spec.shape.iterations);
  if (spec.impl == AllocatorImpl::lockstep) return std::make_unique<LockstepAllocator>(spec, model);
  return std::make_unique<RtlAllocator>(spec, model, false);
#else
  return nullptr;  // unreachable: check_rtl_allocator reports the missing RTL build
#endif
}

}  // namespace fabricsim::tlm_fabric
