#include "scenarios/framework_block.hpp"

#include <utility>
#include <vector>

#include "scenarios/block_fields.hpp"
#include "scenarios/quantity.hpp"

namespace trainsim::scenario {
void read_framework_block(Diagnostics& d, const YamlValue& v, model::ParallelPlan& plan,
                          bool overlap_grad_reduce_given) {
  const std::string path = "framework";
  const YamlValue* preset_node = v.is_scalar() ? &v : nullptr;
  std::optional<MapReader> r;
  if (!v.is_scalar()) {
    r.emplace(d, v, path, field_keys(framework_fields()));
    if (!r->valid()) return;
    preset_node = r->get("preset");
  }
  model::FrameworkPreset preset = model::unnamed_framework_preset(plan);
  if (preset_node != nullptr) {
    const std::string preset_path = v.is_scalar() ? path : path + ".preset";
    const auto i = read_choice(d, *preset_node, preset_path, names_of(model::kFrameworkPresetNames));
    if (!i) return;
    preset = model::kFrameworkPresetNames[*i].value;
  }
  const double reserve = plan.framework.memory_reserve;
  model::Framework& f = plan.framework;
  f = model::framework_preset(preset);
  f.memory_reserve = reserve;
  if (!overlap_grad_reduce_given) plan.overlap_grad_reduce = model::preset_overlaps_grad_reduce(preset);
  if (!r) return;
  read_fields(*r, framework_fields(), f);
  if (r->has("overlap_grad_reduce") && !overlap_grad_reduce_given)
    r->boolean("overlap_grad_reduce", plan.overlap_grad_reduce);
}

void read_memory_block(Diagnostics& d, const YamlValue& v, model::ParallelPlan& plan) {
  MapReader r(d, v, "memory", field_keys(memory_fields()));
  if (!r.valid()) return;
  read_fields(r, memory_fields(), plan.framework);
}

std::string framework_to_yaml(const model::ParallelPlan& plan) {
  const model::Framework& f = plan.framework;
  // The table's order but for grad_reduce_dtype, written last (the dump's order before the table).
  return "framework:\n" + block_fields(framework_fields(), f, "  ", {"grad_reduce_dtype"}) + "memory:\n" +
         block_fields(memory_fields(), f, "  ");
}

}  // namespace trainsim::scenario
