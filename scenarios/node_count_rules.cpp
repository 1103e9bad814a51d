#include "scenarios/node_count_rules.hpp"

#include <fmt/format.h>

namespace trainsim::scenario {

std::string node_count_problem(const Scenario& s, std::int64_t nodes) {
  const topo::ClusterSpec& c = s.cluster;
  if (!c.network.torus_dims.empty()) {
    std::int64_t product = 1;  // at most 3 sizes of at most 1e6 (the reader's bounds): no overflow
    for (const int k : c.network.torus_dims) product *= k;
    if (product != nodes) {
      return fmt::format("cluster.network.torus_dims: the sizes multiply to {} nodes; the cluster has {}",
                         product, nodes);
    }
  }
  for (const topo::Straggler& x : c.stragglers) {
    if (x.node >= nodes)
      return fmt::format("cluster.stragglers: node {} is not among the cluster's {} nodes", x.node, nodes);
  }
  for (const topo::DegradedNic& x : c.degraded) {
    if (x.node >= nodes)
      return fmt::format("cluster.degraded: node {} is not among the cluster's {} nodes", x.node, nodes);
  }
  if (s.tuning && s.tuning->concurrent > nodes) {
    return fmt::format(
        "tuning.concurrent: {} trials at a time need at least one node each; the cluster has {}",
        s.tuning->concurrent, nodes);
  }
  return "";
}

}  // namespace trainsim::scenario
