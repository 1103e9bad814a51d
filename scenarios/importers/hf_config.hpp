#pragma once
// Internal to the scenarios library: a HuggingFace `config.json` (the file that ships beside a model's
// weights) read into a TransformerSpec, for `model: {hf_config: path, <overrides>}`.
//
// Families read (model_type): llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, deepseek_v3, gpt_oss. Each
// field that shapes the cost maps to one spec field (hf_config.cpp lists them); fields that do not (token
// ids, dtypes, rope scaling, initialiser ranges) are known and skipped. An architecture or a field outside
// both lists is an error naming it, so a model whose structure the spec cannot hold (Qwen2-MoE's shared
// expert, Qwen's max_window_layers windows, layer kinds other than sliding_attention and full_attention)
// is refused rather than priced as something else.
#include <optional>
#include <string>

#include "models/spec/transformer_spec.hpp"
#include "scenarios/yaml_tree.hpp"

namespace trainsim::scenario {

/// Reads the config at `file` (relative paths: from the folder of the scenario file `at` is in). Problems
/// are added to `d` at `at`, with key path `path` (e.g. "model.hf_config") and the JSON field they concern.
[[nodiscard]] std::optional<model::TransformerSpec> read_hf_config(Diagnostics& d, const YamlValue& at,
                                                                   const std::string& path,
                                                                   const std::string& file);

/// The same for the config's `text` (read_hf_config reads the file, then calls this; the fuzz target calls
/// it directly): `label` names the file in messages, `file` (as the scenario wrote it) names the model.
[[nodiscard]] std::optional<model::TransformerSpec> read_hf_config_text(Diagnostics& d, const YamlValue& at,
                                                                        const std::string& path,
                                                                        const std::string& text,
                                                                        const std::string& label,
                                                                        const std::string& file);

}  // namespace trainsim::scenario
