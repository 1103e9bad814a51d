#pragma once
// Internal to the scenarios library: the readers shared by preset files and scenario blocks, so that
// `model: {preset: llama3-70b, seq_len: 8192}` and models/presets/llama3-70b.yaml accept the same keys.
// A value is either a preset name (scalar) or a mapping with an optional `preset:` and overriding keys.
// Problems are added to the Diagnostics; the returned spec is then partial.
#include <string>

#include "models/spec/region_prices.hpp"
#include "models/spec/transformer_spec.hpp"
#include "scenarios/presets.hpp"
#include "scenarios/yaml_tree.hpp"
#include "topologies/hardware.hpp"

namespace trainsim::scenario {

/// Where preset names are resolved, and how many presets deep this value is (presets may derive from
/// presets, `preset:` inside a preset file; a cycle stops at a fixed depth).
struct PresetScope {
  PresetLibrary& library;
  int depth = 0;
};

model::TransformerSpec read_model_value(Diagnostics& d, const YamlValue& v, const std::string& path,
                                        const PresetScope& presets);
topo::GpuSpec read_gpu_value(Diagnostics& d, const YamlValue& v, const std::string& path,
                             const PresetScope& presets);
topo::NodeSpec read_node_value(Diagnostics& d, const YamlValue& v, const std::string& path,
                               const PresetScope& presets);
/// A region price table: a preset name (models/regions) or the file's mapping (region_block.hpp).
model::RegionPrices read_region_value(Diagnostics& d, const YamlValue& v, const std::string& path,
                                      const PresetScope& presets);

/// The first name `table` gives `value`: for tables that accept a subset of an enum's names or add
/// aliases to them (the enum's own table is beside it, with to_string).
template <class Enum>
std::string name_of(const std::vector<std::pair<std::string, Enum>>& table, Enum value) {
  for (const auto& [name, v] : table) {
    if (v == value) return name;
  }
  return table.front().first;
}

/// A YAML mapping (flow style, every field) that read_node_value reads back to an equal spec (a GPU's:
/// gpu_preset_fields.hpp's gpu_to_flow_yaml; a model's: model_fields.hpp's model_to_yaml).
std::string node_to_yaml(const topo::NodeSpec& n);

}  // namespace trainsim::scenario
