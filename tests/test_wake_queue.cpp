// The wake queue (tlm/wake_queue.h) against the kernel: blocks woken through it run in
// exactly the delta cycles where method processes on plain sc_events would.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <systemc>

#include "sim/child_run.h"
#include "tlm/sim_time.h"
#include "tlm/wake_queue.h"

namespace {

using fabricsim::tlm_fabric::WakeEvent;
using nlohmann::json;
using sc_core::sc_time;

sc_time now() { return sc_core::sc_time_stamp(); }

// The reference: a method process statically sensitive to a plain sc_event.
class KernelBlock : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(KernelBlock);
  KernelBlock(sc_core::sc_module_name name, std::function<void()> body) : sc_module(name), body_(std::move(body)) {
    SC_METHOD(run);
    sensitive << event_;
    dont_initialize();
  }
  void notify_at(const sc_time& t) {
    if (t <= now()) event_.notify(sc_core::SC_ZERO_TIME);
    else event_.notify(t - now());
  }

 private:
  void run() { body_(); }
  std::function<void()> body_;
  sc_core::sc_event event_;
};

// Blocks below kBusy are asked for wakes a few nanoseconds ahead, in half nanoseconds (0:
// now, the next delta cycle; several requests in one slot of the queue's wheel); the
// others only microseconds ahead, a quarter nanosecond off any busy instant (beyond the
// wheel, in its overflow heap until their time comes near).
constexpr int kBusy = 32;
sc_time offset(std::mt19937& r, int to) {
  if (to >= kBusy) return sc_time(1000.25 + static_cast<double>(r() % 3000), sc_core::SC_NS);
  if (r() % 3 == 0) return sc_core::SC_ZERO_TIME;
  return sc_time(0.5 * static_cast<double>(1 + r() % 7), sc_core::SC_NS);
}

// Blocks that, each time they run, ask for wakes of themselves and the others at
// random offsets from their own random stream, so what a block asks depends only on
// when it ran.
struct Variant {
  std::vector<std::function<void(const sc_time&)>> notify;  // per block
  std::vector<std::mt19937> rng;
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> runs;  // per block: (time ps, delta cycle)
  std::vector<std::vector<std::uint64_t>> sequence;  // every run in order: time ps, delta cycle, block

  void ran(int k) {
    runs[k].emplace_back(now().value(), sc_core::sc_delta_count());
    sequence.push_back({now().value(), sc_core::sc_delta_count(), static_cast<std::uint64_t>(k)});
    std::mt19937& r = rng[k];
    const int asks = static_cast<int>(r() % 3);  // 0..2: dies out without the driver
    for (int i = 0; i < asks; ++i) {
      const int to = static_cast<int>(r() % notify.size());
      if (r() % 3 == 0) continue;
      notify[to](now() + offset(r, to));
    }
  }
};

// Asks both variants for the same wakes from outside any block, at random instants
// and delta cycles (a process the kernel may run before or after the queue's).
class Driver : public sc_core::sc_module {
 public:
  std::vector<std::uint64_t> asked_now;  // instants [ps] it asked for a wake now
  SC_HAS_PROCESS(Driver);
  Driver(sc_core::sc_module_name name, std::vector<Variant*> variants, int blocks)
      : sc_module(name), variants_(std::move(variants)), blocks_(blocks) {
    SC_METHOD(run);
    sensitive << event_;
  }

 private:
  void run() {
    for (int i = 0, n = 1 + static_cast<int>(rng_() % 2); i < n; ++i) {
      const int to = static_cast<int>(rng_() % static_cast<std::uint32_t>(blocks_));
      const sc_time at = now() + offset(rng_, to);
      if (at == now()) asked_now.push_back(at.value());
      for (Variant* v : variants_) v->notify[to](at);
    }
    // Now and then every block for one instant: many blocks due at once (the queue
    // orders a large pass by a bitmap of handles, a small one by sorting).
    if (rng_() % 64 == 0) {
      const sc_time at = now() + sc_time(3, sc_core::SC_NS);
      for (int to = 0; to < blocks_; ++to)
        for (Variant* v : variants_) v->notify[to](at);
    }
    // Now and then a pause of microseconds, for the busy blocks' wakes to die out and
    // the queue to hold only requests beyond its wheel.
    const auto gap = rng_() % 4;
    if (rng_() % 512 == 0) event_.notify(sc_time(static_cast<double>(2 + rng_() % 4), sc_core::SC_US));
    else if (gap == 0) event_.notify(sc_core::SC_ZERO_TIME);
    else event_.notify(sc_time(static_cast<double>(gap), sc_core::SC_NS));
  }
  std::vector<Variant*> variants_;
  int blocks_;
  std::mt19937 rng_{7};
  sc_core::sc_event event_;
};

std::string run_at(const json& runs, std::size_t i) { return i < runs.size() ? runs[i].dump() : "none"; }

TEST(WakeQueue, RunsBlocksInTheKernelsDeltaCycles) {
  const json r = fabricsim::sim::in_child([] {
    constexpr int kBlocks = 48;  // kBusy busy ones, 16 waiting microseconds
    Variant kernel, queue;
    std::vector<std::unique_ptr<KernelBlock>> kernel_blocks;
    std::vector<std::unique_ptr<WakeEvent>> queue_blocks;
    for (Variant* v : {&kernel, &queue}) {
      v->runs.resize(kBlocks);
      for (int k = 0; k < kBlocks; ++k) v->rng.emplace_back(100 + k);
    }
    for (int k = 0; k < kBlocks; ++k) {
      kernel_blocks.push_back(std::make_unique<KernelBlock>(("block" + std::to_string(k)).c_str(), [&kernel, k] { kernel.ran(k); }));
      kernel.notify.push_back([b = kernel_blocks.back().get()](const sc_time& t) { b->notify_at(t); });
      queue_blocks.push_back(std::make_unique<WakeEvent>([&queue, k] { queue.ran(k); }));
      queue.notify.push_back([w = queue_blocks.back().get()](const sc_time& t) { w->notify_at(t); });
    }
    Driver driver("driver", {&kernel, &queue}, kBlocks);
    sc_core::sc_start(sc_time(500, sc_core::SC_US));
    json out = json::array();
    for (const Variant* v : {&kernel, &queue}) out.push_back(v->runs);
    out.push_back(queue.sequence);
    out.push_back(driver.asked_now);
    return out;
  });
  ASSERT_FALSE(r.contains("error")) << r.dump();
  const auto& kernel = r.at(0);
  const auto& queue = r.at(1);
  std::size_t runs = 0, repeats = 0, waited = 0;  // runs; in the delta cycle after the block's previous run; of blocks kBusy..
  for (std::size_t k = 0; k < kernel.size(); ++k) {
    std::size_t same = 0;
    while (same < kernel[k].size() && same < queue[k].size() && kernel[k][same] == queue[k][same]) ++same;
    EXPECT_TRUE(same == kernel[k].size() && same == queue[k].size())
        << "block " << k << ", run " << same << ": kernel " << run_at(kernel[k], same) << ", queue " << run_at(queue[k], same)
        << " ([time ps, delta cycle])";
    runs += kernel[k].size();
    if (k >= static_cast<std::size_t>(kBusy)) waited += kernel[k].size();
    for (std::size_t i = 1; i < kernel[k].size(); ++i)
      repeats += kernel[k][i][0] == kernel[k][i - 1][0];
  }
  // Enough traffic to meet every rule: delta and timed requests, replaced and fired ones.
  EXPECT_GT(runs, 40000u);
  EXPECT_GT(repeats, 500u);
  EXPECT_GT(waited, 1000u);
  // The order within a delta cycle is the queue's own, and the model's results depend on
  // it: the first delta cycle at an instant holds only timed runs, in handle order
  // (unless the driver asked for a wake now at that instant, which may run first).
  const auto& sequence = r.at(2);
  const auto asked = r.at(3).get<std::vector<std::uint64_t>>();
  const std::set<std::uint64_t> asked_now(asked.begin(), asked.end());
  std::size_t ordered = 0;
  std::uint64_t first_delta = 0;
  for (std::size_t i = 1; i < sequence.size(); ++i) {
    const auto &prev = sequence[i - 1], &cur = sequence[i];
    if (cur[0] != prev[0]) {
      first_delta = cur[1];
    } else if (cur[1] == first_delta && prev[1] == first_delta && !asked_now.count(cur[0])) {
      ASSERT_LT(prev[2], cur[2]) << "blocks at " << cur[0] << " ps ran out of handle order";
      ++ordered;
    }
  }
  EXPECT_GT(ordered, 5000u);
}

// Requests made during elaboration (a traffic source's first message at t = 0, or
// later), before the kernel has run a delta cycle: each block runs once, where a method
// process on an sc_event notified the same way would.
TEST(WakeQueue, RequestsMadeDuringElaborationRunAsTheKernels) {
  const json r = fabricsim::sim::in_child([] {
    const std::vector<sc_time> asked{sc_core::SC_ZERO_TIME, sc_core::SC_ZERO_TIME, sc_time(2, sc_core::SC_NS),
                                     sc_time(5, sc_core::SC_US)};
    json kernel_runs = json::array(), queue_runs = json::array();
    std::vector<std::unique_ptr<KernelBlock>> kernel_blocks;
    std::vector<std::unique_ptr<WakeEvent>> queue_blocks;
    for (std::size_t k = 0; k < asked.size(); ++k) {
      auto ran = [k](json& runs) { runs.push_back({k, now().value(), sc_core::sc_delta_count()}); };
      kernel_blocks.push_back(std::make_unique<KernelBlock>(("elab" + std::to_string(k)).c_str(),
                                                            [&kernel_runs, ran] { ran(kernel_runs); }));
      queue_blocks.push_back(std::make_unique<WakeEvent>([&queue_runs, ran] { ran(queue_runs); }));
      kernel_blocks.back()->notify_at(asked[k]);
      queue_blocks.back()->notify_at(asked[k]);
    }
    sc_core::sc_start(sc_time(10, sc_core::SC_US));
    return json{{"kernel", kernel_runs}, {"queue", queue_runs}};
  });
  ASSERT_FALSE(r.contains("error")) << r.dump();
  auto sorted = [](json runs) {
    std::vector<json> v(runs.begin(), runs.end());
    std::sort(v.begin(), v.end());
    return json(v);
  };
  ASSERT_EQ(r["kernel"].size(), 4u) << r.dump();
  EXPECT_EQ(sorted(r["queue"]), sorted(r["kernel"])) << "[block, time ps, delta cycle]";
}

// Running ahead of the kernel (simulate_for): the blocks run at the same times, in the
// same delta cycles as they count them (delta_count()) and in the same order as when
// the kernel steps the time between passes; a kernel process now and then (a watchdog
// that also asks blocks for wakes) bounds how far the queue runs ahead; the run is cut
// into slices that often end exactly at a wake; a block stops the run.
json run_blocks(bool ahead) {
  return fabricsim::sim::in_child([ahead] {
    using fabricsim::tlm_fabric::delta_count;
    using fabricsim::tlm_fabric::sim_now;
    constexpr int kBlocks = 40;
    std::vector<std::unique_ptr<WakeEvent>> blocks;
    std::vector<std::mt19937> rng;
    json sequence = json::array();
    const sc_time stop_after(200, sc_core::SC_US);
    bool stopped = false;
    auto ran = [&](int k) {
      sequence.push_back({sim_now().value(), delta_count(), k});
      if (!stopped && sim_now() >= stop_after && k == 3) {
        stopped = true;
        fabricsim::tlm_fabric::stop_simulation();
      }
      std::mt19937& r = rng[k];
      for (int i = 0, asks = 1 + static_cast<int>(r() % 3); i < asks; ++i) {
        const int to = static_cast<int>(r() % kBlocks);
        if (r() % 4 == 0) continue;
        blocks[to]->notify_at(sim_now() + offset(r, to));
      }
    };
    for (int k = 0; k < kBlocks; ++k) {
      rng.emplace_back(300 + k);
      blocks.push_back(std::make_unique<WakeEvent>([&ran, k] { ran(k); }));
    }
    std::mt19937 watchdog_rng(11);
    KernelBlock* watchdog_p = nullptr;
    auto watchdog = std::make_unique<KernelBlock>("watchdog", [&] {
      sequence.push_back({sim_now().value(), delta_count(), -1});
      for (int k = 0; k < 4; ++k) blocks[watchdog_rng() % kBlocks]->notify_at(sim_now() + offset(watchdog_rng, 0));
      watchdog_p->notify_at(sim_now() + sc_time(static_cast<double>(1 + watchdog_rng() % 3000), sc_core::SC_NS));
    });
    watchdog_p = watchdog.get();
    for (int k = 0; k < kBlocks; k += 5) blocks[k]->notify_at(sc_time(k, sc_core::SC_NS));
    watchdog->notify_at(sc_time(500, sc_core::SC_NS));
    const sc_time end(400, sc_core::SC_US);
    if (ahead) {
      std::mt19937 slices(5);
      while (sc_core::sc_get_status() != sc_core::SC_STOPPED && sc_core::sc_time_stamp() < end) {
        const sc_time left = end - sc_core::sc_time_stamp();
        const sc_time slice(static_cast<double>(1 + slices() % 2000), sc_core::SC_NS);
        fabricsim::tlm_fabric::simulate_for(slice < left ? slice : left);
      }
    } else {
      sc_core::sc_start(end);
    }
    return json{{"sequence", sequence},
                {"end_ps", sc_core::sc_time_stamp().value()},
                {"kernel_deltas", sc_core::sc_delta_count()},
                {"deltas", delta_count()}};
  });
}

TEST(WakeQueue, RunsAheadOfTheKernelWithTheSameTimesAndOrder) {
  const json in_step = run_blocks(false);
  const json ahead = run_blocks(true);
  ASSERT_FALSE(in_step.contains("error")) << in_step.dump();
  ASSERT_FALSE(ahead.contains("error")) << ahead.dump();
  const auto& a = in_step["sequence"];
  const auto& b = ahead["sequence"];
  std::size_t same = 0;
  while (same < a.size() && same < b.size() && a[same] == b[same]) ++same;
  EXPECT_TRUE(same == a.size() && same == b.size())
      << "run " << same << ": in step " << run_at(a, same) << ", ahead " << run_at(b, same) << " ([time ps, delta cycle, block])";
  EXPECT_GT(a.size(), 100000u);
  // Stopped by a block after 200 us, at its time, in both.
  EXPECT_EQ(in_step["end_ps"], ahead["end_ps"]);
  EXPECT_GE(in_step["end_ps"].get<std::uint64_t>(), 200'000'000u);
  EXPECT_LT(in_step["end_ps"].get<std::uint64_t>(), 210'000'000u);
  // Ahead, most delta cycles are the queue's own passes, not the kernel's; after the
  // run (stopped), delta_count() is the run's count, the same both ways.
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(ahead["deltas"], in_step["deltas"]);
  EXPECT_EQ(in_step["deltas"], in_step["kernel_deltas"]);
  EXPECT_GE(in_step["deltas"].get<std::uint64_t>(), a.back()[1].get<std::uint64_t>());
  EXPECT_LT(ahead["kernel_deltas"].get<std::uint64_t>() * 4, a.back()[1].get<std::uint64_t>());
}

// A kernel process that stops the run (the fabric's watchdog) leaves nothing else to wait
// for in the kernel: the queue, due in the same delta cycle, runs that pass and no later
// one, as in step with the kernel.
TEST(WakeQueue, AKernelProcessStoppingTheRunStopsTheQueue) {
  for (const bool ahead : {false, true}) {
    const json r = fabricsim::sim::in_child([ahead] {
      KernelBlock stopper("stopper", [] { sc_core::sc_stop(); });
      std::unique_ptr<WakeEvent> block;
      std::uint64_t last_ps = 0;
      block = std::make_unique<WakeEvent>([&] {
        last_ps = fabricsim::tlm_fabric::sim_now().value();
        block->notify_at(fabricsim::tlm_fabric::sim_now() + sc_time(2, sc_core::SC_NS));
      });
      block->notify_at(sc_core::SC_ZERO_TIME);
      stopper.notify_at(sc_time(100, sc_core::SC_NS));
      if (ahead) fabricsim::tlm_fabric::simulate_for(sc_time(1, sc_core::SC_US));
      else sc_core::sc_start(sc_time(1, sc_core::SC_US));
      return json{{"last_ps", last_ps}, {"end_ps", sc_core::sc_time_stamp().value()}};
    });
    ASSERT_FALSE(r.contains("error")) << r.dump();
    EXPECT_EQ(r["end_ps"].get<std::uint64_t>(), 100'000u) << "ahead " << ahead;
    EXPECT_EQ(r["last_ps"].get<std::uint64_t>(), 100'000u) << "ahead " << ahead;
  }
}

// A block's exception names the block and the model time it was evaluating, not the
// queue's process and the kernel's time (behind where the queue ran ahead).
TEST(WakeQueue, ABlocksErrorNamesTheBlockAndTheModelTime) {
  const json r = fabricsim::sim::in_child([] {
    struct Block : sc_core::sc_module {
      std::unique_ptr<WakeEvent> wake;
      explicit Block(sc_core::sc_module_name n) : sc_module(n) {
        wake = std::make_unique<WakeEvent>([this] {
          const sc_time t = fabricsim::tlm_fabric::sim_now();
          if (t >= sc_time(100, sc_core::SC_NS)) throw std::runtime_error("broken");
          wake->notify_at(t + sc_time(3, sc_core::SC_NS));
        }, false, this);
        wake->notify_at(sc_core::SC_ZERO_TIME);
      }
    } block("sw0");
    std::string error;
    try {
      fabricsim::tlm_fabric::simulate_for(sc_time(1, sc_core::SC_US));
    } catch (const std::exception& e) {
      error = e.what();
    }
    return json{{"message", error}};
  });
  ASSERT_FALSE(r.contains("error")) << r.dump();
  EXPECT_EQ(r["message"].get<std::string>(), "broken\nIn block: sw0 @ 102 ns");
}

// A block that notifies a kernel event while the queue runs ahead of the kernel would
// have it timed from the kernel's older time: the run stops with an error instead.
TEST(WakeQueue, AKernelEventNotifiedAheadOfTheKernelIsAnError) {
  const json r = fabricsim::sim::in_child([] {
    int kernel_runs = 0;
    KernelBlock kernel("kernel", [&] { ++kernel_runs; });
    std::unique_ptr<WakeEvent> block;
    int runs = 0;
    block = std::make_unique<WakeEvent>([&] {
      if (++runs == 10) kernel.notify_at(fabricsim::tlm_fabric::sim_now() + sc_time(1, sc_core::SC_NS));
      block->notify_at(fabricsim::tlm_fabric::sim_now() + sc_time(2, sc_core::SC_NS));
    });
    block->notify_at(sc_core::SC_ZERO_TIME);
    fabricsim::tlm_fabric::simulate_for(sc_time(1, sc_core::SC_US));
    return json{{"runs", runs}, {"kernel_runs", kernel_runs}};
  });
  ASSERT_TRUE(r.contains("error")) << r.dump();
  EXPECT_NE(r["error"].get<std::string>().find("notified during passes run ahead of the kernel"), std::string::npos)
      << r.dump();
}

// Two lanes with a 10 ns lookahead: a block of lane 0 wakes every 3 ns for 1 us and, in
// each parallel window, calls `in_window(now, b, every)` with b a block of lane 1 and
// `every` a block that reads every lane, which wakes at 500 ns (between two windows). The
// windows run.
std::uint64_t two_lanes(const std::function<void(const sc_time& now, WakeEvent& b, WakeEvent& every)>& in_window) {
  auto& queue = fabricsim::tlm_fabric::WakeQueue::instance();
  queue.set_lanes(2);
  std::unique_ptr<WakeEvent> a, b, every;
  every = std::make_unique<WakeEvent>([] {}, true);
  queue.building_lane(1);
  b = std::make_unique<WakeEvent>([] {});
  queue.building_lane(0);
  a = std::make_unique<WakeEvent>([&] {
    const sc_time now = fabricsim::tlm_fabric::sim_now();
    if (queue.in_window()) in_window(now, *b, *every);
    a->notify_at(now + sc_time(3, sc_core::SC_NS));
  });
  queue.set_lookahead(sc_time(10, sc_core::SC_NS));
  a->notify_at(sc_core::SC_ZERO_TIME);
  every->notify_at(sc_time(500, sc_core::SC_NS));
  fabricsim::tlm_fabric::simulate_for(sc_time(1, sc_core::SC_US));
  return queue.windows();
}

// Lanes (WakeQueue::set_lanes) run in parallel windows no longer than the lookahead; a
// call between lanes that would act inside the window it was made in means the
// lookahead was too long: the run stops with an error, not with a silently late call.
// Within the lookahead, the deferred call runs in its lane before the next window.
TEST(WakeQueue, ADeferredCallActingInsideItsWindowIsAnError) {
  for (const int early_ns : {5, 20}) {
    const json r = fabricsim::sim::in_child([early_ns] {
      std::vector<std::uint64_t> calls_ps;  // when lane 1's block heard of lane 0's calls
      int deferred = 0;
      const std::uint64_t windows = two_lanes([&](const sc_time& now, WakeEvent& b, WakeEvent&) {
        ++deferred;
        const sc_time acts = now + sc_time(early_ns, sc_core::SC_NS);
        auto* calls = &calls_ps;
        auto* called = &b;
        const sc_time::value_type at = acts.value();
        fabricsim::tlm_fabric::WakeQueue::instance().defer(1, now, acts, [calls, called, at] {  // small, trivially copyable
          calls->push_back(fabricsim::tlm_fabric::sim_now().value());
          called->notify_at(sc_time::from_value(at));
        });
      });
      return json{{"deferred", deferred}, {"calls_ps", calls_ps}, {"windows", windows}};
    });
    if (early_ns < 10) {
      ASSERT_TRUE(r.contains("error")) << r.dump();
      EXPECT_NE(r["error"].get<std::string>().find("lookahead is too long"), std::string::npos) << r.dump();
    } else {
      ASSERT_FALSE(r.contains("error")) << r.dump();
      // Every call made, each at the time it was made (3 ns apart), in parallel windows.
      EXPECT_EQ(r["calls_ps"].size(), r["deferred"].get<std::size_t>());
      EXPECT_GT(r["deferred"].get<int>(), 300);
      EXPECT_GT(r["windows"].get<int>(), 50);
      EXPECT_EQ(r["calls_ps"][0].get<std::uint64_t>(), 3000u);
      EXPECT_EQ(r["calls_ps"][1].get<std::uint64_t>(), 6000u);
    }
  }
}

// The other rules of the lanes, each a clear error rather than a race or a late wake-up:
// a block wakes a block of another lane only through defer(); a deferred call asks for
// nothing before the end of the window it was made in; nothing asks a block
// that reads every lane for a time before the end of the last window (the lanes have
// run past it).
TEST(WakeQueue, BreakingTheLanesRulesIsAnError) {
  enum class Breach { straight, deferred, every_lane };
  for (const Breach breach : {Breach::straight, Breach::deferred, Breach::every_lane}) {
    const json r = fabricsim::sim::in_child([breach] {
      const std::uint64_t windows = two_lanes([breach](const sc_time& now, WakeEvent& b, WakeEvent& every) {
        const sc_time too_soon = now + sc_time(1, sc_core::SC_NS);
        if (breach == Breach::straight) {
          b.notify_at(too_soon);  // straight into lane 1
          return;
        }
        // What lane 0 defers in the window before `every` wakes (at 500 ns) is called
        // between the two, before `every` runs.
        if (breach == Breach::every_lane && !(now >= sc_time(497, sc_core::SC_NS) && now < sc_time(500, sc_core::SC_NS)))
          return;
        auto* called = breach == Breach::deferred ? &b : &every;
        const sc_time::value_type at = too_soon.value();
        fabricsim::tlm_fabric::WakeQueue::instance().defer(
            1, now, now + sc_time(20, sc_core::SC_NS), [called, at] { called->notify_at(sc_time::from_value(at)); });
      });
      return json{{"windows", windows}};
    });
    ASSERT_TRUE(r.contains("error")) << r.dump();
    const char* expected = breach == Breach::straight   ? "calls between lanes go through defer()"
                           : breach == Breach::deferred ? "before the end of its window"
                                                        : "a block that reads every lane was asked to wake";
    EXPECT_NE(r["error"].get<std::string>().find(expected), std::string::npos) << r.dump();
  }
}

}  // namespace
