#pragma once
// How one micro-batch of one transformer layer is cut across ranks: the inputs every per-rank cost
// function of the workload (layer_ops, activation_memory, attention) shares.
#include <cstdint>

#include "models/spec/parallel_plan.hpp"
#include "models/spec/training_spec.hpp"
#include "models/spec/transformer_spec.hpp"
#include "topologies/precision.hpp"

namespace trainsim::model {

/// One rank's share of a micro-batch. Tokens per rank are micro_batch · seq_len / cp; tensor parallelism
/// splits heads and the ffn width by tp; sequence parallelism splits the tokens of the norms, dropouts
/// and residuals by tp as well.
struct Shard {
  std::int64_t micro_batch = 1;  ///< sequences per micro-batch
  int tp = 1;
  bool sequence_parallel = false;
  int cp = 1;   ///< context parallel: each rank holds seq_len / cp of the tokens
  int ep = 1;   ///< expert parallel: each rank holds experts / ep of the experts
  int etp = 0;  ///< tensor parallel inside an expert (ParallelPlan::expert_tp); 0: tp
  [[nodiscard]] int expert_tp() const { return etp > 0 ? etp : tp; }
  topo::Precision precision = topo::Precision::bf16;  ///< activations and matmul inputs
  Recompute recompute = Recompute::none;
  std::uint8_t recompute_modules = 0;  ///< ParallelPlan::recompute_modules
  [[nodiscard]] bool recomputes(RecomputeModule m) const {
    return model::recomputes(recompute, recompute_modules, m);
  }
  std::uint8_t offload_modules = 0;  ///< ParallelPlan::offload_modules
  [[nodiscard]] bool offloads(OffloadModule m) const { return model::offloads(offload_modules, m); }
  /// Element-wise work (norms, activations, rotary embedding, loss) runs in fused kernels; false: as eager
  /// PyTorch ops, one kernel each (the framework's fused_elementwise; models/workload/layer_ops.cpp).
  bool fused_elementwise = true;
  /// The fused attention runs between unpadding and padding copies (the framework's unpadded_attention).
  bool unpadded_attention = false;
  /// cp > 1: K/V all-gathered over cp before the attention, not passed round a ring (the framework's
  /// cp_kv_all_gather).
  bool cp_kv_all_gather = false;
  /// Key blocks one rank's attention kernel loops over in turn: cp ring steps, or 1 when K/V are gathered
  /// first (one kernel over every key).
  [[nodiscard]] int attention_ring_steps() const { return cp > 1 && !cp_kv_all_gather ? cp : 1; }
  /// MoE tokens reach the experts by Megatron-Core's all-gather dispatcher rather than its all-to-all one
  /// (the framework's moe_dispatcher).
  bool moe_all_gather = false;
  /// MoE tokens reach the experts by Megatron-Core's flex dispatcher (DeepEP, HybridEP): each token sent
  /// whole, once per destination GPU, and permuted into expert order only there (the framework's
  /// moe_dispatcher; models/workload/layer_ops.cpp).
  bool moe_token_dispatch = false;
  /// Kernels of a MoE layer's router and dispatch preprocessing in the forward, its GEMM among them
  /// (moe_router_kernels of the framework).
  int moe_router_kernels = 1;
  /// A MoE layer's activation and fp8 casts run in its grouped GEMMs' epilogues (the framework's
  /// fused_grouped_mlp; models/workload/layer_ops.cpp).
  bool fused_grouped_mlp = false;
  /// fp8: how GEMM inputs are scaled (TrainingSpec::fp8_recipe), which sets their casts' kernels.
  Fp8Recipe fp8_recipe = Fp8Recipe::delayed;

  /// Tokens of one micro-batch of `seq_len`-token sequences on this rank: micro_batch · seq_len / cp.
  [[nodiscard]] double tokens(std::int64_t seq_len) const {
    return static_cast<double>(micro_batch) * static_cast<double>(seq_len) / cp;
  }
  /// The tokens of the norms, dropouts and residuals: tokens(seq_len), ÷ tp under sequence parallelism.
  [[nodiscard]] double norm_tokens(std::int64_t seq_len) const {
    const double all = tokens(seq_len);
    return sequence_parallel ? all / tp : all;
  }
};

/// The shard of `plan` (micro_batch, tp, sequence_parallel, cp, ep, recompute, the framework's
/// fused_elementwise) at `precision`.
[[nodiscard]] Shard shard_of(const ParallelPlan& plan, topo::Precision precision);
/// The shard a step trains: at the training's precision, with its fp8 recipe.
[[nodiscard]] Shard shard_of(const ParallelPlan& plan, const TrainingSpec& training);

/// Throws InputError (naming what does not divide) unless the transformer spec is valid
/// (check_transformer_spec) and: micro_batch >= 1; tp divides heads, hidden and ffn; cp divides seq_len;
/// ep divides experts (MoE).
void check_shard(const TransformerSpec& spec, const Shard& shard);

}  // namespace trainsim::model
