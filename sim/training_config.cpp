#include "sim/training_config.h"

#include <iostream>
#include <numeric>

#include "sim/config.h"
#include "sim/config_params.h"

namespace fabricsim::sim {

using hw::ParamType;

namespace {

std::vector<std::string> preset_names(bool gpu) {
  std::vector<std::string> out;
  if (!gpu) out.emplace_back("none");
  if (gpu)
    for (const auto& p : training::gpu_presets()) out.emplace_back(p.name);
  else
    for (const auto& p : training::model_presets()) out.emplace_back(p.name);
  return out;
}

const hw::ParamBlock& block(std::string_view section) { return hw::block_of(training_job_param_blocks(), section); }

}  // namespace

const std::vector<hw::ParamBlock>& training_job_param_blocks() {
  static const std::vector<hw::ParamBlock> blocks = {
      {"training (generated job)",
       "a transformer training job generated as per-rank Chakra traces ([workloads.md](workloads.md#generated-training-jobs)); "
       "run through the Chakra executor (a `chakra:` section without `trace` tunes it) or exported with `fabricsim workload export --chakra DIR CONFIG`",
       {{"model", ParamType::section, "", "", "", "", {}, "", "the transformer (`training.model`)"},
        {"parallelism", ParamType::section, "", "", "", "", {}, "", "how it is split over the ranks (`training.parallelism`)"},
        {"gpu", ParamType::section, "", "", "", "", {}, "", "what times its compute (`training.gpu`)"},
        {"precision", ParamType::name, "", "bf16", "", "", hw::names_of(training::precision_names()), "",
         "element type of the matrix math, activations and gradients (4, 2, 2 or 1 bytes)"},
        {"global_batch", ParamType::integer, "sequences", "", "1", "1000000000", {}, "required; a multiple of `micro_batch` x `parallelism.dp`",
         "sequences per iteration"},
        {"micro_batch", ParamType::integer, "sequences", "1", "1", "1000000", {}, "", "sequences per micro-batch"},
        {"iterations", ParamType::integer, "", "1", "1", "1000", {}, "", "training iterations in the trace"}}},
      {"training.model",
       "the transformer; `preset` gives a published shape, keys beside it override it",
       {{"preset", ParamType::name, "", "none", "", "", preset_names(false), "",
         "a published shape (sources in [workloads.md](workloads.md#generated-training-jobs)); `none`: every shape key given"},
        {"layers", ParamType::integer, "", "", "1", "10000", {}, "required without preset", "transformer layers"},
        {"hidden", ParamType::integer, "", "", "1", "1048576", {}, "required without preset", "hidden size h"},
        {"heads", ParamType::integer, "", "", "1", "65536", {}, "required without preset; divides `hidden`", "attention heads"},
        {"kv_heads", ParamType::integer, "", "0", "0", "65536", {}, "divides `heads`",
         "key/value heads (grouped-query attention); 0: as many as `heads`"},
        {"ffn", ParamType::integer, "", "0", "0", "16777216", {}, "", "FFN inner size; 0: 4 x `hidden`"},
        {"seq", ParamType::integer, "tokens", "", "1", "16777216", {}, "required without preset", "sequence length s"},
        {"vocab", ParamType::integer, "", "", "1", "100000000", {}, "required without preset", "vocabulary size V"},
        {"gated_mlp", ParamType::boolean, "", "false", "", "", {}, "", "SwiGLU FFN: three matrices instead of two"},
        {"learned_positions", ParamType::boolean, "", "true", "", "", {}, "", "a learned position embedding (s x h parameters)"},
        {"tied_embeddings", ParamType::boolean, "", "true", "", "", {}, "", "the logit layer shares the input embedding"},
        {"biases", ParamType::boolean, "", "true", "", "", {}, "", "linear layers carry biases"},
        {"experts", ParamType::integer, "", "0", "0", "4096", {}, "", "experts per mixture-of-experts layer; 0: dense"},
        {"top_k", ParamType::integer, "", "1", "1", "4096", {}, "at most `experts`", "experts each token goes to"},
        {"moe_every", ParamType::integer, "", "1", "1", "10000", {}, "",
         "every k-th layer is a mixture-of-experts layer (layers k-1, 2k-1, ...)"}}},
      {"training.parallelism",
       "data, tensor, pipeline and expert parallelism; rank = tp index + tp x (dp index + dp x stage)",
       {{"dp", ParamType::integer, "", "0", "0", "1048576", {}, "dp x tp x pp = the fabric's endpoints",
         "data-parallel degree; 0: the endpoints / (tp x pp)"},
        {"tp", ParamType::integer, "", "1", "1", "1048576", {}, "divides `model.heads`, `model.kv_heads` and `model.ffn`",
         "tensor-parallel degree (consecutive ranks)"},
        {"pp", ParamType::integer, "", "1", "1", "1048576", {}, "divides `model.layers`; at most the micro-batches per iteration",
         "pipeline stages, 1F1B schedule"},
        {"ep", ParamType::integer, "", "1", "1", "1048576", {}, "divides `dp` and `model.experts`",
         "expert-parallel degree (out of the data-parallel ranks)"},
        {"zero", ParamType::integer, "", "0", "0", "3", {}, "",
         "ZeRO stage: 0 all-reduce of gradients, 1 and 2 reduce-scatter + all-gather of parameters, 3 (FSDP) also "
         "all-gathers each layer's parameters before its forward and backward"},
        {"bucket_size", ParamType::size, "", "25MiB", "1B", "64GiB", {}, "", "gradient bucket (stages 0-2)"},
        {"recompute", ParamType::boolean, "", "false", "", "", {}, "", "full activation recomputation in the backward pass"}}},
      {"training.gpu",
       "what times a compute node: max(FLOPs / (peak x efficiency), bytes / memory bandwidth)",
       {{"preset", ParamType::name, "", "h100-sxm", "", "", preset_names(true), "",
         "datasheet figures (sources in [workloads.md](workloads.md#generated-training-jobs))"},
        {"peak", ParamType::number, "TFLOP/s", "0", "0", "1000000", {}, "",
         "peak dense throughput at `training.precision` (bf16 in `chakra.gpu`); 0: the preset's"},
        {"efficiency", ParamType::number, "", "0.4", "0.001", "1", {}, "", "achieved fraction of the peak (an assumption)"},
        {"memory_bandwidth", ParamType::number, "TB/s", "0", "0", "1000", {}, "", "memory bandwidth; 0: the preset's"}}},
  };
  return blocks;
}

bool is_training_job(const ConfigMap& m) { return m.has("model") || m.has("parallelism") || m.has("gpu"); }

namespace {

training::Transformer read_model(ConfigMap m) {
  const hw::ParamBlock& spec = block("training.model");
  training::Transformer t;
  const std::string name = m.choice(spec["preset"], spec["preset"].def);
  const bool preset = name != "none";
  if (preset) t = training::model_preset(name).value;
  auto integer = [&](const char* key, int& v) {
    if (!preset && spec[key].def.empty() && !m.present(key)) m.fail(key, "required (or give training.model.preset)");
    v = static_cast<int>(m.integer(spec[key], v));
  };
  auto boolean = [&](const char* key, bool& v) { v = m.boolean(spec[key], v); };
  integer("layers", t.layers);
  integer("hidden", t.hidden);
  integer("heads", t.heads);
  integer("kv_heads", t.kv_heads);
  integer("ffn", t.ffn);
  integer("seq", t.seq);
  integer("vocab", t.vocab);
  boolean("gated_mlp", t.gated_mlp);
  boolean("learned_positions", t.learned_positions);
  boolean("tied_embeddings", t.tied_embeddings);
  boolean("biases", t.biases);
  integer("experts", t.experts);
  integer("top_k", t.top_k);
  integer("moe_every", t.moe_every);
  m.finish();
  return t;
}

training::Plan read_plan(ConfigMap m, int endpoints) {
  const hw::ParamBlock& spec = block("training.parallelism");
  training::Plan p;
  auto integer = [&](const char* key, int& v) { v = static_cast<int>(m.integer(spec[key], v)); };
  integer("tp", p.tp);
  integer("pp", p.pp);
  p.dp = 0;
  integer("dp", p.dp);
  if (p.dp == 0) {
    if (endpoints % (p.tp * p.pp) != 0)
      m.fail(m.present("tp") ? "tp" : "pp", "tp x pp = " + std::to_string(p.tp * p.pp) +
                                                " does not divide the fabric's " + std::to_string(endpoints) +
                                                " endpoints (the ranks)");
    p.dp = endpoints / (p.tp * p.pp);
  }
  if (static_cast<long long>(p.dp) * p.tp * p.pp != endpoints)
    m.fail("dp", "dp x tp x pp = " + std::to_string(p.dp) + " x " + std::to_string(p.tp) + " x " + std::to_string(p.pp) +
                     " = " + std::to_string(static_cast<long long>(p.dp) * p.tp * p.pp) + " ranks, but the fabric has " +
                     std::to_string(endpoints) + " endpoints (topology); one rank per endpoint");
  integer("ep", p.ep);
  integer("zero", p.zero);
  p.bucket_bytes = m.size(spec["bucket_size"], hw::Size::bytes(p.bucket_bytes)).in_bytes();
  p.recompute = m.boolean(spec["recompute"], p.recompute);
  m.finish();
  return p;
}

}  // namespace

training::Gpu read_gpu(ConfigMap m, training::Precision precision) {
  const hw::ParamBlock& spec = block("training.gpu");
  training::Gpu g = training::gpu_preset(m.choice(spec["preset"], std::string(spec["preset"].def))).value;
  if (const double peak = m.number(spec["peak"], 0) * 1e12; peak > 0) {
    switch (precision) {
      case training::Precision::fp32: g.fp32 = peak; break;
      case training::Precision::bf16: g.bf16 = peak; break;
      case training::Precision::fp16: g.fp16 = peak; break;
      case training::Precision::fp8: g.fp8 = peak; break;
    }
  }
  g.efficiency = m.number(spec["efficiency"], g.efficiency);
  if (const double bw = m.number(spec["memory_bandwidth"], 0) * 1e12; bw > 0) g.memory_bandwidth = bw;
  m.finish();
  return g;
}

training::Job read_training_job(ConfigMap m, int endpoints) {
  for (const hw::ParamSpec& step : workload_params("training").params)  // the fixed-time step's keys
    if (m.has(step.key))
      m.fail(step.key, "is a key of the fixed-time training step; a generated job (training.model, parallelism, gpu) "
                  "cannot take it: give one form of the training section or the other");
  const hw::ParamBlock& spec = block("training (generated job)");
  training::Job job;
  job.precision = m.choice(spec["precision"], job.precision, training::precision_names());
  job.model = read_model(m.map("model"));
  job.plan = read_plan(m.map("parallelism"), endpoints);
  job.gpu = read_gpu(m.map("gpu"), job.precision);
  if (!m.present("global_batch")) m.fail("global_batch", "required: sequences per iteration");
  job.global_batch = static_cast<int>(m.integer(spec["global_batch"], 0));
  job.micro_batch = static_cast<int>(m.integer(spec["micro_batch"], job.micro_batch));
  job.iterations = static_cast<int>(m.integer(spec["iterations"], job.iterations));
  m.finish();
  try {
    training::validate(job);
  } catch (const training::JobError& e) {
    // Blame the key where it is written: training.SECTION.KEY or training.KEY.
    std::string rest = e.key().substr(std::string("training.").size());
    const auto dot = rest.find('.');
    if (dot == std::string::npos) m.fail(rest, e.what());
    m.map(rest.substr(0, dot)).fail(rest.substr(dot + 1), e.what());
  }
  return job;
}

std::string job_not_runnable(const training::Job& job, const chakra::ExecutorParams& params) {
  if (params.algorithm != testbench::CollectiveAlgorithm::halving_doubling) return "";
  const training::Plan& p = job.plan;
  bool moe = false;
  for (int l = 0; l < job.model.layers; ++l) moe = moe || job.model.moe_layer(l);
  const struct {
    bool all_reduces;
    int ranks;
    const char* what;
  } groups[] = {{true, p.tp, "tensor-parallel groups (training.parallelism.tp)"},
                {p.zero == 0, p.dp, "data-parallel groups (training.parallelism.dp)"},
                {p.zero == 0 && moe && p.ep > 1, p.dp / p.ep,
                 "expert-data-parallel groups (training.parallelism.dp / training.parallelism.ep)"}};
  for (const auto& g : groups)
    if (g.all_reduces && g.ranks > 1 && (g.ranks & (g.ranks - 1)) != 0)
      return "halving_doubling needs a power-of-two group, and the generated job all-reduces over its " +
             std::string(g.what) + " of " + std::to_string(g.ranks) + " ranks";
  return "";
}

std::shared_ptr<const chakra::Trace> run_trace(const FabricConfig& c) {
  if (!c.training_job) return c.chakra.trace;
  chakra::Trace trace = training::generate(*c.training_job);
  trace.prefix = "training (generated)";  // results.json chakra.trace
  return std::make_shared<const chakra::Trace>(std::move(trace));
}

nlohmann::json training_job_summary(const training::Job& job, const chakra::Trace& trace) {
  double flops = 0;
  for (const auto& r : trace.ranks)
    for (const auto& n : r.nodes) flops += static_cast<double>(n.num_ops);
  return {{"parameters", job.model.params()},
          {"flops_per_iteration", flops / job.iterations},
          {"ranks", trace.ranks.size()},
          {"plan", {{"dp", job.plan.dp}, {"tp", job.plan.tp}, {"pp", job.plan.pp}, {"ep", job.plan.ep}, {"zero", job.plan.zero}}},
          {"micro_batches", job.micro_batches()},
          {"iterations", job.iterations},
          {"gpu", job.gpu.name},
          {"precision", hw::name_of(training::precision_names(), job.precision)}};
}

int export_chakra_command(const std::string& config, const std::vector<std::string>& overrides,
                          const std::string& dir, const std::string& prefix) {
  const FabricConfig c = load_config(config, overrides);
  if (!c.training_job)
    throw ConfigError(config, "training", "no generated training job to export (a training section with model, "
                                          "parallelism and gpu)");
  const training::Job& job = *c.training_job;
  const chakra::Trace trace = training::generate(job);
  training::write_trace(trace, dir, prefix);
  std::size_t nodes = 0;
  for (const auto& r : trace.ranks) nodes += r.nodes.size();
  std::cout << "wrote " << trace.ranks.size() << " ranks (" << nodes << " nodes) to " << dir << "/" << prefix
            << ".RANK.et: " << job.model.params() << " parameters, dp " << job.plan.dp << " tp " << job.plan.tp
            << " pp " << job.plan.pp << " ep " << job.plan.ep << ", " << job.micro_batches()
            << " micro-batches per iteration, " << job.iterations << " iteration(s)\n";
  return 0;
}

}  // namespace fabricsim::sim
