// The wake queue (tlm/wake_queue.h).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "tlm/wake_queue.h"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

#include "tlm/distributed.h"
#include "tlm/sim_time.h"

namespace fabricsim::tlm_fabric {

const hw::EnumNames<Engine>& engine_names() {
  static const hw::EnumNames<Engine> names{{Engine::wheel, "wheel"}, {Engine::kernel, "kernel"}};
  return names;
}

std::string_view to_string(Engine e) { return hw::name_of(engine_names(), e); }

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

int WakeQueue::add(std::function<void()> on_wake, bool reads_every_lane, const sc_core::sc_object* owner) {
  owners_.push_back(owner);
  Client c;
  c.on_wake = std::move(on_wake);
  c.lane = reads_every_lane && every_lane_ ? -1 : building_lane_;  // (one lane: with the blocks)
  clients_.push_back(std::move(c));
  for (auto& lane : lanes_) lane->fit(clients_.size());
  if (every_lane_) every_lane_->fit(clients_.size());
  const int client = static_cast<int>(clients_.size()) - 1;
  if (engine_ == Engine::kernel) {
    // A method process on an sc_event of its own, as a plain SystemC block has.
    kernel_events_.push_back(std::make_unique<sc_core::sc_event>());
    sc_core::sc_spawn_options options;
    options.spawn_method();
    options.set_sensitivity(kernel_events_.back().get());
    options.dont_initialize();
    const std::string name = owner ? std::string(owner->basename()) + "_wake" : "fabricsim_wake";
    sc_core::sc_spawn([this, client] { run_in_kernel(client); }, sc_core::sc_gen_unique_name(name.c_str()), &options);
  }
  return client;
}

void WakeQueue::set_engine(Engine engine) {
  if (engine == engine_) return;
  if (!clients_.empty())
    throw std::logic_error("wake queue: the engine is set before any block is made (" +
                           std::to_string(clients_.size()) + " made)");
  if (engine == Engine::kernel && lanes() > 1)
    throw std::invalid_argument("wake queue: the kernel engine runs on one lane, not " + std::to_string(lanes()));
  engine_ = engine;
}

void WakeQueue::run_in_kernel(int client) {
  const std::function<void()>& on_wake = clients_[static_cast<std::size_t>(client)].on_wake;
  if (!on_wake) return;
  try {
    on_wake();
  } catch (...) {
    try {
      rethrow_from(client, kernel_now());
    } catch (const BlockError&) {
      fail_run();
    }
  }
}

void WakeQueue::fail_run() {
  if (until_ == sc_core::SC_ZERO_TIME) throw;  // a plain sc_start: through the kernel
  // simulate_for throws it once the kernel has stopped, with the block's own context.
  failure_ = std::current_exception();
  dispatching_ = false;
  sc_core::sc_stop();
}

void WakeQueue::remove(int client) {
  Client& c = clients_[client];
  lane_of(c).wheel.cancel(static_cast<std::uint32_t>(client));
  if (!kernel_events_.empty()) kernel_events_[static_cast<std::size_t>(client)]->cancel();
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
  TimingWheel& wheel = lane.wheel;
  const auto id = static_cast<std::uint32_t>(client);
  // The kernel fired a timed request at its time, before any process ran: it runs in
  // this pass whatever comes now (an entry of its own, no longer the pending one).
  if (wheel.pending(id) && wheel.when(id) <= now.value()) wheel.detach(id);
  if (c.delta_asked == delta) return;  // runs in the next delta cycle: nothing replaces that
  if (t <= now) {
    c.delta_asked = delta;
    wheel.cancel(id);  // a delta notification cancels a timed one
    lane.asked_now.push_back({delta, client});
    if (!dispatching_) wake_.notify_at(now);
    return;
  }
  if (wheel.pending(id)) {
    if (wheel.when(id) <= t.value()) return;
    wheel.cancel(id);
  }
  wheel.schedule(id, t.value());
  if (!dispatching_) wake_.notify_at(t);
}

void WakeQueue::dispatch() {
  try {
    dispatch_passes();
  } catch (const BlockError&) {
    fail_run();
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
      engine_ == Engine::wheel && until_ > now && sc_core::sc_get_curr_simcontext()->sim_status() == sc_core::SC_SIM_OK;
  const sc_core::sc_time kernel_next = may_run_ahead ? kernel_next_activity() : now;
  sc_core::sc_time limit = std::min(until_, kernel_next);
  if (distributed()) limit = from_ticks(distributed::min_over_processes(std::uint64_t{limit.value()}));
  bool ahead = false;  // in_step ends it on return
  for (;;) {
    // Several processes: the passes due now run in the first window (a call into another
    // process's lane is deferred there).
    if (!distributed()) run_pass(now, delta);
    if (stop_asked_) break;
    // The next pass: requests for now in the next delta cycle, else the earliest timed one.
    sc_core::sc_time next;
    bool have = next_request(next);
    if (distributed()) have = earliest_over_processes(next, have);
    if (!have || !(next < limit)) break;
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
  for (const int k : own_lanes_) consider(*lanes_[static_cast<std::size_t>(k)]);
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
    if (engine_ == Engine::wheel) {
      lane->call_due();
    } else {
      // Immediate notifications: the kernel runs the blocks' processes in this delta
      // cycle, in the order notified.
      for (const int k : lane->due()) kernel_events_[static_cast<std::size_t>(k)]->notify();
    }
  }
  dispatching_ = false;
}

void WakeQueue::Lane::collect(const sc_core::sc_time& at, std::uint64_t delta) {
  // Timed requests for `at`, in (time, handle) order: the kernel (or the queue running
  // ahead) woke the queue at the earliest request.
  run_.clear();
  wheel.take_due(at.value(), run_);
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

void WakeQueue::arm(const sc_core::sc_time& now) {
  // Requests for now made in the last pass run in the next delta cycle at the queue's
  // time (a timed notification where the queue ran ahead of the kernel).
  sc_core::sc_time at;
  bool have = false;
  for (const int k : own_lanes_)
    if (!lanes_[static_cast<std::size_t>(k)]->asked_now.empty()) {
      at = now;
      have = true;
      break;
    }
  if (!have) have = next_request(at, true);
  // Several processes: all wake at the earliest of theirs, to run their windows together.
  if (distributed()) have = earliest_over_processes(at, have);
  if (have) wake_.notify_at(at);
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
