// What collective and dispatch validation cases share (see component_case.hpp).
#include "scenarios/component_case.hpp"

#include <fstream>

#include "scenarios/collective_case.hpp"
#include "scenarios/dispatch_case.hpp"
#include "scenarios/presets.hpp"
#include "sim/error.hpp"

namespace trainsim::scenario {

bool has_top_level_key(const std::string& path, std::string_view key) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(key) && line.size() > key.size() && line[key.size()] == ':') return true;
  }
  return false;
}

bool is_component_case_file(const std::string& path) {
  return is_collective_case_file(path) || is_dispatch_case_file(path);
}

YamlValue read_case_tree(const std::string& path) {
  Diagnostics d;
  const std::optional<std::string> text = read_text_file(path, d);
  d.throw_if_any();
  std::optional<YamlValue> root = parse_yaml_tree(*text, path, d);
  d.throw_if_any();
  return std::move(*root);
}

topo::ClusterSpec read_case_cluster(MapReader& r, Diagnostics& d, const std::string& block) {
  topo::ClusterSpec out;
  std::string node;
  r.string("node", node);
  if (!node.empty()) {
    try {
      out.node = node_preset(node);
    } catch (const InputError& e) {
      d.add(*r.get("node"), block + ".node", e.what());
    }
  }
  out.nodes = 1;
  r.count("nodes", out.nodes, 1, 1e6);
  r.count("gpus_per_node", out.gpus_per_node, 1, 1024);
  if (out.node.gpus_per_node > 0 && out.gpus_per_node > out.node.gpus_per_node) {
    d.add(*r.get("gpus_per_node"), block + ".gpus_per_node",
          "the node preset " + node + " has " + std::to_string(out.node.gpus_per_node) + " GPUs, not " +
              std::to_string(out.gpus_per_node));
  }
  return out;
}

}  // namespace trainsim::scenario
