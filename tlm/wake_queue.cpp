// The wake queue (tlm/wake_queue.h).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "tlm/wake_queue.h"

#include <algorithm>

namespace fabricsim::tlm_fabric {

void EarliestNotify::notify_at(const sc_core::sc_time& t) {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  // Forget a notification the kernel has already fired.
  if (pending_ == Pending::timed && at_ <= now) pending_ = Pending::none;
  if (pending_ == Pending::delta && delta_ != sc_core::sc_delta_count()) pending_ = Pending::none;
  if (pending_ == Pending::delta) return;
  if (t <= now) {
    pending_ = Pending::delta;
    delta_ = sc_core::sc_delta_count();
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
  static WakeQueue* queue = new WakeQueue;
  return *queue;
}

WakeQueue::WakeQueue() {
  sc_core::sc_spawn_options options;
  options.spawn_method();
  options.set_sensitivity(&wake_.event());
  options.dont_initialize();
  sc_core::sc_spawn([this] { dispatch(); }, sc_core::sc_gen_unique_name("fabricsim_wake_queue"), &options);
}

int WakeQueue::add(std::function<void()> on_wake) {
  Client c;
  c.on_wake = std::move(on_wake);
  clients_.push_back(std::move(c));
  return static_cast<int>(clients_.size()) - 1;
}

void WakeQueue::remove(int client) {
  if (clients_[client].pos != kNone) erase_timed(clients_[client].pos);
  clients_[client] = Client{};
}

void WakeQueue::notify_at(int client, const sc_core::sc_time& t) {
  Client& c = clients_[client];
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const std::uint64_t delta = sc_core::sc_delta_count();
  // The kernel fired a timed request at its time, before any process ran: it runs in
  // this pass whatever comes now (its entry stays, no longer the pending one).
  if (c.pos != kNone && c.timed_at <= now) {
    timed_[c.pos].pending = false;
    c.pos = kNone;
  }
  if (c.delta_asked == delta) return;  // runs in the next delta cycle: nothing replaces that
  if (t <= now) {
    c.delta_asked = delta;
    if (c.pos != kNone) erase_timed(c.pos);  // a delta notification cancels a timed one
    delta_.push_back({delta, client});
    if (!dispatching_) wake_.notify_at(now);
    return;
  }
  if (c.pos != kNone) {
    if (c.timed_at <= t) return;
    c.timed_at = t;
    timed_[c.pos].at = t;
    sift_up(c.pos);
  } else {
    c.timed_at = t;
    timed_.push_back({t, client, true});
    sift_up(timed_.size() - 1);
  }
  if (!dispatching_) wake_.notify_at(t);
}

// A 4-ary heap: half the levels of a binary one, and a node's four children share a
// cache line or two.
void WakeQueue::place(std::size_t i, const Due& e) {
  timed_[i] = e;
  if (e.pending) clients_[e.client].pos = i;
}

void WakeQueue::sift_up(std::size_t i) {
  const Due e = timed_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!(timed_[parent] > e)) break;
    place(i, timed_[parent]);
    i = parent;
  }
  place(i, e);
}

void WakeQueue::sift_down(std::size_t i) {
  const Due e = timed_[i];
  const std::size_t n = timed_.size();
  for (;;) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t least = first;
    for (std::size_t c = first + 1; c < first + 4 && c < n; ++c)
      if (timed_[least] > timed_[c]) least = c;
    if (!(e > timed_[least])) break;
    place(i, timed_[least]);
    i = least;
  }
  place(i, e);
}

void WakeQueue::erase_timed(std::size_t i) {
  if (timed_[i].pending) clients_[timed_[i].client].pos = kNone;
  const Due last = timed_.back();
  timed_.pop_back();
  if (i == timed_.size()) return;
  place(i, last);
  if (i > 0 && timed_[(i - 1) / 4] > last) sift_up(i);
  else sift_down(i);
}

void WakeQueue::dispatch() {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const std::uint64_t delta = sc_core::sc_delta_count();
  run_.clear();
  // Timed requests for now, in (time, handle) order.
  while (!timed_.empty() && timed_.front().at <= now) {
    run_.push_back(timed_.front().client);
    erase_timed(0);
  }
  // Requests for now made in an earlier delta cycle, in request order; those made in
  // this one (by a process the kernel ran before this pass) wait for the next.
  std::size_t kept = 0;
  for (const DeltaDue& r : delta_) {
    if (r.delta == delta) delta_[kept++] = r;
    else run_.push_back(r.client);
  }
  delta_.resize(kept);
  // A block is in run_ once: its timed run is due in the first delta cycle at its time,
  // its requests for now in later ones, one per delta cycle. Blocks are registered at
  // elaboration, so clients_ does not move during a call. What they ask for is armed
  // once, after the last of them (re-arming the kernel event for each earlier time
  // would leave a cancelled notification in the kernel's queue each time).
  dispatching_ = true;
  for (const int k : run_)
    if (clients_[k].on_wake) clients_[k].on_wake();
  dispatching_ = false;
  arm();
}

void WakeQueue::arm() {
  if (!delta_.empty()) wake_.notify_at(sc_core::sc_time_stamp());
  if (!timed_.empty()) wake_.notify_at(timed_.front().at);
}

}  // namespace fabricsim::tlm_fabric
