#include "scenarios/loader.hpp"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <numeric>

#include "scenarios/overrides.hpp"
#include "scenarios/scenario_reader.hpp"
#include "scenarios/yaml_tree.hpp"

namespace trainsim::scenario {
namespace {

std::string stem_of(const std::string& label) {
  const std::string stem = std::filesystem::path(label).stem().string();
  return stem.empty() ? "scenario" : stem;
}

// Every node of an override's value placed where the value was written in its file.
void relocate(YamlValue& v, const std::shared_ptr<const std::string>& file, int line, int column) {
  v.file = file;
  v.line = line;
  v.column = column;
  for (YamlValue& item : v.items) relocate(item, file, line, column);
  for (YamlEntry& e : v.entries) {
    e.key_line = line;
    e.key_column = column;
    relocate(e.value, file, line, column);
  }
}

Scenario load_tree(YamlValue tree, Diagnostics& d, const std::string& file_label,
                   const std::vector<Override>& overrides, PresetLibrary& presets) {
  for (const Override& o : overrides) {
    const bool from_file = !o.origin_file.empty();
    const std::string label = from_file ? o.origin_file : "override " + o.key_path;
    if (o.yaml_value.find_first_not_of(" \t\r\n") == std::string::npos) {
      // parse_yaml_tree would call the value "the file is empty".
      d.add(Diagnostic{label, 0, 0, o.key_path,
                       "no value after '=': write one, e.g. --set " + o.key_path +
                           "=VALUE (YAML: 64, \"2 h\", "
                           "true, {...})"});
      continue;
    }
    if (auto value = parse_yaml_tree(o.yaml_value, label, d)) {
      if (from_file)
        relocate(*value, std::make_shared<const std::string>(o.origin_file), o.origin_line, o.origin_column);
      const int line = value->line;
      const int column = value->column;
      apply_override(d, tree, o.key_path, std::move(*value), line, column);
    }
  }
  d.throw_if_any();
  Scenario s = read_scenario(d, tree, stem_of(file_label), true, presets);
  s.source_file = file_label;
  // Every sweep value is checked in place, exactly as if written there; combinations are the sweep's
  // business (an infeasible point is a row with its reason, not a load error). A load with overrides is a
  // sweep point: the values were checked when the scenario itself was loaded, so they are not re-checked
  // (that would make a sweep quadratic in its size).
  if (d.empty() && overrides.empty() && tree.is_mapping()) {
    if (const YamlValue* sweep = tree.find("sweep"); sweep != nullptr && sweep->is_mapping()) {
      YamlValue base = tree;
      base.entries.erase(std::remove_if(base.entries.begin(), base.entries.end(),
                                        [](const YamlEntry& e) { return e.key == "sweep"; }),
                         base.entries.end());
      for (const YamlEntry& axis : sweep->entries) {
        if (axis.key == "mode" || !axis.value.is_sequence()) continue;
        for (const YamlValue& item : axis.value.items) {
          YamlValue point = base;
          apply_override(d, point, axis.key, item, axis.key_line, axis.key_column);
          (void)read_scenario(d, point, s.name, false, presets);
        }
      }
    }
  }
  d.throw_if_any();
  return s;
}

}  // namespace

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  const auto lower = [](std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>((c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c);
    return out;
  };
  const std::string w = lower(word);
  std::string best;
  std::size_t best_distance = std::string::npos;
  for (const std::string& candidate : candidates) {
    const std::string c = lower(candidate);
    // Levenshtein distance, two rows.
    std::vector<std::size_t> prev(c.size() + 1);
    std::vector<std::size_t> cur(c.size() + 1);
    std::iota(prev.begin(), prev.end(), std::size_t{0});
    for (std::size_t i = 1; i <= w.size(); ++i) {
      cur[0] = i;
      for (std::size_t j = 1; j <= c.size(); ++j) {
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (w[i - 1] == c[j - 1] ? 0 : 1)});
      }
      std::swap(prev, cur);
    }
    if (prev[c.size()] < best_distance) {
      best_distance = prev[c.size()];
      best = candidate;
    }
  }
  // Close means: at most a third of the word's letters changed (and at least one allowed).
  const std::size_t allowed = std::max<std::size_t>(1, std::max(word.size(), best.size()) / 3);
  return best_distance <= allowed ? best : std::string();
}

Scenario load_scenario_text(std::string_view yaml, const std::string& file_label,
                            const std::vector<Override>& overrides, PresetLibrary* presets) {
  Diagnostics d;
  std::optional<YamlValue> tree = parse_yaml_tree(yaml, file_label, d);
  d.throw_if_any();
  if (presets != nullptr) return load_tree(std::move(*tree), d, file_label, overrides, *presets);
  PresetLibrary own;
  return load_tree(std::move(*tree), d, file_label, overrides, own);
}

Scenario load_scenario_file(const std::string& path, const std::vector<Override>& overrides,
                            PresetLibrary* presets) {
  Diagnostics d;
  std::optional<std::string> text = read_text_file(path, d);
  d.throw_if_any();
  return load_scenario_text(*text, path, overrides, presets);
}

}  // namespace trainsim::scenario
