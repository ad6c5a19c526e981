#include "testbench/collective_engine.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "tlm/distributed.h"
#include "tlm/sim_time.h"

namespace fabricsim::testbench {

using sc_core::sc_time;

CollectiveEngine::Lane::Lane(CollectiveEngine& engine, std::size_t endpoints)
    : wake([this, &engine] { engine.post_ready(*this); }), to_kick(endpoints, false) {}

CollectiveEngine::CollectiveEngine(std::vector<tlm_fabric::Nic*> nics, std::vector<int> endpoint_lane,
                                   const std::vector<int>& endpoints, const EngineParams& params, Hooks hooks)
    : nics_(std::move(nics)), endpoint_lane_(std::move(endpoint_lane)), endpoints_(endpoints), params_(params),
      hooks_(std::move(hooks)) {
  auto& queue = tlm_fabric::WakeQueue::instance();
  if (endpoint_lane_.empty()) endpoint_lane_.assign(nics_.size(), 0);
  if (endpoint_lane_.size() != nics_.size())
    throw std::invalid_argument("collective engine: a lane for each of the " + std::to_string(nics_.size()) + " NICs");
  const int lanes = queue.lanes();
  for (int k = 0; k < lanes; ++k) {
    queue.building_lane(k);
    lanes_.push_back(std::make_unique<Lane>(*this, nics_.size()));
  }
  qps_.resize(nics_.size());
  qps_elsewhere_ = params_.qps_made;
  qps_elsewhere_.resize(nics_.size(), 0);
  for (int e : endpoints_)
    if (auto* nic = nics_.at(static_cast<std::size_t>(e)))
      nic->rdma().set_completion_handler([this, e](const tlm_fabric::Completion& c) { on_completion(e, c); });
  release_receiver_ = queue.add_receiver([this](const unsigned char* bytes) {
    Release r{this, 0, 0};
    bytes = tlm_fabric::WakeQueue::get(bytes, r.wr);
    tlm_fabric::WakeQueue::get(bytes, r.visible);
    r();
  });
  // The lanes' last landings are in once their window has ended.
  if (lanes > 1) queue.at_window_end([this] { window_ended(); });
  if (params_.fast_forward.on)
    check_ = std::make_unique<tlm_fabric::WakeEvent>([this] { check_fast_forward(); }, /*reads_every_lane=*/true);
}

sc_time CollectiveEngine::least_completion_delay() const {
  sc_time least = sc_core::sc_max_time();
  for (int e : endpoints_)
    if (auto* nic = nics_.at(static_cast<std::size_t>(e))) least = std::min(least, nic->rdma().least_completion_delay());
  return least;
}

CollectiveEngine::Run* CollectiveEngine::run_of(std::uint64_t wr) const {
  // Graphs under way are few (one for `collective:`): the last one starting at or below wr.
  if (runs_.size() == 1) return wr >= runs_[0]->id && wr - runs_[0]->id < runs_[0]->schedule.size() ? runs_[0].get() : nullptr;
  const auto it = std::upper_bound(runs_.begin(), runs_.end(), wr,
                                   [](std::uint64_t w, const std::unique_ptr<Run>& r) { return w < r->id; });
  if (it == runs_.begin()) return nullptr;
  Run* run = std::prev(it)->get();
  return wr - run->id < run->schedule.size() ? run : nullptr;
}

const CollectiveEngine::QpEntry& CollectiveEngine::qp_for(int a, int b, int channel) const {
  const auto& qps = qps_[static_cast<std::size_t>(a)];
  const QpEntry key{peer_key(b, channel), 0, 0};
  const auto it = std::lower_bound(qps.begin(), qps.end(), key);
  if (it == qps.end() || it->peer != key.peer)
    throw std::logic_error("collective engine: no QP from endpoint " + std::to_string(a) + " to endpoint " +
                           std::to_string(b) + " on channel " + std::to_string(channel));
  return *it;
}

void CollectiveEngine::make_qps(const Run& run) {
  // A QP's key: (source endpoint, destination endpoint, channel) as one number; channels
  // number below 64 (config). A participant's transfers mostly go where its last one
  // went (a ring's always): only a change of peer names a QP.
  const std::uint64_t n = nics_.size();
  auto key_of = [n](int a, int b, int channel) {
    return (static_cast<std::uint64_t>(a) * n + static_cast<std::uint64_t>(b)) * 64 + static_cast<std::uint64_t>(channel);
  };
  auto made = [&](int a, int b, int channel) {
    const auto& qps = qps_[static_cast<std::size_t>(a)];
    return std::binary_search(qps.begin(), qps.end(), QpEntry{peer_key(b, channel), 0, 0});
  };
  std::vector<std::pair<int, int>> last_peer(run.endpoints.size(), {-1, -1});  // per participant: (dst, channel)
  std::vector<std::uint64_t> keys;
  for (std::size_t i = 0; i < run.schedule.size(); ++i) {
    const Schedule::Step t = run.schedule.step(i);
    const std::pair<int, int> peer{t.dst, t.channel};
    if (last_peer[static_cast<std::size_t>(t.src)] == peer) continue;
    last_peer[static_cast<std::size_t>(t.src)] = peer;
    const int a = run.endpoints[static_cast<std::size_t>(t.src)], b = run.endpoints[static_cast<std::size_t>(t.dst)];
    if (hooks_.bypass && hooks_.bypass(a, b)) continue;
    if (!made(a, b, t.channel)) keys.push_back(key_of(a, b, t.channel));
  }
  if (keys.empty()) return;
  std::vector<std::uint64_t> fresh = keys;  // sorted, each once
  std::sort(fresh.begin(), fresh.end());
  fresh.erase(std::unique(fresh.begin(), fresh.end()), fresh.end());
  std::vector<std::size_t> more(nics_.size(), 0);  // new QPs per NIC: one at each end
  for (std::uint64_t k : fresh) {
    ++more[k / 64 / n];
    ++more[k / 64 % n];
  }
  for (std::size_t e = 0; e < nics_.size(); ++e)
    if (more[e] > 0 && nics_[e]) nics_[e]->rdma().reserve_qps(more[e]);
  // A NIC another process makes: its QP numbers taken as it takes them.
  auto create_qp = [this](int e, int peer, int peer_qpn) {
    if (auto* nic = nics_[static_cast<std::size_t>(e)]) return nic->rdma().create_qp(peer, peer_qpn, params_.sl);
    return qps_elsewhere_[static_cast<std::size_t>(e)]++;
  };
  // In graph order (the QP numbers at each NIC follow it).
  std::vector<std::uint8_t> done(fresh.size(), 0), sources(nics_.size(), 0);
  for (std::uint64_t k : keys) {
    const auto at = std::lower_bound(fresh.begin(), fresh.end(), k);
    if (done[static_cast<std::size_t>(at - fresh.begin())]) continue;
    done[static_cast<std::size_t>(at - fresh.begin())] = 1;
    const int a = static_cast<int>(k / 64 / n), b = static_cast<int>(k / 64 % n), channel = static_cast<int>(k % 64);
    const int qa = create_qp(a, b, 0);
    const int qb = create_qp(b, a, qa);
    if (auto* nic = nics_[static_cast<std::size_t>(a)]) nic->rdma().connect(qa, qb);
    qps_[static_cast<std::size_t>(a)].push_back({peer_key(b, channel), qa, qb});
    sources[static_cast<std::size_t>(a)] = 1;
  }
  for (std::size_t a = 0; a < qps_.size(); ++a)
    if (sources[a]) std::sort(qps_[a].begin(), qps_[a].end());
}

CollectiveEngine::GraphId CollectiveEngine::start(Schedule schedule, std::vector<int> endpoints, int ranks, bool raw,
                                                  const sc_time& now) {
  auto owned = std::make_unique<Run>();
  Run& run = *owned;
  run.id = next_id_;
  next_id_ += std::max<std::size_t>(1, schedule.size());  // (an empty graph has an id of its own)
  run.schedule = std::move(schedule);
  run.endpoints = std::move(endpoints);
  run.ranks = ranks;
  run.raw = raw;
  run.start = now;
  const std::size_t m = run.schedule.size();
  run.landed.assign(m, 0);
  run.lanes.resize(lanes_.size());
  for (LaneCount& c : run.lanes) c.last_visible = now;
  if (!raw) make_qps(run);
  if (params_.fast_forward.on) {
    resume_packets(now);
    if (!raw) start_sampling(run, now);
  }
  runs_.push_back(std::move(owned));
  if (raw) ++raw_runs_;
  for (std::size_t i = 0; i < m; ++i) {
    const Schedule::Step t = run.schedule.step(i);
    ++run.lanes[static_cast<std::size_t>(endpoint_lane_[static_cast<std::size_t>(run.endpoints[static_cast<std::size_t>(t.dst)])])]
          .expected;
    if (run.schedule.deps(i).size() == 0) ready(run, i, now + params_.step_latency);
  }
  const GraphId id = run.id;
  if (m == 0) end_run(run, now);  // nothing to move: done at once
  return id;
}

void CollectiveEngine::ready(Run& run, std::size_t j, const sc_time& at) {
  const Schedule::Step t = run.schedule.step(j);
  const int a = run.endpoints[static_cast<std::size_t>(t.src)];
  auto& queue = tlm_fabric::WakeQueue::instance();
  Lane& lane = lane_of_endpoint(a);
  if (hooks_.bypass && hooks_.bypass(a, run.endpoints[static_cast<std::size_t>(t.dst)])) {
    if (queue.in_window()) {
      lane.bypassed.push_back({at, run.id + j});
      return;
    }
    bypassed_.push({at, run.id + j});
    hooks_.bypass_ready(at);
    return;
  }
  if (!queue.owns(endpoint_lane_[static_cast<std::size_t>(a)])) return;  // another process posts it
  lane.eligible.push({at, run.id + j});
  lane.wake.notify_at(at);
}

void CollectiveEngine::post_ready(Lane& lane) {
  // Every transfer of this lane's participants ready by now, posted in start order then
  // graph order (the NIC's DMA timeline serves posts in that order); then wake for the
  // earliest one still waiting.
  const sc_time now = tlm_fabric::sim_now();
  if (!lane.virtual_landings.empty()) land_virtual(lane, now);
  lane.batch.clear();
  while (!lane.eligible.empty() && lane.eligible.top().first <= now) {
    lane.batch.push_back(lane.eligible.top().second);
    lane.eligible.pop();
  }
  std::sort(lane.batch.begin(), lane.batch.end());
  Run* run = nullptr;
  for (std::uint64_t wr : lane.batch) {
    if (run == nullptr || wr - run->id >= run->schedule.size()) run = run_of(wr);
    const Schedule::Step t = run->schedule.step(wr - run->id);
    const int a = run->endpoints[static_cast<std::size_t>(t.src)];
    const int b = run->endpoints[static_cast<std::size_t>(t.dst)];
    auto* nic = nics_[static_cast<std::size_t>(a)];
    if (trace_) trace_->step_posted(trace_track_[static_cast<std::size_t>(a)], wr, {wr - run->id, t.src, t.dst, t.bytes}, now);
    if (run->raw) {
      // The switches' own protocol: a raw message tagged with the transfer's number.
      nic->post({b, static_cast<std::uint32_t>(wr), t.bytes, params_.sl});
    } else {
      if (run->fast) {
        if (run->virtual_at(now) && post_virtual(lane, *run, wr - run->id, now)) continue;
        lane.posts.emplace_back(wr, now);
      }
      nic->rdma().post(qp_for(a, b, t.channel).qp, {tlm_fabric::RdmaOpcode::write, t.bytes, wr}, now);
      if (!lane.to_kick[static_cast<std::size_t>(a)]) lane.kicked.push_back(a);
      lane.to_kick[static_cast<std::size_t>(a)] = true;
    }
  }
  // Each NIC posted to looks once, after all its posts (its earliest ready time
  // covers them all).
  for (int e : lane.kicked) {
    nics_[static_cast<std::size_t>(e)]->kick();
    lane.to_kick[static_cast<std::size_t>(e)] = false;
  }
  lane.kicked.clear();
  if (!lane.eligible.empty()) lane.wake.notify_at(lane.eligible.top().first);
  if (!lane.virtual_landings.empty()) lane.wake.notify_at(lane.virtual_landings.top().end);
}

void CollectiveEngine::set_trace(tlm_fabric::FabricTrace* trace) {
  trace_ = trace;
  for (std::size_t e = 0; e < nics_.size(); ++e) trace_track_.push_back(trace->add_endpoint_steps(static_cast<int>(e)));
}

void CollectiveEngine::on_completion(int endpoint, const tlm_fabric::Completion& c) {
  if (c.requester) return;
  Run* run = run_of(c.wr_id);
  if (run == nullptr || run->raw) return;
  const std::size_t i = c.wr_id - run->id;
  if (run->landed[i]) return;
  // Only the engine's QPs (RDMA traffic beside it numbers its work requests itself).
  const Schedule::Step t = run->schedule.step(i);
  const int a = run->endpoints[static_cast<std::size_t>(t.src)];
  if (run->endpoints[static_cast<std::size_t>(t.dst)] != endpoint || qp_for(a, endpoint, t.channel).responder != c.qp)
    return;
  if (run->fast)
    lane_of_endpoint(endpoint).landings.push_back(
        {c.wr_id, {ticks(c.posted), ticks(tlm_fabric::sim_now()), ticks(c.visible)}});
  land(*run, i, c.visible);
}

void CollectiveEngine::on_flow(const tlm_fabric::FlowRecord& f) {
  if (raw_runs_ == 0) return;
  for (const auto& owned : runs_) {
    Run& run = *owned;
    if (!run.raw) continue;
    const std::size_t i = static_cast<std::uint32_t>(f.flow - static_cast<std::uint32_t>(run.id));
    if (i >= run.schedule.size() || run.landed[i]) continue;
    const Schedule::Step t = run.schedule.step(i);
    if (run.endpoints[static_cast<std::size_t>(t.dst)] != f.dst || run.endpoints[static_cast<std::size_t>(t.src)] != f.src)
      continue;
    // A result at a rank is written to its memory and polled, as an RDMA WRITE's last
    // byte; an aggregation node takes its inputs as they arrive.
    const tlm_fabric::HostParams& host = nics_[static_cast<std::size_t>(f.dst)]->params().host;
    land(run, i, t.dst < run.ranks ? f.end + host.landing_delay(host.memory) : f.end);
    return;
  }
}

void CollectiveEngine::land(std::uint64_t wr, const sc_time& visible) {
  Run* run = run_of(wr);
  if (run == nullptr) throw std::logic_error("collective engine: no transfer " + std::to_string(wr) + " under way");
  land(*run, wr - run->id, visible);
}

void CollectiveEngine::land(Run& run, std::size_t i, const sc_time& visible) {
  auto& queue = tlm_fabric::WakeQueue::instance();
  const int here = endpoint_lane_[static_cast<std::size_t>(run.endpoints[static_cast<std::size_t>(run.schedule.step(i).dst)])];
  LaneCount& count = run.lanes[static_cast<std::size_t>(here)];
  run.landed[i] = 1;
  ++count.landed;
  if (trace_) trace_->step_landed(run.id + i, visible);
  count.last_visible =
      std::max(count.last_visible, visible + reduction_time(run.schedule.reduce_at_landing(i), params_.reduce_bandwidth_bps));
  for (int j : run.schedule.dependents(i)) {
    const int src = run.endpoints[static_cast<std::size_t>(run.schedule.step(static_cast<std::size_t>(j)).src)];
    const int to = endpoint_lane_[static_cast<std::size_t>(src)];
    if (to == here || !queue.in_window()) {
      release(run, static_cast<std::size_t>(j), visible);
      continue;
    }
    // A buffer slot freed at the receiver (double binary tree): the sender's lane hears
    // of it before its next window; it acts once visible.
    queue.defer(to, tlm_fabric::sim_now(), visible, release_receiver_,
                Release{this, run.id + static_cast<std::uint64_t>(j), visible.value()});
  }
  // Between windows (a scale-up landing, made in every process): the graph may end now.
  // Over processes its other lanes' landings are in other processes: every process asks.
  if (!queue.in_window() && (count.landed == count.expected || tlm_fabric::distributed::active())) end_if_done(run);
}

void CollectiveEngine::Release::pack(tlm_fabric::WakeQueue::Bytes& out) const {
  tlm_fabric::WakeQueue::put(out, wr);
  tlm_fabric::WakeQueue::put(out, visible);
}

void CollectiveEngine::release(std::uint64_t wr, const sc_time& visible) {
  Run& run = *run_of(wr);
  release(run, wr - run.id, visible);
}

void CollectiveEngine::release(Run& run, std::size_t j, const sc_time& visible) {
  // Ranks pay the software step latency and reduce at reduce_bandwidth; aggregation
  // nodes their own latency and throughput.
  const Schedule::Step t = run.schedule.step(j);
  const bool node = t.src >= run.ranks;
  const double bps = node ? params_.aggregation_bandwidth_bps : params_.reduce_bandwidth_bps;
  Lane& lane = lane_of_endpoint(run.endpoints[static_cast<std::size_t>(t.src)]);
  const sc_time at =
      std::max(run.start + params_.step_latency, visible + (node ? params_.aggregation_latency : params_.step_latency));
  const std::optional<sc_time> all_in = lane.waiting.land(run.schedule.deps(j).size(), run.id + j, at);
  if (!all_in) return;
  ready(run, j, *all_in + reduction_time(t.reduce_bytes, bps));
}

bool CollectiveEngine::landed_here(const Run& run, sc_time& end) const {
  const auto& queue = tlm_fabric::WakeQueue::instance();
  end = run.start;
  for (std::size_t k = 0; k < run.lanes.size(); ++k) {
    if (!queue.owns(static_cast<int>(k))) continue;
    const LaneCount& c = run.lanes[k];
    if (c.landed != c.expected) return false;
    end = std::max(end, c.last_visible);
  }
  return true;
}

std::vector<std::pair<CollectiveEngine::Run*, sc_time>> CollectiveEngine::landed_everywhere(const std::vector<Run*>& runs) const {
  // Per graph: whether its transfers have all landed in this process's lanes (1) and the
  // latest visible (as ~ticks), the least of each over the processes: a graph ends in
  // every process at once, at the same time.
  std::vector<std::uint64_t> landed;
  for (const Run* run : runs) {
    sc_time end;
    landed.push_back(landed_here(*run, end) ? 1 : 0);
    landed.push_back(~std::uint64_t{end.value()});
  }
  if (tlm_fabric::distributed::active()) tlm_fabric::distributed::min_over_processes(landed);
  std::vector<std::pair<Run*, sc_time>> ended;
  for (std::size_t k = 0; k < runs.size(); ++k)
    if (landed[2 * k] == 1) ended.emplace_back(runs[k], sc_time::from_value(~landed[2 * k + 1]));
  return ended;
}

bool CollectiveEngine::end_if_done(Run& run) {
  const auto ended = landed_everywhere({&run});
  if (ended.empty()) return false;
  end_run(run, ended.front().second);
  return true;
}

void CollectiveEngine::end_run(Run& run, const sc_time& end) {
  // The graph ends when its last transfer is visible at its destination; its state goes
  // now.
  const GraphId id = run.id;
  const auto it = std::find_if(runs_.begin(), runs_.end(), [&](const std::unique_ptr<Run>& r) { return r.get() == &run; });
  if (run.raw) --raw_runs_;
  if (run.fast) forget_samples(run);
  runs_.erase(it);
  hooks_.done(id, end);
}

void CollectiveEngine::window_ended() {
  std::vector<Run*> runs;
  for (const auto& run : runs_) runs.push_back(run.get());
  for (const auto& [run, end] : landed_everywhere(runs)) end_run(*run, end);  // (done() may start graphs)
  // The bypassed transfers released in the window, in every process (their owner moves
  // them between windows).
  std::vector<ReadyEntry> released;
  for (auto& lane : lanes_) {
    released.insert(released.end(), lane->bypassed.begin(), lane->bypassed.end());
    lane->bypassed.clear();
  }
  if (hooks_.bypass && tlm_fabric::distributed::active()) {
    using Queue = tlm_fabric::WakeQueue;
    Queue::Bytes mine;
    for (const ReadyEntry& r : released) {
      Queue::put(mine, r.first.value());
      Queue::put(mine, r.second);
    }
    const auto all = tlm_fabric::distributed::exchange(
        std::vector<Queue::Bytes>(static_cast<std::size_t>(tlm_fabric::distributed::size()), mine));
    released.clear();
    for (const Queue::Bytes& bytes : all)
      for (const unsigned char* at = bytes.data(); at != bytes.data() + bytes.size();) {
        sc_time::value_type ready = 0;
        std::uint64_t wr = 0;
        at = Queue::get(Queue::get(at, ready), wr);
        released.emplace_back(sc_time::from_value(ready), wr);
      }
  }
  for (const ReadyEntry& r : released) bypassed_.push(r);
  if (!released.empty()) hooks_.bypass_ready(bypassed_.top().first);
}

void CollectiveEngine::bypassed(const sc_time& now, std::vector<Bypassed>& out) {
  out.clear();
  while (!bypassed_.empty() && bypassed_.top().first <= now) {
    const std::uint64_t wr = bypassed_.top().second;
    bypassed_.pop();
    const Run& run = *run_of(wr);
    const Schedule::Step t = run.schedule.step(wr - run.id);
    out.push_back({wr, run.endpoints[static_cast<std::size_t>(t.src)], run.endpoints[static_cast<std::size_t>(t.dst)],
                   t.bytes});
  }
  std::sort(out.begin(), out.end(), [](const Bypassed& x, const Bypassed& y) { return x.wr < y.wr; });
  if (!bypassed_.empty()) hooks_.bypass_ready(bypassed_.top().first);
}

}  // namespace fabricsim::testbench
