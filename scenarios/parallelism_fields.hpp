#pragma once
// Internal to the scenarios library: the field tables of the `parallelism:` block (scenarios/field_table.hpp)
// and of its two mappings, recompute's `{modules: [...]}` form and `offload:`. Each row reads its key's value
// and writes it back; the rules between keys (dp: auto resolved from the GPUs, ep against the model,
// schedules' needs) are the layout rules' (models/step/layout_rules.hpp), placed at the keys by the
// scenario reader.
#include "models/spec/parallel_plan.hpp"
#include "scenarios/field_table.hpp"

namespace trainsim::scenario {

/// Beyond this the simulator's integer arithmetic and memory are no longer meaningful; 1M GPUs must load.
/// The most a data-parallel degree or a sharding group may be, and the cluster's GPUs.
inline constexpr double kMaxTotalGpus = 1e8;

/// `parallelism:`, in the order its keys are read (and listed as the allowed keys).
[[nodiscard]] const FieldTable<model::ParallelPlan>& parallelism_fields();
/// `recompute: {modules: [...]}`: selective recompute of the named modules.
[[nodiscard]] const FieldTable<model::ParallelPlan>& parallelism_recompute_fields();
/// `offload: {modules: [...]}`: the modules whose saved inputs go to host memory.
[[nodiscard]] const FieldTable<model::ParallelPlan>& parallelism_offload_fields();

}  // namespace trainsim::scenario
