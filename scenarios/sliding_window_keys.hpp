#pragma once
// Internal to the scenarios library: the sliding-window keys of a model block (SPEC model.sliding_window,
// model.layer_types, model.attention_sinks; rows of model_fields.hpp's table) beyond the plain values: the
// layer_types list, the checks between the three, and the layer-type names they share with HuggingFace's
// `layer_types` (importers/hf_config.cpp): "sliding_attention" is windowed, "full_attention" is not.
#include <optional>
#include <string>
#include <string_view>

#include "models/spec/transformer_spec.hpp"
#include "scenarios/yaml_tree.hpp"

namespace trainsim::scenario {

/// The layer-type names, HuggingFace's spelling.
inline constexpr std::string_view kSlidingLayerType = "sliding_attention";
inline constexpr std::string_view kFullLayerType = "full_attention";

/// Whether a layer type is windowed; nullopt for a name that is neither.
[[nodiscard]] std::optional<bool> layer_type_is_windowed(std::string_view name);

/// Reads layer_types, when `r` has it, into `m.window_layers`; problems at its key path.
void read_layer_types(MapReader& r, model::TransformerSpec& m);

/// Checks of the model alone, once read: layer_types needs a window and as many entries as layers (or
/// fewer, a pattern that repeats and divides them); a window needs a causal mask. Problems at `v`.
void check_sliding_window(Diagnostics& d, const YamlValue& v, const std::string& path,
                          const model::TransformerSpec& m);

/// layer_types as YAML ("[sliding_attention, full_attention]"), which read_layer_types reads back; nullopt
/// without a window or without a list (every layer windowed), where it is not written.
[[nodiscard]] std::optional<std::string> layer_types_to_yaml(const model::TransformerSpec& m);

}  // namespace trainsim::scenario
