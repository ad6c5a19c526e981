// The training-job generator (testbench/training/): parameter and FLOP counts against
// their published closed forms, the 1F1B pipeline bubble against Narayanan et al.
// 2021, communication sizes per Megatron-LM, cross-rank consistency of the generated
// traces, writing and reading them back, and the errors for impossible jobs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <numeric>
#include <queue>
#include <string>
#include <tuple>

#include "sim/config.h"
#include "testbench/chakra/process_groups.h"
#include "testbench/training/generator.h"
#include "tests/command.h"
#include "tests/config_error.h"
#include "tests/fabric_run.h"

namespace fabricsim::training {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A GPT-style model small enough to generate in milliseconds.
Job small_gpt(int dp, int tp, int pp) {
  Job job;
  job.model.layers = 8;
  job.model.hidden = 1024;
  job.model.heads = 16;
  job.model.seq = 1024;
  job.model.vocab = 51200;
  job.plan.dp = dp;
  job.plan.tp = tp;
  job.plan.pp = pp;
  job.gpu = gpu_preset("h100-sxm").value;
  job.micro_batch = 2;
  job.global_batch = 2 * dp * 4 * pp;
  return job;
}

double total_ops(const chakra::Trace& trace) {
  double sum = 0;
  for (const auto& r : trace.ranks)
    for (const auto& n : r.nodes)
      if (n.kind == chakra::NodeKind::compute && n.name.rfind("optimizer", 0) != 0) sum += static_cast<double>(n.num_ops);
  return sum;
}

TEST(TrainingModel, GptParametersMatchNarayananFormula) {
  // Narayanan et al. 2021, section 5.1: P = 12 l h^2 (1 + 13/(12h) + (V + s)/(12 l h)),
  // i.e. 12 l h^2 + 13 l h + (V + s) h, exactly for the GPT shape.
  const Transformer m = model_preset("gpt3-175b").value;
  const double l = m.layers, h = m.hidden, v = m.vocab, s = m.seq;
  const double expected = 12 * l * h * h * (1 + 13 / (12 * h) + (v + s) / (12 * l * h));
  EXPECT_NEAR(static_cast<double>(m.params()), expected, expected * 1e-12);
  EXPECT_NEAR(static_cast<double>(m.params()), 175e9, 175e9 * 0.01);  // the published 175 B, within 1 %
}

TEST(TrainingModel, PublishedParameterCounts) {
  // Published totals, within 1 % (layer norms are counted as scale and shift).
  EXPECT_NEAR(static_cast<double>(model_preset("llama2-7b").value.params()), 6.74e9, 6.74e9 * 0.01);
  EXPECT_NEAR(static_cast<double>(model_preset("llama2-70b").value.params()), 68.98e9, 68.98e9 * 0.01);
  EXPECT_NEAR(static_cast<double>(model_preset("llama3-8b").value.params()), 8.03e9, 8.03e9 * 0.01);
  EXPECT_NEAR(static_cast<double>(model_preset("mixtral-8x7b").value.params()), 46.7e9, 46.7e9 * 0.01);
}

TEST(TrainingModel, SixFlopsPerParameterPerToken) {
  // Kaplan et al. 2020: training costs about 6 N FLOPs per token, N the non-embedding
  // parameters; the attention (s / 6h) and logit (V / 12 l h) terms add 3.1 % for GPT-3.
  const Transformer m = model_preset("gpt3-175b").value;
  const double tokens = m.seq;
  double flops = 0;
  for (int l = 0; l < m.layers; ++l) flops += 3 * (m.attention_flops(tokens) + m.mlp_flops(l, tokens));
  flops += 3 * m.logit_flops(tokens);
  const double n = static_cast<double>(m.params() - m.embedding_params());
  EXPECT_NEAR(flops / (6 * n * tokens), 1.031, 0.005);
}

TEST(TrainingGenerator, TotalFlopsMatchClosedForm) {
  // Every rank's compute summed is one iteration of the global batch: Narayanan et al.
  // 2021 eq. (3) without recomputation (72 B s l h^2 (...)) and with it (96 ...).
  for (bool recompute : {false, true}) {
    Job job = small_gpt(2, 2, 2);
    job.plan.recompute = recompute;
    const double expected = narayanan_iteration_flops(job.model, job.global_batch, recompute);
    EXPECT_NEAR(total_ops(generate(job)), expected, expected * 1e-9) << "recompute " << recompute;
  }
}

TEST(TrainingGenerator, MoeFlopsAddUpOverExpertAndTensorRanks) {
  // Balanced routing: every token's k experts run once somewhere in its expert-parallel
  // group, split over tp; the ranks' compute adds up to the model's per-layer counts
  // for the global batch (forward + twice for the backward).
  Job job = small_gpt(4, 2, 2);
  job.model.experts = 8;
  job.model.top_k = 2;
  job.model.moe_every = 2;
  job.plan.ep = 4;
  const double tokens = static_cast<double>(job.global_batch) * job.model.seq;
  double expected = 3 * job.model.logit_flops(tokens);
  for (int l = 0; l < job.model.layers; ++l)
    expected += 3 * (job.model.attention_flops(tokens) + job.model.mlp_flops(l, tokens));
  EXPECT_NEAR(total_ops(generate(job)), expected, expected * 1e-9);
}

TEST(TrainingGenerator, RankLayoutAndGroups) {
  Job job = small_gpt(2, 4, 2);
  const chakra::Trace trace = generate(job);
  ASSERT_EQ(trace.ranks.size(), 16u);
  EXPECT_EQ(job.plan.rank(1, 1, 3), 15);
  EXPECT_EQ(job.plan.rank(0, 1, 0), 4);
  const auto groups = chakra::process_groups(trace.ranks[5], 16);  // stage 0, dp 1, tp 1
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].desc, "tp.s0.d1");
  EXPECT_EQ(groups[0].ranks, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(groups[1].desc, "dp.s0.t1");
  EXPECT_EQ(groups[1].ranks, (std::vector<int>{1, 5}));
  chakra::check_process_groups(trace);
}

std::string process_group_error(chakra::Trace trace, const std::function<void(chakra::Trace&)>& spoil) {
  spoil(trace);
  try {
    chakra::check_process_groups(trace);
  } catch (const chakra::TraceError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(TrainingGenerator, ProcessGroupChecksNameTheFault) {
  const chakra::Trace trace = generate(small_gpt(2, 2, 1));
  EXPECT_EQ(process_group_error(trace, [](chakra::Trace&) {}), "accepted");
  auto collective = [](chakra::Trace& t) -> chakra::Node& {
    return *std::find_if(t.ranks[0].nodes.begin(), t.ranks[0].nodes.end(),
                         [](const chakra::Node& n) { return n.kind == chakra::NodeKind::collective; });
  };
  EXPECT_THAT(process_group_error(trace, [](chakra::Trace& t) { t.ranks[0].nodes[0].inputs = "[]"; }),
              HasSubstr("rank 0: node 0: process-group inputs are not a list of one JSON string"));
  EXPECT_THAT(process_group_error(trace, [](chakra::Trace& t) { t.ranks[0].nodes[0].inputs = "['[{\"pg_name\": \"0\", \"ranks\": [0, 9]}]']"; }),
              HasSubstr("process group '0' lists 9, not a rank of the trace (0..3)"));
  EXPECT_THAT(process_group_error(trace, [&](chakra::Trace& t) { collective(t).pg_name = "7"; }),
              HasSubstr("process group '7' is not declared"));
  // Rank 1 drops out of the tensor-parallel group it is declared in.
  EXPECT_THAT(process_group_error(trace, [&](chakra::Trace& t) {
                for (auto& n : t.ranks[1].nodes)
                  if (n.kind == chakra::NodeKind::collective && n.pg_name == collective(t).pg_name) n.pg_name.clear();
              }),
              HasSubstr("rank 1 is a member of process group '0' but issues none of its collectives"));
}

TEST(TrainingGenerator, MegatronCommunicationSizes) {
  // Per layer and micro-batch: 2 tensor-parallel all-reduces forward and 2 backward of
  // b s h elements; one send of b s h elements per micro-batch and stage boundary
  // each way; DDP buckets adding up to the stage's parameters / tp.
  Job job = small_gpt(2, 2, 2);
  const chakra::Trace trace = generate(job);
  const int m = job.micro_batches();
  const std::uint64_t act = 2ull * 1024 * 1024 * 2;  // b s h x 2 bytes
  const auto& r0 = trace.ranks[0];                    // stage 0
  int tp_ar = 0, sends = 0;
  double dp_bytes = 0;
  for (const auto& n : r0.nodes) {
    if (n.kind == chakra::NodeKind::collective && n.name.find("allreduce") != std::string::npos &&
        n.name.rfind("sync", 0) != 0) {
      ++tp_ar;
      EXPECT_EQ(n.comm_size, act) << n.name;
    }
    if (n.kind == chakra::NodeKind::send) {
      ++sends;
      EXPECT_EQ(n.comm_size, act);
      EXPECT_EQ(*n.comm_dst, job.plan.rank(1, 0, 0));
    }
    if (n.kind == chakra::NodeKind::collective && n.name.rfind("sync", 0) == 0) dp_bytes += static_cast<double>(n.comm_size);
  }
  EXPECT_EQ(tp_ar, 4 * 4 * m);  // 4 layers on the stage
  EXPECT_EQ(sends, m);          // activations forward; stage 0 sends no gradients
  const Transformer& t = job.model;
  const double stage0 = 4.0 * static_cast<double>(t.layer_params(0)) + static_cast<double>(t.embedding_params());
  EXPECT_NEAR(dp_bytes, stage0 / 2 * 2, 8);  // / tp, x 2 bytes; rounding of each bucket
}

TEST(TrainingGenerator, ZeroStagesAndMoeAreConsistentAcrossRanks) {
  for (int zero : {0, 1, 2, 3}) {
    Job job = small_gpt(4, 2, 2);
    job.plan.zero = zero;
    job.plan.bucket_bytes = 4 << 20;
    const chakra::Trace trace = generate(job);  // check_ranks inside
    chakra::check_process_groups(trace);
    int rs = 0, ag = 0;
    for (const auto& n : trace.ranks[0].nodes) {
      if (n.comm_type == chakra::CollectiveType::reduce_scatter) ++rs;
      if (n.comm_type == chakra::CollectiveType::all_gather) ++ag;
    }
    EXPECT_EQ(rs > 0, zero >= 1) << "zero " << zero;
    EXPECT_EQ(ag > 0, zero >= 1) << "zero " << zero;
    if (zero == 3) {
      EXPECT_EQ(ag, 2 * 4 * job.micro_batches()) << "a gather per layer and pass";
    }
  }
  Job moe = small_gpt(4, 2, 1);
  moe.model.experts = 8;
  moe.model.top_k = 2;
  moe.model.moe_every = 2;
  moe.plan.ep = 2;
  const chakra::Trace trace = generate(moe);
  chakra::check_process_groups(trace);
  int a2a = 0;
  for (const auto& n : trace.ranks[0].nodes)
    if (n.comm_type == chakra::CollectiveType::all_to_all) {
      ++a2a;
      EXPECT_EQ(n.comm_size, 2ull * 1024 * 1024 * 2 * 2);  // b s k h x 2 bytes
    }
  EXPECT_EQ(a2a, 4 * 4 * moe.micro_batches());  // 4 MoE layers, 2 forward + 2 backward each
}

TEST(TrainingGenerator, ZeroMovesTheBytesOfTheZeroPaper) {
  // Bytes a rank sends per step in its data-parallel collectives, a ring of n: AllReduce
  // 2(n-1)/n x comm_size, ReduceScatter (n-1)/n x comm_size, AllGather (n-1) x comm_size
  // (comm_size is one rank's shard; docs/workloads.md). Rajbhandari et al., "ZeRO", SC'20,
  // section 7: DP and ZeRO-1/2 move 2 Psi per step (ZeRO-2: reduce-scatter Psi + gather
  // Psi), ZeRO-3 3 Psi (gather forward, gather backward, reduce-scatter), each x (n-1)/n
  // for a ring. One micro-batch, so a step is one pass; exact, as every layer's bytes
  // divide by n.
  for (int zero : {0, 1, 2, 3}) {
    Job job = small_gpt(4, 1, 1);
    job.global_batch = job.micro_batch * job.plan.dp;
    job.plan.zero = zero;
    job.plan.bucket_bytes = 4 << 20;
    const chakra::Trace trace = generate(job);
    const double n = job.plan.dp;
    std::map<chakra::CollectiveType, double> sent;
    for (const auto& node : trace.ranks[0].nodes) {
      if (node.kind != chakra::NodeKind::collective) continue;
      const double c = static_cast<double>(node.comm_size);
      switch (*node.comm_type) {
        case chakra::CollectiveType::all_reduce: sent[*node.comm_type] += 2 * (n - 1) / n * c; break;
        case chakra::CollectiveType::reduce_scatter: sent[*node.comm_type] += (n - 1) / n * c; break;
        case chakra::CollectiveType::all_gather: sent[*node.comm_type] += (n - 1) * c; break;
        default: ADD_FAILURE() << node.name;
      }
    }
    const double psi = static_cast<double>(job.model.params()) * 2 * (n - 1) / n;  // bf16, one ring pass
    EXPECT_EQ(sent[chakra::CollectiveType::all_reduce], zero == 0 ? 2 * psi : 0) << "zero " << zero;
    EXPECT_EQ(sent[chakra::CollectiveType::reduce_scatter], zero == 0 ? 0 : psi) << "zero " << zero;
    EXPECT_EQ(sent[chakra::CollectiveType::all_gather], zero == 0 ? 0 : zero == 3 ? 2 * psi : psi) << "zero " << zero;
  }
}

// The longest path through every rank's DAG, a send finishing its receive; compute
// nodes weigh `weight(node)`, the rest nothing.
template <class Weight>
double critical_path(const chakra::Trace& trace, Weight weight) {
  std::vector<std::size_t> base(trace.ranks.size() + 1, 0);
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) base[r + 1] = base[r] + trace.ranks[r].nodes.size();
  const std::size_t n = base.back();
  std::vector<std::vector<std::size_t>> next(n);
  std::vector<int> waiting(n, 0);
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::size_t> sends;
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    const auto& rt = trace.ranks[r];
    for (std::size_t i = 0; i < rt.nodes.size(); ++i) {
      const auto& node = rt.nodes[i];
      for (const auto* deps : {&node.data_deps, &node.ctrl_deps})
        for (auto d : *deps) {
          next[base[r] + d].push_back(base[r] + i);  // ids are file positions in generated traces
          ++waiting[base[r] + i];
        }
      if (node.kind == chakra::NodeKind::send) sends[{*node.comm_src, *node.comm_dst, node.comm_tag}] = base[r] + i;
    }
  }
  for (std::size_t r = 0; r < trace.ranks.size(); ++r)
    for (std::size_t i = 0; i < trace.ranks[r].nodes.size(); ++i) {
      const auto& node = trace.ranks[r].nodes[i];
      if (node.kind != chakra::NodeKind::recv) continue;
      const std::size_t s = sends.at({*node.comm_src, *node.comm_dst, node.comm_tag});
      next[s].push_back(base[r] + i);
      ++waiting[base[r] + i];
    }
  std::vector<double> finish(n, 0), start(n, 0);
  std::queue<std::size_t> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (waiting[i] == 0) ready.push(i);
  double longest = 0;
  std::size_t done = 0;
  while (!ready.empty()) {
    const std::size_t i = ready.front();
    ready.pop();
    ++done;
    const std::size_t r = static_cast<std::size_t>(std::upper_bound(base.begin(), base.end(), i) - base.begin() - 1);
    finish[i] = start[i] + weight(trace.ranks[r].nodes[i - base[r]]);
    longest = std::max(longest, finish[i]);
    for (std::size_t j : next[i]) {
      start[j] = std::max(start[j], finish[i]);
      if (--waiting[j] == 0) ready.push(j);
    }
  }
  EXPECT_EQ(done, n) << "a cycle across ranks";
  return longest;
}

TEST(TrainingGenerator, OneFOneBBubbleFraction) {
  // Narayanan et al. 2021, section 2.2.1: with p stages, m micro-batches, constant
  // forward and backward times and free communication, 1F1B takes (m + p - 1)(tf + tb)
  // and idles a fraction (p - 1) / (m + p - 1) of it. Exact: integer weights.
  for (const auto& [p, m] : {std::pair{2, 2}, std::pair{4, 4}, std::pair{4, 8}, std::pair{8, 9}}) {
    Job job = small_gpt(1, 1, p);
    job.model.layers = 2 * p;
    job.global_batch = job.micro_batch * m;
    const chakra::Trace trace = generate(job);
    const double t = critical_path(trace, [](const chakra::Node& node) {
      if (node.kind != chakra::NodeKind::compute) return 0.0;
      if (node.name.rfind("fwd", 0) == 0) return 1.0;
      if (node.name.rfind("bwd", 0) == 0) return 2.0;
      return 0.0;
    });
    const double per_micro_batch = 2 * 2 * (1.0 + 2.0);  // 2 layers a stage, 2 nodes a layer
    EXPECT_EQ(t, (m + p - 1) * per_micro_batch) << "p " << p << " m " << m;
    EXPECT_DOUBLE_EQ((t - m * per_micro_batch) / t, static_cast<double>(p - 1) / (m + p - 1));
    // What sets 1F1B apart from GPipe (the same bubble): stage s holds at most p - s
    // micro-batches' activations (forwards begun, backwards not finished).
    for (int stage = 0; stage < p; ++stage) {
      int in_flight = 0, most = 0;
      std::string pass;
      for (const auto& node : trace.ranks[static_cast<std::size_t>(stage)].nodes) {
        if (node.kind != chakra::NodeKind::compute || node.name.rfind("optimizer", 0) == 0) continue;
        const std::string this_pass = node.name.substr(0, node.name.find(".L"));  // fwd.it0.mb3
        if (this_pass == pass) continue;
        pass = this_pass;
        in_flight += pass.rfind("fwd", 0) == 0 ? 1 : -1;
        most = std::max(most, in_flight);
      }
      EXPECT_EQ(in_flight, 0);
      EXPECT_EQ(most, std::min(p - stage, m)) << "stage " << stage;
    }
  }
}

// Every node of `back` (read from files) equals the same node of `trace` (in memory),
// and each rank has the same execution order.
void expect_same_nodes(const chakra::Trace& trace, const chakra::Trace& back) {
  ASSERT_EQ(back.ranks.size(), trace.ranks.size());
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    const auto& a = trace.ranks[r];
    const auto& b = back.ranks[r];
    ASSERT_EQ(a.nodes.size(), b.nodes.size());
    EXPECT_EQ(a.order, b.order);
    EXPECT_EQ(a.version, b.version);
    for (std::size_t i = 0; i < a.nodes.size(); ++i) {
      const auto& x = a.nodes[i];
      const auto& y = b.nodes[i];
      EXPECT_EQ(std::tie(x.id, x.name, x.kind, x.duration_micros, x.data_deps, x.ctrl_deps, x.comm_type, x.comm_size,
                         x.comm_src, x.comm_dst, x.comm_tag, x.pg_name, x.num_ops, x.tensor_size, x.inputs),
                std::tie(y.id, y.name, y.kind, y.duration_micros, y.data_deps, y.ctrl_deps, y.comm_type, y.comm_size,
                         y.comm_src, y.comm_dst, y.comm_tag, y.pg_name, y.num_ops, y.tensor_size, y.inputs))
          << "rank " << r << " node " << x.id;
    }
  }
}

TEST(TrainingGenerator, WrittenTraceReadsBackNodeByNode) {
  Job job = small_gpt(2, 2, 2);
  job.plan.zero = 1;
  job.iterations = 2;
  const chakra::Trace trace = generate(job);
  const auto dir = std::filesystem::temp_directory_path() / ("fabricsim_training_" + std::to_string(::getpid()));
  write_trace(trace, dir.string(), "gpt");
  const chakra::Trace back = chakra::read_trace((dir / "gpt").string());
  std::filesystem::remove_all(dir);
  expect_same_nodes(trace, back);
}

TEST(TrainingGenerator, ComputeTimeIsTheRoofline) {
  Job job = small_gpt(1, 1, 1);
  const chakra::Trace trace = generate(job);
  const Gpu& g = job.gpu;
  int checked = 0;
  for (const auto& n : trace.ranks[0].nodes) {
    if (n.kind != chakra::NodeKind::compute) continue;
    const double s = std::max(static_cast<double>(n.num_ops) / (*g.bf16 * g.efficiency),
                              static_cast<double>(n.tensor_size) / g.memory_bandwidth);
    EXPECT_NEAR(static_cast<double>(n.duration_micros), s * 1e6, 0.5 + 1e-9) << n.name;
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

std::string refusal(const Job& job) {
  try {
    validate(job);
  } catch (const JobError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(TrainingGenerator, RefusesImpossibleJobs) {
  Job job = small_gpt(2, 2, 2);
  Job j = job;
  j.plan.tp = 3;
  EXPECT_THAT(refusal(j), HasSubstr("training.parallelism.tp = 3 does not divide training.model.heads = 16"));
  j = job;
  j.plan.pp = 3;
  EXPECT_THAT(refusal(j), HasSubstr("training.parallelism.pp = 3 does not divide training.model.layers = 8"));
  j = job;
  j.global_batch = 2 * 2 * 1;  // one micro-batch per pipeline of 2 stages
  EXPECT_THAT(refusal(j), HasSubstr("fewer than training.parallelism.pp = 2"));
  j = job;
  j.global_batch = 7;
  EXPECT_THAT(refusal(j), HasSubstr("training.global_batch = 7 is not a multiple"));
  j = job;
  j.plan.ep = 2;
  EXPECT_THAT(refusal(j), HasSubstr("needs a mixture-of-experts model"));
  j = job;
  j.gpu = gpu_preset("a100-sxm-80gb").value;
  j.precision = Precision::fp8;
  EXPECT_THAT(refusal(j), HasSubstr("training.precision = fp8: GPU 'a100-sxm-80gb' has no such"));
  j = job;
  j.plan.zero = 4;
  EXPECT_THAT(refusal(j), HasSubstr("training.parallelism.zero = 4"));
  j = job;
  j.model.kv_heads = 3;
  EXPECT_THAT(refusal(j), HasSubstr("training.model.kv_heads = 3 does not divide training.model.heads = 16"));
  j = job;
  j.global_batch = 2 * 2 * 100000;  // 10^5 micro-batches: tens of millions of nodes
  EXPECT_THAT(refusal(j), HasSubstr("use fewer iterations, micro-batches, layers or ranks"));
  EXPECT_EQ(refusal(job), "accepted");
  EXPECT_THROW(model_preset("gpt5"), std::invalid_argument);
  EXPECT_THROW(gpu_preset("h300"), std::invalid_argument);
}

// The `training:` section as a generated job on a 16-endpoint fabric.
const std::string kFabric = "topology: {kind: single_switch, endpoints: 16}\nswitch: {ports: 16}\n";
const std::string kJob = kFabric +
                         "training:\n"
                         "  model: {layers: 4, hidden: 1024, heads: 16, seq: 512, vocab: 32000}\n"
                         "  parallelism: {tp: 4, pp: 2}\n"
                         "  global_batch: 8\n";

TEST(TrainingConfig, ReadsAJobWithPresetsAndDefaults) {
  const sim::FabricConfig c = sim::load_config_text(kJob, "job.yaml");
  ASSERT_TRUE(c.training_job);
  EXPECT_EQ(c.training_job->plan.dp, 2);  // 16 endpoints / (4 x 2)
  EXPECT_EQ(c.training_job->gpu.name, "h100-sxm");
  EXPECT_EQ(c.training_job->micro_batches(), 4);
  const sim::FabricConfig p = sim::load_config_text(
      kFabric + "training:\n  model: {preset: llama3-8b, layers: 2}\n  parallelism: {tp: 8}\n  gpu: {preset: mi300x, "
                "peak: 1000, efficiency: 0.5}\n  global_batch: 2\n",
      "preset.yaml");
  EXPECT_EQ(p.training_job->model.layers, 2);
  EXPECT_EQ(p.training_job->model.hidden, 4096);
  EXPECT_EQ(p.training_job->model.kv_heads, 8);
  EXPECT_DOUBLE_EQ(*p.training_job->gpu.bf16, 1000e12);
  EXPECT_DOUBLE_EQ(p.training_job->gpu.efficiency, 0.5);
}

TEST(TrainingConfig, ErrorsNameTheKeyAndTheLine) {
  using fabricsim::testing::yaml_error_of;
  EXPECT_THAT(yaml_error_of(kJob + "  forward: 1ms\n"),
              AllOf(HasSubstr("bad.yaml:7:"), HasSubstr("training.forward"), HasSubstr("fixed-time training step")));
  EXPECT_THAT(yaml_error_of(kJob, {"training.parallelism.dp=4"}),
              AllOf(HasSubstr("training.parallelism.dp"), HasSubstr("= 32 ranks, but the fabric has 16 endpoints")));
  EXPECT_THAT(yaml_error_of(kJob, {"training.parallelism.tp=3"}),
              AllOf(HasSubstr("training.parallelism.tp"), HasSubstr("does not divide the fabric's 16 endpoints")));
  EXPECT_THAT(yaml_error_of(kJob, {"training.model.heads=2"}),
              AllOf(HasSubstr("bad.yaml:5:"), HasSubstr("training.parallelism.tp = 4 does not divide training.model.heads = 2")));
  EXPECT_THAT(yaml_error_of(kJob, {"training.model.layers=3"}),
              HasSubstr("training.parallelism.pp = 2 does not divide training.model.layers = 3"));
  std::string small_batch = kJob;
  small_batch.replace(small_batch.find("global_batch: 8"), 15, "global_batch: 2");
  EXPECT_THAT(yaml_error_of(small_batch),
              AllOf(HasSubstr("bad.yaml:6:"), HasSubstr("1 micro-batches per pipeline, fewer than training.parallelism.pp = 2")));
  EXPECT_THAT(yaml_error_of(kJob, {"training.precision=fp8", "training.gpu.preset=a100-sxm-80gb"}),
              HasSubstr("GPU 'a100-sxm-80gb' has no such tensor-core format"));
  EXPECT_THAT(yaml_error_of(kJob, {"training.model.preset=gpt5"}), HasSubstr("training.model.preset"));
  EXPECT_THAT(yaml_error_of(kFabric + "training:\n  model: {hidden: 1024}\n  global_batch: 8\n"),
              AllOf(HasSubstr("training.model.layers"), HasSubstr("required")));
  EXPECT_THAT(yaml_error_of(kFabric + "training:\n  model: {preset: llama2-7b}\n"),
              AllOf(HasSubstr("training.global_batch"), HasSubstr("required")));
  EXPECT_THAT(yaml_error_of(kJob + "collective: {op: allreduce}\n"), HasSubstr("not both"));
}

// Reading a job checks its plan and builds no trace (the run builds it); what the
// executor could not run is refused from the plan: halving-doubling over a group of
// ranks that is not a power of two.
TEST(TrainingConfig, ReadingAJobChecksThePlanWithoutBuildingTheTrace) {
  using fabricsim::testing::yaml_error_of;
  const sim::FabricConfig c = sim::load_config_text(kJob + "chakra: {algorithm: halving_doubling}\n", "job.yaml");
  ASSERT_TRUE(c.training_job);
  EXPECT_EQ(c.chakra.trace, nullptr);
  EXPECT_EQ(c.collective_ranks, 16);
  const std::string twelve = "topology: {kind: single_switch, endpoints: 12}\nswitch: {ports: 12}\n"
                             "training:\n  model: {layers: 4, hidden: 1024, heads: 16, seq: 512, vocab: 32000}\n"
                             "  parallelism: {tp: 4}\n  global_batch: 6\n";
  EXPECT_THAT(yaml_error_of(twelve + "chakra: {algorithm: halving_doubling}\n"),
              AllOf(HasSubstr("bad.yaml:7:"), HasSubstr("chakra.algorithm"),
                    HasSubstr("its data-parallel groups (training.parallelism.dp) of 3 ranks")));
  // ZeRO 1 reduce-scatters and gathers over the data-parallel groups: no AllReduce there.
  EXPECT_NO_THROW(sim::load_config_text(twelve + "chakra: {algorithm: halving_doubling}\n", "z.yaml",
                                        {"training.parallelism.zero=1"}));
  EXPECT_THAT(yaml_error_of(twelve + "chakra: {algorithm: halving_doubling}\n",
                            {"training.model.heads=12", "training.model.hidden=1152", "training.parallelism.tp=3",
                             "training.global_batch=4"}),
              HasSubstr("its tensor-parallel groups (training.parallelism.tp) of 3 ranks"));
}

// results.json `chakra` without what names the trace's source.
nlohmann::json run_section(const nlohmann::json& r) {
  nlohmann::json c = r.at("chakra");
  c.erase("trace");
  c.erase("job");
  c.erase("table");
  return c;
}

// kJob's model on a k=4 fat tree (16 endpoints, four switches with hosts): about a
// second of wall time per run.
const std::string kTree = "topology: {kind: fat_tree, k: 4}\nsimulation: {duration: 1s}\n";
const std::string kTreeJob = kTree + kJob.substr(kFabric.size());

TEST(TrainingRun, GeneratedJobRunsDeterministicallyOnAnyThreadCount) {
  // The job runs to its end through the Chakra executor; the run is the same bit for
  // bit again, and with two threads, on two lanes.
  const sim::FabricConfig c = sim::load_config_text(kTreeJob, "job.yaml");
  const nlohmann::json r = fabricsim::testing::run_checked(c);
  const nlohmann::json& ch = r.at("chakra");
  ASSERT_TRUE(ch.at("finished").get<bool>()) << ch.dump().substr(0, 400);
  EXPECT_GT(ch.at("iteration_time_us").get<double>(), 0);
  EXPECT_EQ(ch.at("job").at("ranks"), 16);
  EXPECT_EQ(ch.at("job").at("plan").at("tp"), 4);
  EXPECT_EQ(ch.at("job").at("plan").at("dp"), 2);
  EXPECT_EQ(ch.at("job").at("parameters"), c.training_job->model.params());
  EXPECT_GT(ch.at("job").at("flops_per_iteration").get<double>(), 0);
  // Packed placement: rank r on endpoint r, so a tensor-parallel group shares a leaf.
  for (const auto& rank : ch.at("per_rank")) EXPECT_EQ(rank.at("endpoint"), rank.at("rank"));
  EXPECT_EQ(fabricsim::testing::run_checked(c).at("chakra"), ch);
  const nlohmann::json two =
      fabricsim::testing::run_checked(sim::load_config_text(kTreeJob, "job.yaml", {"simulation.threads=2"}));
  EXPECT_EQ(two.at("simulator").at("lanes"), 2);
  EXPECT_EQ(two.at("chakra"), ch);
}

TEST(TrainingRun, ExportedTraceRunsAsTheGeneratedJob) {
  // The job's trace written to files and run as `chakra.trace` gives the same results.
  const sim::FabricConfig c = sim::load_config_text(kTreeJob, "job.yaml");
  const auto dir = std::filesystem::temp_directory_path() / ("fabricsim_rerun_" + std::to_string(::getpid()));
  write_trace(generate(*c.training_job), dir.string(), "gpt");
  const sim::FabricConfig files =
      sim::load_config_text(kTree + "chakra: {trace: " + (dir / "gpt").string() + "}\n", "files.yaml");
  std::filesystem::remove_all(dir);
  const nlohmann::json generated = fabricsim::testing::run_checked(c);
  const nlohmann::json read_back = fabricsim::testing::run_checked(files);
  ASSERT_TRUE(generated.at("chakra").at("finished").get<bool>());
  EXPECT_EQ(run_section(read_back), run_section(generated));
}

TEST(TrainingRun, ChakraSectionTunesTheGeneratedJob) {
  EXPECT_THAT(fabricsim::testing::yaml_error_of(kJob + "chakra: {trace: x}\n"),
              AllOf(HasSubstr("chakra.trace"), HasSubstr("not both")));
  EXPECT_THAT(fabricsim::testing::yaml_error_of(kJob + "perftest: {test: write_bw}\n"),
              AllOf(HasSubstr("generated training job"), HasSubstr("not both")));
  const sim::FabricConfig c = sim::load_config_text(kJob + "chakra: {channels: 2, placement: random}\n", "job.yaml");
  EXPECT_EQ(c.chakra.params.channels, 2);
  EXPECT_EQ(c.placement, sim::RankPlacement::random);
  // chakra.gpu takes training.gpu's keys; beside a job it has no effect and warns.
  const sim::FabricConfig g = sim::load_config_text(kJob + "chakra: {gpu: {preset: b200, peak: 100}}\n", "job.yaml");
  EXPECT_EQ(g.chakra.params.gpu.name, "b200");
  EXPECT_DOUBLE_EQ(*g.chakra.params.gpu.bf16, 100e12);
  ASSERT_EQ(g.warnings.size(), 1u);
  EXPECT_THAT(g.warnings[0], AllOf(HasSubstr("chakra.gpu"), HasSubstr("no effect")));
  EXPECT_EQ(fabricsim::testing::run_command("validate " + std::string(FABRICSIM_SOURCE_DIR) +
                                            "/examples/training/gpt_small.yaml").exit_code, 0);
}

TEST(WorkloadExport, WritesTheTracesTheGeneratorBuilds) {
  // `fabricsim workload export --chakra DIR CONFIG`, read back and compared node by node
  // (the in-memory trace's file names aside) with the generator's trace of that config.
  const std::string config = std::string(FABRICSIM_SOURCE_DIR) + "/examples/training/gpt_small.yaml";
  const auto dir = std::filesystem::temp_directory_path() / ("fabricsim_export_" + std::to_string(::getpid()));
  const auto r = fabricsim::testing::run_command("workload export --chakra " + dir.string() + " --prefix gpt " + config);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("wrote 16 ranks"));
  const chakra::Trace back = chakra::read_trace((dir / "gpt").string());
  std::filesystem::remove_all(dir);
  chakra::check_process_groups(back);
  const chakra::Trace trace = generate(*sim::load_config(config).training_job);
  ASSERT_EQ(back.ranks.size(), 16u);
  expect_same_nodes(trace, back);
  const auto bad = fabricsim::testing::run_command("workload export --chakra " + dir.string() + " " +
                                                   std::string(FABRICSIM_SOURCE_DIR) + "/examples/quickstart.yaml");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.output, HasSubstr("no generated training job"));
}

}  // namespace
}  // namespace fabricsim::training
