// How a training job is split over ranks: Megatron-LM's 3D parallelism (Narayanan et
// al. SC'21), expert parallelism and ZeRO/FSDP sharding. Megatron's rank order,
//   rank = tp_index + tp * (dp_index + dp * stage),
// puts a tensor-parallel group on tp consecutive ranks (one server's GPUs when tp
// divides them). Expert parallelism is carved out of data parallelism (Megatron-core
// with expert tensor parallelism = tp; DeepSpeed-MoE): ep divides dp and an
// expert-parallel group is ep consecutive data-parallel indices at one stage and
// tensor-parallel index.
#pragma once

#include <cstdint>
#include <string>

#include "hw/param_spec.h"

namespace fabricsim::training {

// ZeRO stage (Rajbhandari et al., SC'20) of the data-parallel state: 0 all-reduces
// gradients (PyTorch DDP); 1 and 2 reduce-scatter gradients and all-gather the
// updated parameters after the optimizer step; 3 (FSDP) also all-gathers each
// layer's parameters before its forward and its backward.
enum class ZeroStage { none = 0, optimizer = 1, gradients = 2, parameters = 3 };

struct Plan {
  int dp = 1;  // data-parallel degree
  int tp = 1;  // tensor-parallel degree
  int pp = 1;  // pipeline stages
  int ep = 1;  // expert-parallel degree (MoE models), divides dp
  int zero = 0;                          // ZeRO stage 0..3
  std::uint64_t bucket_bytes = 25 << 20;  // gradient bucket (PyTorch DDP's 25 MiB default)
  bool recompute = false;                 // full activation recomputation in the backward pass

  int world() const { return dp * tp * pp; }
  int rank(int stage, int dp_index, int tp_index) const { return tp_index + tp * (dp_index + dp * stage); }
  int stage_of(int rank) const { return rank / (tp * dp); }
  int dp_of(int rank) const { return (rank / tp) % dp; }
  int tp_of(int rank) const { return rank % tp; }
};

}  // namespace fabricsim::training
