// Link credit manager implementations: the Verilated twin of rtl/credit_manager.sv, alone
// (rtl) or beside the hw core (lockstep). The credit_manager kind of transactor: the
// capacity, head_bytes, consume and restore roles as words; clock, reset, strobe and
// drawing are RtlTransactor's.
#include "tlm/rtl_credit_manager.h"

#include <algorithm>
#include <sstream>

#include "hw/credit.h"
#include "tlm/rtl_block.h"
#include "tlm/sim_time.h"

#if FABRICSIM_RTL
#include "tlm/rtl_transactor.h"
#endif

namespace fabricsim::tlm_fabric {
namespace {

/// The counter and packet-size widths of rtl/credit_manager.sv (CntW, BytesW defaults).
constexpr int kCntBits = 16, kBytesBits = 16;
constexpr std::uint64_t kCntMax = (std::uint64_t{1} << kCntBits) - 1;
constexpr std::uint64_t kBytesMax = (std::uint64_t{1} << kBytesBits) - 1;

RtlCreditManagerModel credit_model(const RtlModelInfo& info) {
  return {info.name, info.top, info.sizes.at(0), info.sizes.at(1), info.registration, info.test_only};
}

#if FABRICSIM_RTL

/// The credit_manager kind's roles (rtl/kinds/credit_manager.cmake).
enum Input { kCapacity, kHeadBytes, kConsumeVl, kConsumeBytes, kRestore, kRestoreVl, kRestoreBlocks, kInputs };
enum Output { kCanSend, kAvail, kUnderflow, kOverflow, kOutputs };

/// Sets `bits`-wide element `k` of a packed port to `v`.
void set_element(PortWords& w, int bits, int k, std::uint64_t v) {
  const std::size_t lo = static_cast<std::size_t>(k) * static_cast<std::size_t>(bits);
  for (int b = 0; b < bits; ++b) {
    const std::size_t at = lo + static_cast<std::size_t>(b);
    const std::uint32_t mask = std::uint32_t{1} << (at % 32);
    if ((v >> b) & 1U)
      w[at / 32] |= mask;
    else
      w[at / 32] &= ~mask;
  }
}

/// What a call asked of the block, for messages.
struct Call {
  enum Kind { query, consume, restore } kind = query;
  int vl = 0;
  std::uint64_t amount = 0;  // query: blocks; consume: bytes; restore: blocks
  std::string describe() const {
    switch (kind) {
      case query: return "can_send(VL " + std::to_string(vl) + ", " + std::to_string(amount) + " blocks)";
      case consume: return "consume(VL " + std::to_string(vl) + ", " + std::to_string(amount) + " bytes)";
      case restore: return "restore(VL " + std::to_string(vl) + ", " + std::to_string(amount) + " blocks)";
    }
    return "";
  }
};

/// The RTL twin: each consume (consume_i strobe) and each restore (restore_i) is one
/// rising edge; a can_send query drives head_bytes_i and reads can_send_o, and its round
/// ends with an idle edge (no strobe, state unchanged) when the next call starts.
class RtlCreditManager final : public CreditManagerBlock {
 public:
  RtlCreditManager(const CreditManagerSpec& spec, const RtlModel& model, bool keep_window)
      : spec_(spec), model_(model), in_(kInputs) {
    for (int k = 0; k < kInputs; ++k) in_[static_cast<std::size_t>(k)].assign(words_for(k), 0);
    for (int vl = 0; vl < spec.vls; ++vl) set_element(in_[kCapacity], kCntBits, vl, spec.capacity_blocks);
    const bool trace = spec.waveform.enabled() && spec.waveform.wants(spec.hierarchy, model.info.name);
    rtl_ = make_transactor(trace);
    rtl_->coverage_scope(spec.hierarchy);
    if (trace) trace_path_ = rtl_->trace_open((make_dir(spec.waveform.dir) / stem()).string(), spec.waveform);
    if (keep_window) window_ = std::make_unique<RtlReplayWindow>(make_transactor(true), kInputs);
  }

  bool can_send(int vl, std::uint64_t blocks) override {
    round({Call::query, vl, blocks});
    return bit(kCanSend, vl);
  }
  void consume(int vl, std::uint64_t bytes) override {
    round({Call::consume, vl, bytes});
    if (!consume_held()) refused("refused the consume (can_send_o low for the packet)");
    edge();
  }
  void restore(int vl, std::uint64_t blocks) override {
    round({Call::restore, vl, blocks});
    if (bit(kOverflow, 0)) refused("refused the restore (overflow_o)");
    edge();
  }

  /// Drives the call's inputs and evaluates (outputs before the edge).
  void round(const Call& c) {
    if (c.vl < 0 || c.vl >= spec_.vls)
      throw std::out_of_range(spec_.hierarchy + ": VL " + std::to_string(c.vl) + " of " + std::to_string(spec_.vls));
    if (c.kind == Call::query && c.amount * spec_.block_bytes > kBytesMax) {
      // Beyond the head_bytes_i field: no packet this large fits a counter either.
      c_ = c;
      return refused("cannot ask about a packet of " + std::to_string(c.amount) + " blocks (head_bytes_i is " +
                     std::to_string(kBytesBits) + " bits)");
    }
    if (c.kind == Call::consume && c.amount > kBytesMax)
      throw std::invalid_argument(spec_.hierarchy + ": a packet of " + std::to_string(c.amount) +
                                  " bytes exceeds the RTL credit manager's " + std::to_string(kBytesBits) +
                                  "-bit consume_bytes_i");
    c_ = c;
    std::fill(in_[kHeadBytes].begin(), in_[kHeadBytes].end(), 0);
    for (int k : {kConsumeVl, kConsumeBytes, kRestore, kRestoreVl, kRestoreBlocks})
      std::fill(in_[static_cast<std::size_t>(k)].begin(), in_[static_cast<std::size_t>(k)].end(), 0);
    switch (c.kind) {
      case Call::query: set_element(in_[kHeadBytes], kBytesBits, c.vl, c.amount * spec_.block_bytes); break;
      case Call::consume:
        // underflow_o follows the consume_i strobe, high only for the edge: the packet is
        // also asked about on head_bytes_i, so can_send_o is the RTL's own check before it.
        set_element(in_[kHeadBytes], kBytesBits, c.vl, c.amount);
        in_[kConsumeVl][0] = static_cast<std::uint32_t>(c.vl);
        in_[kConsumeBytes][0] = static_cast<std::uint32_t>(c.amount);
        break;
      case Call::restore:
        in_[kRestore][0] = 1;
        in_[kRestoreVl][0] = static_cast<std::uint32_t>(c.vl);
        in_[kRestoreBlocks][0] = static_cast<std::uint32_t>(c.amount);
        break;
    }
    at_ = sim_now();
    ++rounds_;
    edged_ = false;
    rtl_->evaluate(in_, to_ps(at_));
    if (window_) window_->push(in_, to_ps(at_));
  }
  /// The call's rising edge: consume_i strobes a consume; a restore's restore_i is an input.
  void edge() {
    ++edges_;
    edged_ = true;
    if (c_.kind == Call::consume) {
      if (window_) window_->commit_newest();
      rtl_->commit();
    } else {
      rtl_->close();
    }
  }

  bool bit(int output, int k) const { return (rtl_->output(output).at(0) >> k) & 1U; }
  /// In a consume round: the RTL holds the credits for the packet.
  bool consume_held() const { return bit(kCanSend, c_.vl); }
  std::uint64_t avail(int vl) const { return element(rtl_->output(kAvail), kCntBits, vl); }
  /// Blocks lent per VL after the last edge (the lent debug port).
  std::uint64_t lent(int vl) const {
    rtl_->debug(0, port_);
    return element(port_, kCntBits, vl);
  }

  /// "edge 12 (call 30, t = 1.5 ns)": the current call's edge (consumes and restores
  /// counted from 1), for messages.
  std::string where() const {
    std::ostringstream s;
    s << "edge " << edges_ + (edged_ ? 0 : 1) << " (call " << rounds_ << ", t = " << at_.to_seconds() * 1e9 << " ns)";
    return s.str();
  }
  const Call& call() const { return c_; }
  const RtlModelInfo& model() const { return model_.info; }
  const std::string& trace_path() const { return trace_path_; }
  std::size_t window_rounds() const { return window_ ? window_->size() : 0; }

  /// Lockstep: the calls up to this one replayed into a waveform; returns the file.
  std::string write_window() {
    const std::string path = mismatch_waveform_path(spec_.waveform.dir, stem());
    const RtlTransactor& replayed = window_->write(path.substr(0, path.size() - std::string_view(".fst").size()));
    if (replayed.output(kAvail) != rtl_->output(kAvail) || replayed.output(kCanSend) != rtl_->output(kCanSend))
      throw std::runtime_error("replaying the window did not reproduce the outputs; " + path + " is not faithful");
    return path;
  }
  /// Completes and closes the --trace waveform (idempotent); returns whether it stopped at
  /// its size limit.
  bool close_trace() {
    if (rtl_->trace_close()) limit_reached_ = true;
    return limit_reached_;
  }
  std::optional<RtlBlockName> rtl_block() const override { return RtlBlockName{spec_.hierarchy, model_.info.name}; }
  std::optional<RtlWaveformRecord> finish_waveform() override {
    if (trace_path_.empty()) return std::nullopt;
    const bool limit_reached = close_trace();
    return RtlWaveformRecord{spec_.hierarchy, trace_path_, limit_reached};
  }

 private:
  /// Waveform file names: <hierarchy name>.<model>, e.g. fabric.sw0.port3.credit_manager.credit_manager.
  std::string stem() const { return spec_.hierarchy + "." + model_.info.name; }
  std::size_t words_for(int input) const {
    const int bits = input == kCapacity ? spec_.vls * kCntBits : input == kHeadBytes ? spec_.vls * kBytesBits : 32;
    return static_cast<std::size_t>((bits + 31) / 32);
  }
  std::unique_ptr<RtlTransactor> make_transactor(bool traceable) const {
    return std::make_unique<RtlTransactor>(model_.make(traceable), model_.info.timing, kInputs, kOutputs, kPeriodPs);
  }
  [[noreturn]] void refused(const std::string& what) const {
    throw RtlCreditManagerMismatch(spec_.hierarchy + ": RTL credit manager " + model_.info.name + " " + what + " at " +
                                   where() + ": " + c_.describe() + ", available " +
                                   std::to_string(c_.vl < spec_.vls ? avail(c_.vl) : 0) + " blocks");
  }

  // Edges are event driven (the transmitter's sends and credit returns); calls at one
  // instant are drawn this far apart.
  static constexpr std::uint64_t kPeriodPs = 1000;

  CreditManagerSpec spec_;
  const RtlModel& model_;
  std::vector<PortWords> in_;
  std::unique_ptr<RtlTransactor> rtl_;
  std::unique_ptr<RtlReplayWindow> window_;
  std::string trace_path_;
  bool limit_reached_ = false;
  Call c_;
  sc_core::sc_time at_;
  std::uint64_t rounds_ = 0, edges_ = 0;
  bool edged_ = false;  // the current call's edge has been clocked
  mutable PortWords port_;
};

/// The hw core (one hw::CreditCounter per VL) and the RTL twin on the same calls: the
/// answers compared every call, the blocks lent (debug port) after every edge.
class LockstepCreditManager final : public CreditManagerBlock {
 public:
  LockstepCreditManager(const CreditManagerSpec& spec, const RtlModel& model)
      : spec_(spec), rtl_(spec, model, true) {
    if (model.info.debug_state != std::vector<std::string>{"lent"})
      throw std::invalid_argument(spec.hierarchy + ": RTL " + model.info.name + " (" + model.info.registration +
                                  ") must declare DEBUG lent=<port> (blocks lent per VL) for lockstep");
    for (int vl = 0; vl < spec.vls; ++vl) core_[static_cast<std::size_t>(vl)] = hw::CreditCounter(spec.block_bytes, spec.capacity_blocks);
  }

  bool can_send(int vl, std::uint64_t blocks) override {
    const bool core = blocks <= core_.at(static_cast<std::size_t>(vl)).available();
    const bool rtl = rtl_.can_send(vl, blocks);
    if (core != rtl) fail("can_send_o[" + std::to_string(vl) + "]", core, rtl);
    return core;
  }
  void consume(int vl, std::uint64_t bytes) override {
    hw::CreditCounter& c = core_.at(static_cast<std::size_t>(vl));
    rtl_.round({Call::consume, vl, bytes});
    const bool core = c.can_send(bytes);
    const bool rtl = rtl_.consume_held();
    if (core != rtl) fail("can_send_o[" + std::to_string(vl) + "] for the consumed packet", core, rtl);
    c.consume(bytes);  // throws as the counter does when the transmitter oversends
    rtl_.edge();
    compare_lent();
  }
  void restore(int vl, std::uint64_t blocks) override {
    hw::CreditCounter& c = core_.at(static_cast<std::size_t>(vl));
    rtl_.round({Call::restore, vl, blocks});
    const bool core = c.available() + blocks > c.capacity();
    const bool rtl = rtl_.bit(kOverflow, 0);
    if (core != rtl) fail("overflow_o", core, rtl);
    c.restore(blocks);
    rtl_.edge();
    compare_lent();
  }

  std::optional<RtlWaveformRecord> finish_waveform() override { return rtl_.finish_waveform(); }
  std::optional<RtlBlockName> rtl_block() const override { return rtl_.rtl_block(); }

 private:
  void compare_lent() {
    for (int vl = 0; vl < spec_.vls; ++vl) {
      const hw::CreditCounter& c = core_[static_cast<std::size_t>(vl)];
      const std::uint64_t core = c.capacity() - c.available(), rtl = rtl_.lent(vl);
      if (core != rtl)
        fail("lent[" + std::to_string(vl) + "] after the edge (debug port " + rtl_.model().debug_ports.at(0) + ")", core,
             rtl);
    }
  }

  [[noreturn]] void fail(const std::string& what, std::uint64_t core, std::uint64_t rtl) {
    std::ostringstream s;
    const auto& m = rtl_.model();
    s << "lockstep mismatch in " << spec_.hierarchy << " at " << rtl_.where() << ": hw core '" << m.twin
      << "' and RTL " << m.name << " (top " << m.top << ", " << m.sizes.at(0) << " VL" << (m.sizes.at(0) == 1 ? "" : "s")
      << ", " << m.sizes.at(1) << " B blocks) disagree\n  inputs:    " << rtl_.call().describe()
      << "\n  output:    " << what << ": hw core " << core << ", RTL " << rtl << "\n  available: hw core";
    for (int vl = 0; vl < spec_.vls; ++vl) s << " " << core_[static_cast<std::size_t>(vl)].available();
    s << ", RTL";
    for (int vl = 0; vl < spec_.vls; ++vl)
      s << " " << static_cast<long long>(spec_.capacity_blocks) - static_cast<long long>(rtl_.lent(vl));
    s << " blocks per VL (RTL: capacity - " << rtl_.model().debug_ports.at(0) << ")";
    try {
      const std::size_t rounds = rtl_.window_rounds();
      s << "\n  waveform of the " << rounds << " call" << (rounds == 1 ? "" : "s") << " up to the mismatch: "
        << rtl_.write_window();
    } catch (const std::exception& e) {
      s << "\n  (no mismatch waveform: " << e.what() << ")";
    }
    rtl_.close_trace();
    if (!rtl_.trace_path().empty()) s << "\n  full RTL waveform (--trace): " << rtl_.trace_path();
    throw RtlCreditManagerMismatch(s.str());
  }

  CreditManagerSpec spec_;
  RtlCreditManager rtl_;
  std::array<hw::CreditCounter, hw::kMaxDataVls> core_;
};

#endif  // FABRICSIM_RTL

}  // namespace

std::vector<RtlCreditManagerModel> rtl_credit_manager_models() {
  std::vector<RtlCreditManagerModel> out;
  for (const auto& e : rtl_model_table("credit_manager")) out.push_back(credit_model(e.info));
  return out;
}

void add_rtl_credit_manager_models(const std::vector<RtlModel>& models) {
  add_rtl_models_of("credit_manager", models);
}

RtlCreditManagerProblem check_rtl_credit_manager(std::string_view variant, int vls, std::uint32_t block_bytes) {
  const auto models = rtl_credit_manager_models();
  if (models.empty())
    return {"credit_manager_impl", "this build has no RTL twins; rebuild with -DFABRICSIM_RTL=ON"};
  std::vector<RtlCreditManagerModel> of_variant;
  std::string names;
  for (const auto& m : models) {
    if (m.name == variant) of_variant.push_back(m);
    const std::string name = m.name + (m.test_only ? " (test only)" : "");
    if (names.find(name) == std::string::npos) names += (names.empty() ? "" : ", ") + name;
  }
  const std::string v(variant);
  if (of_variant.empty())
    return {"credit_manager_rtl_variant", "no RTL credit manager '" + v + "' in this build; valid: " + names};
  std::string sizes;
  bool block_built = false;
  for (const auto& m : of_variant) {
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(m.vls) + " VL" + (m.vls == 1 ? "" : "s") + " of " +
             std::to_string(m.block_bytes) + " B blocks";
    block_built = block_built || m.block_bytes == static_cast<int>(block_bytes);
    if (m.block_bytes == static_cast<int>(block_bytes) && (vls <= 0 || m.vls == vls)) return {};
  }
  const std::string fix = " (Verilator fixes parameters at build time); this build has: " + sizes +
                          ". Add the size to SIZES in " + of_variant.front().registration + " (docs/cosim.md)";
  if (!block_built)
    return {"credit_block", "no RTL build of " + v + " for " + std::to_string(block_bytes) + " B credit blocks" + fix};
  return {"vls", "no RTL build of " + v + " for " + std::to_string(vls) + " VL" + (vls == 1 ? "" : "s") + fix};
}

std::unique_ptr<CreditManagerBlock> make_credit_manager(const CreditManagerSpec& spec) {
  if (spec.impl == AllocatorImpl::tlm) return nullptr;
  const auto p = check_rtl_credit_manager(spec.rtl_variant, spec.vls, spec.block_bytes);
  const std::string head = spec.hierarchy + ": link.credit_manager_impl " + std::string(to_string(spec.impl)) + ": ";
  if (!p.what.empty()) throw std::invalid_argument(head + (p.key == "vls" ? "" : "link.") + p.key + ": " + p.what);
  if (spec.capacity_blocks > kCntMax)
    throw std::invalid_argument(head + "a receive buffer of " + std::to_string(spec.capacity_blocks) +
                                " blocks per VL exceeds the RTL credit manager's " + std::to_string(kCntBits) +
                                "-bit counters (at most " + std::to_string(kCntMax) + ")");
#if FABRICSIM_RTL
  const RtlModel& model = *find_rtl_model("credit_manager", spec.rtl_variant, {spec.vls, static_cast<int>(spec.block_bytes)});
  if (spec.impl == AllocatorImpl::lockstep) return std::make_unique<LockstepCreditManager>(spec, model);
  return std::make_unique<RtlCreditManager>(spec, model, false);
#else
  return nullptr;  // unreachable: check_rtl_credit_manager reports the missing RTL build
#endif
}

}  // namespace fabricsim::tlm_fabric
