#include "scenarios/importers/megatron_recipe.hpp"

#include <algorithm>
#include <sstream>

#include "scenarios/yaml_tree.hpp"
#include "sim/error.hpp"

namespace trainsim::scenario {

namespace {

// Whether `text` has ARGS: at the start of a line, a recipe's top-level key.
bool names_args(std::string_view text) {
  return text.starts_with("ARGS:") || text.find("\nARGS:") != std::string_view::npos;
}

std::string flag_of(std::string_view key) {
  std::string flag = "--" + std::string(key);
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

void add_words(const std::string& scalar, std::vector<std::string>& words) {
  std::istringstream in(scalar);
  for (std::string w; in >> w;) words.push_back(w);
}

}  // namespace

std::optional<MegatronRecipe> read_megatron_recipe(std::string_view text, const std::string& label) {
  if (!names_args(text)) return std::nullopt;
  Diagnostics d;
  const std::optional<YamlValue> root = parse_yaml_tree(text, label, d);
  d.throw_if_any();
  if (!root || !root->is_mapping()) return std::nullopt;
  const YamlValue* args = root->find("ARGS");
  if (args == nullptr) return std::nullopt;
  if (!args->is_mapping()) {
    d.add(*args, "ARGS", "expected a mapping of Megatron-LM arguments (name: value)");
    d.throw_if_any();
  }
  MegatronRecipe recipe;
  for (const YamlEntry& e : args->entries) {
    const YamlValue& v = e.value;
    const std::string path = "ARGS." + e.key;
    if (v.kind == YamlValue::Kind::null) continue;
    if (v.is_scalar() && !v.quoted && (v.scalar == "false" || v.scalar == "False")) continue;
    recipe.words.push_back(flag_of(e.key));
    if (v.is_scalar()) {
      if (!v.quoted && (v.scalar == "true" || v.scalar == "True")) continue;
      add_words(v.scalar, recipe.words);
    } else if (v.is_sequence()) {
      for (const YamlValue& item : v.items) {
        if (!item.is_scalar()) {
          d.add(item, path, "expected a list of words");
          continue;
        }
        add_words(item.scalar, recipe.words);
      }
    } else {
      d.add(v, path, "expected a value or a list of values, found a mapping");
    }
  }
  if (const YamlValue* env = root->find("ENV_VARS"); env != nullptr && env->kind != YamlValue::Kind::null) {
    if (!env->is_mapping()) {
      d.add(*env, "ENV_VARS", "expected a mapping of environment variables (NAME: value)");
    } else {
      for (const YamlEntry& e : env->entries) {
        if (!e.value.is_scalar()) {
          d.add(e.value, "ENV_VARS." + e.key, "expected a value");
          continue;
        }
        recipe.environment[e.key] = e.value.scalar;
      }
    }
  }
  d.throw_if_any();
  return recipe;
}

}  // namespace trainsim::scenario
