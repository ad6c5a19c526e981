// The generated-training-job form of the `training:` section (keys model,
// parallelism, gpu, ...; testbench/training/generator.h), its key tables, and
// `fabricsim workload export --chakra DIR CONFIG`. The fixed-time training step
// (forward, backward, gradient_size, ...) is the section's other form; the two do
// not mix.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/param_spec.h"
#include "sim/config_reader.h"
#include "testbench/chakra/executor.h"
#include "testbench/training/generator.h"

namespace fabricsim::sim {

struct FabricConfig;

/// `training:` as a generated job, `training.model`, `training.parallelism`, `training.gpu`.
const std::vector<hw::ParamBlock>& training_job_param_blocks();

/// The section describes a generated job (it has model, parallelism or gpu).
bool is_training_job(const ConfigMap& m);

/// Reads and validates the job for a fabric of `endpoints` ranks; ConfigError naming the key.
training::Job read_training_job(ConfigMap m, int endpoints);

/// `training.gpu` or `chakra.gpu` (one key table): a preset, its peak at `precision`
/// and memory bandwidth overridden when given, and the efficiency.
training::Gpu read_gpu(ConfigMap m, training::Precision precision);

/// Why the executor cannot run the job with `params`, from the plan alone (the check
/// chakra::check_runnable makes of its trace), or empty: a halving-doubling AllReduce
/// needs power-of-two groups, and the job all-reduces over its tensor-parallel groups
/// and, at ZeRO stage 0, its data-parallel and expert-data-parallel groups.
std::string job_not_runnable(const training::Job& job, const chakra::ExecutorParams& params);

/// The trace a run executes: `chakra.trace`, or the generated job's, built now.
std::shared_ptr<const chakra::Trace> run_trace(const FabricConfig& c);

/// results.json `chakra.job`: parameters, FLOPs per iteration (the trace's compute
/// nodes' num_ops summed over ranks), ranks, plan, micro-batches, iterations.
nlohmann::json training_job_summary(const training::Job& job, const chakra::Trace& trace);

/// `fabricsim workload export --chakra DIR CONFIG`: writes DIR/PREFIX.RANK.et and prints
/// a summary. Returns the exit code; ConfigError for a configuration without a job.
int export_chakra_command(const std::string& config, const std::vector<std::string>& overrides,
                          const std::string& dir, const std::string& prefix);

}  // namespace fabricsim::sim
