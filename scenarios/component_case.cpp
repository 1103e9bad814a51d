// What collective and dispatch validation cases share (see component_case.hpp).
#include "scenarios/component_case.hpp"

#include <array>
#include <fstream>
#include <utility>

#include "scenarios/collective_case.hpp"
#include "scenarios/dispatch_case.hpp"
#include "scenarios/presets.hpp"
#include "sim/error.hpp"

namespace trainsim::scenario {

std::optional<ComponentKind> component_case_kind(const std::string& path) {
  constexpr std::array<std::pair<std::string_view, ComponentKind>, 2> kKeys{
      {{"collective", ComponentKind::collective}, {"dispatch", ComponentKind::dispatch}}};
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    for (const auto& [key, kind] : kKeys) {
      if (line.starts_with(key) && line.size() > key.size() && line[key.size()] == ':') return kind;
    }
  }
  return std::nullopt;
}

bool is_component_case_file(const std::string& path) {
  return component_case_kind(path).has_value();
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
  if (std::string problem = out.gpus_per_node_problem(); !problem.empty())
    d.add(*r.get("gpus_per_node"), block + ".gpus_per_node", std::move(problem));
  return out;
}

}  // namespace trainsim::scenario
