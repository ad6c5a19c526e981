// Steady-state fast-forward of the collective engine's transfer streams
// (docs/performance.md, "Fast-forward"). A bulk collective repeats one pattern: a ring
// rank sends chunk after chunk of one size to one neighbour, and once the fabric has
// settled each takes the same time from post to landing. The engine samples those times
// per stream and, when every stream of every graph under way is steady, lands the
// graphs' further transfers after their stream's mean times without putting their
// packets on the fabric, until another graph starts or a stream changes pattern.
#include <algorithm>
#include <iterator>

#include "testbench/collective_engine.h"
#include "tlm/sim_time.h"

namespace fabricsim::testbench {

using sc_core::sc_time;

namespace {

// Samples are taken in and the steady state judged between windows at this period: at
// times fixed by the simulation, so the decision is the same with any number of lanes.
const sc_time kCheckInterval(1, sc_core::SC_US);

}  // namespace

CollectiveEngine::StreamSample CollectiveEngine::Stream::mean() const {
  StreamSample m;
  for (const StreamSample& s : last) {
    m.start += s.start;
    m.end += s.end;
    m.visible += s.visible;
  }
  const auto k = static_cast<std::int64_t>(last.size());
  return {m.start / k, m.end / k, m.visible / k};
}

bool CollectiveEngine::Stream::steady(std::size_t window, double tolerance) const {
  if (seen < window) return false;
  const auto [lo, hi] = std::minmax_element(last.begin(), last.end(), [](const StreamSample& a, const StreamSample& b) {
    return a.visible < b.visible;
  });
  return static_cast<double>(hi->visible - lo->visible) <= tolerance * static_cast<double>(mean().visible);
}

void CollectiveEngine::start_sampling(Run& run, const sc_time& now) {
  if (!run.fast)  // (the graph's channels once: a resumed graph samples again)
    for (std::size_t i = 0; i < run.schedule.size(); ++i)
      run.channels = std::max(run.channels, run.schedule.step(i).channel + 1);
  run.fast = true;
  Stream fresh;
  fresh.last.resize(static_cast<std::size_t>(params_.fast_forward.window));
  run.streams.assign(run.endpoints.size() * static_cast<std::size_t>(run.channels), fresh);
  check_->notify_at(now + kCheckInterval);
}

void CollectiveEngine::forget_samples(const Run& run) {
  // Its posts and landings that no check has taken in are no stream's samples any more.
  // By key for a graph of fewer transfers than the map holds, else by a pass over the
  // map: either way no more than the graph itself cost.
  const std::uint64_t m = run.schedule.size();
  const auto of_run = [&run, m](std::uint64_t wr) { return wr - run.id < m; };
  if (m < pending_posts_.size()) {
    for (std::uint64_t k = 0; k < m; ++k) pending_posts_.erase(run.id + k);
  } else {
    for (auto it = pending_posts_.begin(); it != pending_posts_.end();)
      it = of_run(it->first) ? pending_posts_.erase(it) : std::next(it);
  }
  for (auto& lane : lanes_) {
    const auto drop = [&of_run](auto& v) {
      v.erase(std::remove_if(v.begin(), v.end(), [&of_run](const auto& x) { return of_run(x.first); }), v.end());
    };
    drop(lane->posts);
    drop(lane->landings);
  }
}

void CollectiveEngine::resume_packets(const sc_time& now) {
  for (auto& owned : runs_)
    if (owned->fast_forwarding()) resume_packets(*owned, now);
}

void CollectiveEngine::resume_packets(Run& run, const sc_time& now) {
  // The transfers posted up to now keep their landings; later ones take packets again
  // until the graph settles anew.
  run.virtual_until = now;  // (posts at `now`, in whatever order the lanes make them, stay virtual)
  ++report_.resumed;
  start_sampling(run, now);
}

bool CollectiveEngine::post_virtual(Lane& lane, Run& run, std::size_t i, const sc_time& now) {
  const Schedule::Step t = run.schedule.step(i);
  const Stream& stream =
      run.streams[static_cast<std::size_t>(t.src) * static_cast<std::size_t>(run.channels) + static_cast<std::size_t>(t.channel)];
  if (!stream.carries(t)) {
    // Another peer, size or reduction: the pattern the steady state was judged on ends.
    lane.changes.emplace_back(run.id + i, now);
    return false;
  }
  const StreamSample m = stream.mean();
  const VirtualLanding v{now + tlm_fabric::from_ticks(static_cast<sc_time::value_type>(m.end)), run.id + i,
                         now + tlm_fabric::from_ticks(static_cast<sc_time::value_type>(m.start)),
                         now + tlm_fabric::from_ticks(static_cast<sc_time::value_type>(m.visible))};
  ++lane.skipped.transfers;
  lane.skipped.bytes += t.bytes;
  const int a = run.endpoints[static_cast<std::size_t>(t.src)], b = run.endpoints[static_cast<std::size_t>(t.dst)];
  count_skipped_send(a, b, static_cast<std::uint32_t>(qp_for(a, b, t.channel).qp), t.bytes, now);
  const int to = endpoint_lane_[static_cast<std::size_t>(b)];
  auto& queue = tlm_fabric::WakeQueue::instance();
  if (lanes_[static_cast<std::size_t>(to)].get() == &lane || !queue.in_window()) {
    add_virtual(*lanes_[static_cast<std::size_t>(to)], v);
    return true;
  }
  // Its last byte is due no earlier than a cable between the lanes takes: after this window.
  const sc_time::value_type end = v.end.value(), start = v.start.value(), visible = v.visible.value();
  const std::uint64_t wr = v.wr;
  queue.defer(to, now, v.end, [this, wr, end, start, visible] {
    const Run& r = *run_of(wr);
    add_virtual(lane_of_endpoint(r.endpoints[static_cast<std::size_t>(r.schedule.step(wr - r.id).dst)]),
                {tlm_fabric::from_ticks(end), wr, tlm_fabric::from_ticks(start), tlm_fabric::from_ticks(visible)});
  });
  return true;
}

void CollectiveEngine::count_skipped_send(int src, int dst, std::uint32_t qpn, std::uint64_t bytes, const sc_time& now) {
  nics_[static_cast<std::size_t>(src)]->count_skipped_send(qpn, bytes, now);
  if (params_.fast_forward.count_links) params_.fast_forward.count_links(src, dst, qpn, bytes);
}

void CollectiveEngine::deliver_skipped(const tlm_fabric::FlowRecord& f) {
  tlm_fabric::Nic& nic = *nics_[static_cast<std::size_t>(f.dst)];
  nic.count_skipped_receive(f.bytes, f.end);
  nic.record_flow(f);
}

void CollectiveEngine::add_virtual(Lane& lane, const VirtualLanding& v) {
  lane.virtual_landings.push(v);
  lane.wake.notify_at(v.end);
}

void CollectiveEngine::land_virtual(Lane& lane, const sc_time& now) {
  // The destination NIC counts the message's packets and reports it as delivered (flow
  // completion time), and the transfer lands when its host would have seen it.
  while (!lane.virtual_landings.empty() && lane.virtual_landings.top().end <= now) {
    const VirtualLanding v = lane.virtual_landings.top();
    lane.virtual_landings.pop();
    Run& run = *run_of(v.wr);
    const std::size_t i = v.wr - run.id;
    const Schedule::Step t = run.schedule.step(i);
    const int a = run.endpoints[static_cast<std::size_t>(t.src)], b = run.endpoints[static_cast<std::size_t>(t.dst)];
    deliver_skipped({a, b, t.bytes, static_cast<std::uint32_t>(qp_for(a, b, t.channel).qp), v.start, v.end});
    land(run, i, v.visible);
  }
}

void CollectiveEngine::check_fast_forward() {
  const sc_time now = tlm_fabric::sim_now();
  const std::int64_t before = ticks(now);
  taken_.clear();
  for (auto& lane : lanes_) {
    // A graph whose pattern changed before now goes back to packets.
    auto& changes = lane->changes;
    const auto later = std::stable_partition(changes.begin(), changes.end(),
                                             [&now](const auto& c) { return c.second < now; });
    for (auto c = changes.begin(); c != later; ++c)
      if (Run* run = run_of(c->first); run != nullptr && run->fast_forwarding()) resume_packets(*run, now);
    changes.erase(changes.begin(), later);
    for (const auto& [wr, posted] : lane->posts) pending_posts_.emplace(wr, posted);
    lane->posts.clear();
    // Landings strictly before now: those at now may come before or after this check.
    auto& l = lane->landings;
    const auto keep = std::stable_partition(l.begin(), l.end(), [before](const auto& x) { return x.second.end >= before; });
    taken_.insert(taken_.end(), keep, l.end());
    l.erase(keep, l.end());
  }
  std::sort(taken_.begin(), taken_.end(), [](const auto& x, const auto& y) {
    return std::tie(x.second.end, x.first) < std::tie(y.second.end, y.first);
  });
  const auto window = static_cast<std::size_t>(params_.fast_forward.window);
  for (const auto& [wr, at] : taken_) {
    const auto post = pending_posts_.find(wr);
    if (post == pending_posts_.end()) continue;
    const std::int64_t posted = ticks(post->second);
    pending_posts_.erase(post);
    Run* run = run_of(wr);
    if (run == nullptr || !run->fast || run->fast_forwarding()) continue;
    // A transfer posted beside skipped ones met an emptier fabric than the graph's own.
    if (run->virtual_after != sc_core::sc_max_time() && posted <= ticks(run->virtual_until)) continue;
    const Schedule::Step t = run->schedule.step(wr - run->id);
    Stream& s = run->streams[static_cast<std::size_t>(t.src) * static_cast<std::size_t>(run->channels) +
                             static_cast<std::size_t>(t.channel)];
    if (!s.carries(t)) {
      s.dst = t.dst;
      s.bytes = t.bytes;
      s.reduce_bytes = t.reduce_bytes;
      s.seen = 0;
    }
    s.last[s.seen++ % window] = {at.start - posted, at.end - posted, at.visible - posted};
  }
  // The graphs under way go to fast-forward together, once every stream of each is
  // steady: the fabric then carries nothing else (identical groups of ranks reducing
  // side by side settle together).
  const auto steady = [&](const Run& run) {
    return run.fast &&
           (run.fast_forwarding() ||
            (std::any_of(run.streams.begin(), run.streams.end(), [](const Stream& s) { return s.dst >= 0; }) &&
             std::all_of(run.streams.begin(), run.streams.end(), [&](const Stream& s) {
               return s.dst < 0 || s.steady(window, params_.fast_forward.tolerance);
             })));
  };
  const bool all_steady = std::all_of(runs_.begin(), runs_.end(), [&](const auto& r) { return steady(*r); });
  bool fast = false;  // (a graph in fast-forward is checked for a change of pattern)
  for (auto& owned : runs_) {
    Run& run = *owned;
    fast = fast || run.fast;
    if (!all_steady || run.fast_forwarding()) continue;
    run.virtual_after = now;
    run.virtual_until = sc_core::sc_max_time();
    ++report_.engaged;
  }
  if (fast) check_->notify_at(now + kCheckInterval);
}

FastForwardReport CollectiveEngine::fast_forward_report() const {
  FastForwardReport r = report_;
  for (const auto& lane : lanes_) {
    r.transfers += lane->skipped.transfers;
    r.bytes += lane->skipped.bytes;
  }
  return r;
}

}  // namespace fabricsim::testbench
