#include "scenarios/sliding_window_keys.hpp"

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "scenarios/field_table.hpp"

namespace trainsim::scenario {

std::optional<bool> layer_type_is_windowed(std::string_view name) {
  if (name == kSlidingLayerType) return true;
  if (name == kFullLayerType) return false;
  return std::nullopt;
}

void read_layer_types(MapReader& r, model::TransformerSpec& m) {
  const YamlValue* types = r.get("layer_types");
  if (types == nullptr) return;
  const std::string path = r.child_path("layer_types");
  Diagnostics& d = r.diagnostics();
  const std::vector<std::string> names{std::string(kSlidingLayerType), std::string(kFullLayerType)};
  std::vector<bool> pattern;
  bool ok = true;
  read_list(d, *types, path, "a list of layer types (sliding_attention | full_attention)",
            [&](const YamlValue& item, const std::string& item_path) {
              if (const auto i = read_choice(d, item, item_path, names)) {
                pattern.push_back(*i == 0);
              } else {
                ok = false;
              }
            });
  if (!types->is_sequence() || !ok) return;
  if (pattern.empty()) {
    d.add(*types, path, "expected at least one layer type (sliding_attention | full_attention)");
    return;
  }
  m.window_layers = std::move(pattern);
}

void check_sliding_window(Diagnostics& d, const YamlValue& v, const std::string& path,
                          const model::TransformerSpec& m) {
  const auto n = static_cast<std::int64_t>(m.window_layers.size());
  if (n > 0 && m.sliding_window == 0) {
    d.add(v, join_path(path, "layer_types"),
          "layer_types names sliding_attention layers but sliding_window is not set (tokens a windowed "
          "query attends to)");
  }
  if (n > 0 && m.layers > 0 && m.layers % n != 0) {
    d.add(v, join_path(path, "layer_types"),
          "layer_types has " + std::to_string(n) + " entries: give one per layer (" +
              std::to_string(m.layers) + ") or a pattern whose length divides the layers");
  }
  if (m.sliding_window > 0 && !m.causal) {
    d.add(v, join_path(path, "sliding_window"),
          "a sliding window is modelled under a causal mask only (set causal: true or drop sliding_window)");
  }
}

std::optional<std::string> layer_types_to_yaml(const model::TransformerSpec& m) {
  if (m.sliding_window <= 0 || m.window_layers.empty()) return std::nullopt;
  return flow_list(m.window_layers,
                   [](bool sliding) { return sliding ? kSlidingLayerType : kFullLayerType; });
}

}  // namespace trainsim::scenario
