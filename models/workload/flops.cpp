#include "models/workload/flops.hpp"

#include "models/workload/attention_projections.hpp"
#include "models/workload/parameters.hpp"
#include "sim/error.hpp"

namespace trainsim::model {

namespace {

double as_double(std::int64_t v) {
  return static_cast<double>(v);
}

double mlp_matrices(const TransformerSpec& spec) {
  return spec.mlp == Mlp::swiglu ? 3.0 : 2.0;
}

// Forward FLOPs of one sequence through the attention block's projections: 2·s·in·out each.
double projection_flops(const TransformerSpec& spec, double s) {
  double f = 0;
  for (const Projection& x : attention_projections(spec, 1)) {
    f += 2.0 * s * as_double(x.in) * as_double(x.out);
  }
  return f;
}

}  // namespace

ForwardFlops forward_flops_per_sequence(const TransformerSpec& spec) {
  check_transformer_spec(spec);
  ForwardFlops f;
  if (!spec.generic_layers.empty()) {
    for (const GenericLayer& layer : spec.generic_layers) f.generic += layer.forward_flops_per_sample;
    return f;
  }
  const double s = as_double(spec.seq_len);
  const double h = as_double(spec.hidden);
  const double dense_mlp = 2.0 * s * h * as_double(spec.ffn_hidden_or_default()) * mlp_matrices(spec);
  double mlp = dense_mlp;
  if (spec.is_moe()) {
    // top_k routed experts and the shared experts, each an MLP of the expert width, and the router.
    const double slots = as_double(spec.top_k + spec.shared_experts);
    mlp = slots * 2.0 * s * h * as_double(spec.mlp_width()) * mlp_matrices(spec) +
          2.0 * s * h * as_double(spec.experts);
    f.dense_layers = spec.dense_layer_count();
  }
  const double projections = projection_flops(spec, s);
  f.layers = spec.layers;
  f.layer_dense = projections + mlp;
  f.dense_layer_dense = projections + dense_mlp;
  // Scores QKᵀ over the query/key width and context AV over the value width, per head.
  const double per_key =
      2.0 * s * as_double(spec.heads) * as_double(spec.qk_head_dim() + spec.value_head_dim());
  f.layer_attention = per_key * s;
  f.windowed_layers = spec.windowed_layer_count();
  if (f.windowed_layers > 0) f.windowed_layer_attention = per_key * as_double(spec.sliding_window);
  f.head = 2.0 * s * h * as_double(spec.vocab);
  if (spec.mtp_layers > 0) {
    f.mtp_modules = spec.mtp_layers;
    const bool windowed = spec.is_windowed(spec.layers - 1);
    f.mtp_attention = windowed ? f.windowed_layer_attention : f.layer_attention;
    f.mtp_layer = f.layer_dense + f.mtp_attention;
    f.mtp_projection = 2.0 * s * 2.0 * h * h;
  }
  return f;
}

double model_flops_per_step(const TransformerSpec& spec, double sequences) {
  if (sequences < 0) throw InputError("the number of sequences per step cannot be negative");
  return 3.0 * forward_flops_per_sequence(spec).total() * sequences;
}

double model_flops_per_token(const TransformerSpec& spec) {
  const double per_sequence = model_flops_per_step(spec, 1.0);
  return spec.generic_layers.empty() ? per_sequence / as_double(spec.seq_len) : per_sequence;
}

double op_recomputed_matmul_flops(const TransformerSpec& spec) {
  check_transformer_spec(spec);
  if (!spec.generic_layers.empty()) return 0.0;
  const double s = as_double(spec.seq_len);
  const double h = as_double(spec.hidden);
  // k (MLA: the kv up-projection), o, and the MLP's second matrix (w3 of a SwiGLU, fc2 of a GELU MLP; per
  // routed and shared slot for MoE).
  const double k = spec.is_mla() ? 2.0 * s * as_double(spec.kv_lora_rank) * as_double(spec.heads) *
                                       as_double(spec.qk_nope_head_dim + spec.v_head_dim)
                                 : 2.0 * s * h * as_double(spec.kv_width());
  const double slots_per_token = spec.is_moe() ? as_double(spec.top_k + spec.shared_experts) : 1.0;
  const double mlp_matrix = slots_per_token * 2.0 * s * h * as_double(spec.mlp_width());
  return k + 2.0 * s * as_double(spec.attention_out_width()) * h + mlp_matrix;
}

double recompute_flops_per_sequence(const TransformerSpec& spec, Recompute recompute) {
  const ForwardFlops f = forward_flops_per_sequence(spec);
  if (!spec.generic_layers.empty()) return recompute == Recompute::full ? f.generic : 0.0;
  const double layers = as_double(f.layers);
  const bool flash = is_fused(spec.attention);
  // The fused kernel's backward recomputes QKᵀ: the score part of the forward score + context work, half of
  // it (MLA: qk / (qk + v) of it). The standard kernels recompute the whole square, windowed or not.
  const double qk = as_double(spec.qk_head_dim());
  const double score_share = qk / (qk + as_double(spec.value_head_dim()));
  // The multi-token-prediction modules' layers are recomputed as the model's own are.
  const auto mtp = static_cast<double>(f.mtp_modules);
  const double flash_scores = flash ? score_share * (f.attention_total() + mtp * f.mtp_attention) : 0.0;
  switch (recompute) {
    case Recompute::full:
      return f.layers_total() + mtp * f.mtp_layer + flash_scores;  // the dense first layers at their own size
    case Recompute::op: {
      const auto dense = as_double(f.dense_layers);
      const double op = (layers - dense) * op_recomputed_matmul_flops(spec) +
                        (dense > 0 ? dense * op_recomputed_matmul_flops(spec.as_dense_layer()) : 0.0);
      return op + mtp * op_recomputed_matmul_flops(spec) +
             (layers + mtp) * (flash ? 0.0 : f.layer_attention) + flash_scores;
    }
    case Recompute::selective:
      return flash ? flash_scores : (layers + mtp) * f.layer_attention;
    case Recompute::none:
      return flash_scores;
  }
  return flash_scores;
}

double hardware_flops_per_step(const TransformerSpec& spec, double sequences, Recompute recompute) {
  return model_flops_per_step(spec, sequences) + recompute_flops_per_sequence(spec, recompute) * sequences;
}

double korthikanti_selective_hardware_flops(const TransformerSpec& spec, double sequences) {
  check_transformer_spec(spec);
  if (!spec.generic_layers.empty()) throw InputError("Korthikanti eq. (8) applies to transformers only");
  const double l = as_double(spec.layers);
  const double s = as_double(spec.seq_len);
  const double h = as_double(spec.hidden);
  const double v = as_double(spec.vocab);
  return 72.0 * sequences * l * s * h * h * (1.0 + s / (3.0 * h) + v / (12.0 * h * l));
}

}  // namespace trainsim::model
