#pragma once
// The parameter tensors one rank holds, by their shapes: a stage's transformer layers (attention
// projections, dense or expert MLPs, norms), the embedding and the head, cut by tp (and experts by ep and
// expert_tp), before ZeRO shards them. The memory model, the optimizer's update and ZeRO-3's gathers all
// count from these.
#include <cstddef>
#include <vector>

#include "models/spec/parallel_plan.hpp"
#include "models/spec/transformer_spec.hpp"
#include "models/workload/optimizer.hpp"

namespace trainsim::model {

/// The tensors of one rank, split by how ZeRO shards them: dense ones over dp·cp·ep, experts over dp·cp
/// (ParallelPlan::dense_shard_ranks, expert_shard_ranks).
struct RankTensors {
  std::vector<TensorShape> dense;
  std::vector<TensorShape> expert;
};

/// The tensors of pipeline rank `stage` given the transformer layers of each rank (`layers`): its layers,
/// the embedding on the first, the final norm, the LM head and the multi-token-prediction modules on the
/// last.
[[nodiscard]] RankTensors rank_tensors(const TransformerSpec& model, const ParallelPlan& plan, int stage,
                                       const std::vector<int>& layers);

/// Whether pipeline ranks `a` and `b` hold the same tensors (rank_tensors gives equal lists): the same count
/// of layers, as many of them dense, and the same ends of the pipeline (the embedding, the head); a generic
/// model's layers are each their own. For callers that price a rank once and reuse it for its equals.
[[nodiscard]] bool same_rank_tensors(const TransformerSpec& model, const ParallelPlan& plan,
                                     const std::vector<int>& layers, int a, int b);

/// Elements of `tensors` (each shape times its count).
[[nodiscard]] double elements(const std::vector<TensorShape>& tensors);

/// Layers in the stack the pipeline splits: the generic layers of a generic model, else `layers`.
[[nodiscard]] std::int64_t stack_layer_count(const TransformerSpec& model);

/// Throws InputError naming the key unless every parallel degree, the micro-batch and the virtual stages are
/// at least 1 and the model has layers.
void check_layout_counts(const TransformerSpec& model, const ParallelPlan& plan);

/// Parameters one GPU holds (its tp/ep shards, before ZeRO) of each unit ZeRO-3 gathers whole: a
/// transformer layer (generic models: the largest layer), the embedding (with learned positions), and the
/// final norm with the LM head (without the head's matrix when it is the tied embedding on one stage).
struct UnitParameters {
  double layer = 0;
  double embedding = 0;
  double head = 0;
  /// The same units as tensors (a framework that gathers tensor by tensor issues one collective each).
  std::vector<TensorShape> layer_tensors, embedding_tensors, head_tensors;
  /// Of the layer, the routed experts' parameters: the last `layer_expert_tensors` of layer_tensors.
  double layer_expert = 0;
  std::size_t layer_expert_tensors = 0;
};
[[nodiscard]] UnitParameters unit_parameters(const TransformerSpec& model, const ParallelPlan& plan);

}  // namespace trainsim::model
