#pragma once
// Internal to the scenarios library: the field table (scenarios/field_table.hpp) of the `model:` block,
// which model preset files (models/presets/*.yaml) share, read by the same reader (read_model_value in
// scenarios/preset_blocks.hpp). The reader's allowed keys, the read of each plain value and the dump
// (model_to_yaml) walk it; SPEC.md's table of `model` is checked against it by
// tests/scenarios/block_fields_test.cpp.
//
// Its required rows are required of a model given neither a preset nor an hf_config. What the table leaves
// to the reader: preset and hf_config, read first (every other key overrides what they give), and the rules
// between keys (heads divides hidden, kv_heads divides heads, top_k within experts, the routing's own keys,
// the MLA widths, the window's layer types).
#include <string>

#include "models/spec/transformer_spec.hpp"
#include "scenarios/field_table.hpp"

namespace trainsim::scenario {

/// `model:`, in the order the dump writes its keys. A key whose value is left at its "none" (a 0 width, the
/// default routing, the MLA widths without MLA) is not written, so a dump reads back to the same model.
[[nodiscard]] const FieldTable<model::TransformerSpec>& model_fields();

/// The model as a YAML flow mapping that read_model_value reads back to an equal spec.
[[nodiscard]] std::string model_to_yaml(const model::TransformerSpec& m);

}  // namespace trainsim::scenario
