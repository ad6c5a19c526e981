// Packet FIFO implementations: the Verilated twin of rtl/packet_fifo.sv, alone (rtl) or
// beside the hw core (lockstep). The packet_fifo kind of transactor: one RtlRun round is
// one clock cycle (the write role's word driven, the outputs read, then the edge; the read
// is the commit, rd_ready_i), so a bulk write or a packet read is a burst of rounds.
// Between operations the block sits in an idle cycle whose outputs answer the queries.
#include "tlm/rtl_packet_fifo.h"

#include <algorithm>
#include <deque>
#include <sstream>
#include <stdexcept>

#include "tlm/rtl_block.h"

#if FABRICSIM_RTL
#include "tlm/clock.h"
#include "tlm/rtl_transactor.h"
#endif

namespace fabricsim::tlm_fabric {
namespace {

std::deque<RtlModel>& model_table() { return rtl_model_table("packet_fifo"); }

#if FABRICSIM_RTL

/// The packet_fifo kind's roles (rtl/kinds/packet_fifo.cmake): inputs wr_valid, wr_data,
/// wr_last, then the configuration saf; outputs wr_ready, rd_valid, rd_data, rd_last,
/// words, packets.
enum Input { kWrValid, kWrData, kWrLast, kInputs };
enum Output { kWrReady, kRdValid, kRdData, kRdLast, kWords, kPackets, kOutputs };

/// Cycles a lockstep mismatch waveform shows: a few packets of buffer cells.
constexpr std::size_t kWindowCycles = 256;

const char* describe_mode(hw::FifoMode m) {
  return m == hw::FifoMode::kStoreAndForward ? "store-and-forward" : "cut-through";
}

/// The RTL twin as a PacketFifoBlock: every operation is a burst of clock cycles, each one
/// RtlRun round, followed by an idle cycle that holds the outputs the queries read.
class RtlPacketFifo : public PacketFifoBlock {
 public:
  RtlPacketFifo(const PacketFifoSpec& spec, const RtlModel& model, bool keep_window)
      : spec_(spec), clock_(spec.core_clock), in_(kInputs),
        rtl_(model, kInputs, kOutputs, {PortWords{spec.mode == hw::FifoMode::kStoreAndForward ? 1U : 0U}},
             spec.core_clock, spec.waveform, spec.hierarchy, keep_window, kWindowCycles) {
    in_[kWrValid] = {0};
    in_[kWrData] = {0, 0};
    in_[kWrLast] = {0};
    cycle(Op::idle, {}, sc_core::SC_ZERO_TIME);
  }

  bool can_push(std::size_t n) const override {
    const std::size_t held = rtl_words();
    return held <= spec_.depth_words && spec_.depth_words - held >= n;
  }
  void push_words(std::size_t n, std::uint64_t data, bool last, const sc_core::sc_time& at) override {
    count_ = n;
    for (index_ = 0; index_ < n; ++index_) {
      cycle(Op::write, {data, last && index_ + 1 == n}, at + clock_.cycles(index_));
      if (!bit(kWrReady)) refused("refused a write (wr_ready low)");
    }
    if (n > 0) cycle(Op::idle, {}, at + clock_.cycles(n));
  }
  bool can_pop() const override { return bit(kRdValid); }
  hw::FifoWord front() const override {
    if (!can_pop()) throw std::logic_error(spec_.hierarchy + ": packet FIFO head word may not leave (rd_valid low)");
    return rtl_head();
  }
  std::size_t pop_packet(const sc_core::sc_time& at) override {
    if (packets() == 0) throw std::logic_error(spec_.hierarchy + ": packet FIFO holds no complete packet to read");
    count_ = 0;
    for (index_ = 0;; ++index_) {
      cycle(Op::read, {}, at + clock_.cycles(index_));
      if (!bit(kRdValid)) refused("cannot read the head packet (rd_valid low)");
      const bool last = bit(kRdLast);
      rtl_.commit();
      if (last) break;
      if (index_ >= spec_.depth_words) refused("never flagged the head packet's last word (rd_last)");
    }
    const std::size_t n = index_ + 1;
    cycle(Op::idle, {}, at + clock_.cycles(n));
    return n;
  }
  std::size_t words() const override { return rtl_words(); }
  std::size_t packets() const override { return rtl_packets(); }

  std::optional<RtlWaveformRecord> finish_waveform() override { return rtl_.finish_waveform(); }
  RtlBlockName rtl_block() const override { return rtl_.name(); }

 protected:
  /// What a cycle does at its edge.
  enum class Op { idle, write, read };

  /// Lockstep's hook: this cycle's outputs are read, its edge not yet clocked.
  virtual void on_cycle(Op, const hw::FifoWord&) {}

  bool bit(int output) const { return rtl_.output(output).at(0) & 1U; }
  std::size_t rtl_words() const { return rtl_.output(kWords).at(0); }
  std::size_t rtl_packets() const { return rtl_.output(kPackets).at(0); }
  const RtlModelInfo& model() const { return rtl_.model(); }
  hw::FifoWord rtl_head() const {
    const PortWords& d = rtl_.output(kRdData);
    return {d.at(0) | (std::uint64_t{d.at(1)} << 32), bit(kRdLast)};
  }

  /// "core-clock cycle 665 (t = 443.333 ns), FIFO cycle 12": the current cycle, for messages.
  std::string where() const {
    return describe_time(rtl_.round_time(), spec_.core_clock) + ", FIFO cycle " + std::to_string(rtl_.rounds());
  }
  /// The current cycle's operation, for messages.
  std::string describe_cycle() const {
    std::ostringstream s;
    switch (op_) {
      case Op::idle: s << "idle (after the operation)"; break;
      case Op::write:
        s << "write word " << index_ + 1 << " of " << count_ << " (data " << word_.data << (word_.last ? ", last" : "")
          << ")";
        break;
      case Op::read: s << "read word " << index_ + 1 << " of the head packet"; break;
    }
    return s.str();
  }
  /// "17 words, 1 packet, head 1234 (last), readable": the RTL's outputs this cycle.
  std::string describe_rtl() const {
    const hw::FifoWord h = rtl_head();
    std::ostringstream s;
    s << rtl_words() << " words, " << rtl_packets() << " packets, head " << h.data << (h.last ? " (last)" : "")
      << (bit(kRdValid) ? ", readable" : ", not readable") << (bit(kWrReady) ? "" : ", full");
    return s.str();
  }
  std::string describe_model() const {
    const RtlModelInfo& m = rtl_.model();
    return "RTL " + m.name + " (top " + m.top + ", " + std::to_string(m.sizes.at(0)) + " words, " +
           describe_mode(spec_.mode) + ")";
  }

  /// Lockstep: writes the cycles up to and including the current one (replayed on the
  /// lagging instance) next to the --trace waveforms, or in the temp folder.
  std::string write_window() {
    std::string path;
    const RtlTransactor& replayed = rtl_.write_window(path);
    for (int k = 0; k < kOutputs; ++k)
      if (replayed.output(k) != rtl_.output(k))
        throw std::runtime_error("replaying the window did not reproduce the outputs; the block's state depends on "
                                 "more than reset and its inputs; " + path + " is not faithful");
    return path;
  }
  std::string waveforms() {
    return describe_waveforms(rtl_.window_rounds(), [this] { return write_window(); },
                              [this] {
                                rtl_.close_trace();
                                return rtl_.trace_path();
                              });
  }

  PacketFifoSpec spec_;

 private:
  void cycle(Op op, const hw::FifoWord& w, const sc_core::sc_time& t) {
    op_ = op;
    word_ = w;
    const bool write = op == Op::write;
    in_[kWrValid][0] = write;
    in_[kWrData][0] = static_cast<std::uint32_t>(write ? w.data : 0);
    in_[kWrData][1] = static_cast<std::uint32_t>(write ? w.data >> 32 : 0);
    in_[kWrLast][0] = write && w.last;
    rtl_.evaluate(in_, t);
    on_cycle(op, w);
  }

  /// The block refused what the switch asked after checking that it may: stop there.
  [[noreturn]] void refused(const std::string& what) {
    std::ostringstream s;
    s << spec_.hierarchy << ": " << describe_model() << " " << what << " at " << where() << "\n  cycle:  "
      << describe_cycle() << "\n  RTL:    " << describe_rtl();
    if (rtl_.window_rounds() > 0) s << waveforms();
    throw RtlAllocatorMismatch(s.str());
  }

  ClockDomain clock_;
  std::vector<PortWords> in_;
  RtlRun rtl_;
  Op op_ = Op::idle;
  hw::FifoWord word_;
  std::size_t index_ = 0, count_ = 0;  // the burst's cycle and length (messages)
};

/// The hw core and the RTL twin on the same words: every cycle's outputs (words, packets,
/// room, whether the head may leave, the head word) compared with the core's state before
/// the edge, the core stepped word by word with the RTL. The answers are the core's.
class LockstepPacketFifo final : public RtlPacketFifo {
 public:
  LockstepPacketFifo(const PacketFifoSpec& spec, const RtlModel& model)
      : RtlPacketFifo(spec, model, true), core_({spec.depth_words, spec.mode}) {
    compare();  // after reset
  }

  bool can_push(std::size_t n) const override { return core_.can_push(n); }
  bool can_pop() const override { return core_.can_pop(); }
  hw::FifoWord front() const override { return core_.front(); }
  std::size_t words() const override { return core_.words(); }
  std::size_t packets() const override { return core_.packets(); }

 private:
  void on_cycle(Op op, const hw::FifoWord& w) override {
    compare();
    if (op == Op::write && core_.can_push()) core_.push(w);
    if (op == Op::read && core_.can_pop()) core_.pop();
  }

  void compare() {
    check("words", core_.words(), rtl_words());
    check("packets", core_.packets(), rtl_packets());
    check("wr_ready (room for a word)", core_.can_push(), bit(kWrReady));
    check("rd_valid (the head word may leave)", core_.can_pop(), bit(kRdValid));
    if (!core_.can_pop()) return;
    const hw::FifoWord head = core_.front(), rtl = rtl_head();
    check("rd_data (the head word)", head.data, rtl.data);
    check("rd_last (the head word ends its packet)", head.last, rtl.last);
  }

  void check(const char* output, std::uint64_t core, std::uint64_t rtl) {
    if (core != rtl) fail(output, core, rtl);
  }

  [[noreturn]] void fail(const char* output, std::uint64_t core, std::uint64_t rtl) {
    std::ostringstream s;
    s << "lockstep mismatch in " << spec_.hierarchy << " at " << where() << ": hw core '" << model().twin
      << "' and " << describe_model() << " disagree\n  cycle:     " << describe_cycle() << "\n  output:    " << output
      << ": hw core " << core << ", RTL " << rtl << "\n  hw core:   " << core_.words() << " words, " << core_.packets()
      << " packets";
    if (core_.can_pop()) s << ", head " << core_.front().data << (core_.front().last ? " (last)" : "") << ", readable";
    s << "\n  RTL:       " << describe_rtl() << waveforms();
    throw RtlAllocatorMismatch(s.str());
  }

  hw::PacketFifo core_;
};

#endif  // FABRICSIM_RTL

}  // namespace

void add_rtl_packet_fifo_models(const std::vector<RtlModel>& models) { add_rtl_models_of("packet_fifo", models); }

RtlAllocatorProblem check_rtl_packet_fifo(std::string_view variant, std::uint64_t depth) {
  const auto& models = model_table();
  if (models.empty()) return {"input_fifo_impl", "this build has no RTL twins; rebuild with -DFABRICSIM_RTL=ON"};
  std::string names, sizes, registration;
  bool built = false;
  for (const auto& e : models) {
    const RtlModelInfo& m = e.info;
    const std::string name = m.name + (m.test_only ? " (test only)" : "");
    if (names.find(name) == std::string::npos) names += (names.empty() ? "" : ", ") + name;
    if (m.name != variant) continue;
    registration = m.registration;
    sizes += (sizes.empty() ? "" : ", ") + std::to_string(m.sizes.at(0));
    built = built || static_cast<std::uint64_t>(m.sizes.at(0)) == depth;
  }
  const std::string v(variant);
  if (registration.empty())
    return {"input_fifo_rtl_variant", "no RTL packet FIFO '" + v + "' in this build; valid: " + names};
  if (depth == 0 || built) return {};
  return {"input_buffer", "no RTL build of " + v + " " + std::to_string(depth) +
                              " words deep (Verilator fixes parameters at build time); this build has: " + sizes +
                              " words. Add the depth to SIZES in " + registration + " (docs/cosim.md)"};
}

std::unique_ptr<PacketFifoBlock> make_packet_fifo(const PacketFifoSpec& spec) {
  if (spec.impl == AllocatorImpl::tlm) return nullptr;
  const RtlAllocatorProblem p = check_rtl_packet_fifo(spec.rtl_variant, spec.depth_words);
  if (!p.what.empty())
    throw std::invalid_argument(spec.hierarchy + ": switch.input_fifo_impl " + std::string(to_string(spec.impl)) +
                                ": switch." + p.key + ": " + p.what);
#if FABRICSIM_RTL
  const RtlModel& model = *find_rtl_model("packet_fifo", spec.rtl_variant, {static_cast<int>(spec.depth_words)});
  if (spec.impl == AllocatorImpl::lockstep) return std::make_unique<LockstepPacketFifo>(spec, model);
  return std::make_unique<RtlPacketFifo>(spec, model, false);
#else
  return nullptr;  // unreachable: check_rtl_packet_fifo reports the missing RTL build
#endif
}

}  // namespace fabricsim::tlm_fabric
