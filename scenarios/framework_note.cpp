#include "scenarios/framework_note.hpp"

#include <fmt/format.h>

namespace trainsim::scenario {

std::string unnamed_framework_note(const Scenario& s) {
  const model::ParallelPlan& p = s.parallelism;
  if (s.framework_named || !model::shards_gradients(p.zero) || p.tp > 1 || p.pp > 1 || p.cp > 1) return "";
  return fmt::format(
      "no framework: named, so ZeRO-{} without tensor, pipeline or context parallelism is priced with "
      "megatron-core's habits (fused kernels, the GPU's default attention kernel, every overlap on); "
      "PyTorch FSDP and DeepSpeed run such layouts around slower kernels: name the software, e.g. "
      "framework: fsdp2 | torchtitan | llm-foundry | deepspeed (SPEC.md, framework)",
      model::stage_number(p.zero));
}

}  // namespace trainsim::scenario
