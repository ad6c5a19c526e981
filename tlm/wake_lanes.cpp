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

#include "tlm/distributed.h"
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
  own_.assign(static_cast<std::size_t>(lanes), 1);
  own_lanes_.clear();
  for (int k = 0; k < lanes; ++k) own_lanes_.push_back(k);
  process_of_.clear();
}

void WakeQueue::set_processes(const std::vector<int>& process_of_lane) {
  if (process_of_lane.size() != lanes_.size())
    throw std::invalid_argument("wake queue: a process for each of " + std::to_string(lanes()) + " lanes, not " +
                                std::to_string(process_of_lane.size()));
  if (!clients_.empty())
    throw std::logic_error("wake queue: processes are set before any block is made");
  const int me = distributed::rank();
  std::vector<int> lanes_of(static_cast<std::size_t>(distributed::size()), 0);
  for (const int p : process_of_lane) {
    if (p < 0 || p >= distributed::size())
      throw std::invalid_argument("wake queue: process " + std::to_string(p) + " of " +
                                  std::to_string(distributed::size()));
    ++lanes_of[static_cast<std::size_t>(p)];
  }
  for (std::size_t p = 0; p < lanes_of.size(); ++p)
    if (lanes_of[p] == 0)
      throw std::invalid_argument("wake queue: process " + std::to_string(p) + " runs no lane");
  process_of_ = process_of_lane;
  own_lanes_.clear();
  for (int k = 0; k < lanes(); ++k) {
    own_[static_cast<std::size_t>(k)] = process_of_[static_cast<std::size_t>(k)] == me;
    if (owns(k)) own_lanes_.push_back(k);
  }
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
  const int first = own_lanes_.front();  // runs on this thread, the others on their own
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
  for (const int k : own_lanes_)
    if (k != first) threads.emplace_back([&, k] {
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
  detail::lane = first;
  detail::queue_now = &lanes_[first]->now;
  struct LaneZero {  // this thread is lane 0's again however the windows end
    ~LaneZero() { detail::lane = 0; }
  } lane_zero;
  // Several processes: the next window's start agreed with the calls at a window's end.
  bool agreed = false, agreed_have = false;
  sc_core::sc_time agreed_start;
  for (;;) {
    // The next window starts at the earliest pass of any lane, or of a call deferred in
    // the last one (they act in this one or later).
    sc_core::sc_time start;
    bool have;
    if (agreed) {
      start = agreed_start;
      have = agreed_have;
      agreed = false;
    } else {
      have = next_start(start);
      if (distributed()) have = earliest_over_processes(start, have);
    }
    // A block that reads every lane runs at its time before the blocks due then, once
    // every lane has run its passes before it and taken the calls made to it.
    sc_core::sc_time every;
    const bool every_due = every_lane_->next(every) && every < limit;
    if (every_due && (!have || !(start < every))) {
      replay_floor_ = window_end_;
      for (const int k : own_lanes_) replay_into(k, parity_);
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
    run(first);
    wait_for([&] { return done.load(std::memory_order_acquire) == static_cast<int>(threads.size()); });
    in_window_ = false;
    ++windows_;
    std::exception_ptr failed;
    for (const auto& e : errors)
      if (e && !failed) failed = e;
    sc_core::sc_time mine;
    bool have_mine = false;
    try {
      if (distributed()) {
        have_mine = next_start(mine);
        agreed_start = mine;
        agreed_have = exchange_between_processes(parity_, failed, agreed_start, have_mine);
        agreed = true;
      } else if (failed) {
        std::rethrow_exception(failed);
      }
    } catch (...) {
      dispatching_ = windowing_ = false;
      throw;
    }
    if (!distributed() && serialise_) pack_between_lanes(parity_);
    for (auto& hook : window_end_hooks_) hook();
    sc_core::sc_time after;
    if (agreed && next_start(after) && (!have_mine || after < mine))
      throw std::logic_error("wake queue: a window-end hook woke a block of a lane at " + after.to_string() +
                             ", after the processes agreed on the next window; hooks wake blocks that read every lane");
  }
  // What the last window deferred, before the run goes on in step with the kernel.
  replay_floor_ = window_end_;
  for (const int k : own_lanes_) replay_into(k, parity_);
  dispatching_ = false;
  windowing_ = false;
  sc_core::sc_time last = now;
  std::uint64_t passes = 0;
  for (const int k : own_lanes_) {
    passes += lanes_[k]->passes;
    last = std::max(last, lanes_[k]->now);
  }
  if (distributed()) {  // the passes and the time of all the processes' lanes
    passes = distributed::sum_over_processes(passes);
    last = from_ticks(~distributed::min_over_processes(~std::uint64_t{last.value()}));
  }
  passes_ahead_ += passes + every_lane_->passes;
  last = std::max(last, every_lane_->now);
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
  detail::queue_now = &lanes_[own_lanes_.front()]->now;
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

void WakeQueue::skip_receivers(int n) {
  for (int k = 0; k < n; ++k) {
    const int handle = static_cast<int>(receivers_.size());
    receivers_.emplace_back([handle](const unsigned char*) {
      throw std::logic_error("wake queue: a call to receiver " + std::to_string(handle) +
                             ", whose block another process makes");
    });
  }
}

namespace {
// A call made from bytes: its receiver and where its bytes are.
struct Received {
  int receiver;
  int parity;
  std::size_t offset;
};
}  // namespace

void WakeQueue::make_from_bytes(Deferred& d, int receiver, int parity, std::size_t offset) {
  const Received r{receiver, parity, offset};
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

void WakeQueue::pack_between_lanes(int parity) {
  // In the order the calls were made, so the calls to a lane keep their order.
  Bytes& bytes = received_[parity];
  bytes.clear();
  for (auto& from : lanes_)
    for (auto& calls : from->outbox[parity])
      for (Deferred& d : calls) {
        if (!d.pack) continue;
        const std::size_t offset = bytes.size();
        d.pack(d, bytes);
        make_from_bytes(d, d.receiver, parity, offset);
      }
}

namespace {
// What precedes a call's bytes between processes.
struct CallHeader {
  std::int32_t from_lane, to_lane, receiver;
  std::uint32_t size;  // of the bytes after the header
  sc_core::sc_time::value_type made_at;
};
}  // namespace

bool WakeQueue::next_start(sc_core::sc_time& at) {
  bool have = next_request(at, false, false);
  for (auto& lane : lanes_) {
    if (lane->deferred[parity_] && (!have || lane->earliest_act[parity_] < at)) {
      at = lane->earliest_act[parity_];
      have = true;
    }
    lane->deferred[1 - parity_] = false;
  }
  return have;
}

bool WakeQueue::exchange_between_processes(int parity, const std::exception_ptr& failed, sc_core::sc_time& at,
                                           bool have) {
  // Each lane's calls into another process's lane, in the order made, to that process
  // (none from a process that failed: it stops).
  std::exception_ptr error = failed;
  std::vector<Bytes> out(static_cast<std::size_t>(distributed::size()));
  if (!error) try {
      for (const int from : own_lanes_)
        for (int to = 0; to < lanes(); ++to) {
          if (owns(to)) continue;
          auto& calls = lanes_[from]->outbox[parity][to];
          Bytes& bytes = out[static_cast<std::size_t>(process_of_[static_cast<std::size_t>(to)])];
          for (const Deferred& d : calls) {
            if (!d.pack)
              throw std::logic_error("wake queue: a call from lane " + std::to_string(from) + " to lane " +
                                     std::to_string(to) + ", in another process, has no receiver to cross processes");
            const std::size_t pos = bytes.size();
            bytes.resize(pos + sizeof(CallHeader));
            d.pack(d, bytes);
            const CallHeader h{from, to, d.receiver,
                               static_cast<std::uint32_t>(bytes.size() - pos - sizeof(CallHeader)), d.made_at.value()};
            std::memcpy(bytes.data() + pos, &h, sizeof h);
          }
          calls.clear();
        }
    } catch (...) {
      error = std::current_exception();
      out.assign(out.size(), Bytes());
    }
  const int me = distributed::rank();
  const std::uint64_t none = ~std::uint64_t{0};
  std::vector<std::uint64_t> least{static_cast<std::uint64_t>(error ? me : distributed::size()),
                                   have ? std::uint64_t{at.value()} : none};
  const std::vector<Bytes> in = distributed::exchange(out, least);
  const int failing = static_cast<int>(least[0]);
  if (failing != distributed::size()) throw_failure(failing, error);
  // The calls from the other processes' lanes, in the outboxes of the lanes that made
  // them: replayed in the order of the calls made in this process.
  Bytes& received = received_[parity];
  received.clear();
  for (const Bytes& bytes : in)
    for (std::size_t pos = 0; pos < bytes.size();) {
      CallHeader h;
      std::memcpy(&h, bytes.data() + pos, sizeof h);
      pos += sizeof h;
      Deferred& d = lanes_[static_cast<std::size_t>(h.from_lane)]->outbox[parity][static_cast<std::size_t>(h.to_lane)]
                        .emplace_back();
      d.made_at = from_ticks(h.made_at);
      make_from_bytes(d, h.receiver, parity, received.size());
      received.insert(received.end(), bytes.begin() + static_cast<std::ptrdiff_t>(pos),
                      bytes.begin() + static_cast<std::ptrdiff_t>(pos + h.size));
      pos += h.size;
    }
  if (least[1] == none) return false;
  at = from_ticks(least[1]);
  return true;
}

void WakeQueue::throw_failure(int failing, const std::exception_ptr& local) {
  const std::string message = distributed::failure_of(failing, local);
  struct AgreedBlockError : BlockError, distributed::Agreed {
    using BlockError::BlockError;
  };
  throw AgreedBlockError(message);
}

bool WakeQueue::earliest_over_processes(sc_core::sc_time& at, bool have) const {
  const std::uint64_t none = ~std::uint64_t{0};
  const std::uint64_t earliest = distributed::min_over_processes(have ? std::uint64_t{at.value()} : none);
  if (earliest == none) return false;
  at = from_ticks(earliest);
  return true;
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
