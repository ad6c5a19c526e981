// The wake queue (tlm/wake_queue.h).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "tlm/wake_queue.h"

#include <algorithm>
#include <stdexcept>
#include <string>

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

WakeQueue::WakeQueue()
    : wheel_(kSlots), occupied_(kSlots / 64, 0), slot_width_(sc_core::sc_time(1, sc_core::SC_NS).value()) {
  if (slot_width_ == 0) slot_width_ = 1;  // a resolution coarser than 1 ns
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
  marks_.resize((clients_.size() + 63) / 64, 0);
  return static_cast<int>(clients_.size()) - 1;
}

void WakeQueue::remove(int client) {
  erase_pending(clients_[client]);
  clients_[client] = Client{};
}

std::uint64_t WakeQueue::delta() const {
  if (dispatching_) return pass_delta_;
  return sc_core::sc_is_running() ? delta_count() : kBeforeSimulation;
}

void WakeQueue::notify_at(int client, const sc_core::sc_time& t) {
  Client& c = clients_[client];
  const sc_core::sc_time now = sim_now();
  const std::uint64_t delta = this->delta();
  // The kernel fired a timed request at its time, before any process ran: it runs in
  // this pass whatever comes now (its entry stays, no longer the pending one).
  if (c.where != Where::none && c.timed_at <= now) {
    (c.where == Where::wheel ? slot(slot_of(c.timed_at))[c.index] : overflow_[c.index]).pending = false;
    c.where = Where::none;
  }
  if (c.delta_asked == delta) return;  // runs in the next delta cycle: nothing replaces that
  if (t <= now) {
    c.delta_asked = delta;
    erase_pending(c);  // a delta notification cancels a timed one
    delta_.push_back({delta, client});
    if (!dispatching_) wake_.notify_at(now);
    return;
  }
  if (c.where != Where::none) {
    if (c.timed_at <= t) return;
    erase_pending(c);
  }
  insert({t, client, true});
  if (!dispatching_) wake_.notify_at(t);
}

void WakeQueue::insert(const Due& e) {
  Client* c = e.pending ? &clients_[e.client] : nullptr;
  if (c) c->timed_at = e.at;
  const std::uint64_t s = slot_of(e.at);
  if (s < base_ + kSlots) {
    auto& entries = slot(s);
    if (c) {
      c->where = Where::wheel;
      c->index = entries.size();
    }
    entries.push_back(e);
    occupied_[(s & (kSlots - 1)) / 64] |= std::uint64_t{1} << (s & 63);
    return;
  }
  if (c) c->where = Where::overflow;
  overflow_.push_back(e);
  sift_up(overflow_.size() - 1);
}

void WakeQueue::erase_pending(Client& c) {
  // Both take the entry's client out of the queue (where = none).
  if (c.where == Where::wheel) take_from_slot(slot_of(c.timed_at), c.index);
  else if (c.where == Where::overflow) erase_overflow(c.index);
}

void WakeQueue::take_from_slot(std::uint64_t s, std::size_t i) {
  auto& entries = slot(s);
  if (entries[i].pending) clients_[entries[i].client].where = Where::none;
  entries[i] = entries.back();
  entries.pop_back();
  if (i < entries.size() && entries[i].pending) clients_[entries[i].client].index = i;
  if (entries.empty()) occupied_[(s & (kSlots - 1)) / 64] &= ~(std::uint64_t{1} << (s & 63));
}

void WakeQueue::advance(std::uint64_t to_slot) {
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

bool WakeQueue::earliest(sc_core::sc_time& at) const {
  bool have = !overflow_.empty();
  if (have) at = overflow_.front().at;
  // The first occupied slot from the base on (cyclically), and the earliest entry in it.
  const std::size_t words = kSlots / 64, first = static_cast<std::size_t>(base_ & (kSlots - 1));
  for (std::size_t k = 0; k <= words; ++k) {
    const std::size_t w = (first / 64 + k) % words;
    std::uint64_t bits = occupied_[w];
    if (k == 0) bits &= ~std::uint64_t{0} << (first & 63);  // from the base on (k == words: the rest of that word)
    if (!bits) continue;
    for (const Due& e : wheel_[w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))])
      if (!have || e.at < at) {
        at = e.at;
        have = true;
      }
    break;
  }
  return have;
}

// The overflow heap is 4-ary: half the levels of a binary one, and a node's four
// children share a cache line or two.
void WakeQueue::place(std::size_t i, const Due& e) {
  overflow_[i] = e;
  if (e.pending) clients_[e.client].index = i;
}

void WakeQueue::sift_up(std::size_t i) {
  const Due e = overflow_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 4;
    if (!(overflow_[parent] > e)) break;
    place(i, overflow_[parent]);
    i = parent;
  }
  place(i, e);
}

void WakeQueue::sift_down(std::size_t i) {
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

void WakeQueue::erase_overflow(std::size_t i) {
  if (overflow_[i].pending) clients_[overflow_[i].client].where = Where::none;
  const Due last = overflow_.back();
  overflow_.pop_back();
  if (i == overflow_.size()) return;
  place(i, last);
  if (i > 0 && overflow_[(i - 1) / 4] > last) sift_up(i);
  else sift_down(i);
}

void WakeQueue::dispatch() {
  if (stop_on_wake_) {  // the kernel has moved to where a pass ahead of it stopped
    stop_on_wake_ = false;
    --passes_ahead_;  // this delta cycle of the kernel's only moves it there: not one of the model's
    sc_core::sc_stop();
    return;
  }
  // Back in step with the kernel however this ends (a block may throw).
  struct InStep {
    ~InStep() { detail::queue_time.ahead = false; }
  } in_step;
  sc_core::sc_time now = kernel_now();
  std::uint64_t delta = this->delta();
  // The queue may run ahead up to the kernel's next activity (now when something else
  // is due now) and the end of the run, exclusive.
  const bool may_run_ahead = until_ > now;
  const sc_core::sc_time kernel_next = may_run_ahead ? kernel_next_activity() : now;
  const sc_core::sc_time limit = std::min(until_, kernel_next);
  for (;;) {
    run_pass(now, delta);
    if (stop_asked_) break;
    // The next pass: requests for now in the next delta cycle, else the earliest timed one.
    sc_core::sc_time next = now;
    if (delta_.empty() && !earliest(next)) break;
    if (!(next < limit)) break;
    ++passes_ahead_;
    delta = this->delta();
    now = next;
    detail::queue_time = {now, true};
  }
  const bool ahead = detail::queue_time.ahead;  // in_step ends it on return
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

void WakeQueue::run_pass(const sc_core::sc_time& now, std::uint64_t delta) {
  // Timed requests for now, in (time, handle) order: the kernel (or the queue running
  // ahead) woke the queue at the earliest, so they are all in now's slot once the wheel
  // has moved up to it.
  const std::uint64_t s = slot_of(now);
  advance(s);
  due_.clear();
  auto& entries = slot(s);
  for (std::size_t i = 0; i < entries.size();) {
    if (entries[i].at <= now) {
      due_.push_back(entries[i]);
      take_from_slot(s, i);
    } else {
      ++i;
    }
  }
  run_.clear();
  order_due();
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
  pass_delta_ = delta;
  for (const int k : run_)
    if (clients_[k].on_wake) clients_[k].on_wake();
  dispatching_ = false;
}

void WakeQueue::order_due() {
  // The due requests are nearly always all for exactly now (the kernel wakes the queue
  // at the earliest), one per block: then a bitmap over the handles puts them in order
  // in one pass. Sorting S3's hundreds of blocks woken at one instant cost a twentieth
  // of its instructions. Where the bitmap would be long for the few blocks due, sort.
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
  std::sort(due_.begin(), due_.end(), [](const Due& a, const Due& b) { return b > a; });
  for (const Due& d : due_) run_.push_back(d.client);
}

void WakeQueue::arm(const sc_core::sc_time& now) {
  // Requests for now made in the last pass run in the next delta cycle at the queue's
  // time (a timed notification where the queue ran ahead of the kernel).
  if (!delta_.empty()) wake_.notify_at(now);
  sc_core::sc_time at;
  if (earliest(at)) wake_.notify_at(at);
}

void simulate_for(const sc_core::sc_time& duration) {
  WakeQueue& q = WakeQueue::instance();
  q.until_ = kernel_now() + duration;
  struct InStep {
    WakeQueue& q;
    ~InStep() { q.until_ = sc_core::SC_ZERO_TIME; }
  } in_step{q};
  sc_core::sc_start(duration);
}

void stop_simulation() {
  WakeQueue& q = WakeQueue::instance();
  // In a pass, after it: the kernel would finish the delta cycle anyway.
  if (q.dispatching_) q.stop_asked_ = true;
  else sc_core::sc_stop();
}

std::uint64_t delta_count() { return sc_core::sc_delta_count() + WakeQueue::instance().passes_ahead_; }

}  // namespace fabricsim::tlm_fabric
