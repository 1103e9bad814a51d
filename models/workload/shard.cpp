#include "models/workload/shard.hpp"

#include <string>
#include <vector>

#include "models/workload/diagnostic_text.hpp"
#include "models/workload/parameters.hpp"
#include "sim/error.hpp"

namespace trainsim::model {

Shard shard_of(const ParallelPlan& plan, topo::Precision precision) {
  Shard s;
  s.micro_batch = plan.micro_batch;
  s.tp = plan.tp;
  s.sequence_parallel = plan.sequence_parallel;
  s.cp = plan.cp;
  s.ep = plan.ep;
  s.etp = plan.expert_tensor_parallel();
  s.precision = precision;
  s.recompute = plan.recompute;
  s.recompute_modules = plan.recompute_modules;
  s.offload_modules = plan.offload_modules;
  s.fused_elementwise = plan.framework.fused_elementwise;
  s.unpadded_attention = plan.framework.unpadded_attention;
  s.cp_kv_all_gather = plan.framework.cp_kv_all_gather;
  s.moe_all_gather = plan.framework.moe_dispatcher == MoeDispatcher::all_gather;
  s.moe_token_dispatch = token_based(plan.framework.moe_dispatcher);
  s.fused_grouped_mlp = plan.framework.fused_grouped_mlp;
  s.moe_router_kernels = moe_router_kernels(plan.framework);
  return s;
}

Shard shard_of(const ParallelPlan& plan, const TrainingSpec& training) {
  Shard s = shard_of(plan, training.precision);
  s.fp8_recipe = training.fp8_recipe_or_default();
  return s;
}

void check_shard(const TransformerSpec& spec, const Shard& shard) {
  check_transformer_spec(spec);
  std::vector<Diagnostic> problems;
  auto require = [&](bool ok, const char* key, const auto& message) {
    if (!ok)
      problems.push_back(Diagnostic{"", 0, 0, std::string("parallelism.") + key, diagnostic_text(message)});
  };
  auto divides = [](std::int64_t n, std::int64_t d) { return d > 0 && n % d == 0; };
  require(shard.micro_batch >= 1, "micro_batch", "must be at least 1");
  require(shard.tp >= 1, "tp", "must be at least 1");
  require(shard.cp >= 1, "cp", "must be at least 1");
  require(shard.ep >= 1, "ep", "must be at least 1");
  if (!problems.empty()) throw InputError(std::move(problems));
  if (!spec.generic_layers.empty()) return;
  require(divides(spec.heads, shard.tp), "tp", [&] {
    return "tp " + std::to_string(shard.tp) + " does not divide heads " + std::to_string(spec.heads);
  });
  require(divides(spec.ffn_hidden_or_default(), shard.tp), "tp", [&] {
    return "tp " + std::to_string(shard.tp) + " does not divide ffn_hidden " +
           std::to_string(spec.ffn_hidden_or_default());
  });
  require(divides(spec.seq_len, shard.cp), "cp", [&] {
    return "cp " + std::to_string(shard.cp) + " does not divide seq_len " + std::to_string(spec.seq_len);
  });
  if (spec.is_moe() && spec.expert_ffn_hidden > 0) {
    require(divides(spec.expert_ffn_hidden, shard.expert_tp()), "expert_tp", [&] {
      return "the experts' tensor parallelism " + std::to_string(shard.expert_tp()) +
             " does not divide expert_ffn_hidden " + std::to_string(spec.expert_ffn_hidden);
    });
  }
  require(divides(shard.tp, shard.expert_tp()), "expert_tp", [&] {
    return "expert_tp " + std::to_string(shard.expert_tp()) + " does not divide tp " +
           std::to_string(shard.tp);
  });
  if (spec.is_moe()) {
    require(divides(spec.experts, shard.ep), "ep", [&] {
      return "ep " + std::to_string(shard.ep) + " does not divide experts " + std::to_string(spec.experts);
    });
  }
  if (!problems.empty()) throw InputError(std::move(problems));
}

}  // namespace trainsim::model
