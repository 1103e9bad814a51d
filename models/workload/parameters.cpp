#include "models/workload/parameters.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "models/workload/attention_projections.hpp"
#include "models/workload/diagnostic_text.hpp"
#include "sim/error.hpp"

namespace trainsim::model {

namespace {

double as_double(std::int64_t v) {
  return static_cast<double>(v);
}

// Weights (+ biases) of one MLP of width f: gelu has fc1 (h·f) and fc2 (f·h); swiglu has gate, up and down.
double mlp_parameters(const TransformerSpec& spec, double f) {
  const double h = as_double(spec.hidden);
  const double matrices = spec.mlp == Mlp::swiglu ? 3.0 : 2.0;
  double n = matrices * h * f;
  if (spec.bias) n += (matrices - 1.0) * f + h;
  return n;
}

double norm_parameters(const TransformerSpec& spec) {
  const double h = as_double(spec.hidden);
  return spec.norm == Norm::layernorm ? 2.0 * h : h;
}

}  // namespace

void check_transformer_spec(const TransformerSpec& spec) {
  if (!spec.generic_layers.empty()) return;
  std::vector<Diagnostic> problems;
  auto require = [&](bool ok, const char* key, const auto& message) {
    if (!ok) problems.push_back(Diagnostic{"", 0, 0, std::string("model.") + key, diagnostic_text(message)});
  };
  require(spec.layers > 0, "layers",
          [&] { return "must be a positive count, got " + std::to_string(spec.layers); });
  require(spec.hidden > 0, "hidden",
          [&] { return "must be a positive count, got " + std::to_string(spec.hidden); });
  require(spec.heads > 0, "heads",
          [&] { return "must be a positive count, got " + std::to_string(spec.heads); });
  require(spec.vocab > 0, "vocab",
          [&] { return "must be a positive count, got " + std::to_string(spec.vocab); });
  require(spec.seq_len > 0, "seq_len",
          [&] { return "must be a positive count, got " + std::to_string(spec.seq_len); });
  require(spec.kv_heads >= 0, "kv_heads", "must not be negative");
  require(spec.ffn_hidden >= 0, "ffn_hidden", "must not be negative");
  require(spec.head_dim >= 0, "head_dim", "must not be negative");
  if (spec.heads > 0 && spec.hidden > 0 && spec.head_dim == 0 && !spec.is_mla()) {
    require(spec.hidden % spec.heads == 0, "heads", [&] {
      return "hidden " + std::to_string(spec.hidden) + " is not divisible by heads " +
             std::to_string(spec.heads) + " (set head_dim when the heads are not hidden / heads wide)";
    });
  }
  if (spec.heads > 0 && spec.kv_heads > 0) {
    require(spec.heads % spec.kv_heads == 0, "kv_heads", [&] {
      return "heads " + std::to_string(spec.heads) + " is not divisible by kv_heads " +
             std::to_string(spec.kv_heads);
    });
  }
  if (spec.is_moe()) {
    require(spec.top_k >= 1 && spec.top_k <= spec.experts, "top_k", [&] {
      return "must be between 1 and experts (" + std::to_string(spec.experts) + "), got " +
             std::to_string(spec.top_k);
    });
    require(spec.capacity_factor > 0, "capacity_factor", "must be positive");
    require(spec.imbalance >= 1, "imbalance", "must be at least 1 (the busiest rank over the mean)");
    require(spec.expert_ffn_hidden >= 0, "expert_ffn_hidden", "must not be negative");
  }
  require(spec.shared_experts >= 0 && (spec.shared_experts == 0 || spec.is_moe()), "shared_experts", [&] {
    return "must be 0 on a dense model and not negative, got " + std::to_string(spec.shared_experts);
  });
  require(spec.dense_layers >= 0 && (spec.dense_layers == 0 || spec.is_moe()), "dense_layers", [&] {
    return "must be 0 on a dense model and not negative, got " + std::to_string(spec.dense_layers);
  });
  require(spec.moe_layer_step >= 1 && (spec.moe_layer_step == 1 || spec.is_moe()), "moe_layer_step", [&] {
    return "must be 1 on a dense model and at least 1, got " + std::to_string(spec.moe_layer_step);
  });
  require(spec.mtp_layers >= 0, "mtp_layers",
          [&] { return "must not be negative, got " + std::to_string(spec.mtp_layers); });
  require(spec.q_lora_rank >= 0 && (spec.q_lora_rank == 0 || spec.is_mla()), "q_lora_rank",
          "needs kv_lora_rank (multi-head latent attention) and must not be negative");
  if (spec.is_mla()) {
    require(spec.qk_nope_head_dim > 0, "qk_nope_head_dim", "must be positive under kv_lora_rank");
    require(spec.qk_rope_head_dim > 0, "qk_rope_head_dim", "must be positive under kv_lora_rank");
    require(spec.v_head_dim > 0, "v_head_dim", "must be positive under kv_lora_rank");
  }
  if (!problems.empty()) throw InputError(std::move(problems));
}

ParameterBreakdown parameter_breakdown(const TransformerSpec& spec) {
  check_transformer_spec(spec);
  ParameterBreakdown p;
  if (!spec.generic_layers.empty()) {
    for (const GenericLayer& layer : spec.generic_layers) p.generic_total += layer.params;
    return p;
  }
  const double h = as_double(spec.hidden);
  const double v = as_double(spec.vocab);

  p.layers = spec.layers;
  p.embedding = v * h;
  p.position = spec.position == Position::learned ? as_double(spec.seq_len) * h : 0.0;
  for (const Projection& x : attention_projections(spec, 1)) {
    p.layer_attention += as_double(x.in) * as_double(x.out) + as_double(x.norm) + as_double(x.bias);
  }
  if (spec.attention_sinks) p.layer_attention += as_double(spec.heads);  // one sink logit per head
  if (spec.qk_norm)
    p.layer_attention += 2.0 * as_double(spec.qk_head_dim());  // q_norm's and k_norm's weights
  if (spec.is_moe()) {
    const double expert = mlp_parameters(spec, as_double(spec.mlp_width()));
    p.layer_mlp = as_double(spec.experts) * expert;
    p.layer_shared_mlp = as_double(spec.shared_experts) * expert;
    p.layer_router = h * as_double(spec.experts);
    p.dense_layers = spec.dense_layer_count();
    p.dense_layer_mlp = mlp_parameters(spec, as_double(spec.ffn_hidden_or_default()));
  } else {
    p.layer_mlp = mlp_parameters(spec, as_double(spec.ffn_hidden_or_default()));
  }
  p.layer_norms = 2.0 * norm_parameters(spec);
  p.final_norm = norm_parameters(spec);
  p.lm_head = spec.tied_embeddings ? 0.0 : v * h;
  p.mtp_modules = spec.mtp_layers;
  if (spec.mtp_layers > 0) p.mtp_extra = 3.0 * norm_parameters(spec) + 2.0 * h * h + (spec.bias ? h : 0.0);
  return p;
}

double parameter_count(const TransformerSpec& spec) {
  return parameter_breakdown(spec).total();
}

double active_parameter_count(const TransformerSpec& spec) {
  const ParameterBreakdown p = parameter_breakdown(spec);
  if (!spec.is_moe()) return p.total();
  // Shared experts, the router and the dense first layers are all passed; of the routed experts top_k (in
  // the multi-token-prediction modules' layers too).
  const double inactive_per_layer = p.layer_mlp * (1.0 - as_double(spec.top_k) / as_double(spec.experts));
  return p.total() - as_double(p.moe_layers() + p.mtp_modules) * inactive_per_layer;
}

double layer_parameter_count(const TransformerSpec& spec, std::int64_t index) {
  if (!spec.generic_layers.empty()) {
    if (index < 0 || index >= static_cast<std::int64_t>(spec.generic_layers.size())) {
      throw InputError("generic layer index " + std::to_string(index) + " is out of range (model has " +
                       std::to_string(spec.generic_layers.size()) + " layers)");
    }
    return spec.generic_layers[static_cast<std::size_t>(index)].params;
  }
  const ParameterBreakdown p = parameter_breakdown(spec);
  return spec.is_dense_layer(index) ? p.dense_per_layer() : p.per_layer();
}

double layer_expert_parameter_count(const TransformerSpec& spec) {
  if (!spec.generic_layers.empty() || !spec.is_moe()) return 0.0;
  return parameter_breakdown(spec).layer_mlp;
}

double stage_parameter_count(const TransformerSpec& spec, std::int64_t layers_on_stage, bool first_stage,
                             bool last_stage, std::int64_t first_layer) {
  if (layers_on_stage < 0) throw InputError("a pipeline stage cannot hold a negative number of layers");
  if (!spec.generic_layers.empty()) {
    double n = 0;
    for (std::int64_t i = first_layer; i < first_layer + layers_on_stage; ++i) {
      n += layer_parameter_count(spec, i);
    }
    return n;
  }
  const ParameterBreakdown p = parameter_breakdown(spec);
  // The dense layers among [first_layer, first_layer + layers_on_stage).
  const std::int64_t dense = spec.dense_layers_in(first_layer, layers_on_stage);
  double n = as_double(layers_on_stage - dense) * p.per_layer() + as_double(dense) * p.dense_per_layer();
  if (first_stage) n += p.embedding + p.position;
  if (last_stage) {
    n += p.final_norm + p.lm_head + p.mtp_total();
    // Tied embeddings, or multi-token prediction (which embeds the tokens ahead), across stages: the last
    // stage keeps its own copy of the embedding, synchronised by an all-reduce.
    if ((spec.tied_embeddings || spec.mtp_layers > 0) && !first_stage) n += p.embedding;
  }
  return n;
}

}  // namespace trainsim::model
