// MoE dispatch validation cases (see dispatch_case.hpp).
#include "scenarios/dispatch_case.hpp"

#include <filesystem>

#include "scenarios/component_case.hpp"
#include "scenarios/routing_group_keys.hpp"
#include "scenarios/yaml_tree.hpp"

namespace trainsim::scenario {

bool is_dispatch_case_file(const std::string& path) {
  return component_case_kind(path) == ComponentKind::dispatch;
}

DispatchCase load_dispatch_case_file(const std::string& path) {
  const YamlValue root = read_case_tree(path);
  Diagnostics d;
  DispatchCase out;
  out.name = std::filesystem::path(path).stem().string();
  MapReader top(d, root, "", {"name", "dispatch", "measured"});
  top.require({"dispatch", "measured"});
  top.string("name", out.name);
  if (const YamlValue* c = top.get("dispatch")) {
    MapReader r(d, *c, "dispatch",
                {"node", "nodes", "gpus_per_node", "ep", "dispatcher", "op", "tokens", "hidden", "top_k",
                 "experts", "bytes_per_element", "routing_groups", "routing_group_top_k"});
    r.require(
        {"node", "ep", "dispatcher", "op", "tokens", "hidden", "top_k", "experts", "bytes_per_element"});
    out.cluster = read_case_cluster(r, d, "dispatch");
    r.count("ep", out.ep, 1, 1e6);
    r.choice("dispatcher", out.dispatcher, model::kMoeDispatcherNames);
    if (out.dispatcher == model::MoeDispatcher::all_gather) {
      d.add(*r.get("dispatcher"), "dispatch.dispatcher",
            "the allgather dispatcher sends no all-to-all (it all-gathers the tokens and reduce-scatters the "
            "outputs); expected alltoall, deepep or hybridep");
    }
    r.choice("op", out.op, kDispatchOpNames);
    r.count("tokens", out.tokens, 1, 1e9);
    r.count("hidden", out.hidden, 1, 1e7);
    r.count("top_k", out.top_k, 1, 1e6);
    r.count("experts", out.experts, 1, 1e6);
    r.number("bytes_per_element", out.bytes_per_element, 0.5, 8);
    r.count("routing_groups", out.routing_groups, 1, 1e6);
    r.count("routing_group_top_k", out.routing_group_top_k, 1, 1e6);
    const std::int64_t gpus = out.cluster.total_gpus();
    if (out.ep > 0 && gpus > 0 && out.ep != gpus) {
      d.add(*r.get("ep"), "dispatch.ep",
            "the expert group is the case's whole cluster: expected ep = nodes × GPUs per node = " +
                std::to_string(gpus) + ", not " + std::to_string(out.ep));
    }
    if (out.ep > 0 && out.experts > 0 && out.experts % out.ep != 0) {
      d.add(*r.get("experts"), "dispatch.experts",
            std::to_string(out.experts) + " experts do not split evenly over " + std::to_string(out.ep) +
                " expert-parallel ranks");
    }
    if (out.experts > 0 && out.top_k > out.experts) {
      d.add(*r.get("top_k"), "dispatch.top_k",
            "a token is routed to at most the " + std::to_string(out.experts) + " experts, not " +
                std::to_string(out.top_k));
    } else if (out.experts > 0) {
      model::TransformerSpec routed;
      routed.experts = out.experts;
      routed.top_k = out.top_k;
      routed.routing_groups = out.routing_groups;
      routed.routing_group_top_k = out.routing_group_top_k;
      check_routing_group_keys(d, r, routed);
    }
  }
  if (const YamlValue* m = top.get("measured")) {
    MapReader r(d, *m, "measured", {"source", "time", "tolerance"});
    r.require({"source", "time"});
    r.string("source", out.source);
    r.quantity("time", out.time, Dimension::seconds);
    r.number("tolerance", out.tolerance, 0, 100);  // the bound of a scenario's measured.tolerance
  }
  d.throw_if_any();
  return out;
}

}  // namespace trainsim::scenario
