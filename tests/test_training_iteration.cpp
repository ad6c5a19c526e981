// A generated training iteration at zero contention against the alpha-beta model of the
// same per-rank DAG. The closed form below is written apart from the executor: it
// schedules the trace with the executor's documented semantics (docs/workloads.md,
// "Running a trace": one compute stream per rank taking the earliest ready node,
// communication beside compute, a send when its receive is issued, a collective when
// every member has issued it) and costs each communication node with the Hockney
// model (Parallel Computing 20(3), 1994) of its algorithm as Thakur, Rabenseifner and
// Gropp give it (IJHPCA 19(1), 2005): ring AllReduce 2(p-1)(alpha + S/(p B)) +
// (p-1) S/p gamma, a send alpha + S/B.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <queue>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "hw/phy.h"
#include "sim/config.h"
#include "testbench/chakra/writer.h"
#include "testbench/training/generator.h"
#include "tests/chakra_nodes.h"
#include "tests/fabric_run.h"
#include "tests/fabrics.h"
#include "tests/validation.h"

namespace fabricsim::training {
namespace {

namespace fs = std::filesystem;
using chakra::CollectiveType;
using chakra::NodeKind;
using nlohmann::json;

/// One way of moving bytes between two ranks: latency per message and bandwidth.
struct AlphaBeta {
  double alpha = 0;      // [s]
  double bandwidth = 0;  // payload [B/s]
};

/// What the closed form costs communication with.
struct Costs {
  AlphaBeta fabric, scale_up;
  int gpus_per_server = 0;  // ranks r and q share a server (scale-up) when r / g == q / g
  double reduce = 0;        // reduction throughput gamma^-1 [B/s]
};

/// A ring AllReduce of `bytes` over p members on one kind of path: 2(p - 1) steps of
/// ceil(S / p) bytes (the executor's chunk), p - 1 of them reducing what they send.
double collective_seconds(CollectiveType type, std::uint64_t bytes, std::size_t members, const AlphaBeta& path,
                          double reduce) {
  const double p = static_cast<double>(members);
  if (members < 2) return 0;
  EXPECT_EQ(type, CollectiveType::all_reduce) << "no closed form here for " << chakra::to_string(type);
  const double chunk = std::ceil(static_cast<double>(bytes) / p);
  return 2 * (p - 1) * (path.alpha + chunk / path.bandwidth) + (p - 1) * chunk / reduce;
}

/// The iteration time of `trace` under the alpha-beta model, scheduled as the executor
/// documents it: a discrete-event pass over every rank's DAG with no shared link.
class ClosedForm {
 public:
  ClosedForm(const chakra::Trace& trace, const Costs& costs) : trace_(trace), costs_(costs), ranks_(trace.ranks.size()) {
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      const auto& t = trace.ranks[r];
      Rank& rank = ranks_[r];
      rank.missing.assign(t.nodes.size(), 0);
      rank.next.resize(t.nodes.size());
      rank.position.resize(t.nodes.size());
      for (std::size_t p = 0; p < t.order.size(); ++p) rank.position[t.order[p]] = p;
      for (std::size_t i = 0; i < t.nodes.size(); ++i) {
        std::vector<std::uint64_t> deps = t.nodes[i].data_deps;
        deps.insert(deps.end(), t.nodes[i].ctrl_deps.begin(), t.nodes[i].ctrl_deps.end());
        std::sort(deps.begin(), deps.end());
        deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
        for (std::uint64_t d : deps) {
          rank.next[static_cast<std::size_t>(t.find(d) - t.nodes.data())].push_back(i);
          ++rank.missing[i];
        }
      }
      // A collective's identity: its group and its number among the group's nodes.
      std::map<std::string, std::uint64_t> seq;
      for (std::size_t i : t.order)
        if (t.nodes[i].kind == NodeKind::collective) {
          rank.collective_seq[i] = seq[t.nodes[i].pg_name]++;
          auto& m = members_[t.nodes[i].pg_name];
          if (std::find(m.begin(), m.end(), static_cast<int>(r)) == m.end()) m.push_back(static_cast<int>(r));
        }
    }
  }

  double iteration_seconds() {
    for (std::size_t r = 0; r < ranks_.size(); ++r)
      for (std::size_t i : trace_.ranks[r].order)
        if (ranks_[r].missing[i] == 0) issue(static_cast<int>(r), i, 0);
    double end = 0;
    while (!events_.empty()) {
      const double now = events_.top().at;
      while (!events_.empty() && events_.top().at == now) {
        const Event e = events_.top();
        events_.pop();
        complete(e.rank, e.node, now);
      }
      for (std::size_t r = 0; r < ranks_.size(); ++r) dispatch(static_cast<int>(r), now);
      end = now;
    }
    for (const Rank& rank : ranks_)
      for (int m : rank.missing) EXPECT_EQ(m, -1) << "a node never ran: the closed form's schedule is stuck";
    return end;
  }

 private:
  struct Event {
    double at;
    std::uint64_t seq;
    int rank;
    std::size_t node;
    bool operator>(const Event& o) const { return std::tie(at, seq) > std::tie(o.at, o.seq); }
  };
  struct Rank {
    std::vector<int> missing;  // dependencies not completed; -1 once the node completed
    std::vector<std::vector<std::size_t>> next;
    std::vector<std::size_t> position;
    std::map<std::size_t, std::uint64_t> collective_seq;
    std::priority_queue<std::tuple<double, std::size_t, std::size_t>, std::vector<std::tuple<double, std::size_t, std::size_t>>,
                        std::greater<>>
        ready;  // (ready time, execution-order position, node)
    bool busy = false;
  };
  struct Waiting {
    int issued = 0;
    double last = 0;
    std::vector<std::pair<int, std::size_t>> nodes;
  };

  void at(double t, int rank, std::size_t node) { events_.push({t, seq_++, rank, node}); }

  bool same_server(int a, int b) const {
    return costs_.gpus_per_server > 0 && a / costs_.gpus_per_server == b / costs_.gpus_per_server;
  }

  // The path every transfer of a group takes: scale-up when its members share a server,
  // the fabric when no two do (a mixed group has no single closed form here).
  const AlphaBeta& path(const std::vector<int>& members) const {
    bool inside = true, across = true;
    for (std::size_t i = 0; i < members.size(); ++i)
      for (std::size_t j = i + 1; j < members.size(); ++j) {
        inside = inside && same_server(members[i], members[j]);
        across = across && !same_server(members[i], members[j]);
      }
    EXPECT_TRUE(inside || across) << "a group both inside and across servers";
    return inside ? costs_.scale_up : costs_.fabric;
  }

  // The premise of the closed form: no port of a rank carries two transfers at once.
  // `ranks` send (egress) or receive (ingress) on `path` from `from` until `to`.
  void occupy(const std::vector<int>& ranks, bool egress, const AlphaBeta& path, double from, double to) {
    for (int r : ranks) {
      double& busy = busy_[{r, egress, &path == &costs_.scale_up}];
      EXPECT_GE(from, busy) << "rank " << r << " has two transfers on one " << (egress ? "egress" : "ingress")
                            << " at " << from * 1e6 << " us: not a zero-contention schedule";
      busy = std::max(busy, to);
    }
  }

  void issue(int r, std::size_t i, double now) {
    const chakra::Node& n = trace_.ranks[static_cast<std::size_t>(r)].nodes[i];
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    switch (n.kind) {
      case NodeKind::metadata: at(now, r, i); break;
      case NodeKind::compute: rank.ready.emplace(now, rank.position[i], i); break;
      case NodeKind::send:
      case NodeKind::recv: {
        const bool send = n.kind == NodeKind::send;
        const auto key = std::make_tuple(*n.comm_src, *n.comm_dst, n.comm_tag);
        Waiting& w = p2p_[key];
        w.nodes.emplace_back(r, i);
        w.last = std::max(w.last, now);
        w.issued += send ? 1 : 2;
        if (w.issued < 3) break;
        const int src = static_cast<int>(*n.comm_src), dst = static_cast<int>(*n.comm_dst);
        const AlphaBeta& p = path({src, dst});
        const std::uint64_t bytes = send ? n.comm_size : trace_.ranks[static_cast<std::size_t>(src)].nodes[w.nodes[0].second].comm_size;
        const double end = w.last + p.alpha + static_cast<double>(bytes) / p.bandwidth;
        occupy({src}, true, p, w.last, end);
        occupy({dst}, false, p, w.last, end);
        for (const auto& [rr, ii] : w.nodes) at(end, rr, ii);
        p2p_.erase(key);
        break;
      }
      case NodeKind::collective: {
        const auto key = std::make_pair(n.pg_name, rank.collective_seq.at(i));
        Waiting& w = collectives_[key];
        w.nodes.emplace_back(r, i);
        w.last = std::max(w.last, now);
        const std::vector<int>& members = members_.at(n.pg_name);
        if (++w.issued < static_cast<int>(members.size())) break;
        const AlphaBeta& p = path(members);
        const double end = w.last + collective_seconds(*n.comm_type, n.comm_size, members.size(), p, costs_.reduce);
        occupy(members, true, p, w.last, end);
        occupy(members, false, p, w.last, end);
        for (const auto& [rr, ii] : w.nodes) at(end, rr, ii);
        collectives_.erase(key);
        break;
      }
    }
  }

  void complete(int r, std::size_t i, double now) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    rank.missing[i] = -1;
    if (trace_.ranks[static_cast<std::size_t>(r)].nodes[i].kind == NodeKind::compute) rank.busy = false;
    for (std::size_t d : rank.next[i])
      if (--rank.missing[d] == 0) issue(r, d, now);
  }

  void dispatch(int r, double now) {
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    if (rank.busy || rank.ready.empty()) return;
    const std::size_t i = std::get<2>(rank.ready.top());
    rank.ready.pop();
    rank.busy = true;
    at(now + static_cast<double>(trace_.ranks[static_cast<std::size_t>(r)].nodes[i].duration_micros) * 1e-6, r, i);
  }

  const chakra::Trace& trace_;
  Costs costs_;
  std::vector<Rank> ranks_;
  std::map<std::string, std::vector<int>> members_;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, Waiting> p2p_;
  std::map<std::pair<std::string, std::uint64_t>, Waiting> collectives_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::uint64_t seq_ = 0;
  std::map<std::tuple<int, bool, bool>, double> busy_;  // (rank, egress, scale-up) -> busy until
};

// NDR InfiniBand NICs on one switch: a single switch is non-blocking, and every ring
// below sends each rank's transfers to one other rank.
std::string fabric(int endpoints) { return fabricsim::testing::ndr_single_switch(endpoints, "1s"); }

// The scale-up domain of the runs with tensor parallelism: two GPUs a server, a port of
// 3600 Gb/s each way per GPU, 1 us a transfer. Its configuration keys are here only.
constexpr int kGpusPerServer = 2;
constexpr double kScaleUpBps = 3600e9, kScaleUpLatency = 1e-6;
const std::string kScaleUp = "server: {gpus: 2, scale_up: {bandwidth: 3600Gb/s, latency: 1us}}\n";

// A GPT-shaped job small enough to run in a second or so.
std::string job(const std::string& parallelism, int global_batch) {
  return "training:\n"
         "  model: {layers: 4, hidden: 1024, heads: 16, seq: 512, vocab: 32000}\n"
         "  parallelism: {" + parallelism + "}\n"
         "  global_batch: " + std::to_string(global_batch) + "\n";
}

// Payload bandwidth of a link: its data rate x MTU / the MTU packet's wire bytes.
double payload_bandwidth(const sim::FabricConfig& c) {
  const hw::PhyTiming phy(c.link.phy);
  const double mtu = c.nic.mtu.in_bytes();
  return phy.data_rate().bps() / 8 * mtu / static_cast<double>(phy.wire_bytes(c.nic.mtu.in_bytes()));
}

// The fabric's alpha: one send of `bytes` between two ranks on the fabric, less its
// bytes at the payload bandwidth (the one-hop latency the executor's transfers see:
// NIC, PCIe, link, switch and the completion's poll).
double measured_alpha(int endpoints, std::uint64_t bytes, double bandwidth) {
  namespace pb = ChakraProtoMsg;
  const fs::path dir = fs::temp_directory_path() / ("fabricsim_iteration_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string prefix = (dir / "pair").string();
  pb::GlobalMetadata meta;
  meta.set_version("0.0.4");
  chakra::write_rank_file(prefix + ".0.et", meta, {fabricsim::testing::p2p(1, true, 1, static_cast<std::int64_t>(bytes), 0)});
  chakra::write_rank_file(prefix + ".1.et", meta, {fabricsim::testing::p2p(1, false, 0, static_cast<std::int64_t>(bytes), 0)});
  const sim::FabricConfig c = sim::load_config_text(fabric(endpoints) + "chakra: {trace: " + prefix + "}\n", "pair.yaml");
  fs::remove_all(dir);  // read with the configuration
  const json r = fabricsim::testing::run_checked(c);
  return r.at("chakra").at("iteration_time_us").get<double>() * 1e-6 - static_cast<double>(bytes) / bandwidth;
}

// Runs the job `yaml` on `endpoints` and holds its iteration time to the closed form
// of its trace: within 2%, the slack for what the alpha-beta model leaves out (a
// message's first packet waits for its DMA read and its last for its write, a 4 KiB
// packet's tens of ns longer than the 8-byte probe's).
void expect_alpha_beta(const std::string& what, const std::string& job_yaml, int endpoints, bool scale_up = false) {
  const sim::FabricConfig c = sim::load_config_text(fabric(endpoints) + job_yaml + (scale_up ? kScaleUp : ""), "job.yaml");
  Costs costs;
  costs.fabric.bandwidth = payload_bandwidth(c);
  costs.fabric.alpha = measured_alpha(endpoints, 8, costs.fabric.bandwidth);
  // A scale-up transfer lands its latency after its bytes leave the port, once its step
  // latency has passed (docs/workloads.md).
  costs.scale_up = {c.chakra.params.step_latency.to_seconds() + kScaleUpLatency, kScaleUpBps / 8};
  costs.gpus_per_server = scale_up ? kGpusPerServer : 0;
  costs.reduce = c.chakra.params.reduce_bandwidth_bps / 8;
  const double closed = ClosedForm(generate(*c.training_job), costs).iteration_seconds() * 1e6;
  const json r = fabricsim::testing::run_checked(c).at("chakra");
  ASSERT_TRUE(r.at("finished").get<bool>()) << r.dump().substr(0, 400);
  fabricsim::testing::expect_relative(
      {"Training", what + ": iteration time vs the alpha-beta cost of its DAG (fabric alpha " +
                       fabricsim::testing::report_number(costs.fabric.alpha * 1e6) + " us measured, B " +
                       fabricsim::testing::report_number(costs.fabric.bandwidth / 1e9) + " GB/s)",
       "Hockney, Parallel Computing 20(3) 1994; Thakur, Rabenseifner and Gropp, IJHPCA 19(1) 2005 (ring)"},
      r.at("iteration_time_us").get<double>(), closed, 0.02, "us");
}

// Two ranks on one switch, a pipeline of two stages: 1F1B with activation and gradient
// sends of b s h x 2 bytes between the stages.
TEST(TrainingIteration, PipelinePairMatchesAlphaBeta) {
  expect_alpha_beta("pp = 2, 2 ranks on one NDR switch, 4 micro-batches", job("pp: 2", 4), 2);
}

// Two data-parallel ranks: gradient buckets all-reduced during the last backward pass.
TEST(TrainingIteration, DataParallelPairMatchesAlphaBeta) {
  expect_alpha_beta("dp = 2, 2 ranks on one NDR switch, 25 MiB buckets", job("dp: 2", 8), 2);
}

// Tensor parallelism inside two-GPU servers (scale-up ports) with pipeline sends over
// the fabric.
TEST(TrainingIteration, TensorAndPipelineParallelMatchAlphaBeta) {
  expect_alpha_beta("tp = 2 (scale-up) x pp = 2, 4 ranks", job("tp: 2, pp: 2", 4), 4, true);
}

// Tensor parallelism inside servers, four-rank data-parallel rings over the fabric: each
// rank sends to one rank and receives from one, so no switch port carries two flows.
TEST(TrainingIteration, TensorAndDataParallelMatchAlphaBeta) {
  expect_alpha_beta("tp = 2 (scale-up) x dp = 4, 8 ranks", job("tp: 2, dp: 4", 16), 8, true);
}

}  // namespace
}  // namespace fabricsim::training
