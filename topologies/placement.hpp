#pragma once
// Rank placement: which GPU each rank of a multi-axis parallel layout runs on, and how the communicator
// group of one axis sits on the cluster. Ranks are numbered with the innermost axis varying fastest
// (Megatron-Core's default order tp, cp, ep, dp, pp keeps a TP group inside one node); rank r runs on GPU r,
// i.e. node r / gpus_per_node. Axes are plain sizes here; models/ maps its ParallelAxis order onto them.
#include <cstdint>
#include <span>
#include <vector>

#include "topologies/cluster_spec.hpp"
#include "topologies/collective_cost.hpp"

namespace trainsim::topo {

/// Nodes whose GPUs reach each other through one leaf switch (rail-optimized: one switch per rail, each
/// node one port on it; otherwise all of a node's NICs on one leaf). single_switch: every node. Fat-trees:
/// a leaf of `switch_radix` ports gives radix·o/(o+1) ports down at oversubscription o. Torus: 1 (every
/// node is its own router). Always ≥ 1.
[[nodiscard]] std::int64_t nodes_per_leaf(const ClusterSpec& cluster);

class Placement {
 public:
  /// `axis_sizes` innermost first, each ≥ 1; their product is the world size and must be a multiple of
  /// gpus_per_node or smaller than it. Throws InputError otherwise.
  Placement(std::vector<std::int64_t> axis_sizes, std::int64_t gpus_per_node, std::int64_t nodes_per_leaf);
  /// Uses cluster.gpus_in_use_per_node() and nodes_per_leaf(cluster).
  Placement(std::vector<std::int64_t> axis_sizes, const ClusterSpec& cluster);

  [[nodiscard]] std::int64_t world_size() const { return world_size_; }
  [[nodiscard]] std::size_t axis_count() const { return sizes_.size(); }
  [[nodiscard]] std::int64_t axis_size(std::size_t axis) const { return sizes_.at(axis); }
  /// Distance in rank numbers between neighbours along `axis` (product of the inner axes' sizes).
  [[nodiscard]] std::int64_t axis_stride(std::size_t axis) const { return strides_.at(axis); }
  /// Coordinate of `rank` along each axis, innermost first.
  [[nodiscard]] std::vector<std::int64_t> coordinates(std::int64_t rank) const;
  [[nodiscard]] std::int64_t node_of(std::int64_t rank) const { return rank / gpus_per_node_; }
  [[nodiscard]] std::int64_t leaf_of(std::int64_t rank) const { return node_of(rank) / nodes_per_leaf_; }

  /// The ranks sharing every coordinate with `rank` except along `axis`, in axis order (ring order).
  [[nodiscard]] std::vector<std::int64_t> group_members(std::size_t axis, std::int64_t rank) const;
  /// The communicator group of `rank` along `axis`: size, members per node, nodes, leaves spanned, and
  /// groups_sharing_nics = gpus_per_node / ranks_per_node when it crosses nodes (all sibling groups of the
  /// axis communicate at once), else 1.
  [[nodiscard]] CommGroup group(std::size_t axis, std::int64_t rank) const;
  /// The group of `rank` spanning several axes at once (e.g. dp and cp: the ranks that reduce the same
  /// gradients), with the same fields as above. Lists a few periods of the outermost axis, not every
  /// member (see blocks_spanned), so a data-parallel group of any size costs O(GPUs per leaf).
  [[nodiscard]] CommGroup group(std::span<const std::size_t> axes, std::int64_t rank) const;

 private:
  /// How many blocks of `block` consecutive ranks the members (first + combinations along the axes) touch.
  /// InputError when even that needs more than 2^22 listed members (inner axes of millions of ranks).
  [[nodiscard]] std::int64_t blocks_spanned(std::span<const std::size_t> sorted_axes, std::int64_t first,
                                            std::int64_t block) const;

  std::vector<std::int64_t> sizes_;
  std::vector<std::int64_t> strides_;
  std::int64_t world_size_ = 1;
  std::int64_t gpus_per_node_ = 1;
  std::int64_t nodes_per_leaf_ = 1;
};

}  // namespace trainsim::topo
