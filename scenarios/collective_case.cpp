// Collective validation cases (see collective_case.hpp).
#include "scenarios/collective_case.hpp"

#include <filesystem>

#include "scenarios/component_case.hpp"
#include "scenarios/yaml_tree.hpp"
#include "topologies/collective_cost.hpp"
#include "topologies/placement.hpp"

namespace trainsim::scenario {

bool is_collective_case_file(const std::string& path) {
  return component_case_kind(path) == ComponentKind::collective;
}

CollectiveCase load_collective_case_file(const std::string& path) {
  const YamlValue root = read_case_tree(path);
  Diagnostics d;
  CollectiveCase out;
  out.name = std::filesystem::path(path).stem().string();
  MapReader top(d, root, "", {"name", "collective", "measured"});
  top.require({"collective", "measured"});
  top.string("name", out.name);
  if (const YamlValue* c = top.get("collective")) {
    MapReader r(d, *c, "collective", {"node", "nodes", "gpus_per_node", "op", "size", "algo"});
    r.require({"node", "op", "size"});
    out.cluster = read_case_cluster(r, d, "collective");
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
  if (const YamlValue* c = top.get("collective"); c != nullptr && d.size() == 0) {
    // Bus bandwidth is that of a group, and a named algorithm must run the op there (collective_cost.hpp).
    const std::int64_t gpus = out.cluster.total_gpus();
    const YamlValue* gpn = c->is_mapping() ? c->find("gpus_per_node") : nullptr;
    if (gpus < 2) {
      d.add(gpn != nullptr ? *gpn : *c, "collective.gpus_per_node",
            "a collective runs between at least two GPUs");
    } else {
      const topo::CommGroup group = topo::Placement({gpus}, out.cluster).group(0, 0);
      if (std::string problem = topo::forced_algorithm_problem(out.op, out.algo, group, out.cluster);
          !problem.empty()) {
        const YamlValue* at = c->is_mapping() ? c->find("algo") : nullptr;
        d.add(at != nullptr ? *at : *c, "collective.algo", std::move(problem));
      }
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
