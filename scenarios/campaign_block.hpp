#pragma once
// Internal to the scenarios library: the `convergence:` and `tuning:` blocks (models/spec/campaign_spec.hpp).
//
//   convergence: {target_loss: 2.05, law: chinchilla, batch: {critical: auto}}
//   convergence: {target_loss: 2.05, law: {E: 1.69, A: 406.4, B: 410.7, alpha: 0.34, beta: 0.28}}
//   tuning: {trials: 64, trial: {fraction: 0.01}, concurrent: 8,
//            early_stopping: {policy: successive-halving, eta: 3, min_fraction: 0.05}}
//   data: {raw: "50 TB", preprocessing: {core_hours_per_tb: 400, core_hour: "$0.04/h"},
//          storage: {price: "$0.023/GB-month", months: 3}, transfer: {volume: "50 TB", price: "$0.02/GB"}}
//   people: [{role: research-engineer, count: 4, rate: "$110/h", hours_per_week: 40},
//            {role: on-call, count: 1, rate: "$40/h", coverage: "24x7"}]
//
// convergence sets the run's length, so it cannot stand beside training.tokens, steps or epochs.
// Problems are added to the Diagnostics.
#include <optional>
#include <string>
#include <vector>

#include "models/spec/campaign_spec.hpp"
#include "scenarios/yaml_tree.hpp"

namespace trainsim::scenario {

[[nodiscard]] std::optional<model::ConvergenceSpec> read_convergence_block(Diagnostics& d,
                                                                           const YamlValue& v);
[[nodiscard]] std::optional<model::TuningSpec> read_tuning_block(Diagnostics& d, const YamlValue& v);
[[nodiscard]] std::optional<model::DataSpec> read_data_block(Diagnostics& d, const YamlValue& v);
[[nodiscard]] std::vector<model::PersonSpec> read_people_block(Diagnostics& d, const YamlValue& v);

/// The blocks as YAML that the readers read back to the same values ("" for an absent block).
[[nodiscard]] std::string convergence_to_yaml(const std::optional<model::ConvergenceSpec>& c);
[[nodiscard]] std::string tuning_to_yaml(const std::optional<model::TuningSpec>& t);
[[nodiscard]] std::string data_to_yaml(const std::optional<model::DataSpec>& data);
[[nodiscard]] std::string people_to_yaml(const std::vector<model::PersonSpec>& people);

}  // namespace trainsim::scenario
