#pragma once
// The scenario's `training:` block: batch, precision, optimizer, and how long the run is.
#include <cstdint>
#include <optional>

#include "models/spec/optimizer_spec.hpp"
#include "sim/enum_names.hpp"

namespace trainsim::model {

/// The learning-rate schedule (models/run/lr_schedule.hpp): cosine's length is fixed when the run starts;
/// warmup-stable-decay (WSD) can continue from any checkpoint of its stable phase and decay again.
enum class LrSchedule : std::uint8_t { cosine, wsd };

inline constexpr EnumNames<LrSchedule, 2> kLrScheduleNames{
    {{"cosine", LrSchedule::cosine}, {"wsd", LrSchedule::wsd}}};

/// How fp8 GEMM inputs are scaled (Megatron-Core's --fp8-recipe, TransformerEngine's recipes): one scale per
/// tensor from an amax history (delayed, the default of both), one per tensor from the tensor itself
/// (tensorwise: current scaling), one per 1×128 or 128×128 block (blockwise: DeepSeek-V3's), or one per 32
/// elements (mxfp8: Blackwell's microscaling). What it prices (models/workload/layer_ops.cpp):
/// TransformerEngine's split_quantize of a MoE rank's grouped GEMM inputs fuses the experts into one kernel
/// only under delayed scaling (nvte_multi_cast_transpose), every other recipe quantizes expert by expert;
/// and current scaling computes each tensor's amax before it casts (a read of the input and two kernels
/// more: Float8CurrentScalingQuantizer::quantize). The GEMMs are priced alike under every recipe.
enum class Fp8Recipe : std::uint8_t { delayed, tensorwise, blockwise, mxfp8 };

inline constexpr EnumNames<Fp8Recipe, 4> kFp8RecipeNames{{{"delayed", Fp8Recipe::delayed},
                                                          {"tensorwise", Fp8Recipe::tensorwise},
                                                          {"blockwise", Fp8Recipe::blockwise},
                                                          {"mxfp8", Fp8Recipe::mxfp8}}};

struct TrainingSpec {
  std::int64_t global_batch = 0;          ///< sequences per optimizer step
  Precision precision = Precision::bf16;  ///< compute precision of matmuls and activations
  std::optional<Fp8Recipe> fp8_recipe;    ///< precision fp8 only; unset: delayed
  [[nodiscard]] Fp8Recipe fp8_recipe_or_default() const { return fp8_recipe.value_or(Fp8Recipe::delayed); }
  OptimizerSpec optimizer;
  // Run length: exactly one of tokens, steps, or epochs (with dataset_tokens) is set.
  std::optional<double> tokens;
  std::optional<std::int64_t> steps;
  std::optional<double> epochs;
  std::optional<double> dataset_tokens;
  /// Expected rollbacks to the last checkpoint per 1e12 tokens trained (loss spikes, divergences), each
  /// costing the work since that checkpoint plus a restart and restore (models/run/failures.hpp). 0: none.
  double instability = 0;
  LrSchedule schedule = LrSchedule::cosine;
  double wsd_decay_fraction = 0.2;  ///< wsd: the share of a run's tokens spent in its final decay
  bool operator==(const TrainingSpec&) const = default;
};

}  // namespace trainsim::model
