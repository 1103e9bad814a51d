#pragma once
// A Megatron-LM recipe file (examples/moe_recipes/<model>/<gpu>/*.yaml: DEPENDENCIES, ENV_VARS and ARGS, the
// runs the README of that folder times) as the argument words and the environment `trainsim import
// megatron` reads. Each ARGS key becomes its flag (`moe_layer_freq` → `--moe-layer-freq`) followed by its
// value's words: a list's items, a string's whitespace-separated words (as the recipe's launcher passes
// them), nothing for `true` (a switch); `false` and null leave the flag out (Megatron-LM's switches are
// store_true, false their default). ENV_VARS become the environment, each value as written.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::scenario {

struct MegatronRecipe {
  std::vector<std::string> words;
  std::map<std::string, std::string, std::less<>> environment;
};

/// The recipe `text` holds, or nullopt when it is not one (no top-level ARGS mapping: a launch script or a
/// file of flags). A recipe whose ARGS or ENV_VARS are not mappings of scalars and lists, or whose YAML
/// does not parse while it names ARGS, is an InputError at file:line:col.
[[nodiscard]] std::optional<MegatronRecipe> read_megatron_recipe(std::string_view text,
                                                                 const std::string& label);

}  // namespace trainsim::scenario
