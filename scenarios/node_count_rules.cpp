#include "scenarios/node_count_rules.hpp"

#include <fmt/format.h>

namespace trainsim::scenario {

std::string torus_dims_problem(const std::vector<int>& dims, std::int64_t nodes) {
  std::int64_t product = 1;  // at most 3 sizes of at most 1e6 (the reader's bounds): no overflow
  for (const int k : dims) product *= k;
  if (dims.empty() || product == nodes) return "";
  return fmt::format("the sizes multiply to {} nodes; the cluster has {}", product, nodes);
}

std::string concurrent_trials_problem(std::int64_t concurrent, std::int64_t nodes) {
  if (concurrent <= nodes) return "";
  return fmt::format(
      "{} trials at a time need at least one node each; the cluster has {}: set concurrent to at most {} "
      "(the rest of the trials wait their turn)",
      concurrent, nodes, nodes);
}

std::string node_count_problem(const Scenario& s, std::int64_t nodes) {
  const topo::ClusterSpec& c = s.cluster;
  if (std::string p = torus_dims_problem(c.network.torus_dims, nodes); !p.empty())
    return "cluster.network.torus_dims: " + p;
  for (const topo::Straggler& x : c.stragglers) {
    if (x.node >= nodes)
      return fmt::format("cluster.stragglers: node {} is not among the cluster's {} nodes", x.node, nodes);
  }
  for (const topo::DegradedNic& x : c.degraded) {
    if (x.node >= nodes)
      return fmt::format("cluster.degraded: node {} is not among the cluster's {} nodes", x.node, nodes);
  }
  if (s.tuning) {
    if (std::string p = concurrent_trials_problem(s.tuning->concurrent, nodes); !p.empty())
      return "tuning.concurrent: " + p;
  }
  return "";
}

}  // namespace trainsim::scenario
