#pragma once
// Internal to the scenarios library: a scenario's YAML tree to the plain structs, block by block: every
// key with its unit, default and check, presets resolved, `dp: auto` resolved and the layout rules
// (models/step/layout_rules.hpp) placed at the keys they blame.
#include <string>
#include <utility>
#include <vector>

#include "scenarios/presets.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/yaml_tree.hpp"

namespace trainsim::scenario {

/// Adds every problem to `d` (and returns what could be read). `cross_checks` false: only each value
/// in place (a sweep value, whose combinations are the sweep's business), not the layout rules. Preset
/// names are resolved in `presets`.
[[nodiscard]] Scenario read_scenario(Diagnostics& d, const YamlValue& root, const std::string& default_name,
                                     bool cross_checks, PresetLibrary& presets);

/// The optimizer spellings a scenario accepts, for the reader and the dump: each kind's canonical name, then
/// model::optimizer_aliases().
[[nodiscard]] const std::vector<std::pair<std::string, model::OptimizerKind>>& optimizer_names();

}  // namespace trainsim::scenario
