// bench_rtl_cosim: what the RTL twins cost a whole fabric run. The allocator: the
// acceptance run of tests/test_rtl_cosim.cpp (examples/single_switch.yaml: 16 ports, load
// 0.8, VOQ + iSLIP) with switch.allocator_impl tlm, rtl and lockstep, k = 1 and 4. The VL
// arbiter: the run of tests/test_rtl_vl_arbiter.cpp (the example as InfiniBand, 4 VLs,
// high and low tables) with switch.vl_arbiter_impl tlm, rtl and lockstep (16 VL arbiters).
// The round-robin arbiters: the runs of tests/test_rtl_arbiter.cpp with the write-port
// arbiters (output_queued) and the NIC VL arbiters (4 VLs) as tlm, rtl and lockstep.
// The input FIFOs: the example with switch.buffer input_fifo (16 FIFOs of 4096 words) as
// tlm, rtl and lockstep, cut-through and store-and-forward.
// The credit manager: examples/allreduce_leafspine_ib.yaml with link.credit_manager_impl
// tlm, rtl and lockstep (every switch port and NIC). Each run in a forked child: wall time,
// core-clock cycles, packets and switch wake-ups per wall second, and the slowdown against
// tlm. Not a test: timing lives in benchmarks.
// Usage: bench_rtl_cosim [simulated duration, default 60us] [config, default the example]
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <systemc>

#include "sim/child_run.h"
#include "sim/config.h"

int sc_main(int argc, char** argv) {
  using fabricsim::sim::load_config;
  using fabricsim::sim::run_in_child;
  const std::string duration = argc > 1 ? argv[1] : "60us";
  const std::string config = argc > 2 ? argv[2] : std::string(FABRICSIM_SOURCE_DIR) + "/examples/single_switch.yaml";
  std::printf("bench_rtl_cosim: %s, VOQ + iSLIP, %s simulated; SystemC %s\n", config.c_str(), duration.c_str(),
              sc_core::sc_release());
  std::printf("  %-3s %-9s %9s %10s %14s %12s %16s %9s\n", "k", "allocator", "wall s", "delivered",
              "core cycles/s", "packets/s", "switch edges/s", "vs tlm");
  int failures = 0;
  double tlm_wall = 0;
  auto measure = [&](const char* k, const char* impl, std::vector<std::string> overrides) {
    overrides.push_back("simulation.duration=" + duration);
    const fabricsim::sim::FabricConfig cfg = load_config(config, overrides);
    const nlohmann::json r = run_in_child(cfg);
    if (r.contains("error")) {
      std::printf("  %-3s %-9s FAILED: %s\n", k, impl, r["error"].get<std::string>().c_str());
      ++failures;
      return;
    }
    const double wall = r["simulator"]["wall_time_s"].get<double>();
    const auto delivered = r["packets"]["delivered"].get<std::uint64_t>();
    std::uint64_t edges = 0;  // switch wake-ups: the edges where the allocator may run
    for (const auto& [name, v] : r["simulator"]["activations"].items())
      if (name.rfind("fabric.sw", 0) == 0) edges += v.get<std::uint64_t>();
    if (std::string(impl) == "tlm") tlm_wall = wall;
    const double cycles = r["simulated_time_ns"].get<double>() * 1e-9 * cfg.switch_params.core_clock.in_hertz();
    std::printf("  %-3s %-9s %9.3f %10llu %14.0f %12.0f %16.0f %8.2fx\n", k, impl, wall,
                static_cast<unsigned long long>(delivered), cycles / wall, delivered / wall, edges / wall,
                tlm_wall > 0 ? wall / tlm_wall : 0.0);
    std::fflush(stdout);
  };
  for (const char* k : {"1", "4"})
    for (const char* impl : {"tlm", "rtl", "lockstep"})
      measure(k, impl, {"switch.buffer=voq", "switch.allocator=islip", std::string("switch.allocator_iterations=") + k,
                        std::string("switch.allocator_impl=") + impl});
  std::printf("  VL arbiter: InfiniBand, 4 VLs, high and low tables, high_limit 0 (test_rtl_vl_arbiter)\n");
  std::printf("  %-3s %-9s\n", "-", "vl_arb");
  for (const char* impl : {"tlm", "rtl", "lockstep"})
    measure("-", impl, {"link.framing=infiniband", "switch.vls=4", "traffic.sl=[0, 1, 2, 3]", "traffic.load=0.9",
                        "traffic.message_size=2KiB",
                        "switch.vl_arbitration={high: [{vl: 3, weight: 8}], low: [{vl: 0, weight: 4}, "
                        "{vl: 1, weight: 40}, {vl: 2, weight: 2}, {vl: 0, weight: 0}, {vl: 1, weight: 9}], "
                        "high_limit: 0}",
                        std::string("switch.vl_arbiter_impl=") + impl});
  // Every output's write port (output_queued, 16 requesters) and every NIC's VL arbiter
  // (4 VLs, messages spread over SLs 0..3).
  std::printf("  round-robin arbiters: wa = output_queued write ports, nva = NIC VL arbiters (4 VLs)\n");
  for (const char* impl : {"tlm", "rtl", "lockstep"})
    measure("wa", impl, {"switch.buffer=output_queued", std::string("switch.write_arbiter_impl=") + impl});
  for (const char* impl : {"tlm", "rtl", "lockstep"})
    measure("nva", impl, {"switch.vls=4", "traffic.sl=[0,1,2,3]", "traffic.message_size=16KiB", "traffic.load=0.95",
                          std::string("nic.vl_arbiter_impl=") + impl});
  // Every input's FIFO (input_fifo, 1 VL): a bulk write or packet read is a burst of cycles.
  std::printf("  input FIFOs: ct = cut-through, saf = store-and-forward (input_fifo, 16 x 4096 words)\n");
  for (const char* fwd : {"cut_through", "store_and_forward"})
    for (const char* impl : {"tlm", "rtl", "lockstep"})
      measure(fwd[0] == 'c' ? "ct" : "saf", impl,
              {"switch.buffer=input_fifo", std::string("switch.forwarding=") + fwd,
               std::string("switch.input_fifo_impl=") + impl});
  std::printf("credit manager: examples/allreduce_leafspine_ib.yaml\n  %-9s %9s %10s %9s\n", "impl", "wall s",
              "delivered", "vs tlm");
  double cm_tlm_wall = 0;
  for (const char* impl : {"tlm", "rtl", "lockstep"}) {
    const fabricsim::sim::FabricConfig cfg =
        load_config(std::string(FABRICSIM_SOURCE_DIR) + "/examples/allreduce_leafspine_ib.yaml",
                    {std::string("link.credit_manager_impl=") + impl});
    const nlohmann::json r = run_in_child(cfg);
    if (r.contains("error")) {
      std::printf("  %-9s FAILED: %s\n", impl, r["error"].get<std::string>().c_str());
      ++failures;
      continue;
    }
    const double wall = r["simulator"]["wall_time_s"].get<double>();
    if (std::string(impl) == "tlm") cm_tlm_wall = wall;
    std::printf("  %-9s %9.3f %10llu %8.2fx\n", impl, wall,
                static_cast<unsigned long long>(r["packets"]["delivered"].get<std::uint64_t>()),
                cm_tlm_wall > 0 ? wall / cm_tlm_wall : 0.0);
    std::fflush(stdout);
  }
  return failures ? 1 : 0;
}

int main(int argc, char* argv[]) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  return sc_core::sc_elab_and_sim(argc, argv);
}
