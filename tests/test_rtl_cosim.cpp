// The RTL iSLIP allocator inside a running fabric (tlm/rtl_allocator.h, docs/cosim.md):
// examples/single_switch.yaml gives the same results with allocator_impl rtl as tlm;
// lockstep passes for the project's iSLIP and the independent islip_allocator_alt.sv,
// and catches the broken variant (rtl/models/islip_allocator_broken.cmake, an injected fault, added to this
// process's allocator table here and absent from the fabricsim binary), naming switch,
// cycle, requests and both grant sets, with the waveform before it; the transactor
// alone against the hw core; configuration errors; `run --trace rtl` writes FST.
// Every fabric run is a forked child (SystemC elaborates once per process).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hw/allocator.h"
#include "sim/child_run.h"
#include "sim/config.h"
#include "sim/config_reader.h"
#include "tests/command.h"
#include "tests/same_results.h"
#include "tlm/rtl_allocator.h"
#include "tlm/rtl_model.h"

namespace {

namespace fs = std::filesystem;
using fabricsim::sim::load_config;
using fabricsim::sim::run_in_child;
using fabricsim::tlm_fabric::AllocatorImpl;
using nlohmann::json;
using ::testing::HasSubstr;

const std::string kExample = std::string(FABRICSIM_SOURCE_DIR) + "/examples/single_switch.yaml";

// The deliberately broken iSLIP is a block of this test only: it joins the allocator table
// of this process (and of the children it forks for fabric runs) before any test runs.
[[maybe_unused]] const bool kBrokenAdded = [] {
  fabricsim::tlm_fabric::add_rtl_models(fabricsim::tlm_fabric::test_only_rtl_models());  // rtl/models/*, TEST_ONLY
  return true;
}();

/// The acceptance configuration: the example with VOQ buffers and iSLIP.
std::vector<std::string> example(std::vector<std::string> more = {}) {
  std::vector<std::string> o{"switch.buffer=voq", "switch.allocator=islip"};
  o.insert(o.end(), more.begin(), more.end());
  return o;
}

json run(const std::vector<std::string>& overrides) { return run_in_child(load_config(kExample, overrides)); }

/// Equal results.json but for the wall-clock section and the keys that select the allocator.
void expect_same_results(const json& a, const json& b) {
  fabricsim::testing::expect_same_results(a, b, {"switch.allocator_impl", "switch.rtl_variant", "switch.rtl_trace"});
}

std::uint64_t stat_sum(const json& r, const std::string& suffix) {
  std::uint64_t sum = 0;
  for (const auto& [name, value] : r.at("stats").items())
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      sum += value.at("value").get<std::uint64_t>();
  return sum;
}

/// A scratch folder per test.
fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("fabricsim_test_rtl_cosim_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

/// Fields of an FST file's header block (fstapi: tag 0, section length, start, end, ...).
struct FstHeader {
  bool ok = false;
  std::uint64_t start = 0, end = 0, vars = 0;
  int timescale = 0;  // power of ten of a time unit
};
FstHeader read_fst_header(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::vector<unsigned char> b(80, 0);
  f.read(reinterpret_cast<char*>(b.data()), static_cast<std::streamsize>(b.size()));
  FstHeader h;
  if (f.gcount() < 74 || b[0] != 0) return h;
  auto u64 = [&](std::size_t at) {
    std::uint64_t v = 0;
    for (std::size_t k = 0; k < 8; ++k) v = (v << 8) | b[at + k];
    return v;
  };
  h.ok = true;
  h.start = u64(9);
  h.end = u64(17);
  h.vars = u64(49);
  h.timescale = static_cast<signed char>(b[73]);
  return h;
}

// ---------------------------------------------------------------------------------------------
// Acceptance: the same fabric, the RTL allocator in place of the C++ core, the same results.

TEST(RtlCosim, RtlAllocatorGivesTheSameResultsAsTlm) {
  const json tlm = run(example());
  const json rtl = run(example({"switch.allocator_impl=rtl"}));
  ASSERT_FALSE(tlm.contains("error")) << tlm.dump();
  ASSERT_FALSE(rtl.contains("error")) << rtl.dump();
  // The run exercises the allocator: thousands of packets, and contention to resolve.
  EXPECT_GT(tlm["packets"]["delivered"].get<std::uint64_t>(), 5000u);
  EXPECT_GT(stat_sum(tlm, ".arbitration_conflicts"), 100u);
  expect_same_results(tlm, rtl);
}

TEST(RtlCosim, RtlAllocatorWithFourIterationsGivesTheSameResults) {
  const auto k4 = example({"switch.allocator_iterations=4", "simulation.duration=30us"});
  auto rtl_k4 = k4;
  rtl_k4.push_back("switch.allocator_impl=rtl");
  const json tlm = run(k4);
  const json rtl = run(rtl_k4);
  ASSERT_FALSE(rtl.contains("error")) << rtl.dump();
  expect_same_results(tlm, rtl);
}

// ---------------------------------------------------------------------------------------------
// Lockstep: both implementations, every round compared.

TEST(RtlCosim, LockstepPassesOnTheExample) {
  const json tlm = run(example());
  const json lock = run(example({"switch.allocator_impl=lockstep"}));
  ASSERT_FALSE(lock.contains("error")) << lock.dump();
  expect_same_results(tlm, lock);
}

TEST(RtlCosim, LockstepPassesWithFourIterations) {
  const json lock = run(example({"switch.allocator_impl=lockstep", "switch.allocator_iterations=4",
                                 "simulation.duration=30us"}));
  ASSERT_FALSE(lock.contains("error")) << lock.dump();
  EXPECT_GT(lock["packets"]["delivered"].get<std::uint64_t>(), 2000u);
}

// The docs/cosim.md recipe, followed for a second iSLIP written independently.
TEST(RtlCosim, IndependentAltIslipPassesLockstep) {
  for (const char* k : {"1", "4"}) {
    SCOPED_TRACE(std::string("iterations ") + k);
    const json lock = run(example({"switch.allocator_impl=lockstep", "switch.rtl_variant=islip_allocator_alt",
                                   std::string("switch.allocator_iterations=") + k, "simulation.duration=30us"}));
    ASSERT_FALSE(lock.contains("error")) << lock.dump();
    EXPECT_GT(lock["packets"]["delivered"].get<std::uint64_t>(), 2000u);
  }
}

TEST(RtlCosim, LockstepCatchesTheBrokenRtl) {
  const fs::path dir = scratch("broken");
  const json r = run(example({"switch.allocator_impl=lockstep", "switch.rtl_variant=islip_allocator_broken",
                              "switch.allocator_iterations=4", "switch.rtl_trace=" + dir.string()}));
  ASSERT_TRUE(r.contains("error")) << "the broken allocator went unnoticed";
  const std::string e = r["error"].get<std::string>();
  // Its registration declares the pointer registers' debug ports: the state check stops it
  // at the edge a pointer goes wrong, before any grant differs.
  EXPECT_THAT(e, HasSubstr("lockstep state divergence in fabric.sw0.allocator"));
  EXPECT_THAT(e, HasSubstr("islip_allocator_broken (top islip_allocator, 16x16, 4 iterations)"));
  EXPECT_THAT(e, ::testing::ContainsRegex("core-clock cycle [0-9]+ \\(t = [0-9.]+ ns\\), allocation round [0-9]+"));
  EXPECT_THAT(e, ::testing::ContainsRegex("state: +(grant_ptr|accept_ptr)\\[[0-9]+\\]: hw core [0-9]+, RTL [0-9]+ "
                                          "\\(debug port dbg_[ga]ptr_o\\)"));
  EXPECT_THAT(e, ::testing::ContainsRegex("requests: +in[0-9]+->\\{"));
  EXPECT_THAT(e, ::testing::ContainsRegex("grants \\(equal\\): [0-9]+->[0-9]+"));
  // The block and the model time of the mismatching edge, not the wake queue's process.
  EXPECT_THAT(e, ::testing::ContainsRegex("In block: fabric.sw0 @ [0-9]+ ps"));
  EXPECT_THAT(e, ::testing::Not(HasSubstr("wake_queue")));

  // The mismatch window and the full --trace waveform were written and are complete.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(e, m, std::regex("up to the mismatch: (\\S+)"))) << e;
  const fs::path window = m[1].str();
  EXPECT_EQ(window.parent_path(), dir);
  const FstHeader w = read_fst_header(window);
  ASSERT_TRUE(w.ok) << window;
  EXPECT_EQ(w.timescale, -12);
  EXPECT_GT(w.vars, 10u);
  EXPECT_LT(w.start, w.end);
  // The window ends at the mismatching round (its time, in ps, is in the message).
  ASSERT_TRUE(std::regex_search(e, m, std::regex("t = ([0-9.]+) ns")));
  const double mismatch_ps = std::stod(m[1].str()) * 1e3;
  EXPECT_NEAR(static_cast<double>(w.end), mismatch_ps, 1000.0);
  const FstHeader full = read_fst_header(dir / "fabric.sw0.allocator.islip_allocator_broken.fst");
  ASSERT_TRUE(full.ok);
  EXPECT_LE(full.start, w.start);
  EXPECT_GE(full.end, w.end - 1000);
}

TEST(RtlCosim, BrokenRtlAloneChangesTheResults) {
  // Without lockstep the broken block runs and quietly changes the outcome: why lockstep exists.
  const auto k4 = example({"switch.allocator_iterations=4", "simulation.duration=30us"});
  auto broken = k4;
  broken.insert(broken.end(), {"switch.allocator_impl=rtl", "switch.rtl_variant=islip_allocator_broken"});
  const json tlm = run(k4);
  const json rtl = run(broken);
  ASSERT_FALSE(rtl.contains("error")) << rtl.dump();
  const std::vector<std::string> keys{"allocator_impl", "rtl_variant", "rtl_trace"};
  EXPECT_FALSE(fabricsim::testing::comparable_results(tlm, keys) == fabricsim::testing::comparable_results(rtl, keys))
      << "the broken block changed nothing";
}

// ---------------------------------------------------------------------------------------------
// The transactor alone, outside a fabric: every registered model against its hw core on
// random rounds, a quarter of them never committed (arbitrate twice, no update_state).

/// Rounds until the model's grants first differ from the core's; -1 if they never do.
int first_difference(const fabricsim::tlm_fabric::RtlAllocatorModel& m, int rounds) {
  fabricsim::tlm_fabric::SwitchAllocatorSpec spec;
  spec.instance = "unit";
  spec.policy = m.policy;
  spec.shape = {m.ports, m.ports, m.iterations, 1};
  spec.impl = AllocatorImpl::rtl;
  spec.rtl_variant = m.name;
  auto rtl = fabricsim::tlm_fabric::make_switch_allocator(spec);
  auto core = fabricsim::hw::make_allocator(m.policy, spec.shape);
  std::mt19937_64 rng(5);
  for (int round = 0; round < rounds; ++round) {
    rtl->clear();
    core->clear();
    const unsigned density = 2 + static_cast<unsigned>(rng() % 4);  // 1/2 .. 1/5 of the pairs
    for (int i = 0; i < m.ports; ++i)
      for (int o = 0; o < m.ports; ++o)
        if (rng() % density == 0) {
          rtl->add_request({i, o, 0, 0});
          core->add_request({i, o, 0, 0});
        }
    const auto expect = core->arbitrate();
    if (rtl->arbitrate() != expect) return round;
    if (rtl->arbitrate() != expect) return round;  // again, no commit in between: same matching
    if (rng() % 4 != 0) {
      rtl->update_state();
      core->update_state();
    }
  }
  return -1;
}

TEST(RtlCosim, TransactorMatchesTheCoreRoundByRound) {
  for (const auto& m : fabricsim::tlm_fabric::rtl_allocator_models()) {
    SCOPED_TRACE(m.name + " " + std::to_string(m.ports) + "x" + std::to_string(m.ports) + " k=" +
                 std::to_string(m.iterations));
    const int diff = first_difference(m, 3000);
    if (m.name.find("broken") != std::string::npos) {
      EXPECT_GE(diff, 0) << "the broken block matched the core on every round";
    } else {
      EXPECT_EQ(diff, -1) << "first mismatch in round " << diff;
    }
  }
}

/// The broken block (16x16, k = 4) in lockstep outside a fabric, waveforms into `dir`;
/// `compare_state`: also its debug ports.
std::unique_ptr<fabricsim::hw::SwitchAllocator> broken_in_lockstep(const fs::path& dir, bool compare_state) {
  fabricsim::tlm_fabric::SwitchAllocatorSpec spec;
  spec.instance = "unit";
  spec.policy = "islip";
  spec.shape = {16, 16, 4, 1};
  spec.impl = AllocatorImpl::lockstep;
  spec.rtl_variant = "islip_allocator_broken";
  spec.waveform.dir = dir.string();
  spec.compare_state = compare_state;
  return fabricsim::tlm_fabric::make_switch_allocator(spec);
}

// A mismatch long after the start: the lockstep window (a second copy of the block
// following 32 rounds behind) must replay into the state the run had.
TEST(RtlCosim, LockstepWindowReplaysTheRoundsBeforeALateMismatch) {
  const fs::path dir = scratch("window");
  auto a = broken_in_lockstep(dir, false);  // the grants' mismatch, rounds after the pointer went wrong
  std::mt19937_64 rng(11);
  std::string error;
  int round = 0;
  try {
    // Rounds where everything matches in iteration 1, where the broken block is right:
    // permutations first (every pointer moves away from reset), then only input 0 ->
    // output 0 (the other pointers keep those values, long before the window starts).
    for (; round < 100; ++round) {
      std::vector<int> perm(16);
      for (int i = 0; i < 16; ++i) perm[i] = i;
      std::shuffle(perm.begin(), perm.end(), rng);
      a->clear();
      for (int i = 0; i < 16; ++i)
        if (round < 10 || i == 0) a->add_request({i, round < 10 ? perm[i] : 0, 0, 0});
      a->arbitrate();
      a->update_state();
    }
    // Dense random requests: later iterations add connections and the bug shows.
    for (; round < 2000; ++round) {
      a->clear();
      for (int i = 0; i < 16; ++i)
        for (int o = 0; o < 16; ++o)
          if (rng() % 2) a->add_request({i, o, 0, 0});
      a->arbitrate();
      a->update_state();
    }
  } catch (const fabricsim::tlm_fabric::RtlAllocatorMismatch& e) {
    error = e.what();
  }
  ASSERT_FALSE(error.empty()) << "no mismatch in " << round << " rounds";
  EXPECT_GT(round, 100);
  EXPECT_THAT(error, HasSubstr("allocation round " + std::to_string(round + 1)));
  EXPECT_THAT(error, HasSubstr("waveform of the 33 rounds up to the mismatch: " +
                               (dir / "unit.allocator.islip_allocator_broken.lockstep_mismatch.fst").string()));
  EXPECT_THAT(error, ::testing::Not(HasSubstr("no mismatch waveform")));
  const FstHeader h = read_fst_header(dir / "unit.allocator.islip_allocator_broken.lockstep_mismatch.fst");
  ASSERT_TRUE(h.ok);
  EXPECT_GT(h.vars, 10u);
}

/// Lockstep of the broken block on dense random rounds: the message of the first check
/// that fails, and the allocation round in it.
struct LockstepStop {
  std::string error;
  int round = -1;
};
LockstepStop lockstep_broken(bool compare_state) {
  auto a = broken_in_lockstep(scratch(compare_state ? "state" : "grants"), compare_state);
  std::mt19937_64 rng(3);
  LockstepStop stop;
  try {
    for (int round = 0; round < 2000; ++round) {
      a->clear();
      for (int i = 0; i < 16; ++i)
        for (int o = 0; o < 16; ++o)
          if (rng() % 3 == 0) a->add_request({i, o, 0, 0});
      a->arbitrate();
      a->update_state();
    }
  } catch (const fabricsim::tlm_fabric::RtlAllocatorMismatch& e) {
    stop.error = e.what();
    std::smatch m;
    if (std::regex_search(stop.error, m, std::regex("allocation round ([0-9]+)"))) stop.round = std::stoi(m[1].str());
  }
  return stop;
}

// The debug ports show the wrong pointer at the edge that writes it; the grants differ
// only in a later round whose matching reads that pointer.
TEST(RtlCosim, LockstepStateCheckStopsBeforeTheGrantsDiffer) {
  const LockstepStop grants = lockstep_broken(false);
  const LockstepStop state = lockstep_broken(true);
  ASSERT_GT(grants.round, 0) << grants.error;
  ASSERT_GT(state.round, 0) << state.error;
  EXPECT_THAT(grants.error, HasSubstr("lockstep mismatch in unit.allocator"));
  EXPECT_THAT(state.error, HasSubstr("lockstep state divergence in unit.allocator"));
  EXPECT_THAT(state.error, ::testing::ContainsRegex("(grant_ptr|accept_ptr)\\[[0-9]+\\]: hw core [0-9]+, RTL [0-9]+"));
  EXPECT_LT(state.round, grants.round) << state.error << "\n" << grants.error;
  // The window replays through the committing edge of the diverging round.
  EXPECT_THAT(state.error, HasSubstr("up to the mismatch: "));
  EXPECT_THAT(state.error, ::testing::Not(HasSubstr("no mismatch waveform")));
}

TEST(RtlCosim, TransactorRejectsRequestsOutsideItsPorts) {
  fabricsim::tlm_fabric::SwitchAllocatorSpec spec;
  spec.policy = "islip";
  spec.shape = {8, 8, 1, 1};
  spec.impl = AllocatorImpl::rtl;
  auto rtl = fabricsim::tlm_fabric::make_switch_allocator(spec);
  EXPECT_THROW(rtl->add_request({8, 0, 0, 0}), std::out_of_range);
  EXPECT_THROW(rtl->add_request({0, -1, 0, 0}), std::out_of_range);
}

// ---------------------------------------------------------------------------------------------
// Configuration: what exists is listed when something else is asked for.

TEST(RtlCosim, ModelTableListsTheBuilds) {
  const auto& models = fabricsim::tlm_fabric::rtl_allocator_models();
  auto has = [&](const std::string& top, int n, int k) {
    for (const auto& m : models)
      if (m.name == top && m.ports == n && m.iterations == k && m.policy == "islip") return true;
    return false;
  };
  EXPECT_TRUE(has("islip_allocator", 16, 1));
  EXPECT_TRUE(has("islip_allocator", 16, 4));
  EXPECT_TRUE(has("islip_allocator", 8, 1));
  EXPECT_TRUE(has("islip_allocator_alt", 16, 1));
  EXPECT_TRUE(has("islip_allocator_broken", 16, 4));
  for (const auto& m : models) EXPECT_EQ(m.test_only, m.name == "islip_allocator_broken") << m.name;
}

// The fabricsim binary has the production blocks only: the broken one is not a choice.
TEST(RtlCosim, BrokenRtlIsNotInTheFabricsimBinary) {
  const auto r = fabricsim::testing::run_command("validate " + kExample +
                                                 " --set switch.buffer=voq --set switch.allocator=islip"
                                                 " --set switch.allocator_iterations=4 --set switch.allocator_impl=lockstep"
                                                 " --set switch.rtl_variant=islip_allocator_broken");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("switch.rtl_variant: no RTL allocator 'islip_allocator_broken' in this build; valid: "
                                  "islip_allocator, islip_allocator_alt"));
  EXPECT_THAT(r.output, ::testing::Not(HasSubstr("(test only)")));
}

std::string config_error(const std::vector<std::string>& overrides) {
  try {
    load_config(kExample, overrides);
  } catch (const fabricsim::sim::ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(RtlCosim, ConfigErrorsListTheRtlBuilds) {
  EXPECT_THAT(config_error(example({"switch.allocator_impl=rtl", "switch.ports=12", "topology.endpoints=12"})),
              ::testing::AllOf(HasSubstr("switch.ports"), HasSubstr("no RTL build of islip_allocator for 12x12"),
                               HasSubstr("8x8 k=1, 16x16 k=1, 16x16 k=4")));
  EXPECT_THAT(config_error(example({"switch.allocator_impl=lockstep", "switch.allocator_iterations=2"})),
              ::testing::AllOf(HasSubstr("switch.allocator_iterations"), HasSubstr("16x16 ports with 2 iterations")));
  EXPECT_THAT(config_error(example({"switch.allocator_impl=rtl", "switch.allocator=round_robin"})),
              ::testing::AllOf(HasSubstr("switch.allocator"), HasSubstr("implements allocator 'islip'")));
  EXPECT_THAT(config_error(example({"switch.allocator_impl=rtl", "switch.rtl_variant=mine"})),
              ::testing::AllOf(HasSubstr("switch.rtl_variant"), HasSubstr("islip_allocator, islip_allocator_alt"),
                               HasSubstr("islip_allocator_broken (test only)")));
  EXPECT_THAT(config_error(example({"switch.allocator_impl=verilog"})),
              ::testing::AllOf(HasSubstr("switch.allocator_impl"), HasSubstr("tlm, rtl, lockstep")));
  EXPECT_EQ(config_error(example({"switch.allocator_impl=rtl"})), "");
}

TEST(RtlCosim, SwitchWithoutAnRtlBuildOfItsRadixStopsAtElaboration) {
  // A leaf-spine's radix comes from the topology, after the switch section is read: the
  // switch itself reports it when it builds its allocator.
  const json r = run_in_child(fabricsim::sim::load_config_text(R"(
simulation: {seed: 1, duration: 1us, warmup: 0us}
switch: {allocator: islip, allocator_impl: rtl}
topology: {kind: leaf_spine, radix: 4}
traffic: {pattern: uniform, load: 0.1, message_size: 1KiB}
)", "leaf_spine.yaml"));
  ASSERT_TRUE(r.contains("error"));
  EXPECT_THAT(r["error"].get<std::string>(),
              ::testing::AllOf(HasSubstr("leaf0: switch.allocator_impl rtl: switch.ports"),
                               HasSubstr("no RTL build of islip_allocator for 4x4"), HasSubstr("8x8 k=1")));
}

// ---------------------------------------------------------------------------------------------
// Waveforms on demand.

TEST(RtlCosim, TraceOptionWritesAnFstPerSwitch) {
  const fs::path dir = scratch("trace");
  const auto r = fabricsim::testing::run_command(
      "run " + kExample + " --set switch.buffer=voq --set switch.allocator=islip --set switch.allocator_impl=rtl "
      "--set simulation.duration=5us --set simulation.warmup=1us --out " + (dir / "out").string() +
      " --trace rtl");
  // 0, or 3 if a scoreboard invariant fails: that verdict is other tests' business, not --trace's.
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.output;
  const FstHeader h = read_fst_header(dir / "out" / "waveforms" / "fabric.sw0.allocator.islip_allocator.fst");
  ASSERT_TRUE(h.ok) << r.output;
  EXPECT_EQ(h.timescale, -12);
  EXPECT_GT(h.vars, 10u);
  EXPECT_GT(h.end, 1000000u);   // rounds drawn well into the run (ps)
  EXPECT_LE(h.end, 5000000u);   // and not past its end
  // With the C++ allocator there is nothing to trace, and the user is told so.
  const auto tlm = fabricsim::testing::run_command(
      "run " + kExample + " --set simulation.duration=2us --set simulation.warmup=0us --out " +
      (dir / "out2").string() + " --trace rtl");
  EXPECT_TRUE(tlm.exit_code == 0 || tlm.exit_code == 3) << tlm.output;
  EXPECT_THAT(tlm.output, HasSubstr("no RTL blocks in use"));
  EXPECT_FALSE(fs::exists(dir / "out2" / "waveforms" / "fabric.sw0.allocator.islip_allocator.fst"));
}

}  // namespace
