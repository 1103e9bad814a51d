// Rank placement: mixed-radix rank numbering, innermost axis fastest, rank r on GPU r.
#include "topologies/placement.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "sim/error.hpp"

namespace trainsim::topo {

std::int64_t nodes_per_leaf(const ClusterSpec& cluster) {
  const NetworkSpec& net = cluster.network;
  if (net.topology == FabricTopology::single_switch) return std::max<std::int64_t>(cluster.nodes, 1);
  if (net.topology == FabricTopology::torus_2d || net.topology == FabricTopology::torus_3d) return 1;
  const std::int64_t down = leaf_ports(net).down;
  if (net.rail_optimized) return down;
  return std::max<std::int64_t>(1, down / std::max(cluster.nics_per_node(), 1));
}

Placement::Placement(std::vector<std::int64_t> axis_sizes, std::int64_t gpus_per_node,
                     std::int64_t nodes_per_leaf_count)
    : sizes_(std::move(axis_sizes)), gpus_per_node_(gpus_per_node), nodes_per_leaf_(nodes_per_leaf_count) {
  if (sizes_.empty()) throw InputError("placement: no axes");
  if (gpus_per_node_ < 1 || nodes_per_leaf_ < 1) {
    throw InputError("placement: GPUs per node and nodes per leaf must be >= 1");
  }
  strides_.reserve(sizes_.size());
  for (std::int64_t s : sizes_) {
    if (s < 1) throw InputError("placement: every axis size must be >= 1, got " + std::to_string(s));
    strides_.push_back(world_size_);
    world_size_ *= s;
  }
  if (world_size_ > gpus_per_node_ && world_size_ % gpus_per_node_ != 0) {
    throw InputError("placement: " + std::to_string(world_size_) + " ranks do not fill nodes of " +
                     std::to_string(gpus_per_node_) + " GPUs");
  }
}

Placement::Placement(std::vector<std::int64_t> axis_sizes, const ClusterSpec& cluster)
    : Placement(std::move(axis_sizes), cluster.gpus_in_use_per_node(), nodes_per_leaf(cluster)) {}

std::vector<std::int64_t> Placement::coordinates(std::int64_t rank) const {
  TRAINSIM_CHECK(rank >= 0 && rank < world_size_, "rank out of range");
  std::vector<std::int64_t> c(sizes_.size());
  for (std::size_t a = 0; a < sizes_.size(); ++a) c[a] = (rank / strides_[a]) % sizes_[a];
  return c;
}

std::vector<std::int64_t> Placement::group_members(std::size_t axis, std::int64_t rank) const {
  TRAINSIM_CHECK(rank >= 0 && rank < world_size_, "rank out of range");
  const std::int64_t stride = strides_.at(axis);
  const std::int64_t first = rank - ((rank / stride) % sizes_[axis]) * stride;
  std::vector<std::int64_t> members(static_cast<std::size_t>(sizes_[axis]));
  for (std::int64_t i = 0; i < sizes_[axis]; ++i) members[static_cast<std::size_t>(i)] = first + i * stride;
  return members;
}

CommGroup Placement::group(std::size_t axis, std::int64_t rank) const {
  return group_of(group_members(axis, rank));
}

CommGroup Placement::group(std::span<const std::size_t> axes, std::int64_t rank) const {
  TRAINSIM_CHECK(rank >= 0 && rank < world_size_, "rank out of range");
  // Start from the member whose coordinates along `axes` are all 0, then walk every combination.
  std::int64_t first = rank;
  for (std::size_t a : axes) first -= ((rank / strides_.at(a)) % sizes_.at(a)) * strides_.at(a);
  std::vector<std::int64_t> members{first};
  for (std::size_t a : axes) {
    const std::size_t n = members.size();
    for (std::int64_t i = 1; i < sizes_[a]; ++i) {
      for (std::size_t k = 0; k < n; ++k) members.push_back(members[k] + i * strides_[a]);
    }
  }
  std::sort(members.begin(), members.end());
  return group_of(members);
}

CommGroup Placement::group_of(const std::vector<std::int64_t>& members) const {
  // Members are in increasing rank order, so nodes and leaves change monotonically: count transitions.
  std::int64_t nodes = 0;
  std::int64_t leaves = 0;
  std::int64_t last_node = -1;
  std::int64_t last_leaf = -1;
  for (std::int64_t r : members) {
    if (node_of(r) != last_node) ++nodes, last_node = node_of(r);
    if (leaf_of(r) != last_leaf) ++leaves, last_leaf = leaf_of(r);
  }
  CommGroup g;
  g.size = static_cast<std::int64_t>(members.size());
  g.nodes = nodes;
  g.ranks_per_node = (g.size + nodes - 1) / nodes;  // uneven groups: the most members on one node
  g.leaves = leaves;
  g.groups_sharing_nics = nodes > 1 ? std::max<std::int64_t>(1, gpus_per_node_ / g.ranks_per_node) : 1;
  return g;
}

}  // namespace trainsim::topo
