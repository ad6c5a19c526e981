#include "testbench/training/model.h"

namespace fabricsim::training {

const hw::EnumNames<Precision>& precision_names() {
  static const hw::EnumNames<Precision> names = {
      {Precision::fp32, "fp32"}, {Precision::bf16, "bf16"}, {Precision::fp16, "fp16"}, {Precision::fp8, "fp8"}};
  return names;
}

int bytes_per_element(Precision p) {
  switch (p) {
    case Precision::fp32: return 4;
    case Precision::bf16:
    case Precision::fp16: return 2;
    case Precision::fp8: return 1;
  }
  return 2;
}

namespace {
std::uint64_t u(int v) { return static_cast<std::uint64_t>(v); }
int mlp_matrices(const Transformer& m) { return m.gated_mlp ? 3 : 2; }
}  // namespace

std::uint64_t Transformer::attention_params() const {
  const std::uint64_t h = u(hidden);
  const std::uint64_t kv = u(kv_head_count()) * u(head_dim());
  const std::uint64_t weights = h * (h + 2 * kv) + h * h;
  const std::uint64_t bias = biases ? h + 2 * kv + h : 0;
  return weights + bias + 4 * h;  // two layer norms, scale and shift each
}

std::uint64_t Transformer::mlp_params() const {
  const std::uint64_t h = u(hidden);
  const std::uint64_t f = u(ffn_size());
  const auto mats = static_cast<std::uint64_t>(mlp_matrices(*this));
  return mats * h * f + (biases ? (mats - 1) * f + h : 0);
}

std::uint64_t Transformer::layer_params(int layer) const {
  if (!moe_layer(layer)) return attention_params() + mlp_params();
  return attention_params() + u(experts) * mlp_params() + u(hidden) * u(experts);
}

std::uint64_t Transformer::embedding_params() const {
  const std::uint64_t h = u(hidden);
  return u(vocab) * h * (tied_embeddings ? 1 : 2) + (learned_positions ? u(seq) * h : 0);
}

std::uint64_t Transformer::params() const {
  std::uint64_t p = embedding_params();
  for (int l = 0; l < layers; ++l) p += layer_params(l);
  return p;
}

double Transformer::attention_flops(double tokens) const {
  const double h = hidden;
  const double kv = static_cast<double>(kv_head_count()) * head_dim();
  // Q, K, V and output projections, then scores and the weighted sum of values.
  return 2 * tokens * h * (h + 2 * kv) + 2 * tokens * h * h + 4 * tokens * seq * h;
}

double Transformer::mlp_flops(int layer, double tokens) const {
  const double dense = 2 * tokens * hidden * static_cast<double>(ffn_size()) * mlp_matrices(*this);
  if (!moe_layer(layer)) return dense;
  return dense * top_k + 2 * tokens * hidden * static_cast<double>(experts);  // experts + router
}

double Transformer::logit_flops(double tokens) const { return 2 * tokens * hidden * static_cast<double>(vocab); }

double narayanan_iteration_flops(const Transformer& m, double batch, bool recompute) {
  const double s = m.seq, l = m.layers, h = m.hidden, v = m.vocab;
  if (recompute) return 96 * batch * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
  return 72 * batch * s * l * h * h * (1 + s / (6 * h) + v / (12 * l * h));
}

namespace {

Transformer llama(int layers, int hidden, int heads, int kv_heads, int ffn, int seq, int vocab) {
  Transformer m;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn = ffn;
  m.seq = seq;
  m.vocab = vocab;
  m.gated_mlp = true;
  m.learned_positions = false;
  m.tied_embeddings = false;
  m.biases = false;
  return m;
}

}  // namespace

const std::vector<ModelPreset>& model_presets() {
  static const std::vector<ModelPreset> presets = [] {
    Transformer gpt3;
    gpt3.layers = 96;
    gpt3.hidden = 12288;
    gpt3.heads = 96;
    gpt3.seq = 2048;
    gpt3.vocab = 50257;
    Transformer mixtral = llama(32, 4096, 32, 8, 14336, 32768, 32000);
    mixtral.experts = 8;
    mixtral.top_k = 2;
    return std::vector<ModelPreset>{
        {"gpt3-175b", "Brown et al. 2020, Language Models are Few-Shot Learners, table 2.1", gpt3},
        {"llama2-7b", "Touvron et al. 2023, Llama 2, table 1; released params.json", llama(32, 4096, 32, 32, 11008, 4096, 32000)},
        {"llama2-13b", "Touvron et al. 2023, Llama 2, table 1; released params.json", llama(40, 5120, 40, 40, 13824, 4096, 32000)},
        {"llama2-70b", "Touvron et al. 2023, Llama 2, table 1; released params.json", llama(80, 8192, 64, 8, 28672, 4096, 32000)},
        {"llama3-8b", "Llama Team 2024, The Llama 3 Herd of Models, table 3", llama(32, 4096, 32, 8, 14336, 8192, 128256)},
        {"llama3-70b", "Llama Team 2024, The Llama 3 Herd of Models, table 3", llama(80, 8192, 64, 8, 28672, 8192, 128256)},
        {"mixtral-8x7b", "Jiang et al. 2024, Mixtral of Experts, table 1", mixtral},
    };
  }();
  return presets;
}

}  // namespace fabricsim::training
