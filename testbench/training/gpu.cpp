#include "testbench/training/gpu.h"

#include <algorithm>

namespace fabricsim::training {

std::optional<double> Gpu::peak(Precision p) const {
  switch (p) {
    case Precision::fp32: return fp32;
    case Precision::bf16: return bf16;
    case Precision::fp16: return fp16;
    case Precision::fp8: return fp8;
  }
  return std::nullopt;
}

double Gpu::seconds(Precision p, double flops, double bytes) const {
  const double compute = flops / (peak(p).value_or(0) * efficiency);
  return std::max(compute, bytes / memory_bandwidth);
}

namespace {

constexpr double T = 1e12;

Gpu make(const char* name, double fp32, double bf16, std::optional<double> fp8, double tb_per_s) {
  Gpu g;
  g.name = name;
  g.fp32 = fp32 * T;
  g.bf16 = bf16 * T;
  g.fp16 = bf16 * T;
  if (fp8) g.fp8 = *fp8 * T;
  g.memory_bandwidth = tb_per_s * T;
  return g;
}

}  // namespace

const std::vector<GpuPreset>& gpu_presets() {
  // Dense figures (the datasheets also print twice these "with sparsity").
  static const std::vector<GpuPreset> presets = {
      {"a100-sxm-80gb", "NVIDIA A100 Tensor Core GPU datasheet: TF32 156, BF16/FP16 312 TFLOP/s dense, HBM2e 2,039 GB/s",
       make("a100-sxm-80gb", 156, 312, std::nullopt, 2.039)},
      {"h100-sxm", "NVIDIA H100 Tensor Core GPU datasheet (SXM): TF32 494.5, BF16/FP16 989.5, FP8 1,979 TFLOP/s dense, 3.35 TB/s",
       make("h100-sxm", 494.5, 989.5, 1979, 3.35)},
      {"h200-sxm", "NVIDIA H200 Tensor Core GPU datasheet (SXM): compute as H100 SXM, HBM3e 4.8 TB/s",
       make("h200-sxm", 494.5, 989.5, 1979, 4.8)},
      {"b200", "NVIDIA HGX B200 datasheet, per GPU: TF32 1.1, BF16/FP16 2.25, FP8 4.5 PFLOP/s dense, HBM3e 8 TB/s",
       make("b200", 1100, 2250, 4500, 8.0)},
      {"mi300x", "AMD Instinct MI300X datasheet: TF32 653.7, BF16/FP16 1,307.4, FP8 2,614.9 TFLOP/s dense, 5.3 TB/s",
       make("mi300x", 653.7, 1307.4, 2614.9, 5.3)},
  };
  return presets;
}

}  // namespace fabricsim::training
