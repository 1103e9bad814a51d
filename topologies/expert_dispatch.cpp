// Deduplicating MoE dispatch (see expert_dispatch.hpp).
#include "topologies/expert_dispatch.hpp"

#include <algorithm>
#include <cmath>

namespace trainsim::topo {

double expected_remote_nodes(double copies, std::int64_t nodes) {
  if (nodes <= 1 || !(copies > 0)) return 0.0;
  const auto m = static_cast<double>(nodes);
  return (m - 1) * (1 - std::pow(1 - 1 / m, copies));
}

double deduplicated_network_bytes(double bytes, double copies, const CommGroup& group) {
  if (!(copies > 0)) return 0.0;
  return bytes / copies * expected_remote_nodes(copies, group.nodes);
}

CollectiveEstimate deduplicated_all_to_all(double bytes, double copies, const CommGroup& group,
                                           const ClusterSpec& cluster) {
  if (!group.crosses_nodes() || copies <= 1) {
    return estimate_collective(CollectiveOp::all_to_all, bytes, group, cluster);
  }
  const std::int64_t m = group.nodes;
  const std::int64_t k = group.ranks_per_node;
  // The network leg: one rank per node, the k ranks of this group and the other groups on the node all
  // sending at once. The all-to-all's size convention counts the share a rank keeps (1/m).
  const CommGroup network{m, 1, m, group.leaves, std::max<std::int64_t>(1, group.groups_sharing_nics * k)};
  const double network_size =
      deduplicated_network_bytes(bytes, copies, group) * static_cast<double>(m) / static_cast<double>(m - 1);
  CollectiveEstimate out = estimate_collective(CollectiveOp::all_to_all, network_size, network, cluster);
  // The NVLink leg: every copy reaches its expert's GPU through the node's switch (directly, or forwarded
  // by the GPU that received it from the network).
  if (k > 1) {
    const CommGroup node{k, k, 1, 1, 1};
    const CollectiveEstimate nvlink = estimate_collective(CollectiveOp::all_to_all, bytes, node, cluster);
    out.time_s = std::max(out.time_s, nvlink.time_s);
  }
  return out;
}

}  // namespace trainsim::topo
