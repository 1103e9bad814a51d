#pragma once
// Bytes of one training checkpoint: the weights as stored for training (bf16/fp16/fp32), the fp32 master
// weights when kept, and the optimizer state (each optimizer's own, in its state precision). Gradients and
// activations are not saved. Mixed-precision Adam: 2 + 4 + 4 + 4 = 14 bytes per parameter — BLOOM-176B's
// full checkpoint is 2.3 TB (BigScience, bigscience/bloom model card: "bf16 weights 329GB, full checkpoint
// with optimizer states 2.3TB") and Megatron's 1T-parameter model's is 13.8 TB (Narayanan et al. 2021,
// arXiv:2104.04473, evaluation of checkpoint loading and saving).
//
// Who writes what: every pipeline stage and tensor/expert shard writes its own part; under ZeRO ≥ 1
// (distributed optimizer) the optimizer state and master weights are spread over the data-parallel ranks
// too, while the weights are written by one data-parallel replica (by every rank under ZeRO-3).
#include <cstdint>

#include "models/spec/parallel_plan.hpp"
#include "models/spec/training_spec.hpp"
#include "models/spec/transformer_spec.hpp"

namespace trainsim::model {

struct CheckpointSize {
  double weights = 0;              ///< bytes of trainable weights in their storage precision
  double master_weights = 0;       ///< bytes of fp32 master weights (0 when none are kept)
  double optimizer_state = 0;      ///< bytes of optimizer state
  std::int64_t writing_ranks = 0;  ///< ranks that write a part
  double bytes_per_rank_max = 0;   ///< bytes the busiest writing rank writes

  [[nodiscard]] double total() const { return weights + master_weights + optimizer_state; }
};

/// Checkpoint of `model` trained with `training` under `plan`. Throws InputError for a non-layout (see
/// estimate_memory).
[[nodiscard]] CheckpointSize checkpoint_size(const TransformerSpec& model, const ParallelPlan& plan,
                                             const TrainingSpec& training);

/// Bytes per parameter of a checkpoint for a large dense model (shape effects of Adafactor/Muon at their
/// asymptote): weights + master + optimizer state.
[[nodiscard]] double checkpoint_bytes_per_param(const TrainingSpec& training);

}  // namespace trainsim::model
