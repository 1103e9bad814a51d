#include "models/workload/activation_memory.hpp"

#include <algorithm>
#include <string>

#include "models/workload/attention.hpp"
#include "sim/error.hpp"

namespace trainsim::model {

namespace {

double as_double(std::int64_t v) {
  return static_cast<double>(v);
}

// Bytes of one dropout mask element (Megatron-LM stores masks as uint8).
constexpr double kMaskBytes = 1.0;

}  // namespace

namespace {

// What one layer's activation terms are made of, on this rank.
struct LayerWidths {
  double p = 0;           // bytes per element
  double t = 0;           // tensor-parallel ranks
  double h = 0;           // hidden width
  double tokens = 0;      // tokens of the micro-batch on this rank
  double sp_divisor = 1;  // t under sequence parallelism, else 1
  // Per-head widths of the query/key and of the value (differ under MLA), and the heads on this rank.
  double d = 0;
  double dv = 0;
  double heads_rank = 0;
  double kv_heads_rank = 0;
  double act_matrices = 0;  // act input (gate+up) + fc2 input
  // Token slots through the MLP (each routed copy under MoE) and the width of the MLP they pass.
  double slots = 0;
  double f = 0;
  bool dispatched = false;  // the slots were dispatched to this rank's expert ranks (see widths_of)
  double et = 0;            // ranks splitting one expert
  double rank_slots = 0;    // the slots this rank keeps
  double shared_f = 0;      // shared experts: one MLP of shared_experts · f on every token, split over tp
  double norm_output = 0;   // a norm's output, as the layer keeps it
  bool moe = false;
  bool whole_moe = false;  // the whole MoE layer recomputed (per-module recompute `moe`)
};

LayerWidths widths_of(const TransformerSpec& spec, const Shard& shard) {
  LayerWidths w;
  w.p = topo::bytes_per_element(shard.precision);
  w.t = shard.tp;
  w.h = as_double(spec.hidden);
  w.tokens = shard.tokens(spec.seq_len);
  w.sp_divisor = shard.sequence_parallel ? w.t : 1.0;
  w.d = as_double(spec.qk_head_dim());
  w.dv = as_double(spec.value_head_dim());
  w.heads_rank = as_double(spec.heads) / w.t;
  w.kv_heads_rank = std::max(1.0, as_double(spec.kv_heads_or_heads()) / w.t);
  w.act_matrices = spec.mlp == Mlp::swiglu ? 3.0 : 2.0;
  w.slots = spec.is_moe() ? w.tokens * as_double(spec.top_k) * spec.expert_load() : w.tokens;
  w.f = as_double(spec.mlp_width());
  // Under sequence parallelism Megatron-Core's all-to-all dispatcher gathers the slots over an expert's own
  // et ranks, so a rank keeps et/t of its tp group's slots, their fc1 input whole and their activations
  // split by et (models/workload/layer_ops.cpp); its all-gather dispatcher leaves a rank the same slots (at
  // tp 1 all of them). Otherwise every slot's fc1 input follows the sequence parallelism and the
  // activations are split by t.
  w.dispatched =
      spec.is_moe() && (shard.moe_all_gather || (shard.ep > 1 && shard.tp > 1 && shard.sequence_parallel));
  w.et = spec.is_moe() ? shard.expert_tp() : w.t;
  w.rank_slots = w.dispatched ? w.slots / w.t * w.et : w.slots;
  w.shared_f = spec.is_moe() ? as_double(spec.shared_experts) * w.f : 0.0;
  w.norm_output = w.p * w.tokens * w.h / w.sp_divisor;
  w.moe = spec.is_moe();
  w.whole_moe = w.moe && shard.recomputes(RecomputeModule::moe);
  return w;
}

// recompute: op. Kept: the layer's input, q, v, the attention output, w1's output and, of a SwiGLU, w2's;
// the rest is run again (models/workload/layer_ops.cpp).
LayerActivation kept_under_op_recompute(const TransformerSpec& spec, const LayerWidths& w) {
  LayerActivation a;
  const bool swiglu = spec.mlp == Mlp::swiglu;
  a.replicated = w.p * (w.tokens * w.h + (swiglu && !w.dispatched ? w.slots * w.h : 0.0)) / w.sp_divisor;
  a.split =
      w.p * (w.tokens * (w.heads_rank * (w.d + w.dv) + w.kv_heads_rank * w.dv) + w.rank_slots * w.f / w.et +
             (swiglu && w.dispatched ? w.rank_slots * w.h : 0.0) + w.tokens * w.shared_f / w.t);
  return a;
}

// Everything the layer keeps for its backward when nothing is recomputed.
LayerActivation kept_whole(const TransformerSpec& spec, const Shard& shard, const LayerWidths& w) {
  LayerActivation a;
  // ln1 input, qkv input, ln2 input and the two output dropout masks of every token (none without dropout).
  const double mask = spec.dropout > 0 ? kMaskBytes : 0.0;
  double replicated = w.tokens * w.h * (3.0 * w.p + 2.0 * mask);
  // Q, K, V and the out_proj input.
  double split = w.tokens * w.p * (w.heads_rank * w.d + w.kv_heads_rank * (w.d + w.dv) + w.heads_rank * w.dv);
  // qk_norm keeps its inputs, the projected Q and K before the norm.
  if (spec.qk_norm) split += w.tokens * w.p * (w.heads_rank + w.kv_heads_rank) * w.d;
  // Each slot keeps its fc1 input (full width) and the activation terms (split by tp, or et).
  if (w.dispatched) {
    split += w.rank_slots * w.p * w.h;
  } else {
    replicated += w.slots * w.p * w.h;
  }
  split += w.rank_slots * w.act_matrices * w.p * w.f / w.et;
  if (w.shared_f > 0) {  // the shared experts read the ln2 output the router reads: kept once more
    replicated += w.tokens * w.p * w.h;
    split += w.tokens * w.act_matrices * w.p * w.shared_f / w.t;
  }
  a.replicated = replicated / w.sp_divisor;
  a.split = split;
  if (spec.is_mla()) {
    // The replicated down-projections' outputs on every tp rank, sequence parallel or not: each latent's
    // norm input and the up-projection's input (q: 2·q_lora_rank; kv: kv_lora_rank + rope, then
    // kv_lora_rank), p bytes each.
    a.latent = w.p * w.tokens *
               (2.0 * as_double(spec.q_lora_rank) + 2.0 * as_double(spec.kv_lora_rank) +
                as_double(spec.qk_rope_head_dim));
  }
  // The kept scores do not depend on a sliding window (the standard kernels keep the whole masked square,
  // the fused ones none): any layer of a mixed model prices them.
  if (!shard.recomputes(RecomputeModule::core_attn))
    a.scores = attention_cost(spec.as_attention_layer(false), shard).stored_bytes;
  return a;
}

// Per-module recompute (models/workload/layer_ops.cpp): a recomputed module keeps its input, none of its
// inner activations.
void drop_recomputed_modules(LayerActivation& a, const TransformerSpec& spec, const Shard& shard,
                             const LayerWidths& w) {
  if (w.whole_moe) {
    // The slots' fc1 inputs, their activations and the shared experts' go; the layer's input (ln2's
    // output, the router's input) is kept: the shared experts' copy of it stays, or one is added.
    if (w.dispatched) {
      a.split -= w.rank_slots * w.p * w.h;
    } else {
      a.replicated -= w.slots * w.p * w.h / w.sp_divisor;
    }
    a.split -=
        w.rank_slots * w.act_matrices * w.p * w.f / w.et + w.tokens * w.act_matrices * w.p * w.shared_f / w.t;
    if (w.shared_f == 0) a.replicated += w.norm_output;
  } else if (w.moe) {
    if (shard.recomputes(RecomputeModule::moe_act)) a.split -= w.rank_slots * w.p * w.f / w.et;  // its output
    if (shard.recomputes(RecomputeModule::shared_experts))
      a.split -= w.tokens * w.act_matrices * w.p * w.shared_f / w.t;
  } else if (shard.recomputes(RecomputeModule::mlp)) {
    a.split -= w.rank_slots * w.act_matrices * w.p * w.f / w.et;  // fc1's output and the activation's
  }
  if (shard.recomputes(RecomputeModule::layernorm)) {
    // ln1's output (the qkv input) and ln2's where it is kept: a dense MLP's fc1 input, a MoE layer's
    // shared-expert input (not when the whole MoE layer keeps it as its input).
    a.replicated -= w.norm_output * ((!w.moe || (w.shared_f > 0 && !w.whole_moe)) ? 2.0 : 1.0);
  }
  if (shard.recomputes(RecomputeModule::mla_up_proj) && spec.is_mla()) {
    a.split -= w.tokens * w.p *
               (w.heads_rank * w.d + w.kv_heads_rank * (w.d + w.dv));  // Q, K and V, from the latents
  }
}

// Fine-grained offload: each named module's saved input, where the layer still keeps it (a recomputed
// norm's output or MLA's Q/K/V, and a recomputed MoE layer's slots, are gone already), leaves the GPU.
void offload_modules(LayerActivation& a, const TransformerSpec& spec, const Shard& shard,
                     const LayerWidths& w) {
  double replicated_out = 0, split_out = 0, scores_out = 0;
  if (shard.offloads(OffloadModule::attn_norm)) replicated_out += w.norm_output;
  if (shard.offloads(OffloadModule::qkv_linear) && !shard.recomputes(RecomputeModule::layernorm))
    replicated_out += w.norm_output;
  if (shard.offloads(OffloadModule::mlp_norm)) replicated_out += w.norm_output;
  if (shard.offloads(OffloadModule::core_attn)) {
    if (!(spec.is_mla() && shard.recomputes(RecomputeModule::mla_up_proj)))
      split_out += w.tokens * w.p * (w.heads_rank * w.d + w.kv_heads_rank * (w.d + w.dv));
    scores_out = a.scores;
  }
  if (shard.offloads(OffloadModule::attn_proj)) split_out += w.tokens * w.p * w.heads_rank * w.dv;
  if (w.moe && !w.whole_moe && shard.offloads(OffloadModule::expert_fc1)) {
    if (w.dispatched) {
      split_out += w.rank_slots * w.p * w.h;
    } else {
      replicated_out += w.slots * w.p * w.h / w.sp_divisor;
    }
  }
  if (w.moe && !w.whole_moe && shard.offloads(OffloadModule::moe_act))
    split_out += w.rank_slots * (w.act_matrices - 1.0) * w.p * w.f / w.et;  // the act input: fc1's output
  a.replicated -= replicated_out;
  a.split -= split_out;
  a.scores -= scores_out;
  a.offloaded = replicated_out + split_out + scores_out;
}

}  // namespace

LayerActivation layer_activation(const TransformerSpec& spec, const Shard& shard) {
  if (!spec.generic_layers.empty()) {
    throw InputError("per-layer transformer activations are undefined for a generic model");
  }
  check_shard(spec, shard);
  if (shard.recompute == Recompute::full) {
    LayerActivation a;
    a.recompute_input = topo::bytes_per_element(shard.precision) * shard.tokens(spec.seq_len) *
                        as_double(spec.hidden) /
                        (shard.sequence_parallel ? static_cast<double>(shard.tp) : 1.0);
    return a;
  }
  const LayerWidths w = widths_of(spec, shard);
  if (shard.recompute == Recompute::op) return kept_under_op_recompute(spec, w);
  LayerActivation a = kept_whole(spec, shard, w);
  if (shard.recompute == Recompute::selective) drop_recomputed_modules(a, spec, shard, w);
  if (shard.offload_modules != 0) offload_modules(a, spec, shard, w);
  return a;
}

double micro_batches_in_flight(Schedule schedule, int pp, int stage, int virtual_stages,
                               std::int64_t micro_batches) {
  if (pp < 1 || stage < 0 || stage >= pp) {
    throw InputError("pipeline stage " + std::to_string(stage) + " is not in 0.." + std::to_string(pp - 1));
  }
  if (micro_batches < 1) throw InputError("a step needs at least one micro-batch");
  const double m = as_double(micro_batches);
  const double warmup = pp - stage;  // 1F1B: forwards issued before the first backward on this stage
  switch (schedule) {
    case Schedule::gpipe:
      return m;
    case Schedule::one_f_one_b:
    case Schedule::zero_bubble_h1:
      return std::min(warmup, m);
    case Schedule::dualpipe:
    case Schedule::dualpipev: {
      // DeepSeek-V3 Table 2 (and the DualPipe README): PP + 1 chunks' activations per rank, PP the stages
      // (DualPipe: pp; DualPipeV: 2·pp). A rank holds two chunks, so (PP + 1) / 2 micro-batches of its own
      // layers; the program's peak, min(PP + 1, 2m), is what schedule_test replays.
      const double stages = schedule == Schedule::dualpipe ? pp : 2.0 * pp;
      return std::min(stages + 1.0, 2.0 * m) / 2.0;
    }
    case Schedule::zb_v:
      // Qi et al.'s ZB-V: 2·pp chunks (rank 0's 2·pp − 1 warm-up forwards and the first of chunk 1), 1F1B's
      // pp micro-batches of the rank's layers.
      return std::min(static_cast<double>(pp), m);
    case Schedule::interleaved: {
      if (virtual_stages <= 1) return std::min(warmup, m);
      const double v = virtual_stages;
      const double chunks = 2.0 * (pp - stage - 1) + (v - 1.0) * pp + 1.0;
      return std::min(chunks, m * v) / v;
    }
  }
  return std::min(warmup, m);
}

StageActivation stage_activation(const TransformerSpec& spec, const ParallelPlan& plan,
                                 topo::Precision precision, int stage, std::int64_t layers_on_stage,
                                 std::int64_t micro_batches, std::int64_t first_layer) {
  if (layers_on_stage < 0) throw InputError("a pipeline stage cannot hold a negative number of layers");
  const Shard shard = shard_of(plan, precision);
  StageActivation s;
  s.micro_batches_in_flight =
      micro_batches_in_flight(plan.schedule, plan.pp, stage, plan.virtual_stages, micro_batches);

  if (!spec.generic_layers.empty()) {
    const auto end = first_layer + layers_on_stage;
    if (first_layer < 0 || end > static_cast<std::int64_t>(spec.generic_layers.size())) {
      throw InputError("generic layers " + std::to_string(first_layer) + ".." + std::to_string(end - 1) +
                       " are out of range (model has " + std::to_string(spec.generic_layers.size()) +
                       " layers)");
    }
    for (std::int64_t i = first_layer; i < end; ++i) {
      s.per_micro_batch += spec.generic_layers[static_cast<std::size_t>(i)].activation_bytes_per_sample *
                           as_double(shard.micro_batch) / shard.tp;
    }
    return s;
  }

  const LayerActivation layer = layer_activation(spec, shard);
  // A MoE model's dense layers on this stage keep a dense layer's activations.
  const std::int64_t dense_here = spec.dense_layers_in(first_layer, layers_on_stage);
  const LayerActivation dense =
      dense_here > 0 ? layer_activation(spec.as_dense_layer(), shard) : LayerActivation{};
  const double dense_layer = dense.total();
  const double dense_offloaded = dense.offloaded;
  const double p = topo::bytes_per_element(precision);
  const double t = shard.tp;
  const double tokens = shard.tokens(spec.seq_len);
  const double sp_divisor = shard.sequence_parallel ? t : 1.0;
  const double h = as_double(spec.hidden);
  if (stage == 0) s.embedding = tokens * h * (spec.dropout > 0 ? kMaskBytes : 0.0) / sp_divisor;
  if (stage == plan.pp - 1) {
    // Final norm input and LM-head input (p each), and the fp32 logits the cross-entropy keeps.
    s.head = 2.0 * p * tokens * h / sp_divisor + 4.0 * tokens * as_double(spec.vocab) / t;
    // Multi-token prediction, per module: its layer's activations (a layer like the model's last), the
    // two norms' inputs and the projection's 2h-wide input, and the head's inputs and logits again.
    if (spec.mtp_layers > 0) {
      s.mtp = as_double(spec.mtp_layers) * (layer.total() + 4.0 * p * tokens * h / sp_divisor + s.head);
    }
  }
  s.per_micro_batch = as_double(layers_on_stage - dense_here) * layer.total() +
                      as_double(dense_here) * dense_layer + s.embedding + s.head + s.mtp;
  // The all-gather dispatcher gathers the expert_tp × ep group's tokens into one buffer Megatron-Core keeps
  // for the whole run (use_global_buffer): the gathered tokens are not kept for the backward (the permuted
  // slots, the fc1 input above, are), so it is counted once, not per layer or micro-batch.
  const bool moe_here = layers_on_stage > dense_here || (stage == plan.pp - 1 && spec.mtp_layers > 0);
  if (spec.is_moe() && shard.moe_all_gather && moe_here) {
    s.dispatch_buffer = p * (tokens / sp_divisor) * shard.expert_tp() * shard.ep * h;
  }

  // Backward of a recomputed layer materialises it again, one layer at a time.
  if (layers_on_stage > 0 && shard.recompute != Recompute::none) {
    Shard none = shard;
    none.recompute = Recompute::none;
    const LayerActivation full = layer_activation(spec, none);
    double widest = full.total();
    if (dense_here > 0) widest = std::max(widest, layer_activation(spec.as_dense_layer(), none).total());
    s.working = shard.recompute == Recompute::selective ? full.scores : widest;
  }
  // Offloaded inputs come back one layer ahead of the backward that reads them: the layer in its
  // backward and the next one reloaded are on the GPU at once.
  if (layers_on_stage > 0)
    s.working += 2.0 * std::max(layer.offloaded, dense_here > 0 ? dense_offloaded : 0.0);
  return s;
}

}  // namespace trainsim::model
