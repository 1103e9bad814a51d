#include "scenarios/collective_case.hpp"

#include <filesystem>
#include <fstream>

#include "scenarios/presets.hpp"
#include "scenarios/yaml_tree.hpp"
#include "sim/error.hpp"

namespace trainsim::scenario {

bool is_collective_case_file(const std::string& path) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("collective:", 0) == 0) return true;
  }
  return false;
}

CollectiveCase load_collective_case_file(const std::string& path) {
  Diagnostics d;
  const std::optional<std::string> text = read_text_file(path, d);
  d.throw_if_any();
  const std::optional<YamlValue> root = parse_yaml_tree(*text, path, d);
  d.throw_if_any();
  CollectiveCase out;
  out.name = std::filesystem::path(path).stem().string();
  MapReader top(d, *root, "", {"name", "collective", "measured"});
  top.require({"collective", "measured"});
  top.string("name", out.name);
  if (const YamlValue* c = top.get("collective")) {
    MapReader r(d, *c, "collective", {"node", "nodes", "gpus_per_node", "op", "size", "algo"});
    r.require({"node", "op", "size"});
    std::string node;
    r.string("node", node);
    if (!node.empty()) {
      try {
        out.cluster.node = node_preset(node);
      } catch (const InputError& e) {
        d.add(*r.get("node"), "collective.node", e.what());
      }
    }
    out.cluster.nodes = 1;
    r.count("nodes", out.cluster.nodes, 1, 1e6);
    r.count("gpus_per_node", out.cluster.gpus_per_node, 1, 1024);
    r.quantity("size", out.bytes, Dimension::bytes);
    std::string op;
    r.string("op", op);
    if (!op.empty()) {
      if (const auto parsed = topo::parse_collective_op(op)) {
        out.op = *parsed;
      } else {
        d.add(*r.get("op"), "collective.op",
              "unknown collective \"" + op +
                  "\"; expected all-reduce, reduce-scatter, all-gather, broadcast, reduce, all-to-all or "
                  "send-recv");
      }
    }
    std::string algo = "auto";
    r.string("algo", algo);
    if (const auto parsed = topo::parse_collective_algo(algo)) {
      out.algo = *parsed;
    } else {
      d.add(*r.get("algo"), "collective.algo",
            "unknown algorithm \"" + algo +
                "\"; expected auto, ring, tree, hierarchical, halving-doubling or nvls");
    }
  }
  if (const YamlValue* m = top.get("measured")) {
    MapReader r(d, *m, "measured", {"source", "busbw", "tolerance"});
    r.require({"source", "busbw"});
    r.string("source", out.source);
    r.number("busbw", out.busbw, 1, 1e15);
    r.number("tolerance", out.tolerance, 0, 100);  // the bound of a scenario's measured.tolerance
  }
  d.throw_if_any();
  return out;
}

}  // namespace trainsim::scenario
