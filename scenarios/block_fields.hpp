#pragma once
// Internal to the scenarios library: the field table of each scenario block that has one
// (scenarios/field_table.hpp): every key of the block, its kind, unit, bounds, help and member. The
// block's reader, the dump and SPEC.md's key table of the block (checked by
// tests/scenarios/block_fields_test.cpp) all follow it, so a key is added here once.
#include <string>
#include <string_view>
#include <vector>

#include "models/spec/campaign_spec.hpp"
#include "models/spec/framework.hpp"
#include "models/spec/run_spec.hpp"
#include "models/spec/training_spec.hpp"
#include "scenarios/field_table.hpp"
#include "scenarios/scenario.hpp"
#include "topologies/cluster_spec.hpp"

namespace trainsim::scenario {

/// `cluster:` and its network and storage mappings (node, torus_dims, background, stragglers and degraded
/// are read and written by their own code).
[[nodiscard]] const FieldTable<topo::ClusterSpec>& cluster_fields();
[[nodiscard]] const FieldTable<topo::NetworkSpec>& cluster_network_fields();
[[nodiscard]] const FieldTable<topo::StorageSpec>& cluster_storage_fields();

/// `training:`, its optimizer mapping and its schedule mapping (optimizer and schedule, each a name or a
/// mapping, are read and written by the block's own code; epochs is also checked to be above 0, and the
/// preconditioner keys to be given only to an optimizer that keeps preconditioners).
[[nodiscard]] const FieldTable<model::TrainingSpec>& training_fields();
[[nodiscard]] const FieldTable<model::OptimizerSpec>& training_optimizer_fields();
[[nodiscard]] const FieldTable<model::TrainingSpec>& training_schedule_fields();
/// Reads an optimizer's name (`optimizer: NAME` or its kind:) into `o.kind`; 8-bit Adam keeps its moments
/// in int8 unless state_precision says otherwise, so it sets that too.
void read_optimizer_kind(Diagnostics& d, const YamlValue& v, const std::string& path,
                         model::OptimizerSpec& o);

/// `framework:` in its mapping form (preset is read first by the block's own code, every other flag's
/// default being the preset's; overlap_grad_reduce is kept in the plan, beside parallelism's, and read by
/// the block's own code too).
[[nodiscard]] const FieldTable<model::Framework>& framework_fields();

/// `memory:` (its values are kept in the plan's framework).
[[nodiscard]] const FieldTable<model::Framework>& memory_fields();

/// `checkpoint:` (interval or every_steps is the block's rule, checked by its reader).
[[nodiscard]] const FieldTable<model::CheckpointSpec>& checkpoint_fields();

/// `failures:` (node_mtbf or gpu_mtbf is the block's rule, checked by its reader).
[[nodiscard]] const FieldTable<model::FailureSpec>& failures_fields();

/// `pricing:` and its mappings (region and gpu_hour are read and written by the block's own code).
[[nodiscard]] const FieldTable<model::PricingSpec>& pricing_fields();
[[nodiscard]] const FieldTable<model::SpotPricing>& pricing_spot_fields();
[[nodiscard]] const FieldTable<model::StoragePricing>& pricing_storage_fields();
[[nodiscard]] const FieldTable<model::EnergyPricing>& pricing_energy_fields();
[[nodiscard]] const FieldTable<model::Commitment>& pricing_commitment_fields();

/// `budget:` (memory_headroom and alerts are read and written by the block's own code).
[[nodiscard]] const FieldTable<model::BudgetSpec>& budget_fields();

/// `convergence:`, its law's constants (when law is a mapping) and its batch mapping (law, batch's critical
/// and optimizer_efficiency, each a name or a value, are read and written by the block's own code).
[[nodiscard]] const FieldTable<model::ConvergenceSpec>& convergence_fields();
[[nodiscard]] const FieldTable<model::ConvergenceSpec>& convergence_law_fields();
[[nodiscard]] const FieldTable<model::ConvergenceSpec>& convergence_batch_fields();

/// `tuning:` and its mappings.
[[nodiscard]] const FieldTable<model::TuningSpec>& tuning_fields();
[[nodiscard]] const FieldTable<model::TuningSpec>& tuning_trial_fields();
[[nodiscard]] const FieldTable<model::TuningSpec>& tuning_early_stopping_fields();

/// `data:` and its mappings.
[[nodiscard]] const FieldTable<model::DataSpec>& data_fields();
[[nodiscard]] const FieldTable<model::DataSpec>& data_preprocessing_fields();
[[nodiscard]] const FieldTable<model::DataSpec>& data_storage_fields();
[[nodiscard]] const FieldTable<model::DataSpec>& data_transfer_fields();

/// One item of `people:` (coverage or hours_per_week is the item's rule, checked by the coverage row).
[[nodiscard]] const FieldTable<model::PersonSpec>& person_fields();

/// `sweep:` beside its swept key paths, and `measured:` beside its metrics: the keys that are not a
/// scenario's key path or a summary field.
[[nodiscard]] const FieldTable<SweepSpec>& sweep_fields();
[[nodiscard]] const FieldTable<MeasuredSpec>& measured_fields();

/// A block's path (as SPEC.md heads its table) and its rows.
struct DocumentedBlock {
  std::string_view path;
  std::vector<FieldInfo> rows;
};

/// Every block with a field table, in SPEC.md's order.
[[nodiscard]] std::vector<DocumentedBlock> documented_blocks();

}  // namespace trainsim::scenario
