#include "models/run/checkpoint_size.hpp"

#include <algorithm>
#include <vector>

#include "models/step/memory.hpp"
#include "models/workload/optimizer.hpp"
#include "models/workload/rank_tensors.hpp"

namespace trainsim::model {

double checkpoint_bytes_per_param(const TrainingSpec& training) {
  const OptimizerCost per = optimizer_cost_per_param(training.optimizer, training.precision);
  return topo::bytes_per_element(weight_storage_precision(training.precision)) + per.master_bytes +
         per.state_bytes;
}

CheckpointSize checkpoint_size(const TransformerSpec& model, const ParallelPlan& plan,
                               const TrainingSpec& training) {
  const OptimizerSpec& opt = training.optimizer;
  const Precision compute = training.precision;
  const double bw = topo::bytes_per_element(weight_storage_precision(compute));

  // The whole model once, with its real tensor shapes (Adafactor's factored statistics, 8-bit blocks):
  // the tensors of a single unsplit stage. The tied-embedding copy of a pipeline's last stage is the
  // same tensor and is saved once.
  ParallelPlan whole;
  whole.micro_batch = plan.micro_batch;
  const auto all = stage_parameter_tensors(model, whole, 0);
  const OptimizerCost c = optimizer_cost(opt, compute, all);
  CheckpointSize size;
  size.weights = bw * c.params;
  size.master_weights = c.master_bytes;
  size.optimizer_state = c.state_bytes;

  // Who writes: one data-parallel replica's tp x pp x ep ranks write the weights; under ZeRO >= 1 every
  // data-parallel rank writes its shard of the optimizer state and master weights (and of the weights
  // under ZeRO-3). Shards are over dp·cp (context-parallel ranks hold the same parameters); expert and
  // dense parameters are treated alike, which slightly overstates a dense rank's share when ep > 1.
  const auto model_ranks = static_cast<std::int64_t>(plan.tp) * plan.pp * plan.ep;
  const double degree = static_cast<double>(plan.dp) * plan.cp;
  const bool sharded = shards_optimizer_states(plan.zero) && degree > 1;
  size.writing_ranks = sharded ? model_ranks * plan.dp * plan.cp : model_ranks;
  check_layout_counts(model, plan);
  const std::vector<int> layers = stage_layer_counts(model, plan);  // once, not once per rank
  for (int s = 0; s < plan.pp; ++s) {
    // A rank holding what the one before it holds (the middle of the pipeline) writes the same bytes.
    if (s > 0 && same_rank_tensors(model, plan, layers, s - 1, s)) continue;
    const OptimizerCost l = optimizer_cost(opt, compute, stage_parameter_tensors(model, plan, s, layers));
    const double weights = bw * l.params / (sharded && shards_weights(plan.zero) ? degree : 1);
    const double state = (l.state_bytes + l.master_bytes) / (sharded ? degree : 1);
    size.bytes_per_rank_max = std::max(size.bytes_per_rank_max, weights + state);
  }
  return size;
}

}  // namespace trainsim::model
