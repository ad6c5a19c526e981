#include "testbench/chakra/executor.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "tlm/sim_time.h"

namespace fabricsim::chakra {

using sc_core::sc_time;
using testbench::CollectiveAlgorithm;
using testbench::CollectiveOp;

namespace {

constexpr std::uint64_t kBarrierToken = 8;  // bytes of a barrier message

std::uint64_t key_of(int rank, std::uint32_t node) { return (static_cast<std::uint64_t>(rank) << 32) | node; }

double us(const sc_time& t) { return t.to_seconds() * 1e6; }

// The length of the union of `a` minus the union of `cover` (both any order).
sc_time exposed(std::vector<std::pair<sc_time, sc_time>> a, std::vector<std::pair<sc_time, sc_time>> cover) {
  auto merge = [](std::vector<std::pair<sc_time, sc_time>>& v) {
    std::sort(v.begin(), v.end());
    std::vector<std::pair<sc_time, sc_time>> out;
    for (const auto& x : v) {
      if (!out.empty() && x.first <= out.back().second) out.back().second = std::max(out.back().second, x.second);
      else out.push_back(x);
    }
    v = std::move(out);
  };
  merge(a);
  merge(cover);
  sc_time total;
  std::size_t c = 0;
  for (const auto& [from, to] : a) {
    sc_time at = from;
    while (c < cover.size() && cover[c].second <= at) ++c;
    for (std::size_t k = c; k < cover.size() && cover[k].first < to; ++k) {
      if (cover[k].first > at) total += cover[k].first - at;
      at = std::max(at, cover[k].second);
    }
    if (at < to) total += to - at;
  }
  return total;
}

// The collective a trace type runs as and the graph's bytes per rank (nccl-tests size)
// for a node's comm_size: comm_size is the bytes of the op's input tensors on one rank
// (Chakra's PyTorch converter), so an AllGather's output, the graph's size, is n times it.
// Broadcast and barrier have graphs of their own (their `op` is unused).
struct Runnable {
  bool ok = true;
  CollectiveOp op = CollectiveOp::allreduce;
  std::uint64_t size = 0;
};

Runnable runnable(CollectiveType t, std::uint64_t comm_size, int n) {
  switch (t) {
    case CollectiveType::all_reduce: return {true, CollectiveOp::allreduce, comm_size};
    case CollectiveType::all_gather: return {true, CollectiveOp::allgather, comm_size * static_cast<std::uint64_t>(n)};
    case CollectiveType::reduce_scatter:
    case CollectiveType::reduce_scatter_block: return {true, CollectiveOp::reduce_scatter, comm_size};
    case CollectiveType::all_to_all: return {true, CollectiveOp::alltoall, comm_size};
    case CollectiveType::broadcast: return {true, CollectiveOp::allreduce, comm_size};
    case CollectiveType::barrier: return {true, CollectiveOp::allreduce, 0};
    case CollectiveType::reduce:
    case CollectiveType::gather:
    case CollectiveType::scatter: return {false};
  }
  return {false};
}

// Members of each process group: the ranks whose trace has its collectives (pg_name
// empty: every rank), ascending.
std::map<std::string, std::vector<int>> group_members(const Trace& trace) {
  std::map<std::string, std::vector<int>> groups;
  for (const RankTrace& r : trace.ranks)
    for (const Node& n : r.nodes) {
      if (n.kind != NodeKind::collective) continue;
      auto& m = groups[n.pg_name];
      if (m.empty() || m.back() != r.rank) m.push_back(r.rank);
    }
  if (auto all = groups.find(""); all != groups.end()) {
    all->second.clear();
    for (const RankTrace& r : trace.ranks) all->second.push_back(r.rank);
  }
  for (auto& [name, m] : groups) {
    std::sort(m.begin(), m.end());
    m.erase(std::unique(m.begin(), m.end()), m.end());
  }
  return groups;
}

}  // namespace

void check_runnable(const Trace& trace, const ExecutorParams& params) {
  const auto groups = group_members(trace);
  for (const RankTrace& r : trace.ranks)
    for (const Node& n : r.nodes) {
      if (n.kind != NodeKind::collective) continue;
      const int members = static_cast<int>(groups.at(n.pg_name).size());
      if (!runnable(*n.comm_type, n.comm_size, members).ok)
        throw TraceError(r.file + ": node " + std::to_string(n.id) + " (" + n.name + "): collective " +
                         std::string(to_string(*n.comm_type)) +
                         " is not run by fabricsim (all_reduce, all_gather, reduce_scatter, all_to_all, broadcast "
                         "and barrier are)");
      if (*n.comm_type == CollectiveType::all_reduce && params.algorithm == CollectiveAlgorithm::halving_doubling &&
          (members & (members - 1)) != 0)
        throw TraceError(r.file + ": node " + std::to_string(n.id) + " (" + n.name +
                         "): halving_doubling needs a power-of-two group, process group '" + n.pg_name + "' has " +
                         std::to_string(members) + " ranks");
    }
}

Executor::Executor(sc_core::sc_module_name name, std::vector<tlm_fabric::Nic*> nics, std::shared_ptr<const Trace> trace,
                   const ExecutorParams& params, std::vector<int> endpoint_lane)
    : sc_module(name), nics_(std::move(nics)), trace_(std::move(trace)), params_(params) {
  if (params_.ranks.size() != trace_->ranks.size())
    throw std::invalid_argument("chakra executor: an endpoint for each of the " + std::to_string(trace_->ranks.size()) +
                                " ranks");
  check_runnable(*trace_, params_);
  ranks_.resize(trace_->ranks.size());
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    Rank& rank = ranks_[r];
    const RankTrace& t = trace_->ranks[r];
    rank.trace = &t;
    const std::size_t n = t.nodes.size();
    rank.dependents.resize(n);
    rank.missing.assign(n, 0);
    rank.position.assign(n, 0);
    rank.issued.assign(n, sc_time());
    rank.state.assign(n, 0);
    rank.remaining = n;
    remaining_ += n;
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<std::uint64_t> deps = t.nodes[i].data_deps;
      deps.insert(deps.end(), t.nodes[i].ctrl_deps.begin(), t.nodes[i].ctrl_deps.end());
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      for (std::uint64_t d : deps) {
        const auto from = static_cast<std::size_t>(t.find(d) - t.nodes.data());
        rank.dependents[from].push_back(static_cast<std::uint32_t>(i));
        ++rank.missing[i];
      }
    }
    for (std::size_t p = 0; p < t.order.size(); ++p) rank.position[t.order[p]] = static_cast<std::uint32_t>(p);
  }
  // Collectives of a group are numbered in each rank's execution order (as check_ranks pairs them).
  std::map<std::string, int> group_index;
  for (const auto& [g, members] : group_members(*trace_)) {
    group_index[g] = static_cast<int>(groups_.size());
    groups_.push_back({g, members, {}});
  }
  for (const RankTrace& t : trace_->ranks) {
    std::map<int, std::uint64_t> seq;
    for (std::size_t i : t.order)
      if (t.nodes[i].kind == NodeKind::collective) {
        const int g = group_index.at(t.nodes[i].pg_name);
        collective_node_[key_of(t.rank, static_cast<std::uint32_t>(i))] = {g, seq[g]++};
      }
  }
  testbench::CollectiveEngine::Hooks hooks;
  hooks.done = [this](testbench::CollectiveEngine::GraphId id, const sc_time& end) {
    push_event(end, -1, id);
    wake_.notify_at(end);
  };
  hooks.bypass = [this](int a, int b) { return same_server(a, b); };
  hooks.bypass_ready = [this](const sc_time& at) { wake_.notify_at(at); };
  const testbench::EngineParams ep{params_.step_latency, params_.reduce_bandwidth_bps, {}, 0, params_.sl,
                                   params_.fast_forward, params_.qps_made};
  engine_ = std::make_unique<testbench::CollectiveEngine>(nics_, std::move(endpoint_lane), params_.ranks, ep, std::move(hooks));
  up_port_free_.assign(nics_.size(), sc_time());
  down_port_free_.assign(nics_.size(), sc_time());
  wake_.notify_at(tlm_fabric::sim_now());
}

void Executor::push_event(const sc_time& at, int rank, std::uint64_t node) {
  events_.push({at, event_seq_++, rank, node});
}

void Executor::run() {
  if (finished_ || !error_.empty()) return;
  const sc_time now = tlm_fabric::sim_now();
  if (!started_) {
    started_ = true;
    // First wake: every node without dependencies is issued, in each rank's execution order.
    for (std::size_t r = 0; r < ranks_.size(); ++r)
      for (std::size_t i : ranks_[r].trace->order)
        if (ranks_[r].missing[i] == 0 && ranks_[r].state[i] == 0) issue(static_cast<int>(r), static_cast<std::uint32_t>(i), now);
  }
  for (;;) {
    while (!events_.empty() && events_.top().at <= now) {
      const Event e = events_.top();
      events_.pop();
      if (e.rank >= 0) complete(e.rank, static_cast<std::uint32_t>(e.node), now);
      else if (e.rank == -1) end_instance(e.node, now);
      else engine_->land(e.node, now);  // a scale-up landing
    }
    // Transfers inside a server: the scale-up ports, in start order then graph order.
    engine_->bypassed(now, scale_up_ready_);
    for (const auto& t : scale_up_ready_) post_scale_up(t.wr, t.bytes, t.src, t.dst, now);
    dispatch_compute(now);
    if (events_.empty() || events_.top().at > now) break;
  }
  if (remaining_ == 0) {
    finished_ = true;
    tlm_fabric::stop_simulation();
    return;
  }
  check_stuck(now);
  if (!error_.empty()) return;
  if (!events_.empty()) wake_.notify_at(events_.top().at);
}

sc_time Executor::node_compute_time(const Node& n) const {
  if (n.duration_micros > 0) return sc_time(static_cast<double>(n.duration_micros), sc_core::SC_US);
  if (n.num_ops > 0 || n.tensor_size > 0) return tlm_fabric::from_seconds(params_.gpu.seconds(params_.precision, static_cast<double>(n.num_ops),
                                                                                       static_cast<double>(n.tensor_size)));
  return sc_core::SC_ZERO_TIME;
}

void Executor::issue(int r, std::uint32_t i, const sc_time& now) {
  Rank& rank = ranks_[static_cast<std::size_t>(r)];
  rank.state[i] = 1;
  rank.issued[i] = now;
  const Node& n = rank.trace->nodes[i];
  switch (n.kind) {
    case NodeKind::metadata: push_event(now, r, i); break;
    case NodeKind::compute:
      rank.ready.push({now, rank.position[i], i});
      to_dispatch_.push_back(r);
      break;
    case NodeKind::send:
      sends_[{r, static_cast<int>(*n.comm_dst), n.comm_tag}].push_back(i);
      match_p2p(r, static_cast<int>(*n.comm_dst), n.comm_tag, now);
      break;
    case NodeKind::recv:
      recvs_[{static_cast<int>(*n.comm_src), r, n.comm_tag}].push_back(i);
      match_p2p(static_cast<int>(*n.comm_src), r, n.comm_tag, now);
      break;
    case NodeKind::collective: {
      const CollectiveNode c = collective_node_.at(key_of(r, i));
      Group& g = groups_[static_cast<std::size_t>(c.group)];
      auto& issued = g.issued[c.seq];
      issued.emplace_back(r, i);
      if (issued.size() < g.members.size()) break;
      // Every member is in: the collective runs over the group's members.
      Instance inst;
      inst.collective = true;
      inst.type = *n.comm_type;
      inst.group = g.name;
      inst.comm_size = n.comm_size;
      inst.members = g.members;
      inst.nodes = std::move(issued);
      g.issued.erase(c.seq);
      start(std::move(inst), testbench::Schedule(), now);
      break;
    }
  }
}

void Executor::match_p2p(int src, int dst, std::int64_t tag, const sc_time& now) {
  const std::tuple<int, int, std::int64_t> key{src, dst, tag};
  auto s = sends_.find(key), r = recvs_.find(key);
  if (s == sends_.end() || r == recvs_.end() || s->second.empty() || r->second.empty()) return;
  const std::uint32_t send = s->second.front(), recv = r->second.front();
  s->second.erase(s->second.begin());
  r->second.erase(r->second.begin());
  Instance inst;
  inst.comm_size = ranks_[static_cast<std::size_t>(src)].trace->nodes[send].comm_size;
  inst.size = inst.comm_size;
  inst.members = {src, dst};
  inst.nodes = {{src, send}, {dst, recv}};
  testbench::Schedule write;
  write.add({0, 1, 0, inst.comm_size, 0});
  write.index_dependents();
  start(std::move(inst), std::move(write), now);
}

void Executor::start(Instance inst, testbench::Schedule schedule, const sc_time& now) {
  const int n = static_cast<int>(inst.members.size());
  if (inst.collective) {
    const Runnable run = runnable(inst.type, inst.comm_size, n);
    inst.op = run.op;
    inst.size = run.size;
    if (inst.type == CollectiveType::broadcast) {
      schedule = testbench::broadcast_chain(n, inst.size, params_.chunk);
    } else if (inst.type == CollectiveType::barrier) {
      schedule = testbench::dissemination_barrier(n, kBarrierToken);
    } else {
      testbench::CollectiveParams cp;
      cp.op = run.op;
      cp.algorithm = run.op == CollectiveOp::alltoall   ? CollectiveAlgorithm::direct
                     : run.op == CollectiveOp::allreduce ? params_.algorithm
                                                         : CollectiveAlgorithm::ring;
      cp.channels = params_.channels;
      cp.tree_chunk = params_.chunk;
      cp.tree_slots = params_.tree_slots;
      schedule = testbench::build_schedule(cp, n, inst.size);
    }
  }
  inst.start = now;
  std::vector<int> endpoints;
  for (int r : inst.members) endpoints.push_back(params_.ranks[static_cast<std::size_t>(r)]);
  // (An empty graph ends at once: its end is an event, after the instance is in.)
  const auto id = engine_->start(std::move(schedule), std::move(endpoints), n, false, now);
  instances_.emplace(id, std::move(inst));
}

bool Executor::same_server(int a, int b) const {
  const int g = params_.scale_up.gpus_per_server;
  return g > 0 && a / g == b / g;
}

void Executor::post_scale_up(std::uint64_t wr, std::uint64_t bytes, int a, int b, const sc_time& now) {
  const sc_time begin = std::max({now, up_port_free_[static_cast<std::size_t>(a)], down_port_free_[static_cast<std::size_t>(b)]});
  const sc_time busy = tlm_fabric::from_seconds(static_cast<double>(bytes) * 8.0 / params_.scale_up.bandwidth_bps);
  up_port_free_[static_cast<std::size_t>(a)] = begin + busy;
  down_port_free_[static_cast<std::size_t>(b)] = begin + busy;
  push_event(begin + busy + params_.scale_up.latency, -2, wr);
}

void Executor::end_instance(std::uint64_t id, const sc_time& now) {
  auto it = instances_.find(id);
  Instance inst = std::move(it->second);
  instances_.erase(it);
  inst.end = now;
  for (const auto& [r, i] : inst.nodes) complete(r, i, now);
  if (inst.collective) {
    inst.nodes.clear();
    collectives_done_.push_back(std::move(inst));
  }
}

void Executor::dispatch_compute(const sc_time& now) {
  // Only the ranks whose stream freed or that got a ready node since, in rank order.
  std::sort(to_dispatch_.begin(), to_dispatch_.end());
  to_dispatch_.erase(std::unique(to_dispatch_.begin(), to_dispatch_.end()), to_dispatch_.end());
  dispatching_.swap(to_dispatch_);
  to_dispatch_.clear();
  for (int r : dispatching_) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    if (rank.computing || rank.ready.empty()) continue;
    const ReadyCompute next = rank.ready.top();
    rank.ready.pop();
    rank.computing = true;
    const sc_time d = node_compute_time(rank.trace->nodes[next.node]);
    rank.compute.push_back({now, now + d});
    rank.compute_s += d;
    push_event(now + d, r, next.node);
  }
}

void Executor::complete(int r, std::uint32_t i, const sc_time& now) {
  Rank& rank = ranks_[static_cast<std::size_t>(r)];
  rank.state[i] = 2;
  --rank.remaining;
  --remaining_;
  rank.last_end = std::max(rank.last_end, now);
  end_ = std::max(end_, now);
  const NodeKind kind = rank.trace->nodes[i].kind;
  if (kind == NodeKind::compute) {
    rank.computing = false;
    to_dispatch_.push_back(r);
  }
  else if (kind != NodeKind::metadata) rank.comm.push_back({rank.issued[i], now});
  for (std::uint32_t d : rank.dependents[i])
    if (--rank.missing[d] == 0) issue(r, d, now);
}

std::string Executor::describe(int r, std::uint32_t i) const {
  const Node& n = ranks_[static_cast<std::size_t>(r)].trace->nodes[i];
  std::string s = "node " + std::to_string(n.id) + (n.name.empty() ? "" : " (" + n.name + ")");
  switch (n.kind) {
    case NodeKind::send: return s + ", a send to rank " + std::to_string(*n.comm_dst) + " tag " + std::to_string(n.comm_tag);
    case NodeKind::recv:
      return s + ", a receive from rank " + std::to_string(*n.comm_src) + " tag " + std::to_string(n.comm_tag);
    case NodeKind::collective: return s + ", a " + std::string(to_string(*n.comm_type)) + " of group '" + n.pg_name + "'";
    default: return s;
  }
}

void Executor::check_stuck(const sc_time& now) {
  if (!events_.empty() || engine_->running() > 0) return;
  for (const Rank& rank : ranks_)
    if (rank.computing || !rank.ready.empty()) return;
  // Nodes remain and nothing can complete one: a cross-rank deadlock. Per rank, the
  // first issued node in execution order (a send, receive or collective waiting for its
  // peers), else its first node not run.
  std::ostringstream out;
  out << "deadlock at " << us(now) << " us: no transfer in flight and no compute running, yet nodes remain:";
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const Rank& rank = ranks_[r];
    if (rank.remaining == 0) continue;
    std::uint32_t waiting = 0;
    bool issued = false, found = false;
    for (std::size_t i : rank.trace->order) {
      if (rank.state[i] == 1) {
        waiting = static_cast<std::uint32_t>(i);
        issued = found = true;
        break;
      }
      if (rank.state[i] == 0 && !found) {
        waiting = static_cast<std::uint32_t>(i);
        found = true;
      }
    }
    out << " rank " << r << " (" << rank.trace->file << ") " << (issued ? "waits in " : "has not started ")
        << describe(static_cast<int>(r), waiting) << ";";
  }
  error_ = out.str();
  error_.pop_back();
  tlm_fabric::stop_simulation();
}

nlohmann::json Executor::report() const {
  nlohmann::json ranks = nlohmann::json::array();
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const Rank& rank = ranks_[r];
    std::vector<std::pair<sc_time, sc_time>> comm, compute;
    for (const auto& x : rank.comm) comm.emplace_back(x.from, x.to);
    for (const auto& x : rank.compute) compute.emplace_back(x.from, x.to);
    // Communication in progress while the compute stream is idle.
    const sc_time exposed_comm = exposed(comm, compute);
    const double idle = us(end_) - us(rank.compute_s) - us(exposed_comm);
    ranks.push_back({{"rank", r},
                     {"endpoint", params_.ranks[r]},
                     {"nodes", rank.trace->nodes.size()},
                     {"nodes_done", rank.trace->nodes.size() - rank.remaining},
                     {"compute_us", us(rank.compute_s)},
                     {"exposed_communication_us", us(exposed_comm)},
                     {"idle_us", std::max(0.0, idle)},
                     {"end_us", us(rank.last_end)}});
  }
  nlohmann::json colls = nlohmann::json::array();
  for (const Instance& c : collectives_done_) {
    const double t = us(c.end - c.start);
    const int n = static_cast<int>(c.members.size());
    const double algbw = t > 0 ? static_cast<double>(c.size) / (t * 1e-6) / 1e9 : 0;
    const bool no_data = c.type == CollectiveType::barrier || t <= 0;
    const double factor = c.type == CollectiveType::broadcast ? 1.0 : testbench::bus_factor(c.op, n);
    colls.push_back({{"type", to_string(c.type)},
                     {"group", c.group},
                     {"ranks", n},
                     {"comm_size", c.comm_size},
                     {"bytes", c.size},
                     {"start_us", us(c.start)},
                     {"end_us", us(c.end)},
                     {"time_us", t},
                     {"busbw_GBps", no_data ? nlohmann::json(nullptr) : nlohmann::json(algbw * factor)}});
  }
  nlohmann::json out = {{"trace", trace_->prefix},
                        {"ranks", ranks_.size()},
                        {"finished", finished_},
                        {"iteration_time_us", us(end_)},
                        {"per_rank", ranks},
                        {"collectives", colls}};
  if (!error_.empty()) out["error"] = error_;
  return out;
}

std::string Executor::table() const {
  const nlohmann::json r = report();
  std::ostringstream out;
  char line[200];
  std::snprintf(line, sizeof line, "# fabricsim chakra %s (%zu ranks): iteration %.3f us%s\n",
                trace_->prefix.c_str(), ranks_.size(), r["iteration_time_us"].get<double>(),
                finished_ ? "" : " (unfinished)");
  out << line;
  out << "#  rank  nodes   compute(us)  exposed comm(us)   idle(us)\n";
  for (const auto& x : r["per_rank"]) {
    std::snprintf(line, sizeof line, "%7zu %6zu %13.3f %17.3f %10.3f\n", x["rank"].get<std::size_t>(),
                  x["nodes"].get<std::size_t>(), x["compute_us"].get<double>(),
                  x["exposed_communication_us"].get<double>(), x["idle_us"].get<double>());
    out << line;
  }
  if (!r["collectives"].empty()) {
    out << "#  collective       group  ranks        bytes   start(us)     time(us)  busbw(GB/s)\n";
    for (const auto& c : r["collectives"]) {
      char busbw[32] = "-";
      if (!c["busbw_GBps"].is_null()) std::snprintf(busbw, sizeof busbw, "%.2f", c["busbw_GBps"].get<double>());
      std::snprintf(line, sizeof line, "   %-15s %6s %6d %12llu %11.3f %12.3f %12s\n",
                    c["type"].get<std::string>().c_str(), c["group"].get<std::string>().c_str(), c["ranks"].get<int>(),
                    c["bytes"].get<unsigned long long>(), c["start_us"].get<double>(), c["time_us"].get<double>(), busbw);
      out << line;
    }
  }
  return out.str();
}

}  // namespace fabricsim::chakra
