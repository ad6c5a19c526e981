// RtlPins of a Verilated (--cc) class: the part every generated adapter shares (own
// VerilatedContext, eval, the waveform: a Waveform on the model; in a coverage build its
// context's points in the run's RTL coverage, tlm/rtl_coverage.h) and the port <-> 32-bit
// word copies. Included only by the adapters generated from rtl/kinds/<kind>.cpp.in, inside
// each model's own library.
#pragma once

#include <cstdint>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <verilated.h>
#if VM_COVERAGE
#include <verilated_cov.h>

#include "tlm/rtl_coverage.h"
#endif

#include "tlm/rtl_model.h"
#include "tlm/rtl_waveform.h"

namespace fabricsim::tlm_fabric {

// Verilator gives a port of w bits a CData/SData/IData/QData (w <= 64) or a VlWide<words>.
template <class T>
void put_port(T& port, const PortWords& w) {
  std::uint64_t v = w.empty() ? 0 : w[0];
  if (w.size() > 1) v |= std::uint64_t{w[1]} << 32;
  port = static_cast<T>(v);
}
template <std::size_t W>
void put_port(VlWide<W>& port, const PortWords& w) {
  for (std::size_t k = 0; k < W; ++k) port[k] = k < w.size() ? w[k] : 0;
}
template <class T>
void get_port(const T& port, PortWords& w) {
  const auto v = static_cast<std::uint64_t>(port);
  w.assign(sizeof(T) > 4 ? 2 : 1, 0);
  w[0] = static_cast<std::uint32_t>(v);
  if (w.size() > 1) w[1] = static_cast<std::uint32_t>(v >> 32);
}
template <std::size_t W>
void get_port(const VlWide<W>& port, PortWords& w) {
  w.resize(W);
  for (std::size_t k = 0; k < W; ++k) w[k] = port[k];
}
template <class T>
constexpr int port_words(const T&) {
  return sizeof(T) > 4 ? 2 : 1;
}
template <std::size_t W>
constexpr int port_words(const VlWide<W>&) {
  return static_cast<int>(W);
}

/// The Verilated class M behind RtlPins; the adapter adds the pins by role.
template <class M>
class VerilatedRtlPins : public RtlPins {
 public:
  explicit VerilatedRtlPins(bool traceable) {
    if (traceable) context_.traceEverOn(true);
    model_ = std::make_unique<M>(&context_, "TOP");
  }
  ~VerilatedRtlPins() override {
    try {
      trace_close();
    } catch (const std::exception& e) {
      std::cerr << "fabricsim: warning: " << e.what() << "\n";
    }
    model_->final();
#if VM_COVERAGE
    if (coverage_) {
      try {
        rtl_coverage_retire(*coverage_);
      } catch (const std::exception& e) {
        std::cerr << "fabricsim: warning: " << e.what() << "\n";
      }
    }
#endif
  }
  void eval() override { model_->eval(); }
  std::string trace_open(const std::string& stem, const WaveformOptions& options) override {
    trace_close();
    wave_ = std::make_unique<Waveform>(options);
    wave_->open(*model_, stem);
    return wave_->path();
  }
  void trace_advance(std::uint64_t ps) override {
    if (wave_) wave_->advance(ps);
  }
  void trace_dump(std::uint64_t ps) override {
    if (wave_) wave_->dump(ps);
  }
  void trace_close() override {
    if (!wave_) return;
    const std::unique_ptr<Waveform> wave = std::move(wave_);
    wave->close();
    limit_reached_ = wave->limit_reached();
  }
  bool trace_limit_reached() const override { return wave_ ? wave_->limit_reached() : limit_reached_; }
#if VM_COVERAGE
  void coverage_scope(const std::string& hierarchy) override {
    auto& sources = rtl_coverage_sources();
    coverage_ = sources.insert(sources.end(), {hierarchy, [this](const std::string& path) {
                                                 context_.coveragep()->write(path.c_str());
                                               }, ""});
  }
#endif

 protected:
  M& m() { return *model_; }
  const M& m() const { return *model_; }

 private:
  VerilatedContext context_;  // own time and trace settings per instance
  std::unique_ptr<M> model_;
  std::unique_ptr<Waveform> wave_;  // open waveform, if any
  bool limit_reached_ = false;      // the last closed waveform's
#if VM_COVERAGE
  std::optional<std::list<RtlCoverageSource>::iterator> coverage_;  // registered, if the primary instance
#endif
};

}  // namespace fabricsim::tlm_fabric
