// The wake queue's parallel lanes (tlm/wake_queue.h, WakeQueue::set_lanes): blocks split
// into lanes run ahead of the kernel in windows of the lookahead, one thread per lane,
// calls between lanes deferred to the window's end (docs/architecture.md, "Scheduling").
#include <algorithm>
#include <cstring>
#include <atomic>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

#include "tlm/sim_time.h"
#include "tlm/wake_queue.h"

namespace fabricsim::tlm_fabric {

void WakeQueue::set_lanes(int lanes) {
  if (lanes < 1) throw std::invalid_argument("wake queue: " + std::to_string(lanes) + " lanes (at least 1)");
  if (lanes > 1 && engine_ == Engine::kernel)
    throw std::invalid_argument("wake queue: the kernel engine runs on one lane, not " + std::to_string(lanes));
  if (!clients_.empty())
    throw std::logic_error("wake queue: lanes are set before any block is made (" + std::to_string(clients_.size()) +
                           " made)");
  lanes_.clear();
  for (int k = 0; k < lanes; ++k) lanes_.push_back(std::make_unique<Lane>(clients_, slot_shift_));
  every_lane_ = lanes > 1 ? std::make_unique<Lane>(clients_, slot_shift_) : nullptr;
  for (auto& lane : lanes_)
    for (auto& box : lane->outbox) box.resize(static_cast<std::size_t>(lanes));
  building_lane_ = 0;
}

void WakeQueue::set_lookahead(const sc_core::sc_time& lookahead) {
  if (lanes() > 1 && lookahead == sc_core::SC_ZERO_TIME)
    throw std::invalid_argument("wake queue: lanes need a lookahead above zero");
  lookahead_ = lookahead;
}

void WakeQueue::building_lane(int lane) {
  if (lane < 0 || lane >= lanes())
    throw std::invalid_argument("wake queue: lane " + std::to_string(lane) + " of " + std::to_string(lanes()));
  building_lane_ = lane;
}

void WakeQueue::check_lanes(const Client& c, const Lane& lane, const sc_core::sc_time& t) const {
  if (in_window_ && c.lane != detail::lane)
    throw std::logic_error("wake queue: a block of lane " + std::to_string(detail::lane) + " woke a block of lane " +
                           std::to_string(c.lane) + " during a parallel window; calls between lanes go through defer()");
  if (c.lane < 0 && !in_window_ && t < window_end_)
    throw std::logic_error("wake queue: a block that reads every lane was asked to wake at " + t.to_string() +
                           ", before the end of the last window " + window_end_.to_string() +
                           ": the lanes' lookahead is too long");
  if (lane.replaying && t < replay_floor_)
    throw std::logic_error("wake queue: a call deferred between lanes (made at " + sim_now().to_string() +
                           ") asked for a wake-up at " + t.to_string() + ", before the end of its window " +
                           replay_floor_.to_string() + ": the lanes' lookahead is too long");
}

// Parallel windows. Each window runs every lane's passes from the earliest request of
// any lane to the lookahead after it (or the limit), lane 0 on this thread and each
// other lane on a thread of its own. A lane first makes the calls the other lanes
// deferred to it in the window before (in the order of the lanes that made them), then
// its passes. Between windows this thread runs the window-end hooks.
sc_core::sc_time WakeQueue::run_windows(const sc_core::sc_time& limit, sc_core::sc_time now) {
  if (lookahead_ == sc_core::SC_ZERO_TIME) throw std::logic_error("wake queue: lanes without a lookahead");
  const int n = lanes();
  window_delta_ = delta_count();
  window_end_ = now;
  parity_ = 0;
  for (Lane* lane : all_lanes()) {
    lane->now = now;
    lane->passes = 0;
    lane->deferred = {false, false};
  }
  std::atomic<std::uint64_t> go{0};  // window number: the other lanes start it
  std::atomic<int> done{0};          // lanes that finished the window
  std::atomic<bool> quit{false};
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(n));
  auto run = [&](int k) {
    try {
      replay_into(k, 1 - parity_);
      run_lane(*lanes_[k], window_end_);
    } catch (...) {
      errors[k] = std::current_exception();
    }
  };
  auto wait_for = [](auto&& ready) {
    for (unsigned spins = 0; !ready(); ++spins)
      if (spins > 2000) std::this_thread::yield();
  };
  std::vector<std::thread> threads;
  for (int k = 1; k < n; ++k)
    threads.emplace_back([&, k] {
      detail::lane = k;
      detail::queue_now = &lanes_[k]->now;
      for (std::uint64_t seen = 0;;) {
        wait_for([&] { return go.load(std::memory_order_acquire) != seen || quit.load(std::memory_order_acquire); });
        if (quit.load(std::memory_order_acquire)) break;
        seen = go.load(std::memory_order_acquire);
        run(k);
        done.fetch_add(1, std::memory_order_release);
      }
    });
  struct Join {  // the threads stop however the windows end
    std::atomic<bool>& quit;
    std::vector<std::thread>& threads;
    ~Join() {
      quit.store(true, std::memory_order_release);
      for (auto& t : threads) t.join();
    }
  } join{quit, threads};
  dispatching_ = true;
  windowing_ = true;
  detail::queue_now = &lanes_[0]->now;
  for (;;) {
    // The next window starts at the earliest pass of any lane, or of a call deferred in
    // the last one (they act in this one or later).
    sc_core::sc_time start;
    bool have = next_request(start, false, false);
    for (auto& lane : lanes_) {
      if (lane->deferred[parity_] && (!have || lane->earliest_act[parity_] < start)) {
        start = lane->earliest_act[parity_];
        have = true;
      }
      lane->deferred[1 - parity_] = false;
    }
    // A block that reads every lane runs at its time before the blocks due then, once
    // every lane has run its passes before it and taken the calls made to it.
    sc_core::sc_time every;
    const bool every_due = every_lane_->next(every) && every < limit;
    if (every_due && (!have || !(start < every))) {
      replay_floor_ = window_end_;
      for (int k = 0; k < n; ++k) replay_into(k, parity_);
      for (auto& lane : lanes_) lane->deferred[parity_] = false;
      run_every_lane(every);
      if (stop_asked_) break;  // (a collective's end)
      continue;
    }
    if (!have || !(start < limit)) break;
    replay_floor_ = window_end_;
    window_end_ = limit - start > lookahead_ ? start + lookahead_ : limit;  // (no link between lanes: to the limit)
    if (every_due && every < window_end_) window_end_ = every;
    parity_ = 1 - parity_;
    done.store(0, std::memory_order_relaxed);
    in_window_ = true;
    go.fetch_add(1, std::memory_order_release);
    run(0);
    wait_for([&] { return done.load(std::memory_order_acquire) == n - 1; });
    in_window_ = false;
    ++windows_;
    for (const auto& e : errors)
      if (e) {
        dispatching_ = windowing_ = false;
        std::rethrow_exception(e);
      }
    if (serialise_) pack_between_lanes(parity_);
    for (auto& hook : window_end_hooks_) hook();
  }
  // What the last window deferred, before the run goes on in step with the kernel.
  replay_floor_ = window_end_;
  for (int k = 0; k < n; ++k) replay_into(k, parity_);
  dispatching_ = false;
  windowing_ = false;
  sc_core::sc_time last = now;
  for (Lane* lane : all_lanes()) {
    passes_ahead_ += lane->passes;
    last = std::max(last, lane->now);
  }
  now_ = last;
  detail::queue_now = &now_;
  return last;
}

void WakeQueue::run_every_lane(const sc_core::sc_time& at) {
  Lane& lane = *every_lane_;
  lane.pass_delta = window_delta_ + ++lane.passes;
  lane.now = at;
  // Every lane has run its passes before `at`: what it is asked for now runs then.
  for (auto& other : lanes_) other->now = at;
  detail::queue_now = &lane.now;
  lane.collect(at, lane.pass_delta);
  lane.call_due();
  detail::queue_now = &lanes_[0]->now;
}

std::vector<WakeQueue::Lane*> WakeQueue::all_lanes() {
  std::vector<Lane*> all;
  for (auto& lane : lanes_) all.push_back(lane.get());
  if (every_lane_) all.push_back(every_lane_.get());
  return all;
}

void WakeQueue::run_lane(Lane& lane, const sc_core::sc_time& end) {
  for (;;) {
    sc_core::sc_time next;
    if (!lane.next(next) || !(next < end)) return;
    lane.pass_delta = window_delta_ + ++lane.passes;
    lane.now = next;
    lane.collect(next, lane.pass_delta);
    lane.call_due();
  }
}

WakeQueue::Deferred& WakeQueue::deferred_slot(int to_lane, const sc_core::sc_time& made_at,
                                              const sc_core::sc_time& acts_at) {
  if (acts_at < window_end_)
    throw std::logic_error("wake queue: a call between lanes made at " + made_at.to_string() + " acts at " +
                           acts_at.to_string() + ", before the window's end " + window_end_.to_string() +
                           ": the lanes' lookahead is too long");
  Lane& from = *lanes_[detail::lane];
  if (!from.deferred[parity_] || acts_at < from.earliest_act[parity_]) from.earliest_act[parity_] = acts_at;
  from.deferred[parity_] = true;
  Deferred& d = from.outbox[parity_][to_lane].emplace_back();
  d.made_at = made_at;
  return d;
}

int WakeQueue::add_receiver(std::function<void(const unsigned char* bytes)> receive) {
  receivers_.push_back(std::move(receive));
  return static_cast<int>(receivers_.size()) - 1;
}

namespace {
// A call made from bytes: its receiver and where its bytes are.
struct Received {
  int receiver;
  int parity;
  std::size_t offset;
};
}  // namespace

void WakeQueue::pack_between_lanes(int parity) {
  // In the order the calls were made, so the calls to a lane keep their order.
  Bytes& bytes = received_[parity];
  bytes.clear();
  for (auto& from : lanes_)
    for (auto& calls : from->outbox[parity])
      for (Deferred& d : calls) {
        if (!d.pack) continue;
        const Received r{d.receiver, parity, bytes.size()};
        d.pack(d, bytes);
        d.pack = nullptr;
        std::memcpy(d.call.data(), &r, sizeof r);
        d.run = [](const Deferred& x) {
          Received at;
          std::memcpy(&at, x.call.data(), sizeof at);
          WakeQueue& q = *made_;
          q.receivers_[static_cast<std::size_t>(at.receiver)](q.received_[static_cast<std::size_t>(at.parity)].data() +
                                                             at.offset);
        };
      }
}

void WakeQueue::replay_into(int k, int parity) {
  // Each deferred call at the time it was made: what it asks for acts after the window
  // it was made in (notify_at checks).
  Lane& lane = *lanes_[k];
  const sc_core::sc_time* const own = detail::queue_now;
  lane.replaying = true;
  for (auto& from : lanes_) {
    auto& calls = from->outbox[parity][k];
    for (Deferred& d : calls) {
      lane.replay_now = d.made_at;
      detail::queue_now = &lane.replay_now;
      d.run(d);
    }
    calls.clear();
  }
  lane.replaying = false;
  detail::queue_now = own;
}

}  // namespace fabricsim::tlm_fabric
