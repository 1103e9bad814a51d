// Token-based MoE dispatch (see expert_dispatch.hpp).
#include "topologies/expert_dispatch.hpp"

#include <algorithm>
#include <cmath>

namespace trainsim::topo {

namespace {

// C(n − g, t) / C(n, t) for real n and g (gamma functions): the chance that t of n groups picked at random
// miss all g of a place's. 0 once fewer than t groups lie outside the place.
double all_picked_elsewhere(double n, double g, double t) {
  if (n - g < t) return 0.0;
  return std::exp(std::lgamma(n - g + 1) - std::lgamma(n - g - t + 1) - std::lgamma(n + 1) +
                  std::lgamma(n - t + 1));
}

}  // namespace

double expected_other_destinations(const TokenRouting& routing, std::int64_t places) {
  const double c = routing.copies;
  if (places <= 1 || !(c > 0)) return 0.0;
  const auto m = static_cast<double>(places);
  const double balanced = (m - 1) * (1 - std::pow(1 - 1 / m, c));
  if (!routing.group_limited()) return balanced;
  const auto groups = static_cast<double>(routing.groups);
  const auto t = static_cast<double>(routing.group_top_k);
  const double limited = m <= groups ? (m - 1) * (1 - all_picked_elsewhere(groups, groups / m, t))
                                     : (m - 1) * (t / groups) * (1 - std::pow(1 - groups / m, c / t));
  return std::min(limited, balanced);
}

double token_based_network_bytes(double bytes, const TokenRouting& routing, const CommGroup& group) {
  if (!(routing.copies > 0)) return 0.0;
  return bytes / routing.copies * expected_other_destinations(routing, group.nodes);
}

double expected_destination_gpus(const TokenRouting& routing, std::int64_t gpus) {
  if (!(routing.copies > 0) || gpus <= 1) return 1.0;
  const auto n = static_cast<double>(gpus);
  return expected_other_destinations(routing, gpus) * n / (n - 1);
}

double token_based_nvlink_size(double bytes, const TokenRouting& routing, const CommGroup& group) {
  if (!(routing.copies > 0) || group.size <= 1) return 0.0;
  return bytes / routing.copies * expected_destination_gpus(routing, group.size);
}

CollectiveEstimate token_based_all_to_all(double bytes, const TokenRouting& routing, const CommGroup& group,
                                          const ClusterSpec& cluster, double copy_bytes_per_s) {
  constexpr AllToAllKernel kKernel = AllToAllKernel::device_initiated;
  // The NVLink leg as the link carries it, or as the dispatcher's kernels copy it when that is slower.
  auto nvlink_leg = [&](double size, const CommGroup& on) {
    CollectiveEstimate e = estimate_all_to_all(size, on, cluster, kKernel);
    if (copy_bytes_per_s > 0 && on.size > 1) e.time_s = std::max(e.time_s, size / copy_bytes_per_s);
    return e;
  };
  if (routing.copies <= 1 || group.size <= 1) {
    if (group.crosses_nodes()) return estimate_all_to_all(bytes, group, cluster, kKernel);
    return nvlink_leg(bytes, group);
  }
  const double nvlink_size = token_based_nvlink_size(bytes, routing, group);
  if (!group.crosses_nodes()) return nvlink_leg(nvlink_size, group);
  const std::int64_t m = group.nodes;
  const std::int64_t k = group.ranks_per_node;
  // The network leg: one rank per node, the k ranks of this group and the other groups on the node all
  // sending at once. The all-to-all's size convention counts the share a rank keeps (1/m).
  const CommGroup network{m, 1, m, group.leaves, std::max<std::int64_t>(1, group.groups_sharing_nics * k)};
  const double network_size =
      token_based_network_bytes(bytes, routing, group) * static_cast<double>(m) / static_cast<double>(m - 1);
  CollectiveEstimate out = estimate_collective(CollectiveOp::all_to_all, network_size, network, cluster);
  // The NVLink leg: each token once to each destination GPU of the node, from the GPU of its local index.
  if (k > 1) {
    const CommGroup node{k, k, 1, 1, 1};
    out.time_s = std::max(out.time_s, nvlink_leg(nvlink_size, node).time_s);
  }
  return out;
}

}  // namespace trainsim::topo
