#include "models/step/fp8_memory.hpp"

#include <algorithm>

#include "models/workload/attention_projections.hpp"
#include "models/workload/shard.hpp"

namespace trainsim::model {

namespace {

double as_double(std::int64_t v) {
  return static_cast<double>(v);
}

// Scaled tensors per fp8 GEMM (input, weight, output gradient), and fp32 values each keeps beside its
// history: the scale and its inverse.
constexpr double kScaledTensors = 3.0;
constexpr double kScaleValues = 2.0;
constexpr double kFp32Bytes = 4.0;

}  // namespace

Fp8Memory fp8_stage_memory(const TransformerSpec& model, const ParallelPlan& plan, int layers,
                           double in_flight) {
  Fp8Memory f;
  if (!model.generic_layers.empty() || layers <= 0) return f;
  const double t = plan.tp;
  const double h = as_double(model.hidden);
  const double ffn = as_double(model.mlp_width());
  const double fc1_outputs = model.mlp == Mlp::swiglu ? 2.0 : 1.0;
  const double experts = model.is_moe() ? as_double(model.experts) / plan.ep : 1.0;
  double attention = 0;  // this rank's attention GEMM weights (MLA: its down-projections whole)
  for (const Projection& x : attention_projections(model, plan.tp)) {
    attention += as_double(x.local_in) * as_double(x.local_out);
  }
  const double shared = model.is_moe() ? as_double(model.shared_experts) : 0.0;  // tp-split, not ep
  const double mlp = (experts + shared) * (fc1_outputs + 1.0) * ffn * h / t;
  f.gemm_weights = (attention + mlp) * layers;
  f.fp8_gemms = (static_cast<double>(attention_projections(model, plan.tp).count) + 2.0 * experts +
                 (shared > 0 ? 2.0 : 0.0)) *
                layers;

  // Under ZeRO-3 the fp8 copies exist only for the units gathered at once: the computing one and those
  // prefetched (as the 16-bit gathered buffers, models/step/memory.cpp).
  const bool zero3 = plan.gathers_weights();
  const double cached_layers = zero3 ? std::min(1 + std::max(0, plan.framework.prefetch), layers) : layers;
  f.weight_copies = 2.0 * (attention + mlp) * cached_layers;
  f.amax_history = f.fp8_gemms * kScaledTensors * (kAmaxHistory + kScaleValues) * kFp32Bytes;

  if (plan.recompute != Recompute::full) {
    const Shard shard = shard_of(plan, topo::Precision::fp8);
    const double tokens = shard.tokens(model.seq_len);
    const double sp = plan.sequence_parallel ? t : 1.0;
    const double slots = model.is_moe() ? tokens * as_double(model.top_k) * model.expert_load() : tokens;
    // qkv and fc1 inputs (norm outputs), out_proj input, fc2 input: one byte saved per element.
    // Per-module recompute keeps fewer of them: the norms' outputs (qkv and a dense fc1 input) under
    // layernorm, the fc2 input under mlp (dense), moe_act or moe.
    const bool norms_again = shard.recomputes(RecomputeModule::layernorm);
    const bool fc2_again =
        model.is_moe() ? shard.recomputes(RecomputeModule::moe_act) || shard.recomputes(RecomputeModule::moe)
                       : shard.recomputes(RecomputeModule::mlp);
    // An offloaded input is on the host, not kept on the GPU at either width: qkv_linear's (ln1's output)
    // and attn_proj's (the out_proj input) leave no saving here.
    const double norm_inputs = (shard.offloads(OffloadModule::qkv_linear) ? 1.0 : 2.0) * tokens * h / sp;
    const double elements =
        (norms_again ? 0.0 : norm_inputs) +
        (shard.offloads(OffloadModule::attn_proj) ? 0.0
                                                  : tokens * as_double(model.attention_out_width()) / t) +
        (fc2_again ? 0.0 : slots * ffn / t);
    f.saved_inputs = elements * layers * in_flight;
  }
  return f;
}

}  // namespace trainsim::model
