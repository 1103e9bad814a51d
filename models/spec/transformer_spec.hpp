#pragma once
// What is trained: a decoder-only (or encoder) transformer, optionally mixture-of-experts, or a generic
// list of layers for other architectures. Plain data; the cost functions live in their own files.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/enum_names.hpp"

namespace trainsim::model {

enum class Mlp { gelu, swiglu };
/// The attention core's kernels (SPEC model.attention). flash: the GPU preset's default fused kernel;
/// flash2 | flash3 | cudnn: that fused kernel; all four keep no seq²-sized activations. standard:
/// unfused matmuls and softmax.
enum class Attention { flash, flash2, flash3, cudnn, standard };
[[nodiscard]] constexpr bool is_fused(Attention a) {
  return a != Attention::standard;
}
enum class Norm { layernorm, rmsnorm };
enum class Position { learned, rope };
/// How a MoE router spreads token slots over the experts (Megatron-Core, transformer_config.py):
///   force_balanced  every expert gets exactly T·top_k/experts slots (--moe-router-force-load-balancing,
///                   "only for benchmark": what the published throughput tables run); capacity_factor, if
///                   set, pads each expert's input to that multiple (--moe-pad-expert-input-to-capacity);
///   capacity        each expert's input is sized to its capacity, capacity_factor · T·top_k/experts
///                   (--moe-expert-capacity-factor with --moe-pad-expert-input-to-capacity; tokens beyond it
///                   are dropped, by --moe-token-drop-policy probs|position, which picks which, not how
///                   many);
///   dropless        no capacity (moe_expert_capacity_factor None, Megatron's default): every slot is
///                   computed, and the busiest expert-parallel rank receives `imbalance` times the mean;
///                   the layer waits for it, so its expert GEMMs, activations and all-to-all are that
///                   rank's.
enum class Routing { force_balanced, capacity, dropless };

inline constexpr EnumNames<Mlp, 2> kMlpNames{{{"gelu", Mlp::gelu}, {"swiglu", Mlp::swiglu}}};
inline constexpr EnumNames<Attention, 5> kAttentionNames{{{"flash", Attention::flash},
                                                          {"flash2", Attention::flash2},
                                                          {"flash3", Attention::flash3},
                                                          {"cudnn", Attention::cudnn},
                                                          {"standard", Attention::standard}}};
inline constexpr EnumNames<Norm, 2> kNormNames{{{"layernorm", Norm::layernorm}, {"rmsnorm", Norm::rmsnorm}}};
inline constexpr EnumNames<Position, 2> kPositionNames{
    {{"learned", Position::learned}, {"rope", Position::rope}}};
inline constexpr EnumNames<Routing, 3> kRoutingNames{{{"force-balanced", Routing::force_balanced},
                                                      {"capacity", Routing::capacity},
                                                      {"dropless", Routing::dropless}}};

constexpr std::string_view to_string(Mlp m) {
  return name_in(kMlpNames, m);
}
constexpr std::string_view to_string(Attention a) {
  return name_in(kAttentionNames, a);
}
constexpr std::string_view to_string(Norm n) {
  return name_in(kNormNames, n);
}
constexpr std::string_view to_string(Position p) {
  return name_in(kPositionNames, p);
}
constexpr std::string_view to_string(Routing r) {
  return name_in(kRoutingNames, r);
}

/// One layer of a non-transformer model, described by its costs per sample.
struct GenericLayer {
  std::string name;
  double params = 0;                    ///< parameters
  double forward_flops_per_sample = 0;  ///< FLOPs of the forward pass for one sample
  double activation_bytes_per_sample = 0;
  bool operator==(const GenericLayer&) const = default;
};

struct TransformerSpec {
  std::string name;  ///< preset name or "custom"
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t kv_heads = 0;  ///< 0: same as heads (multi-head attention)
  /// Width of one attention head; 0: hidden / heads. Qwen3, Gemma and GPT-OSS set it apart from the
  /// hidden size, so the query and output projections are hidden × heads·head_dim, not hidden × hidden.
  std::int64_t head_dim = 0;
  std::int64_t ffn_hidden = 0;  ///< 0: 4 * hidden
  std::int64_t vocab = 0;
  std::int64_t seq_len = 0;
  Mlp mlp = Mlp::gelu;
  /// SwiGLU with clamped inputs (GPT-OSS, HF `swiglu_limit`: gate ≤ limit, −limit ≤ up ≤ limit); 0: none.
  /// No FLOPs counted; the clamps run as passes of their own over the fc1 output (layer_ops.cpp).
  double swiglu_limit = 0;
  Norm norm = Norm::layernorm;
  Position position = Position::learned;
  bool bias = true;  ///< linear layers carry biases (GPT-2/3 yes, Llama no)
  bool tied_embeddings = false;
  // Mixture of experts: experts == 0 means dense.
  std::int64_t experts = 0;
  std::int64_t top_k = 0;
  double capacity_factor = 1.0;
  Routing routing = Routing::force_balanced;
  /// Routing::dropless: the busiest expert-parallel rank's token slots over the mean (>= 1).
  double imbalance = 1.0;
  std::int64_t expert_ffn_hidden = 0;  ///< 0: ffn_hidden
  /// Group-limited routing (DeepSeek-V2's device-limited, DeepSeek-V3's node-limited; HF n_group and
  /// topk_group): the experts in routing_groups equal groups of consecutive experts, a token's top_k taken
  /// from the routing_group_top_k groups that score highest (topologies/expert_dispatch.hpp, TokenRouting).
  /// 0: every expert may be picked.
  std::int64_t routing_groups = 0;
  std::int64_t routing_group_top_k = 0;
  /// Shared experts (DeepSeek-V2/V3): MLPs of the routed expert's width (mlp_width) that every token
  /// passes besides its top_k routed ones; split over tp like a dense MLP, not over ep.
  std::int64_t shared_experts = 0;
  /// The first k layers are dense MLPs of ffn_hidden (DeepSeek-V3's first_k_dense_replace: 3); the rest
  /// are MoE layers. 0: every layer is MoE (when experts > 0).
  std::int64_t dense_layers = 0;
  /// Of the layers after the dense first ones, every moe_layer_step-th is a MoE layer and the others dense
  /// MLPs of ffn_hidden: layer l ≥ dense_layers has experts when (l − dense_layers + 1) is a multiple of it
  /// (Llama 4 Maverick's interleave_moe_layer_step 2: layers 1, 3, 5, …). 1: every one.
  std::int64_t moe_layer_step = 1;
  /// Multi-token prediction (DeepSeek-V3, arXiv:2412.19437 Sec. 2.2; HF num_nextn_predict_layers): depth
  /// modules run one after another after the last layer, on the last pipeline stage. Module k takes the
  /// previous depth's hidden states and the embedding of the token k ahead (the model's own embedding),
  /// normalises each (two RMSNorms), projects their concatenation 2h → h, passes one transformer layer of
  /// this model (a MoE layer when it has experts) and the model's own output head behind a final norm of
  /// its own, with a loss of its own. 0: none.
  std::int64_t mtp_layers = 0;
  // Multi-head latent attention (MLA, DeepSeek-V2 Sec. 2.1): kv_lora_rank > 0 turns it on. Queries go
  // hidden → q_lora_rank → heads·(qk_nope + qk_rope) (hidden → heads·(qk_nope + qk_rope) directly when
  // q_lora_rank is 0); keys and values go hidden → kv_lora_rank + qk_rope (the rope part one key shared
  // by all heads) → heads·(qk_nope + v_head); scores are qk_nope + qk_rope wide, values v_head; the
  // output projection is heads·v_head → hidden. head_dim and kv_heads are unused under MLA.
  std::int64_t q_lora_rank = 0;
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
  /// Sliding-window attention (Mistral, Gemma, GPT-OSS): a windowed layer's query attends to the last
  /// sliding_window tokens, itself included (keys in (i − W, i]); 0: no window, every layer full.
  std::int64_t sliding_window = 0;
  /// Which layers are windowed: window_layers[l % size] (true: windowed, false: full attention), the
  /// pattern repeated from layer 0; empty: every layer, when sliding_window > 0. (HF `layer_types`.)
  std::vector<bool> window_layers;
  /// A learned logit per head joining every layer's softmax (GPT-OSS's attention sinks): `heads`
  /// parameters a layer, no matmul FLOPs.
  bool attention_sinks = false;
  /// An RMSNorm over each query and key head (head_dim wide) before the rotary embedding (Qwen3, GLM-4.5,
  /// OLMo 2: HF `Qwen3Attention.q_norm`/`k_norm`, GLM `use_qk_norm`): head_dim weights each for q and k per
  /// layer; a norm kernel each, forward and backward, over the rank's queries and keys.
  bool qk_norm = false;
  Attention attention = Attention::flash;
  bool causal = true;  ///< causal mask; the flash kernel skips masked blocks (see attention model)
  /// Dropout probability of the hidden states and attention probabilities (Megatron-LM's default 0.1);
  /// at 0 no dropout kernels run and no masks are written (Llama-family recipes).
  double dropout = 0.1;
  std::vector<GenericLayer> generic_layers;  ///< non-empty: a generic model, the transformer fields unused

  [[nodiscard]] bool is_mla() const { return kv_lora_rank > 0; }
  /// Key/value heads; MLA materialises one key and one value per query head.
  [[nodiscard]] std::int64_t kv_heads_or_heads() const {
    return kv_heads > 0 && !is_mla() ? kv_heads : heads;
  }
  [[nodiscard]] std::int64_t head_dim_or_default() const {
    return head_dim > 0 ? head_dim : (heads > 0 ? hidden / heads : 0);
  }
  /// Width of one head's query and key (the score's inner dimension): MLA qk_nope + qk_rope.
  [[nodiscard]] std::int64_t qk_head_dim() const {
    return is_mla() ? qk_nope_head_dim + qk_rope_head_dim : head_dim_or_default();
  }
  /// Width of one head's value (and of its attention output): MLA v_head_dim.
  [[nodiscard]] std::int64_t value_head_dim() const { return is_mla() ? v_head_dim : head_dim_or_default(); }
  /// Width of the attention output entering the output projection: heads · value_head_dim.
  [[nodiscard]] std::int64_t attention_out_width() const { return heads * value_head_dim(); }
  /// Width of the queries (and of the attention output): heads · head_dim, the hidden size by default.
  [[nodiscard]] std::int64_t query_width() const { return heads * head_dim_or_default(); }
  /// Width of the keys (and of the values): kv heads · head_dim.
  [[nodiscard]] std::int64_t kv_width() const { return kv_heads_or_heads() * head_dim_or_default(); }
  [[nodiscard]] std::int64_t ffn_hidden_or_default() const {
    return ffn_hidden > 0 ? ffn_hidden : 4 * hidden;
  }
  [[nodiscard]] bool is_moe() const { return experts > 0; }
  /// The token slots the busiest expert-parallel rank runs, over the balanced mean T·top_k/experts per
  /// expert: capacity_factor (force_balanced, capacity), imbalance (dropless). Expert GEMM rows, expert
  /// activations and the dispatch and combine all-to-alls scale by it.
  [[nodiscard]] double expert_load() const {
    return routing == Routing::dropless ? imbalance : capacity_factor;
  }
  /// A MoE model's layers with a dense MLP instead of experts among layers [first, first + count) (clamped
  /// to the model's): its dense first layers and, past them, those moe_layer_step does not make MoE. 0 for
  /// a dense model, whose layers are all alike.
  [[nodiscard]] std::int64_t dense_layers_in(std::int64_t first, std::int64_t count) const {
    if (!is_moe()) return 0;
    const std::int64_t a = std::clamp<std::int64_t>(first, 0, layers);
    const std::int64_t b = std::clamp<std::int64_t>(first + count, a, layers);
    // MoE layers below x: (x − d) / step of the layers from d on, d the dense first layers.
    const std::int64_t d = std::min(dense_layers, layers);
    const auto moe_below = [&](std::int64_t x) { return x <= d ? 0 : (x - d) / moe_layer_period(); };
    return (b - a) - (moe_below(b) - moe_below(a));
  }
  /// Whether layer `layer` of a MoE model has a dense MLP instead of experts (false for a dense model).
  [[nodiscard]] bool is_dense_layer(std::int64_t layer) const { return dense_layers_in(layer, 1) == 1; }
  /// The first layer with routed experts (dense_layers + moe_layer_step − 1); 0 for a dense model.
  [[nodiscard]] std::int64_t first_moe_layer() const {
    return is_moe() ? dense_layers + moe_layer_period() - 1 : 0;
  }
  /// Layers whose MLP is dense: a MoE model's dense first layers and those between its MoE layers (capped
  /// at layers), all of a dense one.
  [[nodiscard]] std::int64_t dense_layer_count() const {
    return is_moe() ? dense_layers_in(0, layers) : layers;
  }
  /// moe_layer_step as the layer arithmetic uses it: at least 1.
  [[nodiscard]] std::int64_t moe_layer_period() const { return moe_layer_step > 1 ? moe_layer_step : 1; }
  /// Layers whose MLP is routed experts.
  [[nodiscard]] std::int64_t moe_layer_count() const { return layers - dense_layer_count(); }
  /// One of the dense first layers of a MoE model as a model of its own: the same attention, a dense MLP
  /// of ffn_hidden. The per-layer cost functions price it by this spec.
  [[nodiscard]] TransformerSpec as_dense_layer() const {
    TransformerSpec d = *this;
    d.experts = 0;
    d.top_k = 0;
    d.shared_experts = 0;
    d.expert_ffn_hidden = 0;
    d.dense_layers = 0;
    d.moe_layer_step = 1;
    return d;
  }
  /// Layer `layer` attends over a sliding window shorter than the sequence (a window of seq_len or more
  /// is full attention: the one rule every windowed cost and layout check goes through).
  [[nodiscard]] bool is_windowed(std::int64_t layer) const {
    if (sliding_window <= 0 || sliding_window >= seq_len) return false;
    if (window_layers.empty()) return true;
    return window_layers[static_cast<std::size_t>(layer) % window_layers.size()];
  }
  [[nodiscard]] std::int64_t windowed_layer_count() const {
    std::int64_t n = 0;
    for (std::int64_t l = 0; l < layers; ++l) n += is_windowed(l) ? 1 : 0;
    return n;
  }
  /// The window of every layer: sliding_window when all layers are windowed (is_windowed), 0 when none is.
  /// A model that
  /// mixes both kinds has no single answer: its per-layer costs take as_attention_layer first
  /// (InternalError).
  [[nodiscard]] std::int64_t uniform_window() const;
  /// A layer of one attention kind as a model of its own: every layer windowed (sliding_window kept) or
  /// full (no window). The per-layer cost functions price a mixed model's layers by these specs.
  [[nodiscard]] TransformerSpec as_attention_layer(bool windowed) const {
    TransformerSpec d = *this;
    d.window_layers.clear();
    if (!windowed) d.sliding_window = 0;
    return d;
  }
  /// Width of one MLP a token passes through: an expert's (expert_ffn_hidden, else ffn_hidden) under MoE.
  [[nodiscard]] std::int64_t mlp_width() const {
    return is_moe() && expert_ffn_hidden > 0 ? expert_ffn_hidden : ffn_hidden_or_default();
  }
  bool operator==(const TransformerSpec&) const = default;
};

}  // namespace trainsim::model
