#pragma once
// Internal to the scenarios library: the sliding-window keys of a model block (SPEC model.sliding_window,
// model.layer_types, model.attention_sinks) and the layer-type names they share with HuggingFace's
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

/// Reads sliding_window, layer_types and attention_sinks from `r` into `m`; problems at their key paths.
void read_sliding_window_keys(MapReader& r, model::TransformerSpec& m);

/// Checks of the model alone, once read: layer_types needs a window and as many entries as layers (or
/// fewer, a pattern that repeats and divides them); a window needs a causal mask. Problems at `v`.
void check_sliding_window(Diagnostics& d, const YamlValue& v, const std::string& path,
                          const model::TransformerSpec& m);

/// ", sliding_window: W, layer_types: [...]" and ", attention_sinks: true" for model_to_yaml; empty when
/// unset (scenarios without a window dump as before).
[[nodiscard]] std::string sliding_window_to_yaml(const model::TransformerSpec& m);

}  // namespace trainsim::scenario
