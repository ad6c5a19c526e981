// The RTL packet FIFO as the switch's input FIFOs (tlm/rtl_packet_fifo.h, docs/cosim.md):
// examples/single_switch.yaml (input_fifo; credit links: 4096-word FIFOs) gives the same
// results with switch.input_fifo_impl rtl as with tlm, cut-through and store-and-forward;
// lockstep passes (every cycle: words, packets, room, whether the head may leave, the head
// word); the mutant packet_fifo_wrap (rtl/models/packet_fifo_wrap.cmake, TEST_ONLY: the
// real RTL with its write pointer wrapping to slot 1) is stopped in lockstep at the first
// cycle its head differs, and alone by the switch's own checks; the transactor alone
// against the core; --trace; configuration errors. Every fabric run is a forked child.
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hw/packet_fifo.h"
#include "sim/child_run.h"
#include "sim/config.h"
#include "tests/fabrics.h"
#include "tests/same_results.h"
#include "tlm/rtl_model.h"
#include "tlm/rtl_packet_fifo.h"

namespace {

namespace fs = std::filesystem;
using fabricsim::hw::FifoMode;
using fabricsim::sim::load_config;
using fabricsim::sim::run_in_child;
using fabricsim::tlm_fabric::AllocatorImpl;
using nlohmann::json;
using ::testing::HasSubstr;

const std::string kExample = std::string(FABRICSIM_SOURCE_DIR) + "/examples/single_switch.yaml";

[[maybe_unused]] const bool kMutantAdded = [] {
  fabricsim::tlm_fabric::add_rtl_models(fabricsim::tlm_fabric::test_only_rtl_models());  // rtl/models/*, TEST_ONLY
  return true;
}();

/// The example (input FIFOs, load 0.8) for 20 us: a few thousand packets through every FIFO.
json run(std::vector<std::string> overrides) {
  overrides.insert(overrides.begin(), {"switch.buffer=input_fifo", "simulation.duration=20us", "simulation.warmup=5us"});
  return run_in_child(load_config(kExample, overrides));
}

void expect_same_results(const json& a, const json& b) {
  fabricsim::testing::expect_same_results(
      a, b, {"switch.input_fifo_impl", "switch.input_fifo_rtl_variant", "switch.rtl_trace", "switch.rtl_trace_scope"});
}

TEST(RtlPacketFifo, RtlGivesTheSameResultsAsTlm) {
  const fs::path dir = fs::temp_directory_path() / "fabricsim_test_rtl_packet_fifo_trace";
  fs::remove_all(dir);
  for (const std::string fwd : {"cut_through", "store_and_forward"}) {
    const std::string forwarding = "switch.forwarding=" + fwd;
    const json tlm = run({forwarding});
    // One FIFO's waveform on the way: --trace with a scope.
    const json rtl = run({forwarding, "switch.input_fifo_impl=rtl", "switch.rtl_trace=" + (dir / fwd).string(),
                          "switch.rtl_trace_scope=fabric.sw0.port3.vl0.input_fifo"});
    ASSERT_FALSE(tlm.contains("error")) << tlm.dump();
    ASSERT_FALSE(rtl.contains("error")) << rtl.dump();
    EXPECT_GT(tlm["packets"]["delivered"].get<std::uint64_t>(), 1000u) << fwd;
    expect_same_results(tlm, rtl);
    const json& waves = rtl["simulator"]["waveforms"];
    ASSERT_EQ(waves.size(), 1u) << waves.dump();
    EXPECT_EQ(waves[0]["block"], "fabric.sw0.port3.vl0.input_fifo");
    EXPECT_EQ(waves[0]["file"], (dir / fwd / "fabric.sw0.port3.vl0.input_fifo.packet_fifo.fst").string());
    EXPECT_GT(fs::file_size(waves[0]["file"].get<std::string>()), 1000u);
  }
}

TEST(RtlPacketFifo, LockstepPasses) {
  // Credit links (4096 words) store-and-forward; PFC links (1024 words: 256 KiB in 256 B
  // cells) cut-through.
  for (const std::vector<std::string>& o : std::vector<std::vector<std::string>>{
           {"switch.forwarding=store_and_forward"}, {"link.flow_control=pfc", "switch.forwarding=cut_through"}}) {
    const json tlm = run(o);
    std::vector<std::string> lock_o = o;
    lock_o.push_back("switch.input_fifo_impl=lockstep");
    const json lock = run(lock_o);
    ASSERT_FALSE(lock.contains("error")) << lock["error"];
    expect_same_results(tlm, lock);
  }
}

TEST(RtlPacketFifo, LockstepStopsTheMutantAtTheFirstDivergence) {
  const fs::path dir = fs::temp_directory_path() / "fabricsim_test_rtl_packet_fifo_mutant";
  fs::remove_all(dir);
  // 64 KiB on credit links: 1024-word FIFOs, whose write pointers wrap within the run.
  const json r = run({"switch.input_buffer=64KiB", "switch.input_fifo_impl=lockstep",
                      "switch.input_fifo_rtl_variant=packet_fifo_wrap", "switch.rtl_trace=" + dir.string()});
  ASSERT_TRUE(r.contains("error")) << "the mutant went unnoticed";
  const std::string e = r["error"].get<std::string>();
  EXPECT_THAT(e, ::testing::ContainsRegex("lockstep mismatch in fabric\\.sw0\\.port[0-9]+\\.vl0\\.input_fifo at "
                                          "core-clock cycle [0-9]+ \\(t = [0-9.]+ ns\\), FIFO cycle [0-9]+"));
  EXPECT_THAT(e, HasSubstr("hw core 'packet_fifo' and RTL packet_fifo_wrap (top packet_fifo, 1024 words, cut-through) "
                           "disagree"));
  // The counters agree: the head word is the first thing to differ, on a read or a write
  // cycle of the second lap.
  EXPECT_THAT(e, ::testing::ContainsRegex("output: +rd_data \\(the head word\\): hw core [0-9]+, RTL [0-9]+"));
  EXPECT_THAT(e, ::testing::ContainsRegex("cycle: +(read|write|idle)"));
  EXPECT_THAT(e, ::testing::ContainsRegex("waveform of the 257 rounds up to the mismatch: \\S+\\.input_fifo\\."
                                          "packet_fifo_wrap\\.lockstep_mismatch\\.fst"));
  EXPECT_TRUE(fs::exists(dir / "fabric.sw0.port0.vl0.input_fifo.packet_fifo_wrap.fst"));
}

TEST(RtlPacketFifo, MutantAloneIsStoppedByTheSwitch) {
  // Under rtl the twin decides: the switch finds another packet than the one granted at the
  // head or a packet of the wrong length, or the twin cannot deliver the packet's words.
  const json r = run({"switch.input_buffer=64KiB", "switch.input_fifo_impl=rtl",
                      "switch.input_fifo_rtl_variant=packet_fifo_wrap"});
  ASSERT_TRUE(r.contains("error")) << "the mutant went unnoticed";
  EXPECT_THAT(r["error"].get<std::string>(),
              ::testing::ContainsRegex("fabric\\.sw0(: input FIFO of port [0-9]+ VL 0 at |\\.port[0-9]+\\.vl0\\.input_fifo: "
                                       "RTL packet_fifo_wrap .* cannot read)"));
}

TEST(RtlPacketFifo, MutantIsNotInTheFabricsimBinary) {
  for (const auto& m : fabricsim::tlm_fabric::builtin_rtl_models()) EXPECT_NE(m.info.name, "packet_fifo_wrap");
}

// The transactor alone: random bulk writes and packet reads against the core, through
// full and empty, in both modes; the rtl block's answers and the lockstep block's equal
// the core's after every operation.
TEST(RtlPacketFifo, TransactorMatchesTheCoreOperationByOperation) {
  using fabricsim::tlm_fabric::PacketFifoBlock;
  for (const FifoMode mode : {FifoMode::kCutThrough, FifoMode::kStoreAndForward}) {
    fabricsim::hw::PacketFifo core({1024, mode});
    fabricsim::tlm_fabric::PacketFifoSpec spec;
    spec.hierarchy = "t.port0.vl0.input_fifo";
    spec.depth_words = 1024;
    spec.mode = mode;
    spec.impl = AllocatorImpl::rtl;
    auto rtl = fabricsim::tlm_fabric::make_packet_fifo(spec);
    spec.impl = AllocatorImpl::lockstep;
    auto lock = fabricsim::tlm_fabric::make_packet_fifo(spec);
    std::mt19937 rng(11);
    sc_core::sc_time t = sc_core::SC_ZERO_TIME;
    std::uint64_t id = 0, pops = 0;
    bool full = false, emptied = false;
    for (int op = 0; op < 3000; ++op) {
      t += sc_core::sc_time(40, sc_core::SC_NS);
      const std::size_t n = 1 + rng() % 40;
      const bool fill = (op / 500) % 2 == 0;  // phases that fill, then drain
      if (core.can_push(n) && (fill || rng() % 3 == 0)) {
        // A packet ends before the FIFO could fill with no complete packet to read.
        const bool last = rng() % 2 == 0 || !core.can_push(n + 40);
        core.push_words(n, ++id, last);
        for (PacketFifoBlock* b : {rtl.get(), lock.get()}) b->push_words(n, id, last, t);
      } else if (core.packets() > 0) {
        const std::size_t words = core.pop_packet();
        ASSERT_EQ(rtl->pop_packet(t), words) << op;
        ASSERT_EQ(lock->pop_packet(t), words) << op;
        ++pops;
      }
      full = full || !core.can_push(1);
      emptied = emptied || (full && core.empty());
      for (PacketFifoBlock* b : {rtl.get(), lock.get()}) {
        ASSERT_EQ(b->words(), core.words()) << op;
        ASSERT_EQ(b->packets(), core.packets()) << op;
        ASSERT_EQ(b->can_pop(), core.can_pop()) << op;
        ASSERT_EQ(b->can_push(n), core.can_push(n)) << op;
        if (core.can_pop()) {
          ASSERT_EQ(b->front(), core.front()) << op;
        }
      }
    }
    EXPECT_TRUE(full) << "the FIFO never filled";
    EXPECT_TRUE(emptied) << "the FIFO never drained after filling";
    EXPECT_GT(pops, 500u);
  }
}

TEST(RtlPacketFifo, ConfigErrorsNameTheKeyAndListTheBuilds) {
  try {
    load_config(kExample, {"switch.buffer=voq", "switch.input_fifo_impl=rtl"});
    ADD_FAILURE() << "input_fifo_impl accepted on voq";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("switch.input_fifo_impl: the RTL packet FIFO is the input FIFO of switch.buffer "
                                    "input_fifo; switch.buffer is voq"));
  }
  try {
    load_config(kExample, {"switch.input_fifo_impl=rtl", "switch.input_fifo_rtl_variant=nope"});
    ADD_FAILURE() << "unknown variant accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("switch.input_fifo_rtl_variant: no RTL packet FIFO 'nope' in this build; valid: "
                                    "packet_fifo"));
  }
  try {
    load_config(kExample, {"switch.input_fifo_impl=lockstep", "switch.input_buffer=128KiB"});
    ADD_FAILURE() << "unbuilt depth accepted";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("switch.input_buffer: switch.input_fifo_impl lockstep: the input FIFOs are 2048 "
                                    "words deep"));
    EXPECT_THAT(e.what(), HasSubstr("no RTL build of packet_fifo 2048 words deep (Verilator fixes parameters at build "
                                    "time); this build has: 1024, 4096 words. Add the depth to SIZES in "
                                    "rtl/models/packet_fifo.cmake"));
  }
  // An override's input FIFOs get the same check, naming its key.
  try {
    fabricsim::sim::load_config_text(fabricsim::testing::kLeafSpineRadix4, "ls.yaml",
                                     {"switch.tiers={spine: {input_fifo_impl: lockstep, input_buffer: 128KiB}}"});
    ADD_FAILURE() << "unbuilt depth accepted in a tier";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("switch.tiers.spine.input_buffer: switch.tiers.spine.input_fifo_impl lockstep: the "
                                    "input FIFOs are 2048 words deep"));
  }
}

}  // namespace
