#include "scenarios/framework_choice.hpp"

#include <fmt/format.h>

#include "models/workload/attention_kernel.hpp"
#include "scenarios/framework_block.hpp"
#include "scenarios/yaml_tree.hpp"

namespace trainsim::scenario {

void choose_unnamed_framework(model::ParallelPlan& plan) {
  model::Framework& f = plan.framework;
  const model::FrameworkPreset preset = model::unnamed_framework_preset(plan);
  if (preset == f.preset) return;
  model::Framework chosen = model::framework_preset(preset);
  chosen.memory_reserve = f.memory_reserve;
  chosen.reshard_after_forward = f.reshard_after_forward;
  f = chosen;
}

void reread_unnamed_framework(const Scenario& s, model::ParallelPlan& plan) {
  if (!s.unnamed_framework_block) return;
  const bool reshard = plan.framework.reshard_after_forward;
  Diagnostics d;  // the block read without a problem when the scenario loaded
  read_framework_block(d, *s.unnamed_framework_block, plan, s.overlap_grad_reduce_given);
  plan.framework.reshard_after_forward = reshard;
}

void choose_framework(Scenario& s) {
  if (!s.framework_named) choose_unnamed_framework(s.parallelism);
  if (s.attention_from_framework) s.model.attention = model::Attention::flash;
  s.attention_from_framework = false;
  if (s.model.attention != model::Attention::flash) return;
  const auto kernel = model::preset_fused_attention(s.parallelism.framework.preset);
  if (kernel && model::attention_kernel_fraction(*kernel, s.cluster.node.gpu.efficiency) > 0) {
    s.model.attention = *kernel;
    s.attention_from_framework = true;
  }
}

std::string unnamed_framework_note(const Scenario& s) {
  const model::ParallelPlan& p = s.parallelism;
  if (s.framework_named || model::unnamed_framework_preset(p) == model::FrameworkPreset::megatron_core)
    return "";
  return fmt::format(
      "no framework: named, so ZeRO-{} without tensor, pipeline or context parallelism is priced as PyTorch "
      "FSDP1 around eager model code with FlashAttention-2 (framework: fsdp1); Megatron-Core's FSDP runs "
      "the same layout with fused kernels and every overlap on: name the software, e.g. framework: "
      "megatron-core | fsdp2 | torchtitan | llm-foundry | deepspeed (SPEC.md, framework)",
      model::stage_number(p.zero));
}

}  // namespace trainsim::scenario
