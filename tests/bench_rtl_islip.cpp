// bench_rtl_islip: co-simulation speed of the Verilated 16x16 iSLIP allocator
// (rtl/islip_allocator.sv), in clock cycles per wall second, next to the hw/ core it
// twins (rtl/README.md). Per iteration count k (1, 4), each in a forked child: the hw
// core alone; the RTL stepped by hand; the RTL on a free-running sc_clock; RTL and core
// in lockstep; the in-switch transactor (tlm/rtl_allocator.h) as rtl and as lockstep.
// Requests: 1024 random 16x16 matrices (density 0.5), replayed.
// Usage: bench_rtl_islip [cycles per run, default 200000]
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <systemc>
#include <verilated.h>

#include "Vislip_allocator_n16_k1.h"
#include "Vislip_allocator_n16_k4.h"
#include "hw/allocator.h"
#include "tlm/rtl_allocator.h"

namespace {

constexpr int kN = 16;
constexpr int kPool = 1024;
using ReqBits = sc_dt::sc_bv<kN * kN>;

/// Random request matrices, as the RTL port value and as hw requests.
struct RequestPool {
  std::vector<ReqBits> bits;
  std::vector<std::vector<fabricsim::hw::AllocRequest>> requests;
  RequestPool() {
    std::mt19937_64 rng(2024);
    for (int p = 0; p < kPool; ++p) {
      ReqBits b;
      std::vector<fabricsim::hw::AllocRequest> r;
      for (int i = 0; i < kN; ++i)
        for (int o = 0; o < kN; ++o) {
          const bool on = (rng() >> 63) != 0;
          b.set_bit(i * kN + o, on ? sc_dt::Log_1 : sc_dt::Log_0);
          if (on) r.push_back(fabricsim::hw::AllocRequest{i, o, 0, 0});
        }
      bits.push_back(b);
      requests.push_back(std::move(r));
    }
  }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::unique_ptr<fabricsim::hw::SwitchAllocator> make_core(int k) {
  return fabricsim::hw::make_allocator("islip", fabricsim::hw::AllocatorParams{kN, kN, k, 1});
}

/// Grants of the hw core for one round, as the RTL's per-input output index (kN = none).
std::vector<int> core_round(fabricsim::hw::SwitchAllocator& a, const std::vector<fabricsim::hw::AllocRequest>& r) {
  a.clear();
  for (const auto& q : r) a.add_request(q);
  std::vector<int> out(kN, kN);
  for (const auto& g : a.arbitrate()) out[g.input] = g.output;
  a.update_state();
  return out;
}

/// Allocation rounds per wall-second of any SwitchAllocator on the request pool.
double rounds_per_second(fabricsim::hw::SwitchAllocator& a, long cycles, const RequestPool& pool) {
  long matched = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (long c = 0; c < cycles; ++c)
    for (int o : core_round(a, pool.requests[c % kPool])) matched += o < kN;
  const double s = seconds_since(t0);
  if (matched == 0) std::printf("  (no grants?)\n");
  return cycles / s;
}

double bench_core(int k, long cycles, const RequestPool& pool) { return rounds_per_second(*make_core(k), cycles, pool); }

/// The Verilated model with its signals, driven by hand.
template <typename M>
struct Stepped {
  sc_core::sc_signal<bool> clk{"clk", false}, rst_n{"rst_n", true}, update{"update", true};
  sc_core::sc_signal<ReqBits> req{"req"};
  sc_core::sc_signal<ReqBits> gnt{"gnt"};
  sc_core::sc_signal<std::uint32_t> valid{"valid"};
  sc_core::sc_signal<std::uint64_t> out{"out"};
  sc_core::sc_signal<std::uint64_t> gptr{"gptr"}, aptr{"aptr"};  // pointer debug ports
  M m{"dut"};
  Stepped() {
    m.clk_i(clk);
    m.rst_ni(rst_n);
    m.req_i(req);
    m.update_i(update);
    m.gnt_o(gnt);
    m.gnt_valid_o(valid);
    m.gnt_out_o(out);
    m.dbg_gptr_o(gptr);
    m.dbg_aptr_o(aptr);
  }
  void reset() {
    rst_n.write(false);
    sc_core::sc_start(1, sc_core::SC_NS);
    rst_n.write(true);
    sc_core::sc_start(1, sc_core::SC_NS);
  }
  /// One cycle; returns the per-input output index (kN = unmatched).
  std::vector<int> cycle(const ReqBits& r) {
    req.write(r);
    sc_core::sc_start(1, sc_core::SC_NS);
    std::vector<int> g(kN, kN);
    const std::uint32_t v = valid.read();
    const std::uint64_t o = out.read();
    for (int i = 0; i < kN; ++i)
      if ((v >> i) & 1U) g[i] = static_cast<int>((o >> (4 * i)) & 0xF);
    clk.write(true);
    sc_core::sc_start(1, sc_core::SC_NS);
    clk.write(false);
    return g;
  }
};

template <typename M>
double bench_stepped(long cycles, const RequestPool& pool) {
  Stepped<M> s;
  s.reset();
  long matched = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (long c = 0; c < cycles; ++c)
    for (int o : s.cycle(pool.bits[c % kPool])) matched += o < kN;
  const double sec = seconds_since(t0);
  if (matched == 0) std::printf("  (no grants?)\n");
  return cycles / sec;
}

template <typename M>
double bench_lockstep(int k, long cycles, const RequestPool& pool) {
  Stepped<M> s;
  s.reset();
  auto a = make_core(k);
  const auto t0 = std::chrono::steady_clock::now();
  for (long c = 0; c < cycles; ++c) {
    if (s.cycle(pool.bits[c % kPool]) != core_round(*a, pool.requests[c % kPool])) {
      std::printf("  lockstep MISMATCH at cycle %ld\n", c);
      return 0;
    }
  }
  return cycles / seconds_since(t0);
}

/// The switch's allocator as the switch uses it: rtl or lockstep through make_switch_allocator.
double bench_transactor(int k, fabricsim::tlm_fabric::AllocatorImpl impl, long cycles, const RequestPool& pool) {
  fabricsim::tlm_fabric::SwitchAllocatorSpec spec;
  spec.instance = "bench";
  spec.policy = "islip";
  spec.shape = fabricsim::hw::AllocatorParams{kN, kN, k, 1};
  spec.impl = impl;
  return rounds_per_second(*fabricsim::tlm_fabric::make_switch_allocator(spec), cycles, pool);
}

/// Free-running clock: requests change on the falling edge, grants are sampled on the rising one.
template <typename M>
struct Clocked : sc_core::sc_module {
  sc_core::sc_clock clk{"clk", 1, sc_core::SC_NS};
  sc_core::sc_signal<bool> rst_n{"rst_n", true}, update{"update", true};
  sc_core::sc_signal<ReqBits> req{"req"};
  sc_core::sc_signal<ReqBits> gnt{"gnt"};
  sc_core::sc_signal<std::uint32_t> valid{"valid"};
  sc_core::sc_signal<std::uint64_t> out{"out"};
  sc_core::sc_signal<std::uint64_t> gptr{"gptr"}, aptr{"aptr"};  // pointer debug ports
  M m{"dut"};
  const RequestPool& pool;
  long next = 0;
  long matched = 0;

  SC_HAS_PROCESS(Clocked);
  Clocked(sc_core::sc_module_name name, const RequestPool& p) : sc_core::sc_module(name), pool(p) {
    m.clk_i(clk);
    m.rst_ni(rst_n);
    m.req_i(req);
    m.update_i(update);
    m.gnt_o(gnt);
    m.gnt_valid_o(valid);
    m.gnt_out_o(out);
    m.dbg_gptr_o(gptr);
    m.dbg_aptr_o(aptr);
    SC_METHOD(drive);
    sensitive << clk.negedge_event();
    dont_initialize();
    SC_METHOD(sample);
    sensitive << clk.posedge_event();
    dont_initialize();
  }
  void drive() { req.write(pool.bits[next++ % kPool]); }
  void sample() {
    const std::uint32_t v = valid.read();
    for (int i = 0; i < kN; ++i) matched += (v >> i) & 1U;
  }
};

template <typename M>
double bench_clocked(long cycles, const RequestPool& pool) {
  Clocked<M> top("top", pool);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  const auto t0 = std::chrono::steady_clock::now();
  sc_core::sc_start(static_cast<double>(cycles), sc_core::SC_NS);
  const double sec = seconds_since(t0);
  if (top.matched == 0) std::printf("  (no grants?)\n");
  return cycles / sec;
}

/// Runs `fn` in a forked child (fresh SystemC kernel) and prints its rate.
void measure(const char* label, const std::function<double()>& fn) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const double rate = fn();
    std::printf("  %-44s %12.0f cycles/s\n", label, rate);
    std::fflush(nullptr);
    _exit(rate > 0 ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) std::printf("  %-44s FAILED\n", label);
}

}  // namespace

int sc_main(int argc, char** argv) {
  const long cycles = argc > 1 ? std::atol(argv[1]) : 200000;
  const RequestPool pool;
  using Impl = fabricsim::tlm_fabric::AllocatorImpl;
  std::printf("bench_rtl_islip: 16x16 iSLIP, %ld cycles per run, random requests (density 0.5)\n", cycles);
  std::printf("  SystemC %s, Verilator %s\n", sc_core::sc_release(), Verilated::productVersion());
  measure("k=1 hw core", [&] { return bench_core(1, cycles, pool); });
  measure("k=1 RTL stepped (settle, sample, edge)", [&] { return bench_stepped<Vislip_allocator_n16_k1>(cycles, pool); });
  measure("k=1 RTL on sc_clock (SC_METHOD per edge)", [&] { return bench_clocked<Vislip_allocator_n16_k1>(cycles, pool); });
  measure("k=1 RTL + hw core lockstep (compared)", [&] { return bench_lockstep<Vislip_allocator_n16_k1>(1, cycles, pool); });
  measure("k=1 in-switch transactor (allocator_impl rtl)", [&] { return bench_transactor(1, Impl::rtl, cycles, pool); });
  measure("k=1 in-switch lockstep (allocator_impl lockstep)", [&] { return bench_transactor(1, Impl::lockstep, cycles, pool); });
  measure("k=4 hw core", [&] { return bench_core(4, cycles, pool); });
  measure("k=4 RTL stepped (settle, sample, edge)", [&] { return bench_stepped<Vislip_allocator_n16_k4>(cycles, pool); });
  measure("k=4 RTL on sc_clock (SC_METHOD per edge)", [&] { return bench_clocked<Vislip_allocator_n16_k4>(cycles, pool); });
  measure("k=4 RTL + hw core lockstep (compared)", [&] { return bench_lockstep<Vislip_allocator_n16_k4>(4, cycles, pool); });
  measure("k=4 in-switch transactor (allocator_impl rtl)", [&] { return bench_transactor(4, Impl::rtl, cycles, pool); });
  measure("k=4 in-switch lockstep (allocator_impl lockstep)", [&] { return bench_transactor(4, Impl::lockstep, cycles, pool); });
  return 0;
}
