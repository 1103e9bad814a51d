// Token-based MoE dispatch (see expert_dispatch.hpp).
#include "topologies/expert_dispatch.hpp"

#include <algorithm>
#include <cmath>

namespace trainsim::topo {

double expected_other_destinations(double copies, std::int64_t places) {
  if (places <= 1 || !(copies > 0)) return 0.0;
  const auto m = static_cast<double>(places);
  return (m - 1) * (1 - std::pow(1 - 1 / m, copies));
}

double token_based_network_bytes(double bytes, double copies, const CommGroup& group) {
  if (!(copies > 0)) return 0.0;
  return bytes / copies * expected_other_destinations(copies, group.nodes);
}

double token_based_nvlink_size(double bytes, double copies, const CommGroup& group) {
  if (!(copies > 0) || group.size <= 1) return 0.0;
  const auto n = static_cast<double>(group.size);
  return bytes / copies * expected_other_destinations(copies, group.size) * n / (n - 1);
}

CollectiveEstimate token_based_all_to_all(double bytes, double copies, const CommGroup& group,
                                          const ClusterSpec& cluster) {
  if (copies <= 1 || group.size <= 1) {
    return estimate_collective(CollectiveOp::all_to_all, bytes, group, cluster);
  }
  const double nvlink_size = token_based_nvlink_size(bytes, copies, group);
  if (!group.crosses_nodes())
    return estimate_collective(CollectiveOp::all_to_all, nvlink_size, group, cluster);
  const std::int64_t m = group.nodes;
  const std::int64_t k = group.ranks_per_node;
  // The network leg: one rank per node, the k ranks of this group and the other groups on the node all
  // sending at once. The all-to-all's size convention counts the share a rank keeps (1/m).
  const CommGroup network{m, 1, m, group.leaves, std::max<std::int64_t>(1, group.groups_sharing_nics * k)};
  const double network_size =
      token_based_network_bytes(bytes, copies, group) * static_cast<double>(m) / static_cast<double>(m - 1);
  CollectiveEstimate out = estimate_collective(CollectiveOp::all_to_all, network_size, network, cluster);
  // The NVLink leg: each token once to each destination GPU of the node, from the GPU of its local index.
  if (k > 1) {
    const CommGroup node{k, k, 1, 1, 1};
    const CollectiveEstimate nvlink =
        estimate_collective(CollectiveOp::all_to_all, nvlink_size, node, cluster);
    out.time_s = std::max(out.time_s, nvlink.time_s);
  }
  return out;
}

}  // namespace trainsim::topo
