#include "testbench/collectives.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "tlm/sim_time.h"

namespace fabricsim::testbench {

using sc_core::sc_time;

const hw::EnumNames<CollectiveOp>& collective_op_names() {
  static const hw::EnumNames<CollectiveOp> names{{CollectiveOp::allreduce, "allreduce"},
                                                 {CollectiveOp::reduce_scatter, "reduce_scatter"},
                                                 {CollectiveOp::allgather, "allgather"},
                                                 {CollectiveOp::alltoall, "alltoall"}};
  return names;
}

const hw::EnumNames<CollectiveAlgorithm>& collective_algorithm_names() {
  static const hw::EnumNames<CollectiveAlgorithm> names{{CollectiveAlgorithm::ring, "ring"},
                                                        {CollectiveAlgorithm::double_binary_tree, "double_binary_tree"},
                                                        {CollectiveAlgorithm::halving_doubling, "halving_doubling"},
                                                        {CollectiveAlgorithm::direct, "direct"},
                                                        {CollectiveAlgorithm::sharp, "sharp"}};
  return names;
}

std::string_view to_string(CollectiveOp o) { return hw::name_of(collective_op_names(), o); }
std::string_view to_string(CollectiveAlgorithm a) { return hw::name_of(collective_algorithm_names(), a); }

double bus_factor(CollectiveOp op, int ranks) {
  const double n = ranks;
  return op == CollectiveOp::allreduce ? 2 * (n - 1) / n : (n - 1) / n;
}

namespace {

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return std::max<std::uint64_t>(1, (a + b - 1) / b); }

// NCCL double binary tree: tree 0 is a heap over ranks, tree 1 the same over
// the reversed order, so most leaves of one are inner nodes of the other. Every tree
// edge is a pipe of `slots` chunk buffers at the receiver (NCCL_STEPS): chunk k goes
// once chunk k - slots on the same edge has landed, so a leaf cannot flood its uplink
// with its whole half ahead of the chunks the inner nodes forward.
void double_binary_tree(Schedule& out, int n, std::uint64_t bytes, std::uint64_t chunk_size, int slots) {
  const std::uint64_t half = ceil_div(bytes, 2);
  const std::uint64_t chunks = ceil_div(half, chunk_size);
  for (int tree = 0; tree < 2; ++tree) {
    auto node = [&](int i) { return tree == 0 ? i : n - 1 - i; };  // heap index -> rank
    // The transfers of each edge so far, by child heap index: [i] child -> parent, [n + i] parent -> child.
    std::vector<std::vector<int>> edge(2 * static_cast<std::size_t>(n));
    std::vector<int> deps;
    auto flow_control = [&](std::size_t e) {
      if (edge[e].size() >= static_cast<std::size_t>(slots)) deps.push_back(edge[e][edge[e].size() - slots]);
      edge[e].push_back(static_cast<int>(out.size()));
    };
    for (std::uint64_t k = 0; k < chunks; ++k) {
      const std::uint64_t b = std::min(chunk_size, half - k * chunk_size);
      std::vector<int> up(n, -1), down(n, -1);
      for (int i = n - 1; i >= 1; --i) {  // children before parents
        deps.clear();
        for (int c : {2 * i + 1, 2 * i + 2})
          if (c < n) deps.push_back(up[c]);
        const Schedule::Step t{node(i), node((i - 1) / 2), tree, b, deps.empty() ? 0 : b};
        flow_control(i);
        up[i] = out.add(t, deps);
      }
      for (int i = 1; i < n; ++i) {  // parents before children
        const int p = (i - 1) / 2;
        deps.clear();
        if (p == 0) {
          for (int c : {1, 2})
            if (c < n) deps.push_back(up[c]);
        } else {
          deps.push_back(down[p]);
        }
        const Schedule::Step t{node(p), node(i), tree, b, p == 0 ? b : 0};
        flow_control(n + i);
        down[i] = out.add(t, deps);
      }
    }
  }
}

// In-network reduction over the aggregation tree, per chunk: ranks -> their node; a node
// sends the reduced chunk to its parent once every child's chunk is in; the root reduces
// and multicasts down (one copy per child node and rank); inner nodes forward down.
void in_network(Schedule& out, int n, const AggregationTree& tree, std::uint64_t bytes,
                std::uint64_t chunk_size) {
  const int nodes = static_cast<int>(tree.parent.size());
  std::vector<std::vector<int>> child_nodes(nodes), child_ranks(nodes);
  std::vector<int> depth(nodes, 0);
  int root = -1;
  for (int a = 0; a < nodes; ++a) {
    if (tree.parent[a] < 0) root = a;
    else child_nodes[tree.parent[a]].push_back(a);
    for (int p = tree.parent[a]; p >= 0; p = tree.parent[p]) ++depth[a];
  }
  for (int r = 0; r < n; ++r) child_ranks[tree.rank_node[r]].push_back(r);
  std::vector<int> top_down(nodes);
  std::iota(top_down.begin(), top_down.end(), 0);
  std::stable_sort(top_down.begin(), top_down.end(), [&](int a, int b) { return depth[a] < depth[b]; });
  const std::uint64_t chunks = ceil_div(bytes, chunk_size);
  for (std::uint64_t k = 0; k < chunks; ++k) {
    const std::uint64_t b = std::min(chunk_size, bytes - k * chunk_size);
    std::vector<std::vector<int>> arrived(nodes);  // transfers landing at each node on the way up
    for (int r = 0; r < n; ++r) {
      arrived[tree.rank_node[r]].push_back(out.add({r, tree.rank_port[r], 0, b, 0}));
    }
    for (auto it = top_down.rbegin(); it != top_down.rend(); ++it) {  // children before parents
      const int a = *it;
      if (a == root) continue;
      arrived[tree.parent[a]].push_back(out.add({tree.up_port[a], tree.child_port[a], 0, b, b}, arrived[a]));
    }
    std::vector<int> down(nodes, -1);  // the transfer bringing the result to each node
    for (int a : top_down) {
      const std::vector<int> deps = a == root ? arrived[a] : std::vector<int>{down[a]};
      const std::uint64_t reduce = a == root ? b : 0;
      for (int c : child_nodes[a]) down[c] = out.add({tree.child_port[c], tree.up_port[c], 0, b, reduce}, deps);
      for (int r : child_ranks[a]) out.add({tree.rank_port[r], r, 0, b, reduce}, deps);
    }
  }
}

}  // namespace

namespace {

// A transfer's index is an int (dependency lists, wr_ids are offsets from it).
std::size_t checked_size(std::size_t a, std::size_t b, std::size_t c) {
  if (a * b * c > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::length_error("collective schedule: more than 2^31 transfers");
  return a * b * c;
}

}  // namespace

Schedule Schedule::ring(int n, int channels, std::uint64_t chunk, int steps, int reduce_from, int reduce_to) {
  Schedule s;
  s.form_ = Form::ring;
  s.n_ = n;
  s.steps_per_channel_ = steps;
  s.bytes_ = chunk;
  s.reduce_from_ = reduce_from;
  s.reduce_to_ = reduce_to;
  s.width_ = n;
  s.size_ = checked_size(static_cast<std::size_t>(channels), static_cast<std::size_t>(steps), static_cast<std::size_t>(n));
  return s;
}

Schedule Schedule::halving_doubling(int n, std::uint64_t bytes) {
  int levels = 0;
  while ((1 << levels) < n) ++levels;
  if ((1 << levels) != n) throw std::invalid_argument("halving_doubling needs a power-of-two number of ranks");
  Schedule s;
  s.form_ = Form::halving_doubling;
  s.n_ = n;
  s.levels_ = levels;
  s.bytes_ = bytes;
  s.steps_per_channel_ = 2 * levels;
  s.width_ = n;
  s.size_ = checked_size(2, static_cast<std::size_t>(levels), static_cast<std::size_t>(n));
  return s;
}

Schedule Schedule::direct(int n, std::uint64_t bytes) {
  Schedule s;
  s.form_ = Form::direct;
  s.n_ = n;
  s.bytes_ = bytes;
  s.steps_per_channel_ = n;  // a row per source rank
  s.width_ = n - 1;
  s.size_ = checked_size(1, static_cast<std::size_t>(n), static_cast<std::size_t>(n - 1));
  return s;
}

Schedule::Cell Schedule::cell(std::size_t i) const {
  const std::size_t width = static_cast<std::size_t>(width_);
  const std::size_t per_channel = static_cast<std::size_t>(steps_per_channel_) * width;
  const std::size_t in_channel = i % per_channel;
  return {static_cast<int>(i / per_channel), static_cast<int>(in_channel / width), static_cast<int>(in_channel % width)};
}

int Schedule::index(int channel, int step, int column) const {
  return static_cast<int>((static_cast<std::size_t>(channel) * static_cast<std::size_t>(steps_per_channel_) +
                           static_cast<std::size_t>(step)) * static_cast<std::size_t>(width_) +
                          static_cast<std::size_t>(column));
}

int Schedule::peer(int step, int rank, int direction) const {
  return form_ == Form::ring ? (rank + direction + n_) % n_ : partner(step, rank);
}

Schedule::Step Schedule::step(std::size_t i) const {
  if (form_ == Form::graph) return steps_[i];
  const Cell t = cell(i);
  switch (form_) {
    case Form::ring: {
      const bool reduce = t.step >= reduce_from_ && t.step <= reduce_to_;
      return {t.column, peer(t.step, t.column, +1), t.channel, bytes_, reduce ? bytes_ : 0};
    }
    case Form::halving_doubling: {
      const std::uint64_t b = t.step < levels_ ? ceil_div(bytes_, std::uint64_t{1} << (t.step + 1))
                                               : ceil_div(bytes_, static_cast<std::uint64_t>(n_)) << (t.step - levels_);
      return {t.column, peer(t.step, t.column, +1), 0, b, t.step > 0 && t.step <= levels_ ? b : 0};
    }
    case Form::direct:  // step: the source rank r, column: k - 1
      return {t.step, (t.step + t.column + 1) % n_, 0, ceil_div(bytes_, static_cast<std::uint64_t>(n_)), 0};
    case Form::graph: break;
  }
  return {};
}

Schedule::Indices Schedule::deps(std::size_t i) const {
  if (form_ == Form::graph) return {deps_.data() + dep_begin_[i], deps_.data() + dep_begin_[i + 1]};
  if (form_ == Form::direct) return {};
  // Ring, halving-doubling: what landed at this rank the step before.
  const Cell t = cell(i);
  if (t.step == 0) return {};
  return {nullptr, nullptr, index(t.channel, t.step - 1, peer(t.step - 1, t.column, -1))};
}

Schedule::Indices Schedule::dependents(std::size_t i) const {
  if (form_ == Form::graph) return {dependents_.data() + dependent_begin_[i], dependents_.data() + dependent_begin_[i + 1]};
  if (form_ == Form::direct) return {};
  // Ring, halving-doubling: the next step of the rank this one lands at.
  const Cell t = cell(i);
  if (t.step + 1 == steps_per_channel_) return {};
  return {nullptr, nullptr, index(t.channel, t.step + 1, peer(t.step, t.column, +1))};
}

int Schedule::add(const Step& step, const int* deps, std::size_t count) {
  if (form_ != Form::graph) throw std::logic_error("collective schedule: a formula takes no transfers");
  if (steps_.size() >= static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
      deps_.size() + count > std::numeric_limits<std::uint32_t>::max())
    throw std::length_error("collective schedule: more than 2^31 transfers or 2^32 dependencies");
  steps_.push_back(step);
  for (std::size_t k = 0; k < count; ++k) deps_.push_back(deps[k]);
  dep_begin_.push_back(static_cast<std::uint32_t>(deps_.size()));
  return static_cast<int>(steps_.size() - 1);
}

void Schedule::reserve(std::size_t transfers, std::size_t deps) {
  steps_.reserve(steps_.size() + transfers);
  dep_begin_.reserve(dep_begin_.size() + transfers);
  deps_.reserve(deps_.size() + deps);
}

void Schedule::index_dependents() {
  if (form_ != Form::graph) return;  // a formula's reverse lists are a formula too
  // Counting sort of the dependency edges by the transfer they wait for; each list
  // stays in increasing order of the waiting transfer.
  const std::size_t m = steps_.size();
  dependent_begin_.assign(m + 1, 0);
  for (int d : deps_) ++dependent_begin_[d + 1];
  for (std::size_t i = 0; i < m; ++i) dependent_begin_[i + 1] += dependent_begin_[i];
  dependents_.assign(deps_.size(), 0);
  std::vector<std::uint32_t> fill(dependent_begin_.begin(), dependent_begin_.end() - 1);
  for (std::size_t i = 0; i < m; ++i)
    for (int d : deps(i)) dependents_[fill[d]++] = static_cast<int>(i);
}

Transfer Schedule::operator[](std::size_t i) const {
  if (i >= size()) throw std::out_of_range("collective schedule: no transfer " + std::to_string(i));
  const Step s = step(i);
  const Indices d = deps(i);
  return {s.src, s.dst, s.bytes, s.channel, std::vector<int>(d.begin(), d.end()), s.reduce_bytes};
}

Schedule build_schedule(const CollectiveParams& p, int n, std::uint64_t bytes) {
  Schedule out;
  if (n < 2) return out;
  const int c = std::max(1, p.channels);
  const std::uint64_t chunk = ceil_div(bytes, static_cast<std::uint64_t>(c) * n);
  switch (p.op) {
    case CollectiveOp::allreduce:
      if (p.algorithm == CollectiveAlgorithm::halving_doubling) return Schedule::halving_doubling(n, bytes);
      if (p.algorithm == CollectiveAlgorithm::sharp) {
        in_network(out, n, p.tree, bytes, p.tree_chunk);
      } else if (p.algorithm == CollectiveAlgorithm::double_binary_tree) {
        double_binary_tree(out, n, bytes, p.tree_chunk, p.tree_slots);
      } else {
        return Schedule::ring(n, c, chunk, 2 * (n - 1), 1, n - 1);
      }
      break;
    case CollectiveOp::reduce_scatter: return Schedule::ring(n, c, chunk, n - 1, 1, n - 1);
    case CollectiveOp::allgather: return Schedule::ring(n, c, chunk, n - 1, 1, 0);
    case CollectiveOp::alltoall: return Schedule::direct(n, bytes);
  }
  out.index_dependents();
  return out;
}

Schedule broadcast_chain(int n, std::uint64_t bytes, std::uint64_t chunk) {
  Schedule out;
  if (n < 2) return out;
  const std::uint64_t chunks = ceil_div(bytes, chunk);
  out.reserve(chunks * static_cast<std::uint64_t>(n - 1), chunks * static_cast<std::uint64_t>(n - 2));
  for (std::uint64_t k = 0; k < chunks; ++k) {
    const std::uint64_t b = bytes == 0 ? 0 : std::min(chunk, bytes - k * chunk);
    int previous = -1;
    for (int j = 0; j + 1 < n; ++j) {
      const Schedule::Step t{j, j + 1, 0, b, 0};
      previous = previous < 0 ? out.add(t) : out.add(t, {previous});
    }
  }
  out.index_dependents();
  return out;
}

Schedule dissemination_barrier(int n, std::uint64_t token) {
  Schedule out;
  if (n < 2) return out;
  int rounds = 0;
  while ((1 << rounds) < n) ++rounds;
  for (int k = 0; k < rounds; ++k)
    for (int i = 0; i < n; ++i) {
      const Schedule::Step t{i, (i + (1 << k)) % n, 0, token, 0};
      if (k == 0) out.add(t);
      else out.add(t, {(k - 1) * n + (i - (1 << (k - 1)) + n) % n});
    }
  out.index_dependents();
  return out;
}

CollectiveRunner::Lane::Lane(CollectiveRunner& runner, std::size_t endpoints)
    : wake([this, &runner] { runner.post_ready(*this); }), to_kick(endpoints, false) {}

CollectiveRunner::CollectiveRunner(sc_core::sc_module_name name, std::vector<tlm_fabric::Nic*> nics,
                                   const CollectiveParams& params, std::vector<int> endpoint_lane)
    : sc_module(name), nics_(std::move(nics)), params_(params), endpoint_lane_(std::move(endpoint_lane)) {
  auto& queue = tlm_fabric::WakeQueue::instance();
  if (endpoint_lane_.empty()) endpoint_lane_.assign(nics_.size(), 0);
  if (endpoint_lane_.size() != nics_.size())
    throw std::invalid_argument("collective runner: a lane for each of the " + std::to_string(nics_.size()) + " NICs");
  const int lanes = queue.lanes();
  for (int k = 0; k < lanes; ++k) {
    queue.building_lane(k);
    lanes_.push_back(std::make_unique<Lane>(*this, nics_.size()));
  }
  for (int rank = 0; rank < static_cast<int>(params_.ranks.size()); ++rank) {
    const int e = params_.ranks[rank];
    nics_.at(e)->rdma().set_completion_handler([this, e](const tlm_fabric::Completion& c) { on_completion(e, c); });
  }
  // The lanes' last landings are in once their window has ended.
  if (lanes > 1) queue.at_window_end([this] { end_if_done(); });
  wake_.notify_at(tlm_fabric::sim_now());
}

sc_time CollectiveRunner::least_completion_delay() const {
  sc_time least = sc_core::sc_max_time();
  for (int e : params_.ranks) least = std::min(least, nics_.at(e)->rdma().least_completion_delay());
  return least;
}

int CollectiveRunner::endpoint_of(int participant) const {
  const int n = static_cast<int>(params_.ranks.size());
  return participant < n ? params_.ranks[participant] : params_.tree.endpoints.at(participant - n);
}

int CollectiveRunner::qp_for(int src_rank, int dst_rank, int channel) const {
  const auto& qps = rank_qps_[static_cast<std::size_t>(src_rank)];
  const RankQp key{peer_key(dst_rank, channel), 0};
  const auto it = std::lower_bound(qps.begin(), qps.end(), key);
  if (it == qps.end() || it->peer != key.peer)
    throw std::logic_error("collective: no QP from rank " + std::to_string(src_rank) + " to rank " +
                           std::to_string(dst_rank) + " on channel " + std::to_string(channel));
  return it->qp;
}

void CollectiveRunner::make_qps(const std::vector<std::uint64_t>& keys) {
  rank_qps_.resize(params_.ranks.size());
  auto made = [&](const QpEnds& q) {
    const auto& qps = rank_qps_[static_cast<std::size_t>(q.src_rank)];
    return std::binary_search(qps.begin(), qps.end(), RankQp{peer_key(q.dst_rank, q.channel), 0});
  };
  std::vector<std::uint64_t> fresh;  // the keys of the QPs to make, sorted, each once
  for (std::uint64_t k : keys)
    if (!made(qp_ends(k))) fresh.push_back(k);
  if (fresh.empty()) return;
  std::sort(fresh.begin(), fresh.end());
  fresh.erase(std::unique(fresh.begin(), fresh.end()), fresh.end());
  std::vector<std::size_t> more(nics_.size(), 0);  // new QPs per NIC: one at each end
  for (std::uint64_t k : fresh) {
    const QpEnds q = qp_ends(k);
    ++more[static_cast<std::size_t>(params_.ranks[q.src_rank])];
    ++more[static_cast<std::size_t>(params_.ranks[q.dst_rank])];
  }
  for (std::size_t e = 0; e < nics_.size(); ++e)
    if (more[e] > 0) nics_[e]->rdma().reserve_qps(more[e]);
  // In the order `keys` names them (the QP numbers at each NIC follow it).
  std::vector<std::uint8_t> done(fresh.size(), 0), sources(params_.ranks.size(), 0);
  for (std::uint64_t k : keys) {
    const auto at = std::lower_bound(fresh.begin(), fresh.end(), k);
    if (at == fresh.end() || *at != k || done[static_cast<std::size_t>(at - fresh.begin())]) continue;
    done[static_cast<std::size_t>(at - fresh.begin())] = 1;
    const QpEnds q = qp_ends(k);
    const int a = params_.ranks[q.src_rank], b = params_.ranks[q.dst_rank];
    const int qa = nics_[a]->rdma().create_qp(b, 0, params_.sl);
    const int qb = nics_[b]->rdma().create_qp(a, qa, params_.sl);
    nics_[a]->rdma().connect(qa, qb);
    rank_qps_[static_cast<std::size_t>(q.src_rank)].push_back({peer_key(q.dst_rank, q.channel), qa});
    sources[static_cast<std::size_t>(q.src_rank)] = 1;
  }
  for (std::size_t r = 0; r < rank_qps_.size(); ++r)
    if (sources[r]) std::sort(rank_qps_[r].begin(), rank_qps_[r].end());
}

void CollectiveRunner::start_iteration(const sc_time& now) {
  const int n = static_cast<int>(params_.ranks.size());
  const bool sharp = params_.algorithm == CollectiveAlgorithm::sharp;
  schedule_ = build_schedule(params_, n, results_.back().bytes);
  const std::size_t m = schedule_.size();
  landed_.assign(m, 0);
  for (auto& lane : lanes_) {
    lane->eligible = {};
    lane->waiting.clear();
    lane->expected = lane->landed = 0;
    lane->last_visible = now;
  }
  // Every QP now, in schedule order: a lane posting later must not make one on another
  // lane's NIC. (A rank's transfers mostly go where its last one went: a ring's always.)
  std::vector<std::pair<int, int>> last_peer(static_cast<std::size_t>(n), {-1, -1});  // per rank: (dst, channel)
  std::vector<std::uint64_t> qp_keys;
  for (std::size_t i = 0; i < m; ++i) {
    const Schedule::Step t = schedule_.step(i);
    const std::pair<int, int> peer{t.dst, t.channel};
    if (!sharp && last_peer[static_cast<std::size_t>(t.src)] != peer) {
      qp_keys.push_back(qp_key({t.src, t.dst, t.channel}));
      last_peer[static_cast<std::size_t>(t.src)] = peer;
    }
    ++lane_of(t.dst).expected;
    if (schedule_.deps(i).size() == 0) lane_of(t.src).eligible.push({now + params_.step_latency, i});
  }
  make_qps(qp_keys);
  iteration_start_ = now;
  running_ = true;
  for (auto& lane : lanes_)
    if (!lane->eligible.empty()) lane->wake.notify_at(lane->eligible.top().first);
  end_if_done();  // nothing to move: done at once
}

void CollectiveRunner::post_ready(Lane& lane) {
  // Every transfer of this lane's ranks ready by now, posted in schedule order (the
  // NIC's DMA timeline serves posts in that order); then wake for the earliest one
  // still waiting.
  const sc_time now = tlm_fabric::sim_now();
  lane.batch.clear();
  while (!lane.eligible.empty() && lane.eligible.top().first <= now) {
    lane.batch.push_back(lane.eligible.top().second);
    lane.eligible.pop();
  }
  std::sort(lane.batch.begin(), lane.batch.end());
  for (std::size_t i : lane.batch) {
    const Schedule::Step t = schedule_.step(i);
    const int e = endpoint_of(t.src);
    auto* nic = nics_[e];
    if (params_.algorithm == CollectiveAlgorithm::sharp) {
      // The switches' own protocol: a raw message tagged with the transfer's number.
      nic->post({endpoint_of(t.dst), static_cast<std::uint32_t>(wr_base_ + i), t.bytes, params_.sl});
    } else {
      nic->rdma().post(qp_for(t.src, t.dst, t.channel), {tlm_fabric::RdmaOpcode::write, t.bytes, wr_base_ + i}, now);
      if (!lane.to_kick[e]) lane.kicked.push_back(e);
      lane.to_kick[e] = true;
    }
  }
  // Each NIC posted to looks once, after all its posts (its earliest ready time
  // covers them all).
  for (int e : lane.kicked) {
    nics_[e]->kick();
    lane.to_kick[e] = false;
  }
  lane.kicked.clear();
  if (!lane.eligible.empty()) lane.wake.notify_at(lane.eligible.top().first);
}

void CollectiveRunner::on_completion(int endpoint, const tlm_fabric::Completion& c) {
  if (c.requester || c.wr_id < wr_base_ || c.wr_id - wr_base_ >= schedule_.size()) return;
  const std::size_t i = c.wr_id - wr_base_;
  if (landed_[i] || params_.ranks[schedule_.step(i).dst] != endpoint) return;
  land(i, c.visible);
}

void CollectiveRunner::on_flow(const tlm_fabric::FlowRecord& f) {
  if (params_.algorithm != CollectiveAlgorithm::sharp) return;
  const std::size_t i = static_cast<std::uint32_t>(f.flow - static_cast<std::uint32_t>(wr_base_));
  if (i >= schedule_.size() || landed_[i]) return;
  const Schedule::Step t = schedule_.step(i);
  if (endpoint_of(t.dst) != f.dst || endpoint_of(t.src) != f.src) return;
  // A result at a rank is written to its memory and polled, as an RDMA WRITE's last
  // byte; an aggregation node takes its inputs as they arrive.
  const bool rank = t.dst < static_cast<int>(params_.ranks.size());
  const tlm_fabric::HostParams& host = nics_[f.dst]->params().host;
  land(i, rank ? f.end + host.landing_delay(host.memory) : f.end);
}

void CollectiveRunner::land(std::size_t i, const sc_time& visible) {
  auto& queue = tlm_fabric::WakeQueue::instance();
  const int here = endpoint_lane_[endpoint_of(schedule_.step(i).dst)];
  Lane& lane = *lanes_[static_cast<std::size_t>(here)];
  landed_[i] = 1;
  ++lane.landed;
  lane.last_visible = std::max(lane.last_visible, visible);
  for (int j : schedule_.dependents(i)) {
    const int to = endpoint_lane_[endpoint_of(schedule_.step(j).src)];
    if (to == here || !queue.in_window()) {
      release(static_cast<std::size_t>(j), visible);
      continue;
    }
    // A buffer slot freed at the receiver (double binary tree): the sender's lane hears
    // of it before its next window; it acts once visible.
    const sc_time::value_type v = visible.value();
    queue.defer(to, tlm_fabric::sim_now(), visible,
                [this, j, v] { release(static_cast<std::size_t>(j), sc_time::from_value(v)); });
  }
  if (lane.landed == lane.expected && !queue.in_window()) end_if_done();
}

std::optional<sc_time> InputJoin::land(const Schedule& s, std::size_t j, const sc_time& ready) {
  const std::size_t inputs = s.deps(j).size();
  if (inputs <= 1) return ready;
  auto [it, first] = waiting_.try_emplace(j, Waiting{static_cast<std::uint32_t>(inputs), ready});
  if (!first) it->second.ready = std::max(it->second.ready, ready);
  if (--it->second.missing != 0) return std::nullopt;
  const sc_time all_in = it->second.ready;
  waiting_.erase(it);
  return all_in;
}

sc_time reduction_time(std::uint64_t bytes, double bps) {
  return bps > 0 ? tlm_fabric::from_seconds(static_cast<double>(bytes) * 8.0 / bps) : sc_time();
}

void CollectiveRunner::release(std::size_t j, const sc_time& visible) {
  // Ranks pay the software step latency and reduce at reduce_bandwidth; aggregation
  // nodes their own latency and throughput.
  const Schedule::Step t = schedule_.step(j);
  const bool node = t.src >= static_cast<int>(params_.ranks.size());
  const double bps = node ? params_.aggregation_bandwidth_bps : params_.reduce_bandwidth_bps;
  Lane& lane = lane_of(t.src);
  sc_time ready =
      std::max(iteration_start_ + params_.step_latency, visible + (node ? params_.aggregation_latency : params_.step_latency));
  const std::optional<sc_time> all_in = lane.waiting.land(schedule_, j, ready);
  if (!all_in) return;
  ready = *all_in + reduction_time(t.reduce_bytes, bps);
  lane.eligible.push({ready, j});
  lane.wake.notify_at(ready);
}

void CollectiveRunner::end_if_done() {
  if (!running_) return;
  sc_time end = iteration_start_;
  for (const auto& lane : lanes_) {
    if (lane->landed != lane->expected) return;
    end = std::max(end, lane->last_visible);
  }
  // The collective ends when the last transfer is visible at its destination.
  results_.back().times_us.push_back((end - iteration_start_).to_seconds() * 1e6);
  last_job_end_ = end;
  comm_s_ += (end - iteration_start_).to_seconds();
  // The graph and its per-transfer state go now, not when the next one is built; the
  // next collective's wr_ids follow this one's.
  wr_base_ += schedule_.size();
  schedule_ = Schedule();
  landed_ = {};
  running_ = false;
  next_start_ = end;
  wake_.notify_at(end);
}

void CollectiveRunner::run() {
  const sc_time now = tlm_fabric::sim_now();
  if (finished_ || running_) return;  // (a collective runs: its end wakes this)
  // Start (first call), the next iteration, the next size, or stop.
  if (next_start_ > now) {
    wake_.notify_at(next_start_);
    return;
  }
  if (params_.training.enabled) {
    next_training_job(now);
    return;
  }
  if (results_.empty() || static_cast<int>(results_.back().times_us.size()) >= params_.iterations) {
    if (size_index_ >= params_.sizes.size()) {
      finished_ = true;
      tlm_fabric::stop_simulation();
      return;
    }
    results_.push_back({params_.sizes[size_index_++], {}});
  }
  start_iteration(now);
}

void CollectiveRunner::next_training_job(const sc_time& now) {
  const TrainingParams& t = params_.training;
  if (!training_started_) {
    training_started_ = true;
    step_start_ = now;
    last_job_end_ = now;
  }
  const sc_time compute_end = step_start_ + t.forward + t.backward;
  if (bucket_ < t.buckets.size()) {
    // Bucket b is ready after (b+1)/B of the backward pass (or all of it without overlap).
    const double share = t.overlap ? static_cast<double>(bucket_ + 1) / static_cast<double>(t.buckets.size()) : 1.0;
    const sc_time ready = step_start_ + t.forward + t.backward * share;
    const sc_time start = std::max(ready, last_job_end_);
    if (start > now) {
      next_start_ = start;
      wake_.notify_at(start);
      return;
    }
    results_.push_back({t.buckets[bucket_++], {}});
    start_iteration(now);
    return;
  }
  // Every bucket reduced: the optimizer runs once compute and communication are done.
  const sc_time end = std::max(compute_end, last_job_end_) + t.optimizer;
  if (end > now) {
    next_start_ = end;
    wake_.notify_at(end);
    return;
  }
  const double compute_us = (t.forward + t.backward + t.optimizer).to_seconds() * 1e6;
  const double step_us = (end - step_start_).to_seconds() * 1e6;
  steps_.push_back({step_us, compute_us, comm_s_ * 1e6, step_us - compute_us});
  comm_s_ = 0;
  bucket_ = 0;
  step_start_ = end;
  last_job_end_ = end;
  if (++step_ >= t.steps) {
    finished_ = true;
    tlm_fabric::stop_simulation();
    return;
  }
  next_training_job(now);
}

nlohmann::json CollectiveRunner::training_report() const {
  nlohmann::json steps = nlohmann::json::array();
  for (const StepResult& s : steps_)
    steps.push_back({{"step_time_us", s.step_us},
                     {"compute_us", s.compute_us},
                     {"communication_us", s.comm_us},
                     {"exposed_communication_us", s.exposed_us},
                     {"communication_fraction", s.step_us > 0 ? s.exposed_us / s.step_us : 0.0}});
  return steps;
}

nlohmann::json CollectiveRunner::report() const {
  nlohmann::json out = nlohmann::json::array();
  const int n = static_cast<int>(params_.ranks.size());
  for (const SizeResult& r : results_) {
    double sum = 0;
    for (double t : r.times_us) sum += t;
    const double t_us = r.times_us.empty() ? 0 : sum / r.times_us.size();
    const double algbw = t_us > 0 ? static_cast<double>(r.bytes) / (t_us * 1e-6) / 1e9 : 0;  // GB/s
    out.push_back({{"bytes", r.bytes},
                   {"iterations", r.times_us.size()},
                   {"time_us", t_us},
                   {"algbw_GBps", algbw},
                   {"busbw_GBps", algbw * bus_factor(params_.op, n)}});
  }
  return out;
}

std::string CollectiveRunner::table() const {
  std::ostringstream out;
  char line[200];
  out << "# fabricsim " << to_string(params_.op) << " (" << to_string(params_.algorithm) << ", " << params_.ranks.size()
      << " ranks, " << params_.channels << " channel(s)), nccl-tests layout\n";
  out << "#       size         count      type   redop    root     time   algbw   busbw #wrong\n";
  out << "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)\n";
  for (const auto& j : report()) {
    const auto bytes = j["bytes"].get<unsigned long long>();
    const bool reduces = params_.op == CollectiveOp::allreduce || params_.op == CollectiveOp::reduce_scatter;
    std::snprintf(line, sizeof line, "%12llu  %12llu     float  %6s      -1  %7.1f  %6.2f  %6.2f    N/A\n", bytes,
                  bytes / 4, reduces ? "sum" : "none", j["time_us"].get<double>(), j["algbw_GBps"].get<double>(),
                  j["busbw_GBps"].get<double>());
    out << line;
  }
  return out.str();
}

}  // namespace fabricsim::testbench
