// The wake queue behind WakeEvent (tlm/clock.h).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "tlm/clock.h"

#include <algorithm>

namespace fabricsim::tlm_fabric {

WakeQueue& WakeQueue::instance() {
  // Never destroyed: its kernel event and process belong to the kernel until the process exits.
  static WakeQueue* queue = new WakeQueue;
  return *queue;
}

WakeQueue::WakeQueue() {
  sc_core::sc_spawn_options options;
  options.spawn_method();
  options.set_sensitivity(&event_);
  options.dont_initialize();
  sc_core::sc_spawn([this] { dispatch(); }, sc_core::sc_gen_unique_name("fabricsim_wake_queue"), &options);
}

int WakeQueue::add(std::function<void()> on_wake) {
  clients_.push_back({std::move(on_wake), sc_core::SC_ZERO_TIME, false});
  return static_cast<int>(clients_.size()) - 1;
}

void WakeQueue::remove(int client) {
  clients_[client].pending = false;
  clients_[client].on_wake = nullptr;
}

void WakeQueue::notify_at(int client, const sc_core::sc_time& t) {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const sc_core::sc_time at = std::max(t, now);
  Client& c = clients_[client];
  if (c.pending && c.at <= at) return;
  c.pending = true;
  c.at = at;
  due_.push_back({at, client});
  std::push_heap(due_.begin(), due_.end(), std::greater<>());
  // While dispatching, the loop below runs what is due now and arms the rest.
  if (!dispatching_) arm(at, now);
}

void WakeQueue::arm(const sc_core::sc_time& t, const sc_core::sc_time& now) {
  if (armed_ && armed_at_ <= t) return;
  armed_ = true;
  armed_at_ = t;
  // The kernel keeps an event's earliest notification (a delta one over any timed one).
  if (t == now) event_.notify(sc_core::SC_ZERO_TIME);
  else event_.notify(t - now);
}

void WakeQueue::dispatch() {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  armed_ = false;
  dispatching_ = true;
  // Blocks due now in handle order; a block woken for now by one of them runs in this pass too.
  while (!due_.empty() && due_.front().at <= now) {
    std::pop_heap(due_.begin(), due_.end(), std::greater<>());
    const Due d = due_.back();
    due_.pop_back();
    Client& c = clients_[d.client];
    if (!c.pending || c.at != d.at) continue;  // replaced by an earlier wake, already run
    c.pending = false;
    c.on_wake();
  }
  dispatching_ = false;
  while (!due_.empty() && !(clients_[due_.front().client].pending && clients_[due_.front().client].at == due_.front().at)) {
    std::pop_heap(due_.begin(), due_.end(), std::greater<>());
    due_.pop_back();
  }
  if (!due_.empty()) arm(due_.front().at, now);
}

}  // namespace fabricsim::tlm_fabric
