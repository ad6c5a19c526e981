// A decoder-only transformer as a training job sees it: shapes, parameter count and
// FLOPs per layer (Narayanan et al., "Efficient Large-Scale Language Model Training on
// GPU Clusters Using Megatron-LM", SC'21, section 5.1): a layer's forward pass on
// T = b s tokens takes 24 T h^2 + 4 T s h FLOPs, the logit layer 2 T h V, a backward
// pass twice its forward; an iteration of B sequences 72 B s l h^2 (1 + s/6h + V/12lh),
// about 6 N per token (Kaplan et al. 2020, eq. 2.1). Grouped-query attention, the FFN
// size, a gated (SwiGLU) MLP and mixture of experts generalise the same products
// (docs/workloads.md, "Generated training jobs").
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "hw/param_spec.h"

namespace fabricsim::training {

// Element type of activations and gradients on the wire and in the matrix units.
enum class Precision { fp32, bf16, fp16, fp8 };
const hw::EnumNames<Precision>& precision_names();
int bytes_per_element(Precision p);

struct Transformer {
  int layers = 0;
  int hidden = 0;     // h
  int heads = 0;      // attention heads
  int kv_heads = 0;   // key/value heads (grouped-query attention); 0: heads
  int ffn = 0;        // FFN inner size; 0: 4 h
  int seq = 0;        // s, tokens per sequence
  int vocab = 0;      // V
  bool gated_mlp = false;         // SwiGLU: three FFN matrices instead of two
  bool learned_positions = true;  // a learned position embedding of s h parameters
  bool tied_embeddings = true;    // the logit layer reuses the input embedding
  bool biases = true;             // linear layers carry biases (GPT); Llama and Mixtral have none
  int experts = 0;    // experts per MoE layer; 0: dense
  int top_k = 1;      // experts each token goes to
  int moe_every = 1;  // every k-th layer is an MoE layer (layers k-1, 2k-1, ...)

  int ffn_size() const { return ffn > 0 ? ffn : 4 * hidden; }
  int kv_head_count() const { return kv_heads > 0 ? kv_heads : heads; }
  int head_dim() const { return hidden / heads; }
  bool moe_layer(int layer) const { return experts > 0 && layer % moe_every == moe_every - 1; }

  // Parameters of a layer's attention block: Q, K, V, output projection and biases,
  // and its two layer norms.
  std::uint64_t attention_params() const;
  // Parameters of one FFN (one expert): two or three matrices and their biases.
  std::uint64_t mlp_params() const;
  // A layer's parameters: attention + FFN (every expert and the router on an MoE layer).
  std::uint64_t layer_params(int layer) const;
  std::uint64_t embedding_params() const;  // input (and output when untied) embedding, positions
  std::uint64_t params() const;            // all parameters

  // Forward FLOPs on `tokens` tokens of sequences of length seq.
  double attention_flops(double tokens) const;
  double mlp_flops(int layer, double tokens) const;  // top_k experts and the router on an MoE layer
  double logit_flops(double tokens) const;
};

// A published shape or datasheet, with where its figures come from.
template <class T>
struct Preset {
  std::string_view name;
  std::string_view source;
  T value;
};

// The preset called `name`; std::invalid_argument listing the names when unknown.
template <class T>
const Preset<T>& find_preset(const std::vector<Preset<T>>& presets, std::string_view name, const char* what) {
  std::string names;
  for (const Preset<T>& p : presets) {
    if (p.name == name) return p;
    names += (names.empty() ? "" : ", ") + std::string(p.name);
  }
  throw std::invalid_argument("unknown " + std::string(what) + " preset '" + std::string(name) + "' (presets: " +
                              names + ")");
}

using ModelPreset = Preset<Transformer>;
const std::vector<ModelPreset>& model_presets();
inline const ModelPreset& model_preset(std::string_view name) { return find_preset(model_presets(), name, "model"); }

// Narayanan et al. 2021 closed form of one iteration's FLOPs (GPT shape: 4h FFN,
// two FFN matrices, no grouped-query attention, dense).
double narayanan_iteration_flops(const Transformer& m, double batch, bool recompute);

}  // namespace fabricsim::training
