// The watchdog on a known PFC / credit deadlock (through the binary),
// and the run-time invariants: each one holds on a healthy run and fails when the
// switch's accounting is deliberately broken (tests/switch_test_access.h).
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "command.h"
#include "sim/child_run.h"
#include "sim/config.h"
#include "sim/invariants.h"
#include "tests/switch_test_access.h"

namespace {

using fabricsim::sim::Fabric;
using fabricsim::sim::load_config;
using fabricsim::testing::run_command;
using fabricsim::tlm_fabric::AccountingFault;
using nlohmann::json;
namespace fs = std::filesystem;

const std::string kRing = std::string(FABRICSIM_SOURCE_DIR) + "/tests/deadlock/ring5_pfc.yaml";
const std::string kSingleSwitch = std::string(FABRICSIM_SOURCE_DIR) + "/examples/single_switch.yaml";

struct BinaryRun {
  int exit_code;
  std::string output;
  json results;
};

// `fabricsim run CONFIG --out TMP EXTRA`, named `name` in the temporary folder.
BinaryRun run_fabricsim(const std::string& config, const std::string& name, const std::string& extra) {
  const fs::path out = fs::temp_directory_path() / ("fabricsim_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(out);
  const auto r = run_command("run " + config + " --out " + out.string() + " " + extra);
  BinaryRun run{r.exit_code, r.output, json()};
  std::ifstream f(out / "results.json");
  if (f) run.results = json::parse(f);
  fs::remove_all(out);
  return run;
}

BinaryRun run_ring(const std::string& name, const std::string& extra) {
  return run_fabricsim(kRing, "deadlock_" + name, extra);
}

// The cycle the watchdog reports: every ring switch once, closed (first = last),
// each hop one switch clockwise, on a ring port (ports 0 and 1; the host cables are
// listed first but explicit graphs give hosts their ports last: port 2).
void expect_ring_cycle(const BinaryRun& r, const std::string& unit) {
  ASSERT_TRUE(r.results.contains("stall")) << r.output;
  const json& cycle = r.results["stall"]["cycle"];
  ASSERT_EQ(cycle.size(), 6u) << cycle.dump();
  EXPECT_EQ(cycle.front(), cycle.back());
  std::vector<int> seen;
  for (std::size_t i = 0; i + 1 < cycle.size(); ++i) {
    const std::string n = cycle[i].get<std::string>();
    ASSERT_EQ(n.rfind("sw", 0), 0u) << n;
    seen.push_back(std::stoi(n.substr(2)));
    EXPECT_NE(n.find(".port"), std::string::npos) << n;
    EXPECT_EQ(n.find(".port2."), std::string::npos) << "a host port in the cycle: " << n;
    EXPECT_NE(n.find("." + unit + "0"), std::string::npos) << n;
  }
  for (std::size_t i = 0; i + 1 < seen.size(); ++i) EXPECT_EQ(seen[i + 1], (seen[i] + 1) % 5) << cycle.dump();
  EXPECT_NE(r.results["stall"]["advice"].get<std::string>().find("break the cycle"), std::string::npos);
}

TEST(Deadlock, PfcRingStopsWithTheCycleAndAdvice) {
  const BinaryRun r = run_ring("pfc", "");
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("deadlock: cyclic buffer dependency"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cycle: sw"), std::string::npos) << r.output;
  expect_ring_cycle(r, "prio");
  // Stopped early: long before simulation.duration (2 ms).
  EXPECT_LT(r.results["simulated_time_ns"].get<double>(), 1e6);
}

TEST(Deadlock, CreditRingIsACreditLoop) {
  // Credits hold back per packet, not per port: it takes buffers of one frame per VL
  // for every ring input to fill with transit packets.
  const BinaryRun r = run_ring("credit", "--set link.flow_control=credit --set switch.input_buffer=8KiB "
                                       "--set nic.rx_buffer=8KiB");
  EXPECT_EQ(r.exit_code, 4) << r.output;
  expect_ring_cycle(r, "vl");
}

TEST(Deadlock, LossyRingDoesNotDeadlock) {
  // The advice's last option: a lossy class drops instead of waiting, so the
  // cycle never closes and the run completes with its drops counted.
  const BinaryRun r = run_ring("lossy", "--set link.flow_control=none --set simulation.duration=200us");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(r.results.contains("stall"));
  EXPECT_GT(r.results["packets"]["dropped"].get<long>(), 0);
  EXPECT_GT(r.results["packets"]["delivered"].get<long>(), 0);
}

// A two-endpoint single_switch.yaml run with `extra` overrides.
BinaryRun run_two_endpoints(const std::string& name, const std::string& extra) {
  return run_fabricsim(kSingleSwitch, "watchdog_" + name,
                       "--set 'topology={kind: single_switch, endpoints: 2}' " + extra);
}

void expect_finished_moving(const BinaryRun& r) {
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(r.results.contains("stall")) << r.output;
  EXPECT_GT(r.results["packets"]["delivered"].get<long>(), 0) << r.output;
}

TEST(Watchdog, AFrameSerialisedLongerThanAnIntervalIsProgress) {
  // One 10 Mb/s lane: a 4 KiB frame takes 3.3 ms on the wire, over the default 1 ms
  // watchdog, and none starts while it goes out.
  expect_finished_moving(run_two_endpoints(
      "slow", "--set link.lanes=1 --set link.lane_rate=10Mb/s --set link.fec=none --set simulation.duration=30ms"));
}

TEST(Watchdog, AFrameOrCreditOnALongCableIsProgress) {
  // 100 km of fibre: 500 us each way, over a 100 us watchdog. The NICs spend their
  // credits in microseconds, then wait for frames to arrive and credits to come back.
  const std::string long_cable = "--set link.cable_length=100km --set simulation.watchdog=100us ";
  expect_finished_moving(run_two_endpoints("long", long_cable + "--set simulation.duration=1500us"));
  // One flow into a receiver buffer of one frame: the switch holds the rest, and between
  // a frame's arrival and its credit's return (1 ms) only the credit is on a wire.
  expect_finished_moving(run_two_endpoints(
      "long_credit", long_cable + "--set simulation.duration=3ms --set switch.input_buffer=1MiB "
                                  "--set nic.rx_buffer=8KiB --set traffic.pattern=explicit "
                                  "--set 'traffic.flows=[{src: 0, dst: 1, load: 1.0, message_size: 4KiB, messages: 32}]'"));
}

// Runs single_switch.yaml at full load for `duration` with `overrides`, after `prepare`
// on every switch, in a child; returns `read` of the fabric at the end, or {"error"}.
json run_saturated_switch(std::vector<std::string> overrides, const std::string& duration,
                          const std::function<void(fabricsim::tlm_fabric::Switch&)>& prepare,
                          const std::function<json(const Fabric&)>& read) {
  overrides.push_back("output.sample_interval=0s");
  overrides.push_back("simulation.duration=" + duration);
  overrides.push_back("traffic.load=1.0");
  const auto config = load_config(kSingleSwitch, overrides);
  return fabricsim::sim::in_child([&] {
    fabricsim::stats::Registry registry;
    Fabric fabric("fabric", config, registry);
    for (const auto& sw : fabric.switches()) prepare(*sw);
    sc_core::sc_start(fabricsim::tlm_fabric::to_sc(config.simulation.duration));
    return read(fabric);
  });
}

// Runs single_switch.yaml with every switch's accounting broken by `fault`;
// returns the invariant checks.
json invariants(AccountingFault fault, std::vector<std::string> overrides) {
  return run_saturated_switch(
      std::move(overrides), "40us",
      [fault](fabricsim::tlm_fabric::Switch& sw) { fabricsim::tlm_fabric::SwitchTestAccess::inject_fault(sw, fault); },
      [](const Fabric& fabric) {
        json out = json::object();
        for (const auto& c : fabricsim::sim::check_invariants(fabric)) {
          if (!out.contains(c.check)) out[c.check] = {{"ok", true}, {"details", json::array()}};
          out[c.check]["ok"] = out[c.check]["ok"].get<bool>() && c.ok;
          out[c.check]["details"].push_back(c.detail);
        }
        return out;
      });
}

void expect_only_broken(const json& r, const std::string& broken, const std::string& detail) {
  ASSERT_FALSE(r.contains("error")) << r.dump();
  for (const char* check : {"credit conservation", "buffer bounds", "lossless drops"}) {
    ASSERT_TRUE(r.contains(check)) << r.dump();
    EXPECT_EQ(r[check]["ok"].get<bool>(), check != broken) << check << ": " << r[check].dump();
  }
  if (broken.empty()) return;
  bool found = false;
  for (const auto& d : r[broken]["details"]) found = found || d.get<std::string>().find(detail) != std::string::npos;
  EXPECT_TRUE(found) << r[broken].dump();
}

TEST(Invariants, CreditConservationHoldsAndCatchesALeak) {
  expect_only_broken(invariants(AccountingFault::none, {}), "", "");
  // One block short per credit return: the transmitter's view drifts from the receiver's.
  expect_only_broken(invariants(AccountingFault::credit_return_short, {}), "credit conservation",
                     "+ held by the receiver");
}

TEST(Invariants, BufferBoundHoldsAndCatchesAnOverfill) {
  const std::vector<std::string> lossy = {"link.flow_control=none", "switch.input_buffer=16KiB"};
  expect_only_broken(invariants(AccountingFault::none, lossy), "", "");
  expect_only_broken(invariants(AccountingFault::overfill_buffer, lossy), "buffer bounds", "input buffer: held");
}

TEST(Invariants, LosslessDropsHoldAndCatchAPfcDrop) {
  const std::vector<std::string> pfc = {"link.flow_control=pfc"};
  expect_only_broken(invariants(AccountingFault::none, pfc), "", "");
  expect_only_broken(invariants(AccountingFault::drop_lossless, pfc), "lossless drops",
                     "without the PFC headroom being exceeded");
}

// Runs single_switch.yaml (input FIFOs) at full load with `overrides`, after `prepare`
// on every switch; returns {"error"} or whether the input buffer as the cores hold it
// and as the inputs count it agree at the end, and the most any input's cores held.
json run_input_fifos(std::vector<std::string> overrides,
                     const std::function<void(fabricsim::tlm_fabric::Switch&)>& prepare) {
  using fabricsim::tlm_fabric::SwitchTestAccess;
  overrides.push_back("switch.buffer=input_fifo");
  return run_saturated_switch(std::move(overrides), "30us", prepare, [](const Fabric& fabric) {
    json out{{"agree", true}, {"most_bytes", 0}};
    for (const auto& sw : fabric.switches())
      for (int p = 0; p < static_cast<int>(sw->in.size()); ++p) {
        const std::uint64_t held = SwitchTestAccess::input_fifo_bytes(*sw, p);
        if (held != SwitchTestAccess::input_bytes(*sw, p)) out["agree"] = false;
        out["most_bytes"] = std::max(out["most_bytes"].get<std::uint64_t>(), held);
      }
    return out;
  });
}

TEST(InputFifo, CoresHoldTheInputBufferUnderEveryForwardingModeAndFlowControl) {
  // The switch checks at every admission, grant and release that the cores agree with
  // its accounting and timing; a run that ends is one where they always did.
  for (const char* mode : {"cut_through", "store_and_forward", "adaptive"})
    for (const char* fc : {"credit", "pfc", "none"}) {
      // A small buffer fills (PFC needs xoff and headroom).
      const std::string buffer = std::string("switch.input_buffer=") + (fc == std::string("pfc") ? "256KiB" : "32KiB");
      const json r = run_input_fifos(
          {std::string("switch.forwarding=") + mode, std::string("link.flow_control=") + fc, buffer},
          [](fabricsim::tlm_fabric::Switch&) {});
      ASSERT_FALSE(r.contains("error")) << mode << " " << fc << ": " << r.dump();
      EXPECT_TRUE(r["agree"].get<bool>()) << mode << " " << fc;
      EXPECT_GT(r["most_bytes"].get<std::uint64_t>(), 0u) << mode << " " << fc << ": the cores never held a packet";
    }
}

TEST(InputFifo, SwitchStopsWhenACoreDisagrees) {
  using fabricsim::hw::FifoMode;
  using fabricsim::hw::FifoWord;
  using fabricsim::tlm_fabric::SwitchTestAccess;
  // A stray word: the core holds more than the input counts, found at the next admission.
  json r = run_input_fifos({}, [](fabricsim::tlm_fabric::Switch& sw) {
    SwitchTestAccess::input_fifo_core(sw, 3, 0).push(FifoWord{7, true});
  });
  ASSERT_TRUE(r.contains("error")) << r.dump();
  EXPECT_NE(r["error"].get<std::string>().find("fabric.sw0: input FIFO of port 3 VL 0 at "), std::string::npos)
      << r.dump();
  // Cores reading store-and-forward under a cut-through switch: a packet is granted
  // before its last word is in.
  r = run_input_fifos({"switch.forwarding=cut_through"}, [](fabricsim::tlm_fabric::Switch& sw) {
    for (int p = 0; p < 16; ++p) SwitchTestAccess::input_fifo_core(sw, p, 0).set_mode(FifoMode::kStoreAndForward);
  });
  ASSERT_TRUE(r.contains("error")) << r.dump();
  EXPECT_NE(r["error"].get<std::string>().find("granted while the core cannot read it"), std::string::npos)
      << r.dump();
}

}  // namespace
