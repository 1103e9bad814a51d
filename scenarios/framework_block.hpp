#pragma once
// Internal to the scenarios library: the `framework:` block (the software whose habits the step follows,
// models/framework.hpp) and the `memory:` block (how that software's allocator reserves memory).
//
//   framework: megatron-core                       # a preset's flags
//   framework: {preset: deepspeed, prefetch: 2}    # a preset with flags overridden one by one
//   memory: {reserve: 0.05}
//
// Absent, the framework is megatron-core; parallelism.overlap_grad_reduce, when given, wins over the
// preset's. Problems are added to the Diagnostics.
#include <string>

#include "models/spec/parallel_plan.hpp"
#include "scenarios/yaml_tree.hpp"

namespace trainsim::scenario {

/// Reads `v` (the framework block) into plan.framework, and the preset's overlap_grad_reduce into the plan
/// unless `overlap_grad_reduce_given`. A block without `preset:` starts from the preset the plan's layout
/// implies (model::unnamed_framework_preset), so that setting one flag does not change the framework.
void read_framework_block(Diagnostics& d, const YamlValue& v, model::ParallelPlan& plan,
                          bool overlap_grad_reduce_given);

/// Reads the memory block into plan.framework.memory_reserve.
void read_memory_block(Diagnostics& d, const YamlValue& v, model::ParallelPlan& plan);

/// The framework and memory blocks as YAML that the readers read back to the same flags.
[[nodiscard]] std::string framework_to_yaml(const model::ParallelPlan& plan);

}  // namespace trainsim::scenario
