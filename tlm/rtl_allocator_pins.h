// The pins of a Verilated switch-allocator block and the table of the blocks a switch can
// use (tlm/rtl_allocator.h). Only in builds with -DFABRICSIM_RTL=ON. The fabricsim binary's
// table holds the blocks rtl/CMakeLists.txt builds with fabricsim_rtl_allocator; test code
// adds the deliberately broken ones it must catch (add_verilated_allocator), so that no
// configuration of the fabricsim binary can choose them.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <verilated.h>
#include <verilated_fst_c.h>

#include "hw/allocator.h"
#include "tlm/rtl_allocator.h"

namespace fabricsim::tlm_fabric {

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

// ---------------------------------------------------------------------------------------------
// Pins of one Verilated model. Verilator gives a port of w bits a CData/SData/IData/QData
// (w <= 64) or a VlWide<words>; both are filled from / read into the 32-bit words.

template <class T>
void put_port(T& port, const std::vector<std::uint32_t>& w) {
  std::uint64_t v = w[0];
  if (w.size() > 1) v |= std::uint64_t{w[1]} << 32;
  port = static_cast<T>(v);
}
template <std::size_t W>
void put_port(VlWide<W>& port, const std::vector<std::uint32_t>& w) {
  for (std::size_t k = 0; k < W; ++k) port[k] = w[k];
}
template <class T>
void get_port(const T& port, std::vector<std::uint32_t>& w) {
  const auto v = static_cast<std::uint64_t>(port);
  w[0] = static_cast<std::uint32_t>(v);
  if (w.size() > 1) w[1] = static_cast<std::uint32_t>(v >> 32);
}
template <std::size_t W>
void get_port(const VlWide<W>& port, std::vector<std::uint32_t>& w) {
  for (std::size_t k = 0; k < W; ++k) w[k] = port[k];
}

/// The pins of an allocator block (rtl/README.md: clk_i, rst_ni, req_i, update_i -> gnt_o),
/// whatever its parameters, and its FST waveform.
class AllocatorPins {
 public:
  virtual ~AllocatorPins() = default;
  /// Drives req_i, update_i and clk_i and evaluates the model (a rising clk_i commits).
  virtual void step(const BitMatrix& req, bool update, bool clk) = 0;
  /// Samples gnt_o.
  virtual void grants(BitMatrix& gnt) const = 0;
  virtual void trace_open(const std::string& path) = 0;
  virtual void trace_dump(std::uint64_t ps) = 0;
  virtual void trace_close() = 0;
};

/// AllocatorPins of the Verilated class M, reset on construction (rst_ni low, then high).
template <class M>
class VerilatedPins final : public AllocatorPins {
 public:
  explicit VerilatedPins(bool traceable) {
    if (traceable) context_.traceEverOn(true);
    model_ = std::make_unique<M>(&context_, "TOP");
    model_->clk_i = 0;
    model_->update_i = 0;
    model_->rst_ni = 0;
    model_->eval();
    model_->rst_ni = 1;
    model_->eval();
  }
  ~VerilatedPins() override {
    trace_close();
    model_->final();
  }
  void step(const BitMatrix& req, bool update, bool clk) override {
    put_port(model_->req_i, req.words());
    model_->update_i = update ? 1 : 0;
    model_->clk_i = clk ? 1 : 0;
    model_->eval();
  }
  void grants(BitMatrix& gnt) const override {
    get_port(model_->gnt_o, gnt.words());
    gnt.trim();
  }
  void trace_open(const std::string& path) override {
    fst_ = std::make_unique<VerilatedFstC>();
    model_->trace(fst_.get(), 99);
    fst_->open(path.c_str());
    if (!fst_->isOpen()) throw std::runtime_error("cannot write waveform '" + path + "'");
  }
  void trace_dump(std::uint64_t ps) override {
    if (fst_) fst_->dump(ps);
  }
  void trace_close() override {
    if (fst_) fst_->close();
    fst_.reset();
  }

 private:
  VerilatedContext context_;    // own time and trace settings per instance
  std::unique_ptr<M> model_;
  std::unique_ptr<VerilatedFstC> fst_;
};

/// A factory of one Verilated block's pins; `traceable` enables its FST waveform.
using MakeAllocatorPins = std::unique_ptr<AllocatorPins> (*)(bool traceable);

/// Adds a block to this process's allocator table (rtl_allocator_models(),
/// check_rtl_allocator, make_switch_allocator), marked test_only. For test code: the
/// fabricsim binary never calls it. Throws std::logic_error when (top, ports, iterations)
/// is there already.
void add_rtl_allocator_model(RtlAllocatorModel info, MakeAllocatorPins make);

/// add_rtl_allocator_model for the Verilated class M.
template <class M>
void add_verilated_allocator(RtlAllocatorModel info) {
  add_rtl_allocator_model(std::move(info), [](bool traceable) -> std::unique_ptr<AllocatorPins> {
    return std::make_unique<VerilatedPins<M>>(traceable);
  });
}

}  // namespace fabricsim::tlm_fabric
