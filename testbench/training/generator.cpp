#include "testbench/training/generator.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

#include "testbench/chakra/process_groups.h"
#include "testbench/chakra/writer.h"

namespace fabricsim::training {

using chakra::CollectiveType;
using chakra::Node;
using chakra::NodeKind;

namespace {

template <typename... Parts>
[[noreturn]] void refuse(const char* key, const Parts&... parts) {
  std::ostringstream os;
  os << key;
  (os << ... << parts);
  throw JobError(key, os.str());
}

void positive(const char* key, long long v) {
  if (v < 1) refuse(key, " = ", v, " must be at least 1");
}

void divides(const char* key_a, long long a, const char* key_b, long long b) {
  if (b % a != 0) refuse(key_a, " = ", a, " does not divide ", key_b, " = ", b);
}

}  // namespace

void validate(const Job& job) {
  const Transformer& m = job.model;
  const Plan& p = job.plan;
  positive("training.model.layers", m.layers);
  positive("training.model.hidden", m.hidden);
  positive("training.model.heads", m.heads);
  positive("training.model.seq", m.seq);
  positive("training.model.vocab", m.vocab);
  positive("training.model.top_k", m.top_k);
  positive("training.model.moe_every", m.moe_every);
  if (m.kv_heads < 0) refuse("training.model.kv_heads", " = ", m.kv_heads, " must be 0 (as many as heads) or more");
  if (m.ffn < 0) refuse("training.model.ffn", " = ", m.ffn, " must be 0 (4 x hidden) or more");
  if (m.experts < 0) refuse("training.model.experts", " = ", m.experts, " must be 0 (dense) or more");
  divides("training.model.heads", m.heads, "training.model.hidden", m.hidden);
  divides("training.model.kv_heads", m.kv_head_count(), "training.model.heads", m.heads);
  if (m.experts > 0 && m.top_k > m.experts)
    refuse("training.model.top_k", " = ", m.top_k, " exceeds training.model.experts = ", m.experts);
  positive("training.parallelism.dp", p.dp);
  positive("training.parallelism.tp", p.tp);
  positive("training.parallelism.pp", p.pp);
  positive("training.parallelism.ep", p.ep);
  if (p.zero < 0 || p.zero > 3) refuse("training.parallelism.zero", " = ", p.zero, " must be 0, 1, 2 or 3");
  if (p.bucket_bytes == 0) refuse("training.parallelism.bucket_size", " must be more than 0 bytes");
  divides("training.parallelism.tp", p.tp, "training.model.heads", m.heads);
  divides("training.parallelism.tp", p.tp, "training.model.kv_heads", m.kv_head_count());
  divides("training.parallelism.tp", p.tp, "training.model.ffn", m.ffn_size());
  divides("training.parallelism.pp", p.pp, "training.model.layers", m.layers);
  if (p.ep > 1 && m.experts == 0)
    refuse("training.parallelism.ep", " = ", p.ep, " needs a mixture-of-experts model (training.model.experts)");
  if (p.ep > 1) {
    divides("training.parallelism.ep", p.ep, "training.parallelism.dp", p.dp);
    divides("training.parallelism.ep", p.ep, "training.model.experts", m.experts);
  }
  positive("training.micro_batch", job.micro_batch);
  positive("training.global_batch", job.global_batch);
  positive("training.iterations", job.iterations);
  const long long per_step = static_cast<long long>(job.micro_batch) * p.dp;
  if (job.global_batch % per_step != 0)
    refuse("training.global_batch", " = ", job.global_batch, " is not a multiple of training.micro_batch x ",
           "training.parallelism.dp = ", per_step);
  if (job.micro_batches() < p.pp)
    refuse("training.global_batch", " = ", job.global_batch, " gives ", job.micro_batches(),
           " micro-batches per pipeline, fewer than training.parallelism.pp = ", p.pp,
           " stages: the 1F1B schedule needs at least one per stage");
  if (!job.gpu.peak(job.precision))
    refuse("training.precision", " = ", hw::name_of(precision_names(), job.precision), ": GPU '", job.gpu.name,
           "' has no such tensor-core format");
  if (job.gpu.efficiency <= 0 || job.gpu.efficiency > 1)
    refuse("training.gpu.efficiency", " = ", job.gpu.efficiency, " must be in (0, 1]");
  if (job.gpu.memory_bandwidth <= 0) refuse("training.gpu.memory_bandwidth", " must be more than 0");
  // About 12 nodes per layer, micro-batch and pass on each rank: a bound on memory.
  const double nodes = 12.0 * job.iterations * job.micro_batches() * (m.layers / p.pp) * p.world();
  if (nodes > kMaxNodes)
    refuse("training.iterations", " = ", job.iterations, ": the traces would hold about ", nodes, " nodes, more than ",
           kMaxNodes, "; use fewer iterations, micro-batches, layers or ranks");
}

namespace {

// The process groups of the job; each rank's list of the groups it belongs to.
struct Groups {
  std::vector<chakra::ProcessGroup> all;
  std::vector<int> tp, dp, ep, edp;  // per rank: index into all, or -1 (group of one)

  explicit Groups(const Plan& p) : tp(p.world(), -1), dp(p.world(), -1), ep(p.world(), -1), edp(p.world(), -1) {
    auto add = [&](std::vector<int>& of, const std::string& desc, const std::vector<int>& ranks) {
      if (ranks.size() < 2) return;
      all.push_back({std::to_string(all.size()), desc, ranks});
      for (int r : ranks) of[static_cast<std::size_t>(r)] = static_cast<int>(all.size() - 1);
    };
    for (int s = 0; s < p.pp; ++s)
      for (int d = 0; d < p.dp; ++d) {
        std::vector<int> r;
        for (int t = 0; t < p.tp; ++t) r.push_back(p.rank(s, d, t));
        add(tp, "tp.s" + std::to_string(s) + ".d" + std::to_string(d), r);
      }
    for (int s = 0; s < p.pp; ++s)
      for (int t = 0; t < p.tp; ++t) {
        std::vector<int> r;
        for (int d = 0; d < p.dp; ++d) r.push_back(p.rank(s, d, t));
        add(dp, "dp.s" + std::to_string(s) + ".t" + std::to_string(t), r);
      }
    if (p.ep < 2) return;
    for (int s = 0; s < p.pp; ++s)
      for (int t = 0; t < p.tp; ++t) {
        for (int g = 0; g < p.dp / p.ep; ++g) {
          std::vector<int> r;
          for (int e = 0; e < p.ep; ++e) r.push_back(p.rank(s, g * p.ep + e, t));
          add(ep, "ep.s" + std::to_string(s) + ".t" + std::to_string(t) + ".g" + std::to_string(g), r);
        }
        for (int e = 0; e < p.ep; ++e) {
          std::vector<int> r;
          for (int g = 0; g < p.dp / p.ep; ++g) r.push_back(p.rank(s, g * p.ep + e, t));
          add(edp, "edp.s" + std::to_string(s) + ".t" + std::to_string(t) + ".e" + std::to_string(e), r);
        }
      }
  }

  std::vector<chakra::ProcessGroup> of_rank(int rank) const {
    std::vector<chakra::ProcessGroup> out;
    for (const auto* v : {&tp, &dp, &ep, &edp})
      if (int g = (*v)[static_cast<std::size_t>(rank)]; g >= 0) out.push_back(all[static_cast<std::size_t>(g)]);
    return out;
  }
  const std::string* name(const std::vector<int>& of, int rank) const {
    const int g = of[static_cast<std::size_t>(rank)];
    return g < 0 ? nullptr : &all[static_cast<std::size_t>(g)].name;
  }
};

// One rank's trace as it is built: node ids in file order, the compute stream's last node.
class RankBuilder {
 public:
  RankBuilder(const Job& job, int rank, chakra::RankTrace& t) : job_(job), rank_(rank), t_(t) {}

  std::uint64_t add(Node n) {
    n.id = t_.nodes.size();
    t_.nodes.push_back(std::move(n));
    return t_.nodes.back().id;
  }

  // A node on the compute stream: after the stream's last node (and `extra`).
  std::uint64_t chain(Node n, std::vector<std::uint64_t> extra = {}) {
    if (tail_) n.data_deps.push_back(*tail_);
    for (std::uint64_t e : extra) n.data_deps.push_back(e);
    tail_ = add(std::move(n));
    return *tail_;
  }

  Node compute(std::string name, double flops, double bytes) const {
    Node n;
    n.name = std::move(name);
    n.kind = NodeKind::compute;
    n.num_ops = static_cast<std::uint64_t>(std::llround(flops));
    n.tensor_size = static_cast<std::uint64_t>(std::llround(bytes));
    n.duration_micros = static_cast<std::uint64_t>(std::llround(job_.gpu.seconds(job_.precision, flops, bytes) * 1e6));
    return n;
  }

  Node collective(std::string name, CollectiveType type, double bytes, const std::string& pg) const {
    Node n;
    n.name = std::move(name);
    n.kind = NodeKind::collective;
    n.comm_type = type;
    n.comm_size = static_cast<std::uint64_t>(std::llround(bytes));
    n.pg_name = pg;
    return n;
  }

  Node p2p(std::string name, bool send, int peer, double bytes, std::int64_t tag) const {
    Node n;
    n.name = std::move(name);
    n.kind = send ? NodeKind::send : NodeKind::recv;
    n.comm_src = send ? rank_ : peer;
    n.comm_dst = send ? peer : rank_;
    n.comm_size = static_cast<std::uint64_t>(std::llround(bytes));
    n.comm_tag = tag;
    return n;
  }

  std::optional<std::uint64_t>& tail() { return tail_; }

 private:
  const Job& job_;
  int rank_;
  chakra::RankTrace& t_;
  std::optional<std::uint64_t> tail_;
};

// The passes of a stage in 1F1B order (Narayanan et al. 2021, figure 4): pp - stage - 1
// warm-up forwards, then one forward and one backward alternately, then the remaining
// backwards. (micro-batch, backward?)
std::vector<std::pair<int, bool>> one_f_one_b(int stages, int stage, int micro_batches) {
  const int warmup = std::min(stages - stage - 1, micro_batches);
  std::vector<std::pair<int, bool>> order;
  for (int j = 0; j < warmup; ++j) order.emplace_back(j, false);
  for (int j = 0; j < micro_batches - warmup; ++j) {
    order.emplace_back(warmup + j, false);
    order.emplace_back(j, true);
  }
  for (int j = micro_batches - warmup; j < micro_batches; ++j) order.emplace_back(j, true);
  return order;
}

struct Bucket {
  double bytes = 0;
  std::uint64_t after = 0;  // the backward node that finishes the bucket's last gradient
};

class RankGenerator {
 public:
  RankGenerator(const Job& job, const Groups& groups, int rank, chakra::RankTrace& t)
      : job_(job), m_(job.model), p_(job.plan), groups_(groups), rank_(rank), b_(job, rank, t) {
    stage_ = p_.stage_of(rank);
    dp_ = p_.dp_of(rank);
    tp_ = p_.tp_of(rank);
    per_stage_ = m_.layers / p_.pp;
    first_ = stage_ * per_stage_;
    tokens_ = static_cast<double>(job.micro_batch) * m_.seq;
    bytes_ = bytes_per_element(job.precision);
    act_bytes_ = tokens_ * m_.hidden * bytes_;
    tp_pg_ = groups.name(groups.tp, rank);
    dp_pg_ = groups.name(groups.dp, rank);
    ep_pg_ = groups.name(groups.ep, rank);
    edp_pg_ = groups.name(groups.edp, rank);
  }

  void run() {
    Node meta;
    meta.name = chakra::kProcessGroupNodeName;
    meta.kind = NodeKind::metadata;
    meta.inputs = chakra::process_groups_inputs(groups_.of_rank(rank_));
    b_.tail() = b_.add(std::move(meta));
    for (int it = 0; it < job_.iterations; ++it) iteration(it);
  }

 private:
  // Parameters of layer l this rank holds and synchronises over the data-parallel
  // group (dense) or the expert-data-parallel group (experts, when ep > 1).
  double dense_params(int l) const {
    double p = static_cast<double>(m_.attention_params());
    if (m_.moe_layer(l)) {
      p += static_cast<double>(m_.hidden) * m_.experts;  // router
      if (p_.ep == 1) p += static_cast<double>(m_.experts) * static_cast<double>(m_.mlp_params());
    } else {
      p += static_cast<double>(m_.mlp_params());
    }
    if (l == first_ && stage_ == 0)
      p += static_cast<double>(m_.vocab) * m_.hidden + (m_.learned_positions ? static_cast<double>(m_.seq) * m_.hidden : 0);
    // The logit layer: its own matrix when untied; a copy on the last stage of a pipeline.
    if (l == first_ + per_stage_ - 1 && stage_ == p_.pp - 1 && (!m_.tied_embeddings || p_.pp > 1))
      p += static_cast<double>(m_.vocab) * m_.hidden;
    return p / p_.tp;
  }
  double expert_params(int l) const {
    if (!m_.moe_layer(l) || p_.ep == 1) return 0;
    return static_cast<double>(m_.experts / p_.ep) * static_cast<double>(m_.mlp_params()) / p_.tp;
  }

  std::string tag(const char* pass, int it, int mb, int l, const char* part) const {
    return std::string(pass) + ".it" + std::to_string(it) + ".mb" + std::to_string(mb) + ".L" + std::to_string(l) +
           "." + part;
  }

  // Forward FLOPs of a layer's two parts on this rank (the logit layer folded into
  // the last layer's MLP on the last stage).
  double attn_flops(int) const { return m_.attention_flops(tokens_) / p_.tp; }
  double mlp_flops(int l) const {
    double f = m_.mlp_flops(l, tokens_);
    if (stage_ == p_.pp - 1 && l == m_.layers - 1) f += m_.logit_flops(tokens_);
    return f / p_.tp;
  }
  double attn_bytes(int l) const { return static_cast<double>(m_.attention_params()) / p_.tp * bytes_ + 2 * act_bytes_ + (l == 0 ? act_bytes_ : 0); }
  double mlp_bytes(int l) const {
    double w = m_.moe_layer(l) ? static_cast<double>(m_.top_k) * static_cast<double>(m_.mlp_params())
                               : static_cast<double>(m_.mlp_params());
    if (stage_ == p_.pp - 1 && l == m_.layers - 1) w += static_cast<double>(m_.vocab) * m_.hidden;
    return w / p_.tp * bytes_ + 2 * act_bytes_;
  }

  std::int64_t p2p_tag(int it, int mb, bool backward) const {
    return (static_cast<std::int64_t>(it) * job_.micro_batches() + mb) * 2 + (backward ? 1 : 0);
  }

  // ZeRO-3: the layer's parameters gathered before a pass over it, prefetched one
  // layer ahead on the communication stream. An ALL_GATHER's comm_size is one rank's
  // shard (Chakra's convention, docs/workloads.md), the layer / dp.
  std::optional<std::uint64_t> gather(int l, const char* pass, int it, int mb, std::optional<std::uint64_t> after) {
    if (p_.zero != 3 || !dp_pg_) return std::nullopt;
    Node n = b_.collective(tag(pass, it, mb, l, "allgather_params"), CollectiveType::all_gather,
                           dense_params(l) * bytes_ / p_.dp, *dp_pg_);
    if (after) n.data_deps.push_back(*after);
    if (last_comm_) n.ctrl_deps.push_back(*last_comm_);
    last_comm_ = b_.add(std::move(n));
    return last_comm_;
  }

  void tp_allreduce(const std::string& name) {
    if (tp_pg_) b_.chain(b_.collective(name, CollectiveType::all_reduce, act_bytes_, *tp_pg_));
  }
  void all_to_all(const std::string& name) {
    if (ep_pg_) b_.chain(b_.collective(name, CollectiveType::all_to_all, act_bytes_ * m_.top_k, *ep_pg_));
  }

  void forward(int it, int mb, std::optional<std::uint64_t> recv) {
    std::vector<std::uint64_t> in;
    if (recv) in.push_back(*recv);
    std::optional<std::uint64_t> prefetch = gather(first_, "fwd", it, mb, b_.tail());
    for (int l = first_; l < first_ + per_stage_; ++l) {
      if (prefetch) in.push_back(*prefetch);
      const std::uint64_t start = b_.chain(b_.compute(tag("fwd", it, mb, l, "attn"), attn_flops(l), attn_bytes(l)), in);
      in.clear();
      if (l + 1 < first_ + per_stage_) prefetch = gather(l + 1, "fwd", it, mb, start);
      tp_allreduce(tag("fwd", it, mb, l, "attn_allreduce"));
      const bool moe = m_.moe_layer(l);
      if (moe) all_to_all(tag("fwd", it, mb, l, "dispatch"));
      b_.chain(b_.compute(tag("fwd", it, mb, l, moe ? "experts" : "mlp"), mlp_flops(l), mlp_bytes(l)));
      tp_allreduce(tag("fwd", it, mb, l, "mlp_allreduce"));
      if (moe) all_to_all(tag("fwd", it, mb, l, "combine"));
    }
  }

  void backward(int it, int mb, std::optional<std::uint64_t> recv, bool last_mb, std::vector<Bucket>& dense,
                std::vector<Bucket>& expert) {
    std::vector<std::uint64_t> in;
    if (recv) in.push_back(*recv);
    const double again = p_.recompute ? 1 : 0;  // the forward recomputed before its backward
    const int last = first_ + per_stage_ - 1;
    std::optional<std::uint64_t> prefetch = gather(last, "bwd", it, mb, b_.tail());
    for (int l = last; l >= first_; --l) {
      if (prefetch) in.push_back(*prefetch);
      const bool moe = m_.moe_layer(l);
      if (moe) all_to_all(tag("bwd", it, mb, l, "combine"));
      const double logit = (stage_ == p_.pp - 1 && l == m_.layers - 1) ? m_.logit_flops(tokens_) / p_.tp : 0;
      const std::uint64_t start = b_.chain(
          b_.compute(tag("bwd", it, mb, l, moe ? "experts" : "mlp"),
                     (2 + again) * mlp_flops(l) - again * logit, 2 * mlp_bytes(l)), in);
      in.clear();
      if (l > first_) prefetch = gather(l - 1, "bwd", it, mb, start);
      tp_allreduce(tag("bwd", it, mb, l, "mlp_allreduce"));
      if (moe) all_to_all(tag("bwd", it, mb, l, "dispatch"));
      const std::uint64_t done =
          b_.chain(b_.compute(tag("bwd", it, mb, l, "attn"), (2 + again) * attn_flops(l), 2 * attn_bytes(l)));
      tp_allreduce(tag("bwd", it, mb, l, "attn_allreduce"));
      if (p_.zero == 3) {
        reduce_scatter_layer(it, mb, l, done);
      } else if (last_mb) {
        fill(dense, dense_params(l) * bytes_, done);
        fill(expert, expert_params(l) * bytes_, done);
      }
    }
  }

  void fill(std::vector<Bucket>& buckets, double bytes, std::uint64_t after) {
    if (bytes <= 0) return;
    if (buckets.empty() || buckets.back().bytes >= static_cast<double>(p_.bucket_bytes)) buckets.emplace_back();
    buckets.back().bytes += bytes;
    buckets.back().after = after;
  }

  void reduce_scatter_layer(int it, int mb, int l, std::uint64_t after) {
    for (const auto& [pg, bytes] : {std::pair{dp_pg_, dense_params(l) * bytes_}, std::pair{edp_pg_, expert_params(l) * bytes_}}) {
      if (!pg || bytes <= 0) continue;
      Node n = b_.collective(tag("bwd", it, mb, l, pg == dp_pg_ ? "reducescatter_grads" : "reducescatter_expert_grads"),
                             CollectiveType::reduce_scatter, bytes, *pg);
      n.data_deps.push_back(after);
      if (last_comm_) n.ctrl_deps.push_back(*last_comm_);
      last_comm_ = b_.add(std::move(n));
      sync_.push_back(*last_comm_);
    }
  }

  // Gradient buckets, in the order backward fills them.
  void sync_buckets(int it, const std::vector<Bucket>& buckets, const std::string* pg, const char* what) {
    if (!pg) return;
    const CollectiveType type = p_.zero == 0 ? CollectiveType::all_reduce : CollectiveType::reduce_scatter;
    for (std::size_t k = 0; k < buckets.size(); ++k) {
      Node n = b_.collective("sync.it" + std::to_string(it) + "." + what + ".bucket" + std::to_string(k) +
                                 (p_.zero == 0 ? ".allreduce" : ".reducescatter"),
                             type, buckets[k].bytes, *pg);
      n.data_deps.push_back(buckets[k].after);
      if (last_comm_) n.ctrl_deps.push_back(*last_comm_);
      last_comm_ = b_.add(std::move(n));
      sync_.push_back(*last_comm_);
    }
  }

  void iteration(int it) {
    const int mbs = job_.micro_batches();
    std::vector<Bucket> dense, expert;
    sync_.clear();
    for (const auto& [mb, backward_pass] : one_f_one_b(p_.pp, stage_, mbs)) {
      // Receives are posted on the communication stream; the pass waits for them.
      std::optional<std::uint64_t> recv;
      const bool from_peer = backward_pass ? stage_ < p_.pp - 1 : stage_ > 0;
      const int peer_stage = backward_pass ? stage_ + 1 : stage_ - 1;
      const char* pass = backward_pass ? "bwd" : "fwd";
      if (from_peer) {
        Node r = b_.p2p(std::string(pass) + ".it" + std::to_string(it) + ".mb" + std::to_string(mb) +
                            (backward_pass ? ".recv_grad" : ".recv_act"),
                        false, p_.rank(peer_stage, dp_, tp_), act_bytes_, p2p_tag(it, mb, backward_pass));
        r.ctrl_deps.push_back(0);
        recv = b_.add(std::move(r));
      }
      if (backward_pass)
        backward(it, mb, recv, mb == mbs - 1, dense, expert);
      else
        forward(it, mb, recv);
      const bool to_peer = backward_pass ? stage_ > 0 : stage_ < p_.pp - 1;
      if (to_peer) {
        Node s = b_.p2p(std::string(pass) + ".it" + std::to_string(it) + ".mb" + std::to_string(mb) +
                            (backward_pass ? ".send_grad" : ".send_act"),
                        true, p_.rank(backward_pass ? stage_ - 1 : stage_ + 1, dp_, tp_), act_bytes_,
                        p2p_tag(it, mb, backward_pass));
        s.data_deps.push_back(*b_.tail());
        b_.add(std::move(s));
      }
    }
    if (p_.zero != 3) {
      sync_buckets(it, dense, dp_pg_, "grads");
      sync_buckets(it, expert, edp_pg_, "expert_grads");
    }
    optimizer(it, dense, expert);
  }

  // Adam over the parameters this rank updates: about 12 FLOPs and 28 bytes of fp32
  // state (parameter, moments read and written, gradient read) per parameter, an
  // assumption of the model.
  void optimizer(int it, const std::vector<Bucket>& dense, const std::vector<Bucket>& expert) {
    double local = 0;
    for (int l = first_; l < first_ + per_stage_; ++l) {
      local += dense_params(l) / (p_.zero >= 1 ? p_.dp : 1);
      local += expert_params(l) / (p_.zero >= 1 ? p_.dp / p_.ep : 1);
    }
    const std::uint64_t step = b_.chain(b_.compute("optimizer.it" + std::to_string(it), 12 * local, 28 * local), sync_);
    if (p_.zero != 1 && p_.zero != 2) return;
    // ZeRO-1/2: each rank's updated shard gathered back, bucket by bucket; comm_size is
    // one rank's shard of the bucket (bucket / group size).
    std::vector<std::uint64_t> gathered;
    for (const auto& [buckets, pg, what, members] :
         {std::tuple{&dense, dp_pg_, "params", p_.dp}, std::tuple{&expert, edp_pg_, "expert_params", p_.dp / p_.ep}}) {
      if (!pg) continue;
      for (std::size_t k = 0; k < buckets->size(); ++k) {
        Node n = b_.collective("step.it" + std::to_string(it) + "." + what + ".bucket" + std::to_string(k) + ".allgather",
                               CollectiveType::all_gather, (*buckets)[k].bytes / members, *pg);
        n.data_deps.push_back(step);
        if (last_comm_) n.ctrl_deps.push_back(*last_comm_);
        last_comm_ = b_.add(std::move(n));
        gathered.push_back(*last_comm_);
      }
    }
    if (gathered.empty()) return;
    // The next iteration starts once the parameters are whole again.
    Node done;
    done.name = "step.it" + std::to_string(it) + ".params_ready";
    done.kind = NodeKind::metadata;
    b_.chain(std::move(done), gathered);
  }

  const Job& job_;
  const Transformer& m_;
  const Plan& p_;
  const Groups& groups_;
  int rank_;
  RankBuilder b_;
  int stage_ = 0, dp_ = 0, tp_ = 0, per_stage_ = 0, first_ = 0;
  double tokens_ = 0, bytes_ = 0, act_bytes_ = 0;
  const std::string* tp_pg_ = nullptr;
  const std::string* dp_pg_ = nullptr;
  const std::string* ep_pg_ = nullptr;
  const std::string* edp_pg_ = nullptr;
  std::optional<std::uint64_t> last_comm_;  // the data-parallel communication stream's last collective
  std::vector<std::uint64_t> sync_;         // this iteration's gradient collectives
};

}  // namespace

chakra::Trace generate(const Job& job) {
  validate(job);
  const Groups groups(job.plan);
  chakra::Trace trace;
  trace.ranks.resize(static_cast<std::size_t>(job.plan.world()));
  for (int r = 0; r < job.plan.world(); ++r) {
    chakra::RankTrace& t = trace.ranks[static_cast<std::size_t>(r)];
    t.rank = r;
    t.file = "rank " + std::to_string(r);
    t.version = "0.0.4";
    RankGenerator(job, groups, r, t).run();
    chakra::finish_rank(t);
  }
  chakra::check_ranks(trace);
  return trace;
}

void write_trace(const chakra::Trace& trace, const std::string& dir, const std::string& prefix) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw chakra::TraceError(dir + ": cannot create the directory: " + ec.message());
  for (const chakra::RankTrace& r : trace.ranks)
    chakra::write_rank_file(dir + "/" + prefix + "." + std::to_string(r.rank) + ".et", r);
}

}  // namespace fabricsim::training
