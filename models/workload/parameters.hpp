#pragma once
// Exact parameter counts of a transformer (or a generic layer list), whole and by part, so that the
// pipeline can count parameters per stage and ZeRO/ep can shard experts separately.
//
// Per transformer layer (h hidden, a heads, kv key/value heads, d = h/a, f ffn width, E experts):
//   attention  h·(h + 2·kv·d) [QKV] + h·h [out]            (+ h + 2·kv·d + h biases when spec.bias)
//              MLA (q_r, c: the q and kv lora ranks; n, r, v: nope, rope and value head widths):
//              h·q_r + q_r [norm] + q_r·a·(n + r)  [q; no q_r: h·a·(n + r)]
//              + h·(c + r) + c [norm] + c·a·(n + v) [kv] + a·v·h [out]
//              (models/workload/attention_projections.hpp lists the projections)
//   dense mlp  gelu: 2·h·f, swiglu: 3·h·f                  (+ f + h biases; swiglu: 2f + h)
//   moe mlp    E · (expert mlp with f = expert_ffn_hidden) + router h·E (no router bias)
//              + shared_experts · (expert mlp), passed by every token
//   norms      2 per layer: layernorm 2h each (scale + shift), rmsnorm h each
// A MoE model's first dense_layers layers have a dense mlp of ffn_hidden instead of experts and router.
// Model level: token embeddings v·h; learned positions seq_len·h; final norm; LM head v·h unless tied.
// Published references checked in tests/models/workload/parameters_test.cpp: GPT-3 175B = 174.6B (Brown et
// al. 2020), Llama-2 7B = 6.74B (Touvron et al. 2023), Llama-3 8B/70B/405B = 8.03B/70.6B/405.9B (Llama 3
// model cards and arXiv:2407.21783), DeepSeek-V3 671B / 37B activated (arXiv:2412.19437; the 671B
// exclude its 14B multi-token-prediction module, which the hub's 685B include).
#include <cstdint>

#include "models/spec/transformer_spec.hpp"

namespace trainsim::model {

/// Parameter counts by part. Per-layer fields are for ONE transformer layer.
struct ParameterBreakdown {
  double embedding = 0;         ///< token embeddings, v·h
  double position = 0;          ///< learned position embeddings, seq_len·h (0 under rope)
  double layer_attention = 0;   ///< QKV + output projection (+ biases, + one sink logit per head)
  double layer_mlp = 0;         ///< dense MLP, or all routed experts of a MoE layer (+ biases)
  double layer_shared_mlp = 0;  ///< the shared experts of a MoE layer (0 when none)
  double layer_router = 0;      ///< MoE router, h·E (0 when dense)
  double layer_norms = 0;       ///< the two norms of a layer
  double final_norm = 0;
  double lm_head = 0;  ///< output projection v·h; 0 when tied to the embeddings
  std::int64_t layers = 0;
  /// A MoE model's dense layers, first and between its MoE layers (counted in `layers`; 0 for a dense
  /// model, whose layers are all per_layer()) and the dense MLP each has instead of the experts, router
  /// and shared experts.
  std::int64_t dense_layers = 0;
  double dense_layer_mlp = 0;
  double generic_total = 0;  ///< sum over generic_layers (generic models only; other fields 0)
  /// Multi-token prediction: its modules, and what each adds beside its layer (a layer like the model's
  /// last, per_layer()): the two input norms, the 2h → h projection (+ bias) and its final norm. The
  /// embedding and the output head are the model's own, not counted again.
  std::int64_t mtp_modules = 0;
  double mtp_extra = 0;

  /// One layer: a MoE layer of a MoE model, else the dense layer.
  [[nodiscard]] double per_layer() const {
    return layer_attention + layer_mlp + layer_shared_mlp + layer_router + layer_norms;
  }
  /// One of the dense first layers of a MoE model.
  [[nodiscard]] double dense_per_layer() const { return layer_attention + dense_layer_mlp + layer_norms; }
  [[nodiscard]] std::int64_t moe_layers() const { return layers - dense_layers; }
  /// One multi-token-prediction module: its layer and mtp_extra.
  [[nodiscard]] double mtp_per_module() const { return per_layer() + mtp_extra; }
  [[nodiscard]] double mtp_total() const { return static_cast<double>(mtp_modules) * mtp_per_module(); }
  [[nodiscard]] double total() const {
    return generic_total + embedding + position + static_cast<double>(moe_layers()) * per_layer() +
           static_cast<double>(dense_layers) * dense_per_layer() + final_norm + lm_head + mtp_total();
  }
};

/// Throws InputError listing every problem unless: generic layers are given, or layers, hidden, heads,
/// vocab, seq_len > 0, heads divides hidden, kv_heads (when set) divides heads, and for MoE
/// 1 <= top_k <= experts and capacity_factor > 0, imbalance >= 1; mtp_layers >= 0.
void check_transformer_spec(const TransformerSpec& spec);

/// All counts by part. Throws InputError when the spec is inconsistent (heads not dividing hidden,
/// kv_heads not dividing heads, top_k > experts, non-positive sizes).
[[nodiscard]] ParameterBreakdown parameter_breakdown(const TransformerSpec& spec);

/// Total trainable parameters (every expert counted), = parameter_breakdown(spec).total().
[[nodiscard]] double parameter_count(const TransformerSpec& spec);

/// Parameters one token passes through: MoE counts top_k experts per layer instead of all (dense:
/// equals parameter_count). The basis of 6·N_active·tokens estimates.
[[nodiscard]] double active_parameter_count(const TransformerSpec& spec);

/// Parameters of layer `index` (generic: of generic_layers[index]); a transformer's layers are identical
/// but for a MoE model's dense ones (TransformerSpec::is_dense_layer).
[[nodiscard]] double layer_parameter_count(const TransformerSpec& spec, std::int64_t index = 0);

/// Routed expert weights of one MoE layer (all of them; 0 when dense): the part sharded over ep.
[[nodiscard]] double layer_expert_parameter_count(const TransformerSpec& spec);

/// Parameters held by one pipeline stage of `layers_on_stage` layers (generic: the layers
/// [first_layer, first_layer + layers_on_stage); a MoE model's dense layers among them counted as such). The
/// first stage holds the embeddings (+ positions); the last holds the final norm, the LM head and the
/// multi-token-prediction modules — with tied embeddings or multi-token prediction and more than one stage
/// the last stage keeps its own copy of the v·h embedding matrix (as Megatron-LM does), so the sum over
/// stages can exceed parameter_count by v·h.
[[nodiscard]] double stage_parameter_count(const TransformerSpec& spec, std::int64_t layers_on_stage,
                                           bool first_stage, bool last_stage, std::int64_t first_layer = 0);

}  // namespace trainsim::model
