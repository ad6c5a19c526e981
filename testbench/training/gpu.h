// A GPU as the generator times it: peak dense matrix throughput at each precision,
// the fraction of it a training job achieves, and memory bandwidth. A compute node
// takes max(FLOPs / (peak x efficiency), bytes / memory bandwidth): a roofline with
// an achieved-efficiency factor on the compute roof.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "testbench/training/model.h"

namespace fabricsim::training {

struct Gpu {
  std::string name;
  // Peak dense tensor-core FLOP/s per precision (fp32 is TF32 math); absent: the
  // GPU has no such format.
  std::optional<double> fp32, bf16, fp16, fp8;
  double memory_bandwidth = 0;  // bytes/s, HBM
  double efficiency = 0.4;      // achieved fraction of peak (model FLOPs utilisation)

  std::optional<double> peak(Precision p) const;
  // Seconds for a node of `flops` FLOPs touching `bytes` bytes of memory.
  double seconds(Precision p, double flops, double bytes) const;
};

// Datasheet figures; the efficiency default is an assumption (large jobs reach
// 35-55 % of peak, Narayanan et al. 2021 table 1).
using GpuPreset = Preset<Gpu>;
const std::vector<GpuPreset>& gpu_presets();
inline const GpuPreset& gpu_preset(std::string_view name) { return find_preset(gpu_presets(), name, "GPU"); }

}  // namespace fabricsim::training
