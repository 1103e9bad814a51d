#pragma once
// Activation memory kept for the backward pass, per layer and per pipeline stage, one rank, bytes.
// Reference: Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
// Sec. 4 and Table 2. For GPT (16-bit activations, 1-byte dropout masks, f = 4h, kv = a) one layer keeps
//   no parallelism             s·b·h·(34 + 5·a·s/h)
//   tensor parallel t          s·b·h·(10 + 24/t + 5·a·s/(h·t))
//   + sequence parallel        s·b·h/t·(34 + 5·a·s/h)
//   tensor parallel, selective s·b·h·(10 + 24/t)
//   + sequence parallel, sel.  s·b·h/t·34
//   full recompute             2·s·b·h (÷ t with sequence parallelism): the layer input only
// The terms are derived from tensor sizes, not hard-coded, so GQA, swiglu and any precision follow
// (p = bytes per activation element, T = b·s/cp tokens per rank, d = h/a, T_r = T/t with SP else T):
//   replicated over tp unless SP:  ln1 input p·h, qkv input p·h, ln2 input p·h, fc1 input p·h,
//                                  attention-output and MLP-output dropout masks 1 + 1   (per token;
//                                  none when model.dropout is 0, nor the embedding's mask)
//   split by tp:                   Q p·h, K and V p·kv·d each, out_proj input p·h,
//                                  gelu: act input p·f + fc2 input p·f; swiglu: p·2f + p·f  (per token)
//   seq²-sized (standard attention only, split by tp): softmax output p, dropout mask 1, dropout
//                                  output p per score: (2p + 1)·a·b·(s/cp)·s
// With p = 2, kv = a, f = 4h: 4·2 + 2 = 10 replicated, 2+2+2+2+8+8 = 24 split, 5·a·s² scores (tested).
// Flash attention keeps no score tensor (its per-row softmax statistics are neglected); selective
// recompute drops the score tensor; full recompute keeps the layer input p·T_r·h. Expert (MoE) layers
// keep the MLP terms for T·top_k·expert_load token slots of expert_ffn_hidden; shared experts keep
// the MLP terms of one MLP of shared_experts·expert_ffn_hidden for every token. Multi-head latent attention
// keeps Q (a·(n + r)), K (a·(n + r)), V (a·v) and the out_proj input (a·v), split by tp, and its latents
// p·(2·q_lora_rank + 2·kv_lora_rank + qk_rope) per token on every rank (`latent`). A MoE model's dense
// first layers keep a dense layer's terms, on the stages that hold them.
#include <cstdint>

#include "models/spec/parallel_plan.hpp"
#include "models/spec/transformer_spec.hpp"
#include "models/workload/shard.hpp"

namespace trainsim::model {

/// Bytes one layer keeps per micro-batch on one rank, by part.
struct LayerActivation {
  double replicated = 0;       ///< the "10" terms: replicated over tp unless sequence parallel
  double split = 0;            ///< the "24/t" terms
  double scores = 0;           ///< the "5·a·s/h" terms (standard attention, no selective/full recompute)
  double recompute_input = 0;  ///< full recompute: the stored layer input (the other fields are 0)
  double latent = 0;  ///< MLA: the latent vectors of the replicated down-projections (not split by tp or SP)
  /// Fine-grained offload (Shard::offload_modules): bytes of the kept activations above moved to host
  /// memory, already taken out of the other fields (so not in total()): what crosses the host link each
  /// way per micro-batch.
  double offloaded = 0;

  [[nodiscard]] double total() const { return replicated + split + scores + recompute_input + latent; }
};

/// One transformer layer. Throws InputError on tp/cp that do not divide, and for generic specs (their
/// layers differ: use stage_activation).
[[nodiscard]] LayerActivation layer_activation(const TransformerSpec& spec, const Shard& shard);

/// What one pipeline stage holds at its peak.
struct StageActivation {
  double per_micro_batch = 0;          ///< one micro-batch's activations on this stage (layers + ends)
  double micro_batches_in_flight = 0;  ///< how many are held at once (may be fractional: interleaved)
  double working = 0;  ///< transient: one layer rematerialised under full recompute; + two layers' offloaded
                       ///< inputs reloaded (the layer in its backward and the next, reloaded ahead)
  double embedding = 0;  ///< first stage: embedding output dropout mask, per micro-batch
  double head = 0;       ///< last stage: final norm + LM-head input + fp32 logits, per micro-batch
  /// last stage: the multi-token-prediction modules' layers, inputs and heads, per micro-batch
  double mtp = 0;
  /// MoE all-gather token dispatcher: the buffer the group's tokens are gathered into, once per GPU.
  double dispatch_buffer = 0;

  [[nodiscard]] double total() const {
    return per_micro_batch * micro_batches_in_flight + working + dispatch_buffer;
  }
};

/// Micro-batches whose activations stage `stage` (0-based) of `pp` holds at its peak, out of `micro_batches`
/// per step, in units of the stage's whole set of layers: gpipe: all m; 1f1b and zero_bubble_h1:
/// min(pp - stage, m); interleaved with v > 1 virtual stages: Megatron-LM's warm-up of
/// 2·(pp - stage - 1) + (v - 1)·pp chunk forwards plus the one in progress, each chunk 1/v of the stage,
/// i.e. min(2·(pp - stage - 1) + (v - 1)·pp + 1, m·v) / v. On the first stage that is
/// pp·(1 + (pp - 1)/(pp·v)), Korthikanti Sec. 4.2.3's factor. dualpipe and dualpipev: PP + 1 chunks
/// (DeepSeek-V3 Table 2; PP the stages: pp for dualpipe, 2·pp for dualpipev), two chunks a rank:
/// min(PP + 1, 2m) / 2. zb_v: 2·pp chunks, min(pp, m) (Qi et al. 2024: 1F1B's activations).
[[nodiscard]] double micro_batches_in_flight(Schedule schedule, int pp, int stage, int virtual_stages,
                                             std::int64_t micro_batches);

/// Activations held by pipeline stage `stage` of plan.pp, which runs `layers_on_stage` layers (generic
/// models: layers [first_layer, first_layer + layers_on_stage)), with `micro_batches` per step. Embedding
/// and head terms are included on the first and last stage.
[[nodiscard]] StageActivation stage_activation(const TransformerSpec& spec, const ParallelPlan& plan,
                                               topo::Precision precision, int stage,
                                               std::int64_t layers_on_stage, std::int64_t micro_batches,
                                               std::int64_t first_layer = 0);

}  // namespace trainsim::model
