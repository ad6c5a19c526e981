#include "testbench/collectives.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "testbench/collective_engine.h"
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

std::uint64_t Schedule::reduce_at_landing(std::size_t i) const {
  if (form_ != Form::ring || reduce_to_ < steps_per_channel_) return 0;
  return cell(i).step == steps_per_channel_ - 1 ? bytes_ : 0;
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

std::optional<sc_time> InputJoin::land(std::size_t inputs, std::uint64_t key, const sc_time& ready) {
  if (inputs <= 1) return ready;
  auto [it, first] = waiting_.try_emplace(key, Waiting{static_cast<std::uint32_t>(inputs), ready});
  if (!first) it->second.ready = std::max(it->second.ready, ready);
  if (--it->second.missing != 0) return std::nullopt;
  const sc_time all_in = it->second.ready;
  waiting_.erase(it);
  return all_in;
}

sc_time reduction_time(std::uint64_t bytes, double bps) {
  return bps > 0 ? tlm_fabric::from_seconds(static_cast<double>(bytes) * 8.0 / bps) : sc_time();
}

CollectiveRunner::CollectiveRunner(sc_core::sc_module_name name, std::vector<tlm_fabric::Nic*> nics,
                                   const CollectiveParams& params, std::vector<int> endpoint_lane)
    : sc_module(name), params_(params), participants_(params.ranks) {
  participants_.insert(participants_.end(), params_.tree.endpoints.begin(), params_.tree.endpoints.end());
  CollectiveEngine::Hooks hooks;
  hooks.done = [this](CollectiveEngine::GraphId, const sc_time& end) { ended(end); };
  const EngineParams ep{params_.step_latency, params_.reduce_bandwidth_bps, params_.aggregation_latency,
                        params_.aggregation_bandwidth_bps, params_.sl, params_.fast_forward, params_.qps_made};
  recorded_.resize(static_cast<std::size_t>(tlm_fabric::WakeQueue::instance().lanes()));
  engine_ = std::make_unique<CollectiveEngine>(std::move(nics), std::move(endpoint_lane), params_.ranks, ep, std::move(hooks));
  wake_.notify_at(tlm_fabric::sim_now());
}

CollectiveRunner::~CollectiveRunner() = default;

sc_time CollectiveRunner::least_completion_delay() const { return engine_->least_completion_delay(); }

FastForwardReport CollectiveRunner::fast_forward_report() const {
  FastForwardReport r = engine_->fast_forward_report();
  r.transfers += replayed_.transfers;
  r.bytes += replayed_.bytes;
  r.iterations = replayed_.iterations;
  return r;
}

void CollectiveRunner::on_flow(const tlm_fabric::FlowRecord& f) {
  engine_->on_flow(f);
  if (recording_) recorded_[static_cast<std::size_t>(tlm_fabric::detail::lane)].push_back(f);
}

bool CollectiveRunner::replays() const {
  return memo_ && memo_->bytes == results_.back().bytes && !results_.back().times_us.empty();
}

void CollectiveRunner::replay(const sc_time& now) {
  ++replayed_.iterations;
  replayed_.transfers += memo_->flows.size();
  replayed_.bytes += memo_->bytes_moved;
  replay_next_ = 0;
  if (memo_->flows.empty()) ended(now + memo_->duration);
  else replay_wake_.notify_at(now + memo_->flows.front().end);
}

void CollectiveRunner::replay_flows() {
  // Each flow at its end, in the memo's order, as the fabric would report it, its packets
  // counted; the last ends no later than the iteration (its transfer is visible to the
  // host after it).
  const sc_time now = tlm_fabric::sim_now();
  const auto& flows = memo_->flows;
  for (; replay_next_ < flows.size() && iteration_start_ + flows[replay_next_].end <= now; ++replay_next_) {
    tlm_fabric::FlowRecord f = flows[replay_next_];
    f.start += iteration_start_;
    f.end += iteration_start_;
    engine_->count_skipped_send(f.src, f.dst, f.flow, f.bytes, f.start);
    engine_->deliver_skipped(f);
  }
  if (replay_next_ < flows.size()) replay_wake_.notify_at(iteration_start_ + flows[replay_next_].end);
  else ended(iteration_start_ + memo_->duration);
}

void CollectiveRunner::keep_memo(const sc_time& end) {
  recording_ = false;
  Memo m{results_.back().bytes, end - iteration_start_, {}, 0};
  std::size_t flows = 0;
  for (const auto& lane : recorded_) flows += lane.size();
  // (A memo of millions of flows costs more memory than replaying saves time.)
  if (flows <= kMaxMemoFlows)
    for (const auto& lane : recorded_)
      for (tlm_fabric::FlowRecord f : lane) {
        f.start -= iteration_start_;
        f.end -= iteration_start_;
        m.bytes_moved += f.bytes;
        m.flows.push_back(f);
      }
  for (auto& lane : recorded_) std::vector<tlm_fabric::FlowRecord>().swap(lane);
  if (flows > kMaxMemoFlows) return;
  std::sort(m.flows.begin(), m.flows.end(), [](const tlm_fabric::FlowRecord& a, const tlm_fabric::FlowRecord& b) {
    return std::tie(a.end, a.dst, a.src, a.flow, a.start) < std::tie(b.end, b.dst, b.src, b.flow, b.start);
  });
  memo_ = std::move(m);
}

void CollectiveRunner::set_trace(tlm_fabric::FabricTrace* trace) { engine_->set_trace(trace); }

void CollectiveRunner::start_iteration(const sc_time& now) {
  const int n = static_cast<int>(params_.ranks.size());
  iteration_start_ = now;
  running_ = true;
  if (replays()) {
    replay(now);
    return;
  }
  recording_ = params_.fast_forward.on && params_.iterations > 1 && results_.back().times_us.empty() &&
               params_.algorithm != CollectiveAlgorithm::sharp;
  engine_->start(build_schedule(params_, n, results_.back().bytes), participants_, n,
                 params_.algorithm == CollectiveAlgorithm::sharp, now);
}

void CollectiveRunner::ended(const sc_time& end) {
  if (recording_) keep_memo(end);
  results_.back().times_us.push_back((end - iteration_start_).to_seconds() * 1e6);
  last_job_end_ = end;
  comm_s_ += (end - iteration_start_).to_seconds();
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
