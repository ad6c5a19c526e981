// RTL twins against their hw/ cores on the shared vectors (testbench/vectors/*.json):
// per cycle the hw core (testbench/vectors/ref_models.h) must reproduce the file's
// expected outputs and the RTL the hw core's; the first mismatch stops the file and is
// reported with its cycle, inputs and the three outputs. The models are built with their
// SystemVerilog assertions (--assert): a failing one stops the run and fails the test with
// its name and message. The real RTL with an injected fault (rtl/README.md) must be
// caught: iSLIP moving its pointers on every iteration by the comparison, an arbiter
// granting two requesters by its assertions. Per-cycle protocol in rtl/README.md;
// each test runs in a forked child (SystemC elaborates once per process);
// FABRICSIM_RTL_TRACE=<dir> writes an FST waveform per test, and in a coverage build
// (scripts/rtl_coverage.sh) FABRICSIM_RTL_COVERAGE=<dir> a coverage file per test.
#include <gtest/gtest.h>

#include "sim/child_run.h"
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>
#include <verilated.h>
#include <verilated_fst_sc.h>
#if VM_COVERAGE
#include <verilated_cov.h>
#endif

#include "Vcredit_manager_v4.h"
#include "Vislip_allocator_broken_n4_k3.h"
#include "Vislip_allocator_n4_k1.h"
#include "Vislip_allocator_n4_k3.h"
#include "Vislip_allocator_n8_k1.h"
#include "Vislip_allocator_n8_k3.h"
#include "Vpacket_fifo_d6.h"
#include "Vrr_arbiter_broken_n4.h"
#include "Vrr_arbiter_n4.h"
#include "Vrr_arbiter_n5.h"
#include "Vvl_arbiter_v8_t16.h"
#include "testbench/vectors/ref_models.h"

namespace {

using fabricsim::vectors::json;
namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// Pins: bit vectors <-> the C++ types Verilator gives ports (bool, uint32_t, uint64_t, sc_bv<W>).

using Bits = std::vector<bool>;

template <typename T>
struct Pins;
template <>
struct Pins<bool> {
  static bool pack(const Bits& b) { return !b.empty() && b[0]; }
  static Bits unpack(bool v, int width) { Bits b(width, false); if (width > 0) b[0] = v; return b; }
};
template <typename U>
struct IntPins {
  static U pack(const Bits& b) {
    U v = 0;
    for (std::size_t i = 0; i < b.size(); ++i)
      if (b[i]) v |= U{1} << i;
    return v;
  }
  static Bits unpack(U v, int width) {
    Bits b(width);
    for (int i = 0; i < width; ++i) b[i] = (v >> i) & 1U;
    return b;
  }
};
template <>
struct Pins<std::uint32_t> : IntPins<std::uint32_t> {};
template <>
struct Pins<std::uint64_t> : IntPins<std::uint64_t> {};
template <int W>
struct Pins<sc_dt::sc_bv<W>> {
  static sc_dt::sc_bv<W> pack(const Bits& b) {
    sc_dt::sc_bv<W> v;
    for (int i = 0; i < W; ++i) v.set_bit(i, i < static_cast<int>(b.size()) && b[i] ? sc_dt::Log_1 : sc_dt::Log_0);
    return v;
  }
  static Bits unpack(const sc_dt::sc_bv<W>& v, int width) {
    Bits b(width);
    for (int i = 0; i < width; ++i) b[i] = v.get_bit(i) == sc_dt::Log_1;
    return b;
  }
};

/// Value type of a Verilated port member (ports are references to sc_in<T>/sc_out<T>).
template <typename Port>
using PortValue = typename std::remove_reference_t<Port>::data_type;

/// A signal bound to a port, written and read as bits.
template <typename T>
class Wire {
 public:
  explicit Wire(int width) : width_(width) {}
  sc_core::sc_signal<T>& sig() { return sig_; }
  void put(const Bits& b) { sig_.write(Pins<T>::pack(b)); }
  Bits get() const { return Pins<T>::unpack(sig_.read(), width_); }

 private:
  int width_;
  sc_core::sc_signal<T> sig_;
};
#define FABRICSIM_WIRE(Model, port) Wire<PortValue<decltype(std::declval<Model&>().port)>>

/// Bits of `count` fields of `width` bits, field f at bits f*width.. (a packed SystemVerilog array).
Bits fields(const std::vector<std::uint64_t>& values, int width, int count) {
  Bits b(static_cast<std::size_t>(width) * count, false);
  for (int f = 0; f < count && f < static_cast<int>(values.size()); ++f)
    for (int i = 0; i < width; ++i) b[f * width + i] = (values[f] >> i) & 1U;
  return b;
}
std::vector<std::uint64_t> unfields(const Bits& b, int width, int count) {
  std::vector<std::uint64_t> v(count, 0);
  for (int f = 0; f < count; ++f)
    for (int i = 0; i < width; ++i)
      if (b[f * width + i]) v[f] |= std::uint64_t{1} << i;
  return v;
}
Bits scalar(std::uint64_t value, int width) { return fields({value}, width, 1); }
std::uint64_t value(const Bits& b) { return unfields(b, static_cast<int>(b.size()), 1)[0]; }
int index_width(int n) {
  int w = 1;
  while ((1 << w) < n) ++w;
  return w;
}

// ---------------------------------------------------------------------------------------------
// Clock and reset, driven by hand: one cycle = settle with clock low, sample, rising edge.

class Clock {
 public:
  sc_core::sc_signal<bool> clk{"clk", false};
  sc_core::sc_signal<bool> rst_n{"rst_n", true};
  void settle() { sc_core::sc_start(1, sc_core::SC_NS); }
  void edge() {
    clk.write(true);
    sc_core::sc_start(1, sc_core::SC_NS);
    clk.write(false);
  }
  /// Asynchronous reset pulse (a falling edge on rst_n).
  void reset() {
    rst_n.write(false);
    settle();
    rst_n.write(true);
    settle();
  }
};

/// One Verilated block with pins mapped to the JSON "in"/"out" of its vector files.
class Harness {
 public:
  virtual ~Harness() = default;
  /// The file's params fit this model's Verilated parameters.
  virtual bool fits(const json& params) const = 0;
  /// Drives the configuration ports from the file's params (held for the whole file).
  virtual void configure(const json& /*params*/) {}
  /// Drives one cycle's inputs.
  virtual void apply(const json& in) = 0;
  /// Samples the outputs in the vector file's "out" layout.
  virtual json read() const = 0;
  /// Adds the Verilated model's signals to a waveform.
  virtual void trace(VerilatedFstSc* tfp) = 0;
};

template <typename M>
class HarnessOf : public Harness {
 public:
  explicit HarnessOf(Clock& c) : m_("dut") {
    m_.clk_i(c.clk);
    m_.rst_ni(c.rst_n);
  }
  void trace(VerilatedFstSc* tfp) override { m_.trace(tfp, 99); }

 protected:
  M m_;
};

// rr_arbiter --------------------------------------------------------------------------------
template <typename M>
class RrArbiterHarness final : public HarnessOf<M> {
 public:
  RrArbiterHarness(Clock& c, int n) : HarnessOf<M>(c), n_(n), w_(index_width(n)), req_(n), update_(1),
                                      gnt_(n), idx_(w_), valid_(1), ptr_(w_) {
    this->m_.req_i(req_.sig());
    this->m_.update_i(update_.sig());
    this->m_.gnt_o(gnt_.sig());
    this->m_.gnt_idx_o(idx_.sig());
    this->m_.gnt_valid_o(valid_.sig());
    this->m_.ptr_o(ptr_.sig());
  }
  bool fits(const json& p) const override { return p.at("requesters") == n_; }
  void apply(const json& in) override {
    Bits req(n_, false);
    for (int r : in.at("req")) req.at(r) = true;
    req_.put(req);
    update_.put({in.at("update").get<bool>()});
  }
  json read() const override {
    const bool valid = valid_.get()[0];
    const int idx = static_cast<int>(value(idx_.get()));
    json out{{"grant", valid ? idx : -1}, {"pointer", value(ptr_.get())}};
    // The one-hot grant must agree with the index form.
    const Bits onehot = gnt_.get();
    for (int r = 0; r < n_; ++r)
      if (onehot[r] != (valid && r == idx)) out["gnt_o_disagrees_with_gnt_idx_o"] = true;
    return out;
  }

 private:
  int n_, w_;
  FABRICSIM_WIRE(M, req_i) req_;
  FABRICSIM_WIRE(M, update_i) update_;
  FABRICSIM_WIRE(M, gnt_o) gnt_;
  FABRICSIM_WIRE(M, gnt_idx_o) idx_;
  FABRICSIM_WIRE(M, gnt_valid_o) valid_;
  FABRICSIM_WIRE(M, ptr_o) ptr_;
};

// islip_allocator ---------------------------------------------------------------------------
template <typename M>
class IslipHarness final : public HarnessOf<M> {
 public:
  IslipHarness(Clock& c, int n, int k)
      : HarnessOf<M>(c), n_(n), k_(k), w_(index_width(n)), req_(n * n), update_(1), gnt_(n * n),
        valid_(n), out_(n * w_), gptr_(n * w_), aptr_(n * w_) {
    this->m_.req_i(req_.sig());
    this->m_.update_i(update_.sig());
    this->m_.gnt_o(gnt_.sig());
    this->m_.gnt_valid_o(valid_.sig());
    this->m_.gnt_out_o(out_.sig());
    this->m_.dbg_gptr_o(gptr_.sig());  // the pointer state is lockstep's (test_rtl_cosim)
    this->m_.dbg_aptr_o(aptr_.sig());
  }
  bool fits(const json& p) const override {
    return p.at("inputs") == n_ && p.at("outputs") == n_ && p.at("iterations") == k_;
  }
  void apply(const json& in) override {
    Bits req(n_ * n_, false);
    const json& r = in.at("req");
    for (int i = 0; i < n_; ++i)
      for (int o : r.at(i)) req.at(i * n_ + o) = true;
    req_.put(req);
    update_.put({in.at("update").get<bool>()});
  }
  json read() const override {
    const Bits gnt = gnt_.get();
    const Bits valid = valid_.get();
    const auto outs = unfields(out_.get(), w_, n_);
    std::vector<int> grant(n_, -1);
    json out;
    for (int i = 0; i < n_; ++i) {
      int ones = 0;
      for (int o = 0; o < n_; ++o)
        if (gnt[i * n_ + o]) {
          grant[i] = o;
          ++ones;
        }
      // The matrix, the per-input valid and the index form must agree.
      if (ones > 1 || valid[i] != (ones == 1) || (ones == 1 && static_cast<int>(outs[i]) != grant[i]))
        out["gnt_o_disagrees_with_gnt_valid_o_gnt_out_o"] = true;
    }
    out["grant"] = grant;
    return out;
  }

 private:
  int n_, k_, w_;
  FABRICSIM_WIRE(M, req_i) req_;
  FABRICSIM_WIRE(M, update_i) update_;
  FABRICSIM_WIRE(M, gnt_o) gnt_;
  FABRICSIM_WIRE(M, gnt_valid_o) valid_;
  FABRICSIM_WIRE(M, gnt_out_o) out_;
  FABRICSIM_WIRE(M, dbg_gptr_o) gptr_;
  FABRICSIM_WIRE(M, dbg_aptr_o) aptr_;
};

// credit_manager (NumVls = 4, BlockBytes = 64, CntW = 16, BytesW = 16) ------------------------
template <typename M>
class CreditHarness final : public HarnessOf<M> {
 public:
  static constexpr int kVls = 4, kCntW = 16, kBytesW = 16, kVlW = 2;
  explicit CreditHarness(Clock& c)
      : HarnessOf<M>(c), cap_(kVls * kCntW), heads_(kVls * kBytesW), can_send_(kVls), consume_(1),
        consume_vl_(kVlW), consume_bytes_(kBytesW), restore_(1), restore_vl_(kVlW),
        restore_blocks_(kCntW), avail_(kVls * kCntW), underflow_(1), overflow_(1), used_(kVls * kCntW) {
    this->m_.cfg_capacity_i(cap_.sig());
    this->m_.head_bytes_i(heads_.sig());
    this->m_.can_send_o(can_send_.sig());
    this->m_.consume_i(consume_.sig());
    this->m_.consume_vl_i(consume_vl_.sig());
    this->m_.consume_bytes_i(consume_bytes_.sig());
    this->m_.restore_i(restore_.sig());
    this->m_.restore_vl_i(restore_vl_.sig());
    this->m_.restore_blocks_i(restore_blocks_.sig());
    this->m_.avail_o(avail_.sig());
    this->m_.underflow_o(underflow_.sig());
    this->m_.overflow_o(overflow_.sig());
    this->m_.dbg_used_o(used_.sig());  // co-simulation debug port (lent blocks), not a vector field
  }
  bool fits(const json& p) const override {
    return p.at("block_bytes") == 64 && p.at("vls").get<int>() <= kVls && p.at("vls") == p.at("capacity_blocks").size();
  }
  void configure(const json& p) override {
    vls_ = p.at("vls").get<int>();
    cap_.put(fields(p.at("capacity_blocks").get<std::vector<std::uint64_t>>(), kCntW, kVls));
  }
  void apply(const json& in) override {
    heads_.put(fields(in.at("head_bytes").get<std::vector<std::uint64_t>>(), kBytesW, kVls));
    const bool consume = in.contains("consume");
    consume_.put({consume});
    consume_vl_.put(scalar(consume ? in["consume"].at("vl").get<std::uint64_t>() : 0, kVlW));
    consume_bytes_.put(scalar(consume ? in["consume"].at("bytes").get<std::uint64_t>() : 0, kBytesW));
    const bool restore = in.contains("restore");
    restore_.put({restore});
    restore_vl_.put(scalar(restore ? in["restore"].at("vl").get<std::uint64_t>() : 0, kVlW));
    restore_blocks_.put(scalar(restore ? in["restore"].at("blocks").get<std::uint64_t>() : 0, kCntW));
  }
  json read() const override {
    const Bits can = can_send_.get();
    const auto avail = unfields(avail_.get(), kCntW, kVls);
    json out;
    for (int v = 0; v < vls_; ++v) {
      out["can_send"].push_back(static_cast<bool>(can[v]));
      out["available"].push_back(avail[v]);
    }
    out["underflow"] = static_cast<bool>(underflow_.get()[0]);
    out["overflow"] = static_cast<bool>(overflow_.get()[0]);
    return out;
  }

 private:
  int vls_ = kVls;
  FABRICSIM_WIRE(M, cfg_capacity_i) cap_;
  FABRICSIM_WIRE(M, head_bytes_i) heads_;
  FABRICSIM_WIRE(M, can_send_o) can_send_;
  FABRICSIM_WIRE(M, consume_i) consume_;
  FABRICSIM_WIRE(M, consume_vl_i) consume_vl_;
  FABRICSIM_WIRE(M, consume_bytes_i) consume_bytes_;
  FABRICSIM_WIRE(M, restore_i) restore_;
  FABRICSIM_WIRE(M, restore_vl_i) restore_vl_;
  FABRICSIM_WIRE(M, restore_blocks_i) restore_blocks_;
  FABRICSIM_WIRE(M, avail_o) avail_;
  FABRICSIM_WIRE(M, underflow_o) underflow_;
  FABRICSIM_WIRE(M, overflow_o) overflow_;
  FABRICSIM_WIRE(M, dbg_used_o) used_;
};

// vl_arbiter (NumVls = 8, TableDepth = 16, BytesW = 16) ---------------------------------------
template <typename M>
class VlArbiterHarness final : public HarnessOf<M> {
 public:
  static constexpr int kVls = 8, kDepth = 16, kBytesW = 16;
  explicit VlArbiterHarness(Clock& c)
      : HarnessOf<M>(c), high_vl_(kDepth * 4), high_w_(kDepth * 8), low_vl_(kDepth * 4), low_w_(kDepth * 8),
        limit_(8), heads_(kVls * kBytesW), update_(1), valid_(1), vl_(4), high_(1), dbg_high_idx_(4),
        dbg_high_left_(8), dbg_low_idx_(4), dbg_low_left_(8), dbg_high_blocks_(16) {
    this->m_.cfg_high_vl_i(high_vl_.sig());
    this->m_.cfg_high_weight_i(high_w_.sig());
    this->m_.cfg_low_vl_i(low_vl_.sig());
    this->m_.cfg_low_weight_i(low_w_.sig());
    this->m_.cfg_high_limit_i(limit_.sig());
    this->m_.head_bytes_i(heads_.sig());
    this->m_.update_i(update_.sig());
    this->m_.sel_valid_o(valid_.sig());
    this->m_.sel_vl_o(vl_.sig());
    this->m_.sel_high_o(high_.sig());
    this->m_.dbg_high_idx_o(dbg_high_idx_.sig());  // the state is lockstep's (test_rtl_vl_arbiter)
    this->m_.dbg_high_left_o(dbg_high_left_.sig());
    this->m_.dbg_low_idx_o(dbg_low_idx_.sig());
    this->m_.dbg_low_left_o(dbg_low_left_.sig());
    this->m_.dbg_high_blocks_o(dbg_high_blocks_.sig());
  }
  bool fits(const json& p) const override {
    return p.at("vls").get<int>() <= kVls && p.at("high").size() <= kDepth && p.at("low").size() <= kDepth;
  }
  void configure(const json& p) override {
    // A C++ table of n entries fills the first n rows; the rest stay weight 0 (unused).
    auto table = [](const json& t, Wire<PortValue<decltype(std::declval<M&>().cfg_high_vl_i)>>& vl_wire,
                    Wire<PortValue<decltype(std::declval<M&>().cfg_high_weight_i)>>& w_wire) {
      std::vector<std::uint64_t> vls(kDepth, 0), weights(kDepth, 0);
      for (std::size_t e = 0; e < t.size(); ++e) {
        vls[e] = t[e].at(0).get<std::uint64_t>();
        weights[e] = t[e].at(1).get<std::uint64_t>();
      }
      vl_wire.put(fields(vls, 4, kDepth));
      w_wire.put(fields(weights, 8, kDepth));
    };
    table(p.at("high"), high_vl_, high_w_);
    table(p.at("low"), low_vl_, low_w_);
    limit_.put(scalar(p.at("high_limit").get<std::uint64_t>(), 8));
  }
  void apply(const json& in) override {
    heads_.put(fields(in.at("head_bytes").get<std::vector<std::uint64_t>>(), kBytesW, kVls));
    update_.put({in.at("update").get<bool>()});
  }
  json read() const override {
    return json{{"vl", valid_.get()[0] ? static_cast<int>(value(vl_.get())) : -1}};
  }

 private:
  FABRICSIM_WIRE(M, cfg_high_vl_i) high_vl_;
  FABRICSIM_WIRE(M, cfg_high_weight_i) high_w_;
  FABRICSIM_WIRE(M, cfg_low_vl_i) low_vl_;
  FABRICSIM_WIRE(M, cfg_low_weight_i) low_w_;
  FABRICSIM_WIRE(M, cfg_high_limit_i) limit_;
  FABRICSIM_WIRE(M, head_bytes_i) heads_;
  FABRICSIM_WIRE(M, update_i) update_;
  FABRICSIM_WIRE(M, sel_valid_o) valid_;
  FABRICSIM_WIRE(M, sel_vl_o) vl_;
  FABRICSIM_WIRE(M, sel_high_o) high_;
  FABRICSIM_WIRE(M, dbg_high_idx_o) dbg_high_idx_;
  FABRICSIM_WIRE(M, dbg_high_left_o) dbg_high_left_;
  FABRICSIM_WIRE(M, dbg_low_idx_o) dbg_low_idx_;
  FABRICSIM_WIRE(M, dbg_low_left_o) dbg_low_left_;
  FABRICSIM_WIRE(M, dbg_high_blocks_o) dbg_high_blocks_;
};

// packet_fifo (DataW = 16, Depth = 6) ---------------------------------------------------------
template <typename M>
class FifoHarness final : public HarnessOf<M> {
 public:
  static constexpr int kDepth = 6, kDataW = 16, kCntW = 3;
  explicit FifoHarness(Clock& c)
      : HarnessOf<M>(c), saf_(1), wr_valid_(1), wr_data_(kDataW), wr_last_(1), wr_ready_(1), rd_valid_(1),
        rd_data_(kDataW), rd_last_(1), rd_ready_(1), words_(kCntW), packets_(kCntW) {
    this->m_.saf_i(saf_.sig());
    this->m_.wr_valid_i(wr_valid_.sig());
    this->m_.wr_data_i(wr_data_.sig());
    this->m_.wr_last_i(wr_last_.sig());
    this->m_.wr_ready_o(wr_ready_.sig());
    this->m_.rd_valid_o(rd_valid_.sig());
    this->m_.rd_data_o(rd_data_.sig());
    this->m_.rd_last_o(rd_last_.sig());
    this->m_.rd_ready_i(rd_ready_.sig());
    this->m_.words_o(words_.sig());
    this->m_.packets_o(packets_.sig());
  }
  bool fits(const json& p) const override { return p.at("depth_words") == kDepth && p.at("data_bits") == kDataW; }
  void apply(const json& in) override {
    saf_.put({in.at("saf").get<bool>()});
    const bool wr = in.contains("wr");
    wr_valid_.put({wr});
    wr_data_.put(scalar(wr ? in["wr"].at("data").get<std::uint64_t>() : 0, kDataW));
    wr_last_.put({wr && in["wr"].at("last").get<bool>()});
    rd_ready_.put({in.at("rd_ready").get<bool>()});
  }
  json read() const override {
    const bool rd_valid = rd_valid_.get()[0];
    json out{{"wr_ready", static_cast<bool>(wr_ready_.get()[0])}, {"rd_valid", rd_valid}};
    if (rd_valid) {
      out["rd_data"] = value(rd_data_.get());
      out["rd_last"] = static_cast<bool>(rd_last_.get()[0]);
    }
    out["words"] = value(words_.get());
    out["packets"] = value(packets_.get());
    return out;
  }

 private:
  FABRICSIM_WIRE(M, saf_i) saf_;
  FABRICSIM_WIRE(M, wr_valid_i) wr_valid_;
  FABRICSIM_WIRE(M, wr_data_i) wr_data_;
  FABRICSIM_WIRE(M, wr_last_i) wr_last_;
  FABRICSIM_WIRE(M, wr_ready_o) wr_ready_;
  FABRICSIM_WIRE(M, rd_valid_o) rd_valid_;
  FABRICSIM_WIRE(M, rd_data_o) rd_data_;
  FABRICSIM_WIRE(M, rd_last_o) rd_last_;
  FABRICSIM_WIRE(M, rd_ready_i) rd_ready_;
  FABRICSIM_WIRE(M, words_o) words_;
  FABRICSIM_WIRE(M, packets_o) packets_;
};

// ---------------------------------------------------------------------------------------------
// Assertions: with fatalOnError off, Verilator prints a failing assertion on stdout
// ("%Error: <file>:<line>: Assertion failed in dut.<label>: <message>") and flags its
// context instead of aborting. stdout goes through a temporary file meanwhile, so that
// the messages can go into the report; everything is passed on to the real stdout.

class StdoutCapture {
 public:
  StdoutCapture() : file_(std::tmpfile()) {
    std::fflush(stdout);
    saved_ = dup(STDOUT_FILENO);
    if (file_ != nullptr) dup2(fileno(file_), STDOUT_FILENO);
  }
  ~StdoutCapture() {
    take();
    dup2(saved_, STDOUT_FILENO);
    close(saved_);
    if (file_ != nullptr) std::fclose(file_);
  }
  StdoutCapture(const StdoutCapture&) = delete;
  StdoutCapture& operator=(const StdoutCapture&) = delete;

  /// What was printed since the last call.
  std::string take() {
    std::fflush(stdout);
    std::string text;
    if (file_ == nullptr) return text;
    char buf[4096];
    for (ssize_t n; (n = pread(fileno(file_), buf, sizeof buf, offset_)) > 0; offset_ += n)
      text.append(buf, static_cast<std::size_t>(n));
    for (std::size_t off = 0; off < text.size();) {
      const ssize_t n = write(saved_, text.data() + off, text.size() - off);
      if (n <= 0) break;
      off += static_cast<std::size_t>(n);
    }
    return text;
  }

 private:
  std::FILE* file_;
  int saved_ = -1;
  off_t offset_ = 0;
};

/// The "Assertion failed" lines of Verilator output.
std::string assertion_lines(const std::string& text) {
  std::string lines;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(begin, end - begin);
    if (line.find("Assertion failed") != std::string::npos) lines += "\n  " + line;
    begin = end + 1;
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// Running vector files.

fs::path vector_dir() { return fs::path(FABRICSIM_SOURCE_DIR) / "testbench" / "vectors"; }

/// Vector files of one block, sorted by name.
std::vector<fs::path> vector_files(const std::string& block) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(vector_dir())) {
    if (e.path().extension() != ".json") continue;
    std::ifstream f(e.path());
    const json doc = json::parse(f);
    if (doc.value("block", "") == block) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

/// Runs every fitting vector file of `block` through the hw core and the harness. Returns
/// {"files": [{"file", "kind", "cycles", "mismatch" (absent when all cycles agree),
/// "assertion" (a failing RTL assertion, which ends the run)}]}.
json run_vectors(const std::string& block, Harness& h, Clock& clock, StdoutCapture& out) {
  json report{{"files", json::array()}};
  for (const auto& path : vector_files(block)) {
    std::ifstream f(path);
    const json doc = json::parse(f);
    if (!h.fits(doc.at("params"))) continue;
    const auto ref = fabricsim::vectors::make_ref_model(block, doc.at("params"));
    h.configure(doc.at("params"));
    clock.reset();
    json entry{{"file", path.filename().string()}, {"kind", doc.at("stimulus").at("kind")}, {"cycles", 0}};
    const json& cycles = doc.at("cycles");
    for (std::size_t c = 0; c < cycles.size(); ++c) {
      const json& in = cycles[c].at("in");
      const json& expected = cycles[c].at("out");
      const json hw = ref->step(in);
      h.apply(in);
      clock.settle();
      const json rtl = h.read();
      clock.edge();
      entry["cycles"] = c + 1;
      if (Verilated::gotError()) {
        entry["assertion"] = "RTL assertion failed at cycle " + std::to_string(c) + " of " +
                             path.filename().string() + ":" + assertion_lines(out.take()) +
                             "\n  inputs:   " + in.dump() + "\n  hw core:  " + hw.dump() +
                             "\n  RTL:      " + rtl.dump();
        report["files"].push_back(entry);
        return report;
      }
      if (hw != expected || rtl != hw) {
        entry["mismatch"] = std::string(hw != expected ? "hw core differs from the vector file"
                                                       : "RTL differs from the hw core") +
                            " at cycle " + std::to_string(c) + " of " + path.filename().string() +
                            "\n  inputs:   " + in.dump() + "\n  expected: " + expected.dump() +
                            "\n  hw core:  " + hw.dump() + "\n  RTL:      " + rtl.dump();
        break;
      }
    }
    report["files"].push_back(entry);
  }
  return report;
}

/// Runs `body` in a forked child (a fresh SystemC kernel): sim/child_run.h.
using fabricsim::sim::in_child;

/// "Suite.Test" of the running test, to name its waveform and coverage files.
std::string current_test_name() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::string(info->test_suite_name()) + "." + info->name();
}

/// In a child process: elaborates harness H (with `args`), optionally traces it, runs the block's vectors.
template <typename H, typename... Args>
json simulate(const std::string& block, Args... args) {
  return in_child([&]() {
    Verilated::fatalOnError(false);  // a failing assertion flags the context (run_vectors)
    const char* trace_dir = std::getenv("FABRICSIM_RTL_TRACE");
    if (trace_dir != nullptr) Verilated::traceEverOn(true);
    Clock clock;
    H h(clock, args...);
    std::unique_ptr<VerilatedFstSc> tfp;
    if (trace_dir != nullptr) {
      sc_core::sc_start(sc_core::SC_ZERO_TIME);  // finish elaboration before attaching the trace
      tfp = std::make_unique<VerilatedFstSc>();
      h.trace(tfp.get());
      tfp->open((fs::path(trace_dir) / (current_test_name() + ".fst")).string().c_str());
    }
    json report;
    {
      StdoutCapture out;
      report = run_vectors(block, h, clock, out);
    }
    if (tfp) tfp->close();
#if VM_COVERAGE
    if (const char* cov_dir = std::getenv("FABRICSIM_RTL_COVERAGE"))
      Verilated::threadContextp()->coveragep()->write(
          (fs::path(cov_dir) / (current_test_name() + ".dat")).string().c_str());
#endif
    return report;
  });
}

/// Every file agreed, and at least `min_directed` directed and one random set ran.
void expect_all_agree(const json& report, int min_directed = 1) {
  ASSERT_FALSE(report.contains("error")) << report["error"].get<std::string>();
  int directed = 0, random = 0;
  for (const auto& f : report.at("files")) {
    directed += f.at("kind") == "directed";
    random += f.at("kind") == "random";
    EXPECT_FALSE(f.contains("mismatch")) << f.value("mismatch", "");
    EXPECT_FALSE(f.contains("assertion")) << f.value("assertion", "");
    EXPECT_GT(f.at("cycles").get<int>(), 0) << f.at("file");
    std::printf("  %-40s %5d cycles %s\n", f.at("file").get<std::string>().c_str(), f.at("cycles").get<int>(),
                f.contains("assertion") ? "ASSERTION" : f.contains("mismatch") ? "MISMATCH" : "agree");
  }
  EXPECT_GE(directed, min_directed) << "no directed vector set fits this model";
  EXPECT_GE(random, 1) << "no random vector set fits this model";
}

TEST(RtlVectors, RrArbiterN4) { expect_all_agree(simulate<RrArbiterHarness<Vrr_arbiter_n4>>("rr_arbiter", 4)); }
// A requester count that is not a power of two: the pointer wraps at 4, not at the index width.
TEST(RtlVectors, RrArbiterN5) {
  expect_all_agree(simulate<RrArbiterHarness<Vrr_arbiter_n5>>("rr_arbiter", 5), /*min_directed=*/0);
}
TEST(RtlVectors, IslipN4K1) {
  expect_all_agree(simulate<IslipHarness<Vislip_allocator_n4_k1>>("islip_allocator", 4, 1));
}
TEST(RtlVectors, IslipN4K3) {
  expect_all_agree(simulate<IslipHarness<Vislip_allocator_n4_k3>>("islip_allocator", 4, 3));
}
TEST(RtlVectors, IslipN8K1) {
  expect_all_agree(simulate<IslipHarness<Vislip_allocator_n8_k1>>("islip_allocator", 8, 1));
}
TEST(RtlVectors, IslipN8K3) {
  expect_all_agree(simulate<IslipHarness<Vislip_allocator_n8_k3>>("islip_allocator", 8, 3));
}
TEST(RtlVectors, CreditManager) {
  expect_all_agree(simulate<CreditHarness<Vcredit_manager_v4>>("credit_manager"));
}
TEST(RtlVectors, VlArbiter) { expect_all_agree(simulate<VlArbiterHarness<Vvl_arbiter_v8_t16>>("vl_arbiter")); }
TEST(RtlVectors, PacketFifo) { expect_all_agree(simulate<FifoHarness<Vpacket_fifo_d6>>("packet_fifo")); }

// The comparison must catch a realistic bug: iSLIP pointers moved by later-iteration accepts.
TEST(RtlVectors, BrokenIslipIsCaught) {
  const json report = simulate<IslipHarness<Vislip_allocator_broken_n4_k3>>("islip_allocator", 4, 3);
  ASSERT_FALSE(report.contains("error")) << report["error"].get<std::string>();
  ASSERT_FALSE(report.at("files").empty());
  int caught = 0;
  for (const auto& f : report["files"]) {
    if (!f.contains("mismatch")) continue;
    const std::string m = f["mismatch"];
    EXPECT_NE(m.find("RTL differs from the hw core"), std::string::npos) << m;
    EXPECT_NE(m.find("inputs:"), std::string::npos) << m;
    if (caught++ == 0) std::printf("caught as expected:\n%s\n", m.c_str());
  }
  EXPECT_GE(caught, 1) << "the broken iSLIP passed every vector set";
}

// The assertions must fire on a block that breaks its contract: the real rr_arbiter.sv on an
// rr_select that grants every requester of the winning half. Its one-hot assertion stops
// the run, named, in the first cycle with two such requesters.
TEST(RtlVectors, BrokenArbiterAssertionFires) {
  const json report = simulate<RrArbiterHarness<Vrr_arbiter_broken_n4>>("rr_arbiter", 4);
  ASSERT_FALSE(report.contains("error")) << report["error"].get<std::string>();
  ASSERT_FALSE(report.at("files").empty());
  const json& last = report["files"].back();
  ASSERT_TRUE(last.contains("assertion")) << "no assertion fired on the broken arbiter: " << report.dump();
  const std::string m = last["assertion"];
  EXPECT_NE(m.find("Assertion failed in dut.rr_arbiter.GntOneHot_A: rr_arbiter: grant"), std::string::npos) << m;
  EXPECT_NE(m.find("is not one-hot"), std::string::npos) << m;
  // Only the grant is broken: the other arbiter assertions hold in that cycle.
  EXPECT_EQ(m.find("GntOnReq_A"), std::string::npos) << m;
  EXPECT_EQ(m.find("PtrRange_A"), std::string::npos) << m;
  std::printf("fired as expected:\n%s\n", m.c_str());
}

}  // namespace
