#pragma once
// FLOPs of a training step, counted the way MFU and HFU are reported (Korthikanti et al. 2022, Sec. 6,
// eqs. (7)/(8); Narayanan et al. 2021, Appendix): only matmul FLOPs (2·m·n·k each), forward + backward
// with backward = 2 × forward (dgrad + wgrad), attention scores and context counted over the full s×s
// square whatever the mask, LM head included, norms/softmax/biases excluded.
//
// Forward matmul FLOPs of one sequence of s tokens (h hidden, kv·d key/value width, f ffn, v vocab):
// (MLA and the dense first layers of a MoE model: see below)
//   per layer  2·s·h·(h + 2·kv·d)   QKV
//            + 4·s²·h                scores QKᵀ and context AV
//            + 2·s·h·h               output projection
//            + 2·s·h·f·m             MLP, m = 2 (gelu) or 3 (swiglu); MoE: top_k experts of
//                                    expert_ffn_hidden, plus the router 2·s·h·E
//   head       2·s·h·v
// Multi-head latent attention replaces QKV and the output projection by its projections, 2·s·in·out each
// (models/workload/attention_projections.hpp: q down/up or q, kv down to c + r, kv up to a·(n + v), out
// a·v → h), and the attention core by 2·s²·a·(n + r) scores + 2·s²·a·v context. Shared experts add
// shared_experts MLPs of the expert width to the top_k routed ones. A MoE model's first dense_layers
// layers have the dense MLP of ffn_hidden (no router). A sliding-window layer (window W < s) counts its
// attention core over s·W scores per head instead of s² (models/workload/attention.hpp).
// For GPT (kv = a, f = 4h, gelu) the step total is Korthikanti eq. (7):
//   model FLOPs = 72·B·L·s·h²·(1 + s/(6h) + v/(12·h·L)).
// Hardware FLOPs add what is computed again:
//   recompute full       + one forward of every layer (not the LM head)
//   recompute selective  + the forward of the attention core (QKᵀ, AV: 4·s²·h per layer) under the
//                          standard kernel; nothing under flash (it keeps no score tensor to drop)
//   attention flash      + the score matmul QKᵀ recomputed in backward (2·s²·h per layer)
// Note: Korthikanti eq. (8) writes selective recompute as 72·B·L·s·h²·(1 + s/(3h) + v/(12hL)), i.e.
// + 12·s²·h per layer — three times the forward it recomputes (their HFU figures use it; see
// korthikanti_selective_hardware_flops). We count the FLOPs executed: + 4·s²·h.
#include <cstdint>

#include "models/spec/parallel_plan.hpp"
#include "models/spec/transformer_spec.hpp"

namespace trainsim::model {

/// Forward matmul FLOPs of one sequence by part (model count, full attention square).
struct ForwardFlops {
  double layer_dense = 0;        ///< one (MoE, for a MoE model) layer's projections and MLP/experts/router
  double dense_layer_dense = 0;  ///< the same for one of a MoE model's dense first layers
  double layer_attention = 0;    ///< one layer's QKᵀ + AV, 4·s²·h (MLA: 2·s²·a·(n + r + v))
  double windowed_layer_attention = 0;  ///< the same for a sliding-window layer: 4·s·W·h
  std::int64_t windowed_layers = 0;     ///< layers with a window shorter than s, counted in `layers`
  double head = 0;                      ///< LM head 2·s·h·v
  std::int64_t layers = 0;
  std::int64_t dense_layers = 0;  ///< a MoE model's dense first layers, counted in `layers`
  double generic = 0;             ///< generic models: the sum of forward_flops_per_sample (others 0)
  /// Multi-token prediction: each module's layer (like the model's last), its 2h → h projection
  /// (2·s·2h·h) and the output head again (head); `mtp_modules` of them.
  std::int64_t mtp_modules = 0;
  double mtp_layer = 0;       ///< the module's layer, projections, MLP and attention core
  double mtp_attention = 0;   ///< the attention core's part of mtp_layer
  double mtp_projection = 0;  ///< 4·s·h²
  [[nodiscard]] double mtp_total() const {
    return static_cast<double>(mtp_modules) * (mtp_layer + mtp_projection + head);
  }

  /// One MoE layer of a MoE model, else one layer.
  [[nodiscard]] double per_layer() const { return layer_dense + layer_attention; }
  /// Every layer's attention core, the windowed ones at their own size.
  [[nodiscard]] double attention_total() const {
    const auto windowed = static_cast<double>(windowed_layers);
    return (static_cast<double>(layers) - windowed) * layer_attention + windowed * windowed_layer_attention;
  }
  /// Every transformer layer, the dense first layers and the windowed ones at their own size.
  [[nodiscard]] double layers_total() const {
    const auto dense = static_cast<double>(dense_layers);
    const auto windowed = static_cast<double>(windowed_layers);
    return (static_cast<double>(layers) - dense) * per_layer() +
           dense * (dense_layer_dense + layer_attention) -
           windowed * (layer_attention - windowed_layer_attention);
  }
  [[nodiscard]] double total() const { return generic + layers_total() + head + mtp_total(); }
};

/// Forward FLOPs of one sequence of spec.seq_len tokens, by part.
[[nodiscard]] ForwardFlops forward_flops_per_sequence(const TransformerSpec& spec);

/// Model FLOPs of one optimizer step over `sequences` sequences: 3 × forward (no recompute).
[[nodiscard]] double model_flops_per_step(const TransformerSpec& spec, double sequences);

/// Model FLOPs per trained token: model_flops_per_step(spec, 1) / seq_len (generic: per sample).
[[nodiscard]] double model_flops_per_token(const TransformerSpec& spec);

/// Forward FLOPs per sequence of the matmuls that op-level recompute runs again in one layer: every other
/// one of q, k, v, o, w1, (w3,) w2, i.e. k, o and the MLP's second matrix.
[[nodiscard]] double op_recomputed_matmul_flops(const TransformerSpec& spec);

/// FLOPs executed again per sequence beyond the model count, for `recompute` and spec.attention.
[[nodiscard]] double recompute_flops_per_sequence(const TransformerSpec& spec, Recompute recompute);

/// Hardware FLOPs of one step: model FLOPs + recomputed FLOPs (rules above).
[[nodiscard]] double hardware_flops_per_step(const TransformerSpec& spec, double sequences,
                                             Recompute recompute);

/// Korthikanti et al. 2022 eq. (8) as printed (selective recompute, GPT form):
/// 72·B·L·s·h²·(1 + s/(3h) + v/(12hL)). For comparing with the paper's HFU figures only.
[[nodiscard]] double korthikanti_selective_hardware_flops(const TransformerSpec& spec, double sequences);

}  // namespace trainsim::model
