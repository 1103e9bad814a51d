#pragma once
// The whole run: how many steps, the wall clock once checkpoints and failures are added to the simulated
// iteration time, and the bill. Composition (documented in README "How a run is costed"):
//   training_time = steps · iteration_time
//   training is cut into segments that each end in a checkpoint (checkpoint.interval or every_steps,
//   rounded to whole steps); each segment costs its training plus the checkpoint stall
//   failures (failures.node_mtbf, gpu_mtbf) restart a segment: see failures.hpp
//   run_time = expected (or Monte-Carlo mean) time to finish every segment
//   cost_compute = GPUs · run_time · gpu_hour; energy, storage and egress are added to make cost_total.
#include <cstdint>
#include <string>
#include <vector>

#include "models/run/checkpoint_io.hpp"
#include "models/run/run_report.hpp"
#include "models/spec/run_spec.hpp"
#include "models/spec/training_spec.hpp"
#include "models/step/step_report.hpp"
#include "topologies/cluster_spec.hpp"

namespace trainsim::model {

struct RunInputs {
  StepReport step;                ///< the simulated iteration
  std::int64_t global_batch = 0;  ///< sequences per step
  std::int64_t seq_len = 0;       ///< tokens per sequence
  TrainingSpec training;          ///< run length: tokens, steps or epochs
  topo::ClusterSpec cluster;
  CheckpointSpec checkpoint;
  FailureSpec failures;
  PricingSpec pricing;
  BudgetSpec budget;
  double checkpoint_bytes = 0;           ///< size of one checkpoint (models/run/checkpoint_size.hpp)
  CheckpointWriters checkpoint_writers;  ///< who writes it (default: every GPU, evenly)
};

/// Optimizer steps needed: `steps`, or ceil(tokens / tokens per step), or ceil(epochs · dataset_tokens /
/// tokens per step). Throws InputError when the run length is missing.
std::int64_t run_steps(const TrainingSpec& training, std::int64_t global_batch, std::int64_t seq_len);

/// Simulates the run around an iteration. An infeasible iteration gives an infeasible run.
RunReport simulate_run(const RunInputs& inputs);

/// Budget checks as sentences; empty when every check passes.
std::vector<std::string> budget_violations(const RunReport& run, const StepReport& step,
                                           const BudgetSpec& budget);

}  // namespace trainsim::model
