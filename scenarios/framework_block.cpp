#include "scenarios/framework_block.hpp"

#include <utility>
#include <vector>

#include "scenarios/block_fields.hpp"
#include "scenarios/quantity.hpp"

namespace trainsim::scenario {
namespace {

// Gradients are reduced in a floating-point type of at least 16 bits.
constexpr EnumNames<topo::Precision, 3> kReduceDtypeNames{
    {{"fp32", topo::Precision::fp32}, {"bf16", topo::Precision::bf16}, {"fp16", topo::Precision::fp16}}};

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& entry : model::kFrameworkPresetNames) names.emplace_back(entry.name);
  return names;
}

std::string yes_no(bool b) {
  return b ? "true" : "false";
}

}  // namespace

void read_framework_block(Diagnostics& d, const YamlValue& v, model::ParallelPlan& plan,
                          bool overlap_grad_reduce_given) {
  const std::string path = "framework";
  const YamlValue* preset_node = v.is_scalar() ? &v : nullptr;
  std::optional<MapReader> r;
  if (!v.is_scalar()) {
    r.emplace(d, v, path,
              std::vector<std::string>{"preset",
                                       "tp_comm_overlap",
                                       "tp_comm_overlap_slowdown",
                                       "overlap_param_gather",
                                       "overlap_grad_reduce",
                                       "ep_comm_overlap",
                                       "moe_dispatcher",
                                       "blocking_p2p",
                                       "prefetch",
                                       "prefetch_bucket_params",
                                       "reshard_after_forward",
                                       "gathers_per_layer",
                                       "gather_per_tensor",
                                       "synchronous_collectives",
                                       "gather_host",
                                       "collective_host_per_rank",
                                       "grad_reduce_dtype",
                                       "launch_overhead",
                                       "cuda_graphs",
                                       "fused_elementwise",
                                       "unpadded_attention",
                                       "cp_kv_all_gather",
                                       "gradient_staging"});
    if (!r->valid()) return;
    preset_node = r->get("preset");
  }
  model::FrameworkPreset preset = model::unnamed_framework_preset(plan);
  if (preset_node != nullptr) {
    const std::string preset_path = v.is_scalar() ? path : path + ".preset";
    const auto i = read_choice(d, *preset_node, preset_path, preset_names());
    if (!i) return;
    preset = model::kFrameworkPresetNames[*i].value;
  }
  const double reserve = plan.framework.memory_reserve;
  model::Framework& f = plan.framework;
  f = model::framework_preset(preset);
  f.memory_reserve = reserve;
  if (!overlap_grad_reduce_given) plan.overlap_grad_reduce = model::preset_overlaps_grad_reduce(preset);
  if (!r) return;
  r->boolean("tp_comm_overlap", f.tp_comm_overlap);
  r->number("tp_comm_overlap_slowdown", f.tp_comm_overlap_slowdown, 0, 1);
  r->boolean("overlap_param_gather", f.overlap_param_gather);
  r->boolean("ep_comm_overlap", f.ep_comm_overlap);
  r->choice("moe_dispatcher", f.moe_dispatcher, model::kMoeDispatcherNames);
  if (r->has("overlap_grad_reduce") && !overlap_grad_reduce_given)
    r->boolean("overlap_grad_reduce", plan.overlap_grad_reduce);
  r->boolean("blocking_p2p", f.blocking_p2p);
  r->count("prefetch", f.prefetch, 0, 1e4);
  r->number("prefetch_bucket_params", f.prefetch_bucket_params, 0, 1e15);
  r->boolean("reshard_after_forward", f.reshard_after_forward);
  r->count("gathers_per_layer", f.gathers_per_layer, 1, 1e3);
  r->boolean("gather_per_tensor", f.gather_per_tensor);
  r->boolean("synchronous_collectives", f.synchronous_collectives);
  r->quantity("gather_host", f.gather_host_s, Dimension::seconds, Bound::non_negative);
  r->quantity("collective_host_per_rank", f.collective_host_per_rank_s, Dimension::seconds,
              Bound::non_negative);
  r->quantity("launch_overhead", f.launch_overhead_s, Dimension::seconds, Bound::non_negative);
  r->boolean("cuda_graphs", f.cuda_graphs);
  r->boolean("fused_elementwise", f.fused_elementwise);
  r->boolean("unpadded_attention", f.unpadded_attention);
  r->boolean("cp_kv_all_gather", f.cp_kv_all_gather);
  r->choice("gradient_staging", f.gradient_staging, model::kGradientStagingNames);
  if (r->has("grad_reduce_dtype")) {
    topo::Precision p = topo::Precision::fp32;
    r->choice("grad_reduce_dtype", p, kReduceDtypeNames);
    f.grad_reduce_dtype = p;
  }
}

void read_memory_block(Diagnostics& d, const YamlValue& v, model::ParallelPlan& plan) {
  MapReader r(d, v, "memory", field_keys(memory_fields()));
  if (!r.valid()) return;
  read_fields(r, memory_fields(), plan.framework);
}

std::string framework_to_yaml(const model::ParallelPlan& plan) {
  const model::Framework& f = plan.framework;
  std::string out =
      "framework:\n  preset: " + std::string(model::to_string(f.preset)) +
      "\n  tp_comm_overlap: " + yes_no(f.tp_comm_overlap) +
      "\n  tp_comm_overlap_slowdown: " + format_number(f.tp_comm_overlap_slowdown) +
      "\n  overlap_param_gather: " + yes_no(f.overlap_param_gather) +
      "\n  ep_comm_overlap: " + yes_no(f.ep_comm_overlap) +
      "\n  moe_dispatcher: " + std::string(model::to_string(f.moe_dispatcher)) +
      "\n  blocking_p2p: " + yes_no(f.blocking_p2p) + "\n  prefetch: " + std::to_string(f.prefetch) +
      "\n  prefetch_bucket_params: " + format_number(f.prefetch_bucket_params) +
      "\n  reshard_after_forward: " + yes_no(f.reshard_after_forward) +
      "\n  gathers_per_layer: " + std::to_string(f.gathers_per_layer) +
      "\n  gather_per_tensor: " + yes_no(f.gather_per_tensor) +
      "\n  synchronous_collectives: " + yes_no(f.synchronous_collectives) + "\n  gather_host: \"" +
      format_quantity(f.gather_host_s, Dimension::seconds) + "\"\n  collective_host_per_rank: \"" +
      format_quantity(f.collective_host_per_rank_s, Dimension::seconds) + "\"" + "\n  launch_overhead: \"" +
      format_quantity(f.launch_overhead_s, Dimension::seconds) +
      "\"\n  cuda_graphs: " + yes_no(f.cuda_graphs) +
      "\n  fused_elementwise: " + yes_no(f.fused_elementwise) +
      "\n  unpadded_attention: " + yes_no(f.unpadded_attention) +
      "\n  cp_kv_all_gather: " + yes_no(f.cp_kv_all_gather) +
      "\n  gradient_staging: " + std::string(model::to_string(f.gradient_staging)) + "\n";
  if (f.grad_reduce_dtype) {
    out += "  grad_reduce_dtype: " + std::string(name_in(kReduceDtypeNames, *f.grad_reduce_dtype)) + "\n";
  }
  out += "memory:\n" + block_fields(memory_fields(), f, "  ");
  return out;
}

}  // namespace trainsim::scenario
