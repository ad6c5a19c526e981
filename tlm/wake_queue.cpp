// The wake queue (tlm/wake_queue.h).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "tlm/wake_queue.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "tlm/sim_time.h"

namespace fabricsim::tlm_fabric {

namespace {

// The delta cycle a request is made in. Before the simulation starts (a block's
// constructor or end_of_elaboration) sc_delta_count() is already 0, the number of the
// first delta cycle, where such a request runs: it gets a number of its own.
constexpr std::uint64_t kBeforeSimulation = ~std::uint64_t{0} - 1;

const sc_core::sc_time& kernel_now() { return sc_core::sc_get_curr_simcontext()->time_stamp(); }

}  // namespace

void EarliestNotify::notify_at(const sc_core::sc_time& t) {
  // A kernel event: the kernel's own time and delta cycle.
  const sc_core::sc_time now = kernel_now();
  const std::uint64_t delta = sc_core::sc_is_running() ? sc_core::sc_delta_count() : kBeforeSimulation;
  // Forget a notification the kernel has already fired.
  if (pending_ == Pending::timed && at_ <= now) pending_ = Pending::none;
  if (pending_ == Pending::delta && delta_ != delta) pending_ = Pending::none;
  if (pending_ == Pending::delta) return;
  if (t <= now) {
    pending_ = Pending::delta;
    delta_ = delta;
    event_.notify(sc_core::SC_ZERO_TIME);
    return;
  }
  if (pending_ == Pending::timed && at_ <= t) return;
  pending_ = Pending::timed;
  at_ = t;
  event_.notify(t - now);
}

WakeQueue& WakeQueue::instance() {
  // Never destroyed: its event and process belong to the kernel until the process exits.
  if (!made_) made_ = new WakeQueue;
  return *made_;
}

WakeQueue::WakeQueue() {
  // A slot: the widest power of two of kernel time units not above kMaxSlotWidthNs (a
  // shift, not a division, finds a request's slot).
  const std::uint64_t units = sc_core::sc_time(kMaxSlotWidthNs, sc_core::SC_NS).value();
  while (slot_shift_ < 63 && (std::uint64_t{2} << slot_shift_) <= units) ++slot_shift_;
  set_lanes(1);
  sc_core::sc_spawn_options options;
  options.spawn_method();
  options.set_sensitivity(&wake_.event());
  options.dont_initialize();
  sc_core::sc_spawn([this] { dispatch(); }, sc_core::sc_gen_unique_name("fabricsim_wake_queue"), &options);
}

WakeQueue::Lane::Lane(std::vector<Client>& clients, unsigned slot_shift)
    : clients_(clients), wheel_(kSlots, kNone), occupied_(kSlots / 64, 0), slot_shift_(slot_shift) {}

void WakeQueue::set_lanes(int lanes) {
  if (lanes < 1) throw std::invalid_argument("wake queue: " + std::to_string(lanes) + " lanes (at least 1)");
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

int WakeQueue::add(std::function<void()> on_wake, bool reads_every_lane, const sc_core::sc_object* owner) {
  owners_.push_back(owner);
  Client c;
  c.on_wake = std::move(on_wake);
  c.lane = reads_every_lane && every_lane_ ? -1 : building_lane_;  // (one lane: with the blocks)
  clients_.push_back(std::move(c));
  for (auto& lane : lanes_) lane->fit(clients_.size());
  if (every_lane_) every_lane_->fit(clients_.size());
  return static_cast<int>(clients_.size()) - 1;
}

void WakeQueue::remove(int client) {
  Client& c = clients_[client];
  lane_of(c).erase_pending(c);
  c = Client{};
  owners_[static_cast<std::size_t>(client)] = nullptr;
}

std::uint64_t WakeQueue::delta() const {
  if (dispatching_) return pass_delta_;
  return sc_core::sc_is_running() ? delta_count() : kBeforeSimulation;
}

std::uint64_t WakeQueue::delta_for(const Lane& lane) const {
  // In windows (and making their deferred calls) each lane numbers its own passes.
  return windowing_ ? lane.pass_delta : delta();
}

void WakeQueue::notify_at(int client, const sc_core::sc_time& t) {
  Client& c = clients_[client];
  Lane& lane = lane_of(c);
  if (windowing_) check_lanes(c, lane, t);
  const sc_core::sc_time now = sim_now();
  const std::uint64_t delta = delta_for(lane);
  // The kernel fired a timed request at its time, before any process ran: it runs in
  // this pass whatever comes now (an entry of its own, no longer the pending one).
  if (c.where != Where::none && c.timed_at <= now) lane.fire(c);
  if (c.delta_asked == delta) return;  // runs in the next delta cycle: nothing replaces that
  if (t <= now) {
    c.delta_asked = delta;
    lane.erase_pending(c);  // a delta notification cancels a timed one
    lane.asked_now.push_back({delta, client});
    if (!dispatching_) wake_.notify_at(now);
    return;
  }
  if (c.where != Where::none) {
    if (c.timed_at <= t) return;
    lane.erase_pending(c);
  }
  lane.insert_pending(client, t);
  if (!dispatching_) wake_.notify_at(t);
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

void WakeQueue::Lane::insert(const Due& e) {
  if (e.pending) insert_pending(e.client, e.at);
  else fired_.push_back(e);
}

void WakeQueue::Lane::insert_pending(int client, const sc_core::sc_time& t) {
  Client& c = clients_[client];
  c.timed_at = t;
  const std::uint64_t s = slot_of(t);
  if (s < base_ + kSlots) {
    std::uint32_t& head = slot(s);
    c.where = Where::wheel;
    c.next = head;
    head = static_cast<std::uint32_t>(client);
    occupied_word(s) |= slot_bit(s);
    return;
  }
  c.where = Where::overflow;
  overflow_.push_back({t, client, true});
  sift_up(overflow_.size() - 1);
}

void WakeQueue::Lane::erase_pending(Client& c) {
  // Both take the entry's client out of the queue (where = none).
  if (c.where == Where::wheel) unlink(c);
  else if (c.where == Where::overflow) erase_overflow(c.index);
}

void WakeQueue::Lane::fire(Client& c) {
  if (c.where == Where::wheel) {
    unlink(c);
    fired_.push_back({c.timed_at, static_cast<int>(&c - clients_.data()), false});
  } else {
    overflow_[c.index].pending = false;
    c.where = Where::none;
  }
}

void WakeQueue::Lane::unlink(Client& c) {
  const std::uint64_t s = slot_of(c.timed_at);
  const auto k = static_cast<std::uint32_t>(&c - clients_.data());
  std::uint32_t* link = &slot(s);
  while (*link != k) link = &clients_[*link].next;
  *link = c.next;
  c.where = Where::none;
  if (slot(s) == kNone) mark_empty(s);
}

void WakeQueue::Lane::advance(std::uint64_t to_slot) {
  if (to_slot <= base_) return;
  // Slots before to_slot are empty (their times have passed and ran), so the wheel
  // moves on; overflow requests now within its span move in.
  base_ = to_slot;
  while (!overflow_.empty() && slot_of(overflow_.front().at) < base_ + kSlots) {
    const Due e = overflow_.front();
    erase_overflow(0);
    insert(e);
  }
}

bool WakeQueue::Lane::earliest(sc_core::sc_time& at) const {
  bool have = !overflow_.empty();
  if (have) at = overflow_.front().at;
  for (const Due& e : fired_)
    if (!have || e.at < at) {
      at = e.at;
      have = true;
    }
  // The first occupied slot from the base on (cyclically), and the earliest entry in it.
  const std::size_t words = kSlots / 64, first = static_cast<std::size_t>(base_ & (kSlots - 1));
  for (std::size_t k = 0; k <= words; ++k) {
    const std::size_t w = (first / 64 + k) % words;
    std::uint64_t bits = occupied_[w];
    if (k == 0) bits &= ~std::uint64_t{0} << (first & 63);  // from the base on (k == words: the rest of that word)
    if (!bits) continue;
    for (std::uint32_t c = wheel_[w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))]; c != kNone;
         c = clients_[c].next)
      if (!have || clients_[c].timed_at < at) {
        at = clients_[c].timed_at;
        have = true;
      }
    break;
  }
  return have;
}

// The overflow heap is 4-ary: half the levels of a binary one, and a node's four
// children share a cache line or two.
void WakeQueue::Lane::place(std::size_t i, const Due& e) {
  overflow_[i] = e;
  if (e.pending) clients_[e.client].index = static_cast<std::uint32_t>(i);
}

void WakeQueue::Lane::sift_up(std::size_t i) {
  const Due e = overflow_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!(overflow_[parent] > e)) break;
    place(i, overflow_[parent]);
    i = parent;
  }
  place(i, e);
}

void WakeQueue::Lane::sift_down(std::size_t i) {
  const Due e = overflow_[i];
  const std::size_t n = overflow_.size();
  for (;;) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t least = first;
    for (std::size_t c = first + 1; c < first + 4 && c < n; ++c)
      if (overflow_[least] > overflow_[c]) least = c;
    if (!(e > overflow_[least])) break;
    place(i, overflow_[least]);
    i = least;
  }
  place(i, e);
}

void WakeQueue::Lane::erase_overflow(std::size_t i) {
  if (overflow_[i].pending) clients_[overflow_[i].client].where = Where::none;
  const Due last = overflow_.back();
  overflow_.pop_back();
  if (i == overflow_.size()) return;
  place(i, last);
  if (i > 0 && overflow_[(i - 1) / 4] > last) sift_up(i);
  else sift_down(i);
}

void WakeQueue::dispatch() {
  try {
    dispatch_passes();
  } catch (const BlockError&) {
    if (until_ == sc_core::SC_ZERO_TIME) throw;  // a plain sc_start: through the kernel
    // simulate_for throws it once the kernel has stopped, with the block's own context.
    failure_ = std::current_exception();
    dispatching_ = false;
    sc_core::sc_stop();
  }
}

void WakeQueue::dispatch_passes() {
  if (stop_on_wake_) {  // the kernel has moved to where a pass ahead of it stopped
    stop_on_wake_ = false;
    --passes_ahead_;  // this delta cycle of the kernel's only moves it there: not one of the model's
    sc_core::sc_stop();
    return;
  }
  // Back in step with the kernel however this ends (a block may throw).
  struct InStep {
    ~InStep() { detail::queue_now = nullptr; }
  } in_step;
  sc_core::sc_time now = kernel_now();
  std::uint64_t delta = this->delta();
  // The queue may run ahead up to the kernel's next activity (now when something else
  // is due now) and the end of the run, exclusive; not once a kernel process stopped the
  // run in this delta cycle (the watchdog): the kernel would not step further.
  const bool may_run_ahead =
      until_ > now && sc_core::sc_get_curr_simcontext()->sim_status() == sc_core::SC_SIM_OK;
  const sc_core::sc_time kernel_next = may_run_ahead ? kernel_next_activity() : now;
  const sc_core::sc_time limit = std::min(until_, kernel_next);
  bool ahead = false;  // in_step ends it on return
  for (;;) {
    run_pass(now, delta);
    if (stop_asked_) break;
    // The next pass: requests for now in the next delta cycle, else the earliest timed one.
    sc_core::sc_time next;
    if (!next_request(next) || !(next < limit)) break;
    if (lanes() > 1) {  // the lanes go on in parallel windows
      now = run_windows(limit, now);
      ahead = true;
      break;
    }
    ++passes_ahead_;
    ++delta;  // delta_count(): the kernel's own count stays while the queue runs ahead
    now = next;
    now_ = now;
    if (!ahead) detail::queue_now = &now_;
    ahead = true;
  }
  // Passes ahead of the kernel must leave it alone: a kernel event notified there would
  // be timed from the kernel's older time.
  if (ahead && kernel_next_activity() != kernel_next)
    throw std::logic_error("wake queue: a SystemC event was notified during passes run ahead of the kernel (up to " +
                           now.to_string() + "); blocks and testbenches must wake through WakeEvent and read the time "
                           "through sim_now() (tlm/wake_queue.h)");
  if (stop_asked_) {
    stop_asked_ = false;
    // The run ends at the time the model stopped: where the queue ran ahead, the kernel
    // first moves there.
    if (!ahead) {
      sc_core::sc_stop();
    } else {
      stop_on_wake_ = true;
      wake_.notify_at(now);
    }
    return;
  }
  arm(now);
}

sc_core::sc_time WakeQueue::kernel_next_activity() {
  return kernel_now() + sc_core::sc_time_to_pending_activity(sc_core::sc_get_curr_simcontext());
}

bool WakeQueue::next_request(sc_core::sc_time& at, bool timed_only, bool with_every_lane) const {
  bool have = false;
  auto consider = [&](const Lane& lane) {
    sc_core::sc_time t;
    if ((timed_only ? lane.earliest(t) : lane.next(t)) && (!have || t < at)) {
      at = t;
      have = true;
    }
  };
  for (const auto& lane : lanes_) consider(*lane);
  if (every_lane_ && with_every_lane) consider(*every_lane_);
  return have;
}

void WakeQueue::run_pass(const sc_core::sc_time& now, std::uint64_t delta) {
  // Blocks are registered at elaboration, so clients_ does not move during a call. What
  // they ask for is armed once, after the last of them (re-arming the kernel event for
  // each earlier time would leave a cancelled notification in the kernel's queue each time).
  dispatching_ = true;
  pass_delta_ = delta;
  if (every_lane_) {  // made before the blocks: first in handle order
    every_lane_->now = now;
    every_lane_->collect(now, delta);
    every_lane_->call_due();
  }
  for (auto& lane : lanes_) {
    lane->now = now;
    lane->collect(now, delta);
    lane->call_due();
  }
  dispatching_ = false;
}

void WakeQueue::Lane::collect(const sc_core::sc_time& at, std::uint64_t delta) {
  // Timed requests for `at`, in (time, handle) order: the kernel (or the queue running
  // ahead) woke the queue at the earliest, so they are all in now's slot once the wheel
  // has moved up to it.
  const std::uint64_t s = slot_of(at);
  advance(s);
  due_.clear();
  if (!fired_.empty()) {
    std::size_t kept = 0;
    for (const Due& e : fired_) {
      if (e.at <= at) due_.push_back(e);
      else fired_[kept++] = e;
    }
    fired_.resize(kept);
  }
  for (std::uint32_t* link = &slot(s); *link != kNone;) {
    Client& c = clients_[*link];
    if (c.timed_at <= at) {
      due_.push_back({c.timed_at, static_cast<int>(*link), true});
      c.where = Where::none;
      *link = c.next;
    } else {
      link = &c.next;
    }
  }
  if (slot(s) == kNone) mark_empty(s);
  run_.clear();
  if (due_.size() == 1) run_.push_back(due_[0].client);  // one block: nothing to order
  else if (!due_.empty()) order_due();
  // Requests for now made in an earlier delta cycle, in request order; those made in
  // this one (by a process the kernel ran before this pass) wait for the next. A block
  // is in run_ once: its timed run is due in the first delta cycle at its time, its
  // requests for now in later ones, one per delta cycle.
  std::size_t later = 0;
  for (const DeltaDue& r : asked_now) {
    if (r.delta == delta) asked_now[later++] = r;
    else run_.push_back(r.client);
  }
  asked_now.resize(later);
}

void WakeQueue::Lane::call_due() {
  for (const int k : run_)
    if (clients_[k].on_wake) try {
        clients_[k].on_wake();
      } catch (...) {
        WakeQueue::instance().rethrow_from(k, now);
      }
}

void WakeQueue::rethrow_from(int client, const sc_core::sc_time& at) const {
  const sc_core::sc_object* owner = owners_[static_cast<std::size_t>(client)];
  const std::string where = "In block: " + std::string(owner ? owner->name() : "wake-up " + std::to_string(client)) +
                            " @ " + at.to_string();
  try {
    throw;
  } catch (const BlockError&) {
    throw;
  } catch (const std::exception& e) {
    throw BlockError(std::string(e.what()) + "\n" + where);
  }
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

void WakeQueue::Lane::order_due() {
  // The due requests are nearly always all for exactly now (the kernel wakes the queue
  // at the earliest), one per block: then a bitmap over the handles puts them in order
  // in one pass, where a large fabric wakes hundreds of blocks at one instant. Where the
  // bitmap would be long for the few blocks due, sort.
  bool by_bitmap = due_.size() >= 8 && marks_.size() <= 8 * due_.size();
  for (std::size_t i = 1; by_bitmap && i < due_.size(); ++i) by_bitmap = due_[i].at == due_[0].at;
  if (by_bitmap) {
    for (const Due& d : due_) {
      std::uint64_t& word = marks_[static_cast<std::size_t>(d.client) / 64];
      const std::uint64_t bit = std::uint64_t{1} << (d.client & 63);
      by_bitmap = by_bitmap && !(word & bit);  // a block twice (never seen): sort instead
      word |= bit;
    }
    for (std::size_t w = 0; w < marks_.size(); ++w) {
      for (std::uint64_t bits = marks_[w]; bits; bits &= bits - 1)
        if (by_bitmap) run_.push_back(static_cast<int>(w * 64) + __builtin_ctzll(bits));
      marks_[w] = 0;
    }
    if (by_bitmap) return;
  }
  // Most passes run one or two blocks: an insertion sort, where std::sort's set-up cost
  // more than the sorting (the keys (time, handle) are unique: any sort gives one order).
  if (due_.size() <= 16) {
    for (std::size_t i = 1; i < due_.size(); ++i)
      for (std::size_t j = i; j > 0 && due_[j - 1] > due_[j]; --j) std::swap(due_[j - 1], due_[j]);
  } else {
    std::sort(due_.begin(), due_.end(), [](const Due& a, const Due& b) { return b > a; });
  }
  for (const Due& d : due_) run_.push_back(d.client);
}

void WakeQueue::arm(const sc_core::sc_time& now) {
  // Requests for now made in the last pass run in the next delta cycle at the queue's
  // time (a timed notification where the queue ran ahead of the kernel).
  for (const auto& lane : lanes_)
    if (!lane->asked_now.empty()) {
      wake_.notify_at(now);
      break;
    }
  sc_core::sc_time at;
  if (next_request(at, true)) wake_.notify_at(at);
}

void simulate_for(const sc_core::sc_time& duration) {
  WakeQueue& q = WakeQueue::instance();
  q.until_ = kernel_now() + duration;
  struct InStep {
    WakeQueue& q;
    ~InStep() { q.until_ = sc_core::SC_ZERO_TIME; }
  } in_step{q};
  sc_core::sc_start(duration);
  if (q.failure_) std::rethrow_exception(std::exchange(q.failure_, nullptr));
}

void stop_simulation() {
  WakeQueue& q = WakeQueue::instance();
  if (q.in_window_)
    throw std::logic_error("stop_simulation() while the wake queue's lanes run in parallel: a workload that stops "
                           "the run runs on one lane");
  // In a pass, after it: the kernel would finish the delta cycle anyway.
  if (q.dispatching_) q.stop_asked_ = true;
  else sc_core::sc_stop();
}

std::uint64_t delta_count() { return sc_core::sc_delta_count() + WakeQueue::instance().passes_ahead_; }

}  // namespace fabricsim::tlm_fabric
