#pragma once
// Checking a parallel layout and laying the model out over the pipeline, before any cost is computed.
// An impossible layout is a value (feasible = false with a reason), never an exception, so sweeps and
// searches go on (DESIGN principle 8).
//
// Checks: the layout rules of layout_rules.hpp; the first problem, with its key path, is the reason.
//
// Layer split. Virtual stage vs = chunk·pp + rank (see pipeline_schedule.hpp). Layers that do not divide
// by pp·v are spread one apiece over the middle virtual stages first, then the first, then the last: the
// first stage carries the embedding and the last the LM head, so they get the lighter share (Llama-3
// 405B: 126 layers on 16 stages = 7, 8 × 14, 7; BLOOM-176B: 70 on 12 = 5, 6 × 10, 5). A model's
// multi-token-prediction modules run on the last virtual stage and take layer slots there
// (pipeline_tail_slots): the layers plus those slots are spread by the same rule, and the slots come off
// the last virtual stage (down to 0 layers), then off the ones before it, from the end.
#include <cstdint>
#include <string>
#include <vector>

#include "models/spec/parallel_plan.hpp"
#include "models/spec/training_spec.hpp"
#include "models/spec/transformer_spec.hpp"
#include "models/step/layout_rules.hpp"
#include "topologies/cluster_spec.hpp"

namespace trainsim::model {

struct StepPlan {
  bool feasible = true;
  std::string reason;  ///< why not, when !feasible
  int pp = 1;
  int virtual_stages = 1;          ///< v: chunks per pipeline rank
  std::int64_t micro_batches = 1;  ///< m = global_batch / (dp · ep · micro_batch)
  std::vector<int> chunk_layers;   ///< layers of virtual stage vs = chunk·pp + rank; size pp·v
  std::vector<int> stage_layers;   ///< layers per pipeline rank (sum of its chunks); size pp

  /// The virtual stage of `chunk` on pipeline rank `rank`: chunk·pp + rank.
  [[nodiscard]] std::size_t virtual_stage_index(int chunk, int rank) const {
    return static_cast<std::size_t>(chunk) * static_cast<std::size_t>(pp) + static_cast<std::size_t>(rank);
  }
  [[nodiscard]] int layers_of(int rank, int chunk) const {
    return chunk_layers[virtual_stage_index(chunk, rank)];
  }
  /// First layer index of virtual stage vs (layers are numbered in forward order).
  [[nodiscard]] int first_layer_of(int virtual_stage) const;
};

/// Layers per part when `layers` are spread over `parts` (rule in the file comment). parts >= 1.
[[nodiscard]] std::vector<int> split_layers(std::int64_t layers, int parts);

/// Layer slots the last virtual stage spends beyond its transformer layers: two per multi-token-prediction
/// depth, its transformer layer and its pass of the output head with a loss. Megatron-Bridge lays
/// DeepSeek-V3 (61 layers, one MTP depth) out over 16 virtual stages as embedding + 4, 4 × 14, 1 + MTP +
/// loss (src/megatron/bridge/recipes/deepseek/h100/deepseek_v3.py, _get_deepseek_v3_pipeline_layout):
/// the MTP module and the loss in the place of three layers, the loss's one already in the rule above.
[[nodiscard]] int pipeline_tail_slots(const TransformerSpec& model);

/// split_layers of `layers` plus `tail_slots` over `parts`, the slots then taken off the last part (down to
/// 0) and off the parts before it from the end (each down to 1). Needs layers + tail_slots >= parts.
[[nodiscard]] std::vector<int> split_layers_with_tail(std::int64_t layers, int parts, int tail_slots);

/// The one layer split of a pipeline, taken by the step (make_step_plan), memory and explain alike.
struct LayerSplit {
  std::vector<int> chunk_layers;  ///< layers of virtual stage vs = chunk·pp + rank; size pp·v
  std::vector<int> stage_layers;  ///< layers per pipeline rank (sum of its chunks); size pp
  std::string reason;             ///< non-empty (and both lists empty) when the layers cannot be split so
};

/// `layers` over plan.pp ranks of v = plan.virtual_stages chunks (v = 1 unless interleaved):
/// plan.stage_layers when given (pp or pp·v entries, each >= 1, summing to `layers`), else the rule in the
/// file comment with the last virtual stage's `tail_slots` (pipeline_tail_slots).
[[nodiscard]] LayerSplit split_pipeline_layers(std::int64_t layers, const ParallelPlan& plan, int tail_slots);

/// Checks the layout and splits the layers. Memory feasibility is not checked here (see simulate_step).
[[nodiscard]] StepPlan make_step_plan(const TransformerSpec& model, const topo::ClusterSpec& cluster,
                                      const ParallelPlan& plan, const TrainingSpec& training);

}  // namespace trainsim::model
