#pragma once
// The memory fp8 training adds and saves per GPU, as Transformer Engine runs it (only the parameter
// GEMMs of the transformer layers in fp8; embedding, LM head, norms and attention in 16 bit):
//   weight copies  2 B per GEMM weight element: the fp8 weight and its fp8 transpose (Hopper's fp8
//                  GEMMs take only the TN layout, so dgrad needs Wᵀ), cached for the whole step; under
//                  ZeRO-3 only for the layers gathered at once (the current one and the prefetched one).
//   amax history   per fp8 GEMM, three scaled tensors (input, weight, output gradient), each with an amax
//                  history of kAmaxHistory fp32 values plus its scale and inverse scale (Transformer
//                  Engine's DelayedScaling default history length 1024).
//   saved inputs   the inputs of the four layer GEMMs (qkv, out_proj, fc1, fc2) are kept for wgrad in fp8:
//                  1 byte instead of 2 per element, per layer and micro-batch in flight (none under full
//                  recompute, which keeps only the layer input).
#include <cstdint>

#include "models/spec/parallel_plan.hpp"
#include "models/spec/transformer_spec.hpp"

namespace trainsim::model {

/// Amax history length per scaled tensor (Transformer Engine DelayedScaling default).
inline constexpr double kAmaxHistory = 1024;

struct Fp8Memory {
  double weight_copies = 0;  ///< bytes: fp8 weights and transposes (counted with the weights)
  double amax_history = 0;   ///< bytes: amax histories and scales (counted with the buffers)
  double saved_inputs = 0;   ///< bytes saved on stashed activations (subtracted from them)
  double gemm_weights = 0;   ///< GEMM weight elements of the rank's layers (before ZeRO-3)
  double fp8_gemms = 0;      ///< fp8 GEMMs on the rank (the grouped experts count one each)
};

/// fp8 terms of a pipeline rank holding `layers` transformer layers with `in_flight` micro-batches of
/// activations stashed at the peak. Zero for generic models.
[[nodiscard]] Fp8Memory fp8_stage_memory(const TransformerSpec& model, const ParallelPlan& plan, int layers,
                                         double in_flight);

}  // namespace trainsim::model
