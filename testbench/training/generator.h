// A training job (transformer + parallelism plan + GPU) as per-rank Chakra execution
// traces: each rank's forward and backward passes per micro-batch in the 1F1B
// pipeline order, tensor-parallel all-reduces, pipeline sends and receives, MoE
// all-to-alls, data-parallel gradient synchronisation (DDP buckets or ZeRO/FSDP) and
// the optimizer step, for a number of iterations. docs/workloads.md#generated-training-jobs
// describes every node.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include "testbench/chakra/trace.h"
#include "testbench/training/gpu.h"
#include "testbench/training/model.h"
#include "testbench/training/plan.h"

namespace fabricsim::training {

// A job the generator refuses; the message starts with the configuration key it
// blames (training.parallelism.tp, ...), which key() returns.
class JobError : public std::invalid_argument {
 public:
  JobError(std::string key, const std::string& what) : std::invalid_argument(what), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

struct Job {
  Transformer model;
  Plan plan;
  Gpu gpu;
  Precision precision = Precision::bf16;
  int global_batch = 0;  // sequences per iteration
  int micro_batch = 1;   // sequences per micro-batch
  int iterations = 1;

  int micro_batches() const { return global_batch / (micro_batch * plan.dp); }  // per pipeline
};

// The most nodes a generated trace may hold, summed over ranks (memory: a few hundred
// bytes each).
inline constexpr double kMaxNodes = 10e6;

// Every condition the generator needs (divisibility, 1F1B, precision on the GPU);
// JobError naming the key (training.model.heads, training.parallelism.tp, ...).
void validate(const Job& job);

// The job's trace, ranks 0 .. world - 1 in the plan's layout; each rank's first
// node declares its process groups (testbench/chakra/process_groups.h).
chakra::Trace generate(const Job& job);

// Writes DIR/PREFIX.RANK.et for every rank; TraceError when a file cannot be written.
void write_trace(const chakra::Trace& trace, const std::string& dir, const std::string& prefix);

}  // namespace fabricsim::training
