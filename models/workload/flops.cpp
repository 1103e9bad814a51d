#include "models/workload/flops.hpp"

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
  const double q_width = as_double(spec.query_width());
  const double kv_width = as_double(spec.kv_width());
  double mlp = 0;
  if (spec.is_moe()) {
    mlp = as_double(spec.top_k) * 2.0 * s * h * as_double(spec.mlp_width()) * mlp_matrices(spec) +
          2.0 * s * h * as_double(spec.experts);
  } else {
    mlp = 2.0 * s * h * as_double(spec.ffn_hidden_or_default()) * mlp_matrices(spec);
  }
  f.layers = spec.layers;
  f.layer_dense = 2.0 * s * h * (q_width + 2.0 * kv_width) + 2.0 * s * q_width * h + mlp;
  f.layer_attention = 4.0 * s * s * q_width;
  f.head = 2.0 * s * h * as_double(spec.vocab);
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
  const double kv_width = as_double(spec.kv_width());
  // k, o, and the MLP's second matrix (w3 of a SwiGLU, fc2 of a GELU MLP; per routed slot for MoE).
  const double slots_per_token = spec.is_moe() ? as_double(spec.top_k) : 1.0;
  const double mlp_matrix = slots_per_token * 2.0 * s * h * as_double(spec.mlp_width());
  return 2.0 * s * h * kv_width + 2.0 * s * as_double(spec.query_width()) * h + mlp_matrix;
}

double recompute_flops_per_sequence(const TransformerSpec& spec, Recompute recompute) {
  const ForwardFlops f = forward_flops_per_sequence(spec);
  if (!spec.generic_layers.empty()) return recompute == Recompute::full ? f.generic : 0.0;
  const double layers = as_double(f.layers);
  const bool flash = is_fused(spec.attention);
  // The fused kernel's backward recomputes QKᵀ: half of the forward score + context work.
  const double flash_scores = flash ? 0.5 * layers * f.layer_attention : 0.0;
  switch (recompute) {
    case Recompute::full:
      return layers * f.per_layer() + flash_scores;
    case Recompute::op:
      return layers * (op_recomputed_matmul_flops(spec) + (flash ? 0.0 : f.layer_attention)) + flash_scores;
    case Recompute::selective:
      return flash ? flash_scores : layers * f.layer_attention;
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
