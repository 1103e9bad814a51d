#pragma once
// Which nodes a job gets (PlacementRule, queue_spec.hpp), over the cluster's node states. Pure functions:
// the queue simulator asks them for a start now, for the head job's reservation on a projected state and
// for a backfill that must avoid the reserved nodes.
#include <cstdint>
#include <span>
#include <vector>

#include "models/cluster/queue_spec.hpp"

namespace trainsim::model {

/// Node state: kNodeFree, kNodeDown or the index of the job holding it.
inline constexpr std::int32_t kNodeFree = -1;
inline constexpr std::int32_t kNodeDown = -2;

/// The leaf switch node `node` hangs under: nodes are numbered leaf by leaf, `nodes_per_leaf` to a leaf
/// (below 1 counts as 1). The one leaf rule of placement, contention and the queue's per-leaf counts.
[[nodiscard]] constexpr std::int64_t leaf_of_node(std::int64_t node, std::int64_t nodes_per_leaf) {
  return node / (nodes_per_leaf < 1 ? 1 : nodes_per_leaf);
}
/// How many leaves `nodes` nodes occupy by leaf_of_node (the last one may be partly filled).
[[nodiscard]] constexpr std::int64_t leaf_count(std::int64_t nodes, std::int64_t nodes_per_leaf) {
  return nodes <= 0 ? 0 : leaf_of_node(nodes - 1, nodes_per_leaf) + 1;
}

/// `count` nodes among those with state kNodeFree and not `excluded` (empty: none excluded; else one flag
/// per node), by `rule`; empty when they cannot be placed. Deterministic: first fit takes the lowest
/// indices; leaf-aware takes ceil(count / nodes_per_leaf) leaves — for a job within one leaf the leaf with
/// the fewest free nodes that still holds it (best fit), else the leaves with the most free nodes (ties:
/// lower leaf) — and the lowest free indices in them. Topology-aware takes as many leaves, a job within one
/// leaf as leaf-aware does; a wider one the run of adjacent leaves holding enough free nodes whose uplinks
/// the fewest running jobs cross (`crossings`, one count per leaf; empty: none), ties to the lower run; when
/// no run holds it, leaf-aware's leaves with ties broken by fewer crossings; and when the fewest leaves
/// cannot hold it, as many leaves as it takes, the least crossed first (so it never waits while enough
/// nodes are free).
[[nodiscard]] std::vector<std::int32_t> place_nodes(std::span<const std::int32_t> state, std::int64_t count,
                                                    PlacementRule rule, std::int64_t nodes_per_leaf,
                                                    std::span<const char> excluded = {},
                                                    std::span<const int> crossings = {});

}  // namespace trainsim::model
