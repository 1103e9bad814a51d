#include "scenarios/overrides.hpp"

#include <string_view>

namespace trainsim::scenario {

using Kind = YamlValue::Kind;

void apply_override(Diagnostics& d, YamlValue& root, const std::string& path, YamlValue value, int line,
                    int column) {
  YamlValue* node = &root;
  std::string_view rest = path;
  std::string walked;
  while (true) {
    const std::size_t dot = rest.find('.');
    const std::string key(rest.substr(0, dot));
    if (key.empty()) {
      d.add(value, path, "an override key path has an empty part");
      return;
    }
    if (node->kind == Kind::null) {
      node->kind = Kind::mapping;
    } else if (node->kind == Kind::scalar) {
      YamlValue named = *node;
      node->kind = Kind::mapping;
      node->scalar.clear();
      node->entries.push_back(YamlEntry{walked == "training.optimizer" ? "kind" : "preset", node->line,
                                        node->column, std::move(named)});
    } else if (node->kind == Kind::sequence) {
      d.add(*node, walked, "cannot set " + path + ": this is a list");
      return;
    }
    walked = join_path(walked, key);
    YamlValue* child = node->find(key);
    if (child == nullptr) {
      YamlValue fresh;
      fresh.file = value.file;
      fresh.line = line;
      fresh.column = column;
      node->entries.push_back(YamlEntry{key, line, column, std::move(fresh)});
      child = &node->entries.back().value;
    }
    if (dot == std::string_view::npos) {
      *child = std::move(value);
      // The key's own location is where the override came from.
      for (YamlEntry& e : node->entries) {
        if (e.key == key) {
          e.key_line = line;
          e.key_column = column;
        }
      }
      return;
    }
    node = child;
    rest.remove_prefix(dot + 1);
  }
}

}  // namespace trainsim::scenario
