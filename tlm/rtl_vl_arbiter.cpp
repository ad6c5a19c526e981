// IB VL arbiter implementations: hw/ core, Verilated RTL twin, or both in lockstep. The
// vl_arbiter kind of transactor: head packet sizes in, the selection out, the tables on
// static configuration pins; clock, reset, commit and drawing are RtlTransactor's.
#include "tlm/rtl_vl_arbiter.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <systemc>

#include "tlm/rtl_block.h"
#include "tlm/sim_time.h"

#if FABRICSIM_RTL
#include "tlm/rtl_transactor.h"
#endif

namespace fabricsim::tlm_fabric {
namespace {

/// The kind's roles (rtl/kinds/vl_arbiter.cmake): input head_bytes, then the configuration
/// high_vl, high_weight, low_vl, low_weight, high_limit; outputs sel_valid, sel_vl.
constexpr int kInputs = 1, kOutputs = 2, kSelValid = 0, kSelVl = 1;
constexpr int kBytesBits = 16;  // vl_arbiter.sv BytesW: head_bytes_i bits per VL

std::deque<RtlModel>& model_table() { return rtl_model_table("vl_arbiter"); }

/// The models of kind vl_arbiter in this process's table.
std::vector<RtlModelInfo> vl_arbiter_models() {
  std::vector<RtlModelInfo> out;
  for (const auto& m : model_table()) out.push_back(m.info);
  return out;
}

#if FABRICSIM_RTL

/// The smallest build of `name` for `vls` VLs with at least `entries` table rows.
const RtlModel* find_model(std::string_view name, int vls, int entries) {
  const RtlModel* best = nullptr;
  for (const auto& e : model_table())
    if (e.info.name == name && e.info.sizes.at(0) == vls && e.info.sizes.at(1) >= entries &&
        (!best || e.info.sizes.at(1) < best->info.sizes.at(1)))
      best = &e;
  return best;
}

/// `values` as `bits`-wide fields, element 0 at bit 0, in 32-bit words.
PortWords pack(const std::vector<std::uint64_t>& values, int bits) {
  PortWords w((values.size() * static_cast<std::size_t>(bits) + 31) / 32, 0);
  for (std::size_t k = 0; k < values.size(); ++k) {
    const std::size_t lo = k * static_cast<std::size_t>(bits);
    w[lo / 32] |= static_cast<std::uint32_t>(values[k] << (lo % 32));
    if (lo % 32 + static_cast<std::size_t>(bits) > 32) w[lo / 32 + 1] |= static_cast<std::uint32_t>(values[k] >> (32 - lo % 32));
  }
  return w;
}

/// The tables padded with unused (weight 0) rows to `depth`, as the RTL holds them: the
/// C++ core walks them in the same order with the same weights, and its entry index then
/// follows the RTL's register (lockstep compares it).
hw::IbVlArbParams padded(hw::IbVlArbParams p, int depth) {
  p.high.resize(static_cast<std::size_t>(depth), hw::VlArbEntry{0, 0});
  p.low.resize(static_cast<std::size_t>(depth), hw::VlArbEntry{0, 0});
  return p;
}

/// "vl0 0, vl1 2048" (head packet sizes) for messages.
std::string describe_heads(const std::vector<std::uint32_t>& heads) {
  std::ostringstream s;
  for (std::size_t v = 0; v < heads.size(); ++v) s << (v ? ", " : "") << "vl" << v << " " << heads[v];
  return s.str();
}

std::string describe_vl(int vl) { return vl < 0 ? std::string("none") : "VL " + std::to_string(vl); }

/// The RTL twin as a hw::EgressScheduler: select() is one round of the block (the heads
/// driven, the selection read), update_state() its committing edge.
class RtlVlArbiter final : public hw::EgressScheduler {
 public:
  RtlVlArbiter(const VlArbiterSpec& spec, const RtlModel& model, bool keep_window)
      : spec_(spec), vls_(spec.params.vls), in_(kInputs),
        rtl_(model, kInputs, kOutputs, config_pins(padded(spec.params, model.info.sizes.at(1))), spec.core_clock,
             spec.waveform, spec.hierarchy, keep_window) {}

  int select(const std::vector<std::uint32_t>& head_bytes) const override {
    if (static_cast<int>(head_bytes.size()) != vls_)
      throw std::invalid_argument(spec_.hierarchy + ": head_bytes has " + std::to_string(head_bytes.size()) +
                                  " entries, expected " + std::to_string(vls_));
    heads_ = head_bytes;
    round(sim_now());
    return selected_;
  }

  void update_state(int c, std::uint32_t bytes) override {
    if (!open_ || c != selected_ || c < 0)
      throw std::logic_error(spec_.hierarchy + ": update_state(" + std::to_string(c) +
                             ") does not commit the last selection (" + describe_vl(selected_) + ")");
    // The RTL commits the selected VL's head_bytes_i. The packet sent may be another
    // head of that VL (input-queued switches): drive its size for the commit. Only
    // whether a VL's head_bytes is 0 decides, so the selection stays.
    if (heads_[static_cast<std::size_t>(c)] != bytes) {
      heads_[static_cast<std::size_t>(c)] = bytes;
      round(rtl_.round_time());
    }
    open_ = false;
    rtl_.commit();
  }

  int classes() const override { return vls_; }

  const std::vector<std::uint32_t>& heads() const { return heads_; }
  RtlRun& run() const { return rtl_; }

  /// Lockstep: writes the rounds up to and including the current one (replayed on the
  /// lagging instance) next to the --trace waveforms, or in the temp folder.
  std::string write_window() const {
    std::string path;
    const RtlTransactor& replayed = rtl_.write_window(path);
    if (selection(replayed.output(kSelValid), replayed.output(kSelVl)) != selected_)
      throw std::runtime_error("replaying the window did not reproduce the selection; the block's state depends on "
                               "more than reset and its inputs; " + path + " is not faithful");
    return path;
  }

 private:
  /// The configuration roles' words: tables as 4-bit VLs and 8-bit weights per row, the limit.
  static std::vector<PortWords> config_pins(const hw::IbVlArbParams& p) {
    auto column = [](const std::vector<hw::VlArbEntry>& t, bool weight) {
      std::vector<std::uint64_t> v;
      for (const auto& e : t) v.push_back(static_cast<std::uint64_t>(weight ? e.weight : e.vl));
      return v;
    };
    return {pack(column(p.high, false), 4), pack(column(p.high, true), 8), pack(column(p.low, false), 4),
            pack(column(p.low, true), 8), pack({static_cast<std::uint64_t>(p.high_limit)}, 8)};
  }

  static int selection(const PortWords& valid, const PortWords& vl) {
    return valid.at(0) & 1U ? static_cast<int>(vl.at(0)) : hw::kNoClass;
  }

  void round(const sc_core::sc_time& at) const {
    std::vector<std::uint64_t> v(heads_.begin(), heads_.end());
    for (std::size_t k = 0; k < v.size(); ++k)
      if (v[k] >> kBytesBits)
        throw std::invalid_argument(spec_.hierarchy + ": VL " + std::to_string(k) + " head packet of " +
                                    std::to_string(v[k]) + " bytes does not fit the RTL's " +
                                    std::to_string(kBytesBits) + "-bit head_bytes_i");
    in_[0] = pack(v, kBytesBits);
    open_ = true;
    rtl_.evaluate(in_, at);
    selected_ = selection(rtl_.output(kSelValid), rtl_.output(kSelVl));
    // The egress unit would send from a VL with nothing eligible: stop with the round.
    if (selected_ >= vls_ || (selected_ >= 0 && heads_[static_cast<std::size_t>(selected_)] == 0))
      throw RtlAllocatorMismatch(spec_.hierarchy + ": RTL VL arbiter " + rtl_.model().name + " selected VL " +
                                 std::to_string(selected_) + ", which has no eligible head, at " +
                                 describe_time(at, spec_.core_clock) + ", arbitration round " +
                                 std::to_string(rtl_.rounds()) + "\n  head bytes: " + describe_heads(heads_));
  }

  VlArbiterSpec spec_;
  int vls_;
  mutable std::vector<PortWords> in_;
  mutable std::vector<std::uint32_t> heads_;  // the last round's head_bytes
  mutable RtlRun rtl_;  // select() is const in the interface; the block clocks anyway
  mutable bool open_ = false;
  mutable int selected_ = hw::kNoClass;
};

/// The hw core and the RTL twin on the same heads; selections compared every round, the
/// state the registration exposes through debug ports after every commit.
class LockstepVlArbiter final : public hw::EgressScheduler {
 public:
  LockstepVlArbiter(const VlArbiterSpec& spec, const RtlModel& model)
      : spec_(spec), core_(hw::make_ib_vl_arbiter(padded(spec.params, model.info.sizes.at(1)))),
        rtl_(std::make_unique<RtlVlArbiter>(spec, model, true)) {
    if (!spec.compare_state) return;
    core_->debug_state(core_state_);
    compared_ = match_debug_state(core_state_, model.info, spec.hierarchy);
  }

  int select(const std::vector<std::uint32_t>& head_bytes) const override {
    const int core = core_->select(head_bytes);
    const int rtl = rtl_->select(head_bytes);
    if (core != rtl) {
      std::ostringstream s;
      s << header("mismatch") << "\n  head bytes: " << describe_heads(head_bytes)
        << "\n  hw core:    " << describe_vl(core) << "\n  RTL:        " << describe_vl(rtl);
      finish(s);
    }
    return core;
  }

  void update_state(int c, std::uint32_t bytes) override {
    core_->update_state(c, bytes);
    rtl_->update_state(c, bytes);
    if (compared_.empty()) return;
    core_->debug_state(core_state_);
    for (std::size_t k = 0; k < compared_.size(); ++k) {
      const hw::StateVector& v = core_state_[compared_[k]];
      rtl_->run().debug(static_cast<int>(k), port_);
      const std::uint64_t rtl = element(port_, v.bits, 0);
      if (rtl == v.values.at(0)) continue;
      std::ostringstream s;
      s << header("state divergence") << " after the committing edge\n  state:      " << v.name << ": hw core "
        << v.values[0] << ", RTL " << rtl << " (debug port " << rtl_->run().model().debug_ports.at(k) << ")"
        << "\n  head bytes: " << describe_heads(rtl_->heads()) << "\n  sent:       VL " << c << ", " << bytes
        << " bytes";
      finish(s);
    }
  }

  int classes() const override { return core_->classes(); }

  RtlVlArbiter& rtl() { return *rtl_; }
  const RtlVlArbiter& rtl() const { return *rtl_; }

 private:
  std::string header(const char* what) const {
    std::ostringstream s;
    const auto& m = rtl_->run().model();
    s << "lockstep " << what << " in " << spec_.hierarchy << " at " << describe_time(rtl_->run().round_time(), spec_.core_clock)
      << ", arbitration round " << rtl_->run().rounds() << ": hw core '" << m.twin << "' and RTL " << m.name << " (top "
      << m.top << ", " << m.sizes.at(0) << " VLs, " << m.sizes.at(1) << " table rows) disagree";
    return s.str();
  }

  [[noreturn]] void finish(std::ostringstream& s) const {
    s << describe_waveforms(rtl_->run().window_rounds(), [this] { return rtl_->write_window(); },
                            [this] {
                              rtl_->run().close_trace();
                              return rtl_->run().trace_path();
                            });
    throw RtlAllocatorMismatch(s.str());
  }

  VlArbiterSpec spec_;
  std::unique_ptr<hw::EgressScheduler> core_;
  std::unique_ptr<RtlVlArbiter> rtl_;
  std::vector<std::size_t> compared_;  // per debug port: its vector in core_state_
  std::vector<hw::StateVector> core_state_;
  PortWords port_;
};

#endif  // FABRICSIM_RTL

}  // namespace

std::optional<RtlWaveformRecord> finish_waveform([[maybe_unused]] hw::EgressScheduler& scheduler) {
#if FABRICSIM_RTL
  if (auto* rtl = rtl_twin_of<RtlVlArbiter, LockstepVlArbiter>(scheduler)) return rtl->run().finish_waveform();
#endif
  return std::nullopt;
}

std::optional<RtlBlockName> rtl_block([[maybe_unused]] const hw::EgressScheduler& scheduler) {
#if FABRICSIM_RTL
  if (const auto* rtl = rtl_twin_of<RtlVlArbiter, LockstepVlArbiter>(scheduler)) return rtl->run().name();
#endif
  return std::nullopt;
}

void add_rtl_vl_arbiter_models(const std::vector<RtlModel>& models) { add_rtl_models_of("vl_arbiter", models); }

RtlAllocatorProblem check_rtl_vl_arbiter(std::string_view variant, int vls, int entries) {
  const auto models = vl_arbiter_models();
  if (models.empty()) return {"vl_arbiter_impl", "this build has no RTL VL arbiters; rebuild with -DFABRICSIM_RTL=ON"};
  std::vector<std::string> names;
  std::string sizes;
  for (const auto& m : models) {
    const std::string name = m.name + (m.test_only ? " (test only)" : "");
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    if (m.name == variant)
      sizes += (sizes.empty() ? "" : ", ") + std::to_string(m.sizes.at(0)) + " VLs x " +
               std::to_string(m.sizes.at(1)) + " rows";
  }
  const std::string v(variant);
  if (sizes.empty()) {
    std::string valid;
    for (const auto& n : names) valid += (valid.empty() ? "" : ", ") + n;
    return {"vl_arbiter_rtl_variant", "no RTL VL arbiter '" + v + "' in this build; valid: " + valid};
  }
  if (vls <= 0) return {};
  for (const auto& m : models)
    if (m.name == variant && m.sizes.at(0) == vls && m.sizes.at(1) >= entries) return {};
  return {"vls", "no RTL build of " + v + " for " + std::to_string(vls) + " VLs with tables of " +
                     std::to_string(entries) + " entries (Verilator fixes parameters at build time); this build has: " +
                     sizes + ". Add the size to SIZES in " + models.front().registration + " (docs/cosim.md)"};
}

std::unique_ptr<hw::EgressScheduler> make_vl_arbiter(const VlArbiterSpec& spec) {
  if (spec.impl == AllocatorImpl::tlm) return hw::make_ib_vl_arbiter(spec.params);
  const int entries = static_cast<int>(std::max(spec.params.high.size(), spec.params.low.size()));
  const RtlAllocatorProblem p = check_rtl_vl_arbiter(spec.rtl_variant, spec.params.vls, entries);
  if (!p.what.empty())
    throw std::invalid_argument(spec.hierarchy + ": switch.vl_arbiter_impl " + std::string(to_string(spec.impl)) +
                                ": switch." + p.key + ": " + p.what);
#if FABRICSIM_RTL
  spec.params.validate();
  const RtlModel& model = *find_model(spec.rtl_variant, spec.params.vls, entries);
  if (spec.impl == AllocatorImpl::lockstep) return std::make_unique<LockstepVlArbiter>(spec, model);
  return std::make_unique<RtlVlArbiter>(spec, model, false);
#else
  return nullptr;  // unreachable: check_rtl_vl_arbiter reports the missing RTL build
#endif
}

}  // namespace fabricsim::tlm_fabric
