#include "models/cluster/node_placement.hpp"

#include <algorithm>
#include <numeric>

namespace trainsim::model {

namespace {

bool usable(std::span<const std::int32_t> state, std::span<const char> excluded, std::size_t node) {
  return state[node] == kNodeFree && (excluded.empty() || excluded[node] == 0);
}

/// The free nodes per leaf and the running jobs crossing each leaf's uplinks (0 when not given).
struct Leaves {
  std::vector<std::int64_t> free;
  std::span<const int> crossings;
  [[nodiscard]] std::int64_t count() const { return static_cast<std::int64_t>(free.size()); }
  [[nodiscard]] std::int64_t free_in(std::int64_t l) const { return free[static_cast<std::size_t>(l)]; }
  [[nodiscard]] int crossed(std::int64_t l) const {
    return crossings.empty() ? 0 : crossings[static_cast<std::size_t>(l)];
  }
};

/// The leaf with the fewest free nodes that still holds `count` (ties: lower leaf); empty when none does.
std::vector<std::int64_t> best_fit_leaf(const Leaves& leaves, std::int64_t count) {
  std::int64_t best = -1;
  for (std::int64_t l = 0; l < leaves.count(); ++l) {
    const std::int64_t f = leaves.free_in(l);
    if (f >= count && (best < 0 || f < leaves.free_in(best))) best = l;
  }
  return best < 0 ? std::vector<std::int64_t>{} : std::vector<std::int64_t>{best};
}

/// `need` leaves with the most free nodes (ties: fewer crossing jobs, then lower leaf), ascending; empty when
/// they do not hold `count`.
std::vector<std::int64_t> fullest_leaves(const Leaves& leaves, std::int64_t count, std::int64_t need) {
  if (need > leaves.count()) return {};
  std::vector<std::int64_t> order(static_cast<std::size_t>(leaves.count()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    const std::int64_t fa = leaves.free_in(a);
    const std::int64_t fb = leaves.free_in(b);
    return fa != fb ? fa > fb : leaves.crossed(a) < leaves.crossed(b);
  });
  order.resize(static_cast<std::size_t>(need));
  std::int64_t total = 0;
  for (const std::int64_t l : order) total += leaves.free_in(l);
  if (total < count) return {};
  std::sort(order.begin(), order.end());
  return order;
}

/// The run of `need` adjacent leaves holding `count` free nodes whose uplinks the fewest running jobs cross
/// (ties: the lowest run); empty when no run holds them.
std::vector<std::int64_t> quietest_run(const Leaves& leaves, std::int64_t count, std::int64_t need) {
  std::int64_t best = -1;
  std::int64_t best_crossed = 0;
  for (std::int64_t first = 0; first + need <= leaves.count(); ++first) {
    std::int64_t free = 0;
    std::int64_t crossed = 0;
    for (std::int64_t l = first; l < first + need; ++l) {
      free += leaves.free_in(l);
      crossed += leaves.crossed(l);
    }
    if (free >= count && (best < 0 || crossed < best_crossed)) {
      best = first;
      best_crossed = crossed;
    }
  }
  std::vector<std::int64_t> out;
  for (std::int64_t l = best; best >= 0 && l < best + need; ++l) out.push_back(l);
  return out;
}

/// Leaves with free nodes, the least crossed first (ties: more free nodes, then lower leaf), until they hold
/// `count`; ascending. Empty when all of them do not.
std::vector<std::int64_t> least_crossed_leaves(const Leaves& leaves, std::int64_t count) {
  std::vector<std::int64_t> order;
  for (std::int64_t l = 0; l < leaves.count(); ++l)
    if (leaves.free_in(l) > 0) order.push_back(l);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    if (leaves.crossed(a) != leaves.crossed(b)) return leaves.crossed(a) < leaves.crossed(b);
    return leaves.free_in(a) > leaves.free_in(b);
  });
  std::int64_t total = 0;
  std::size_t taken = 0;
  while (taken < order.size() && total < count) total += leaves.free_in(order[taken++]);
  if (total < count) return {};
  order.resize(taken);
  std::sort(order.begin(), order.end());
  return order;
}

}  // namespace

std::vector<std::int32_t> place_nodes(std::span<const std::int32_t> state, std::int64_t count,
                                      PlacementRule rule, std::int64_t nodes_per_leaf,
                                      std::span<const char> excluded, std::span<const int> crossings) {
  std::vector<std::int32_t> out;
  const auto n = static_cast<std::int64_t>(state.size());
  if (count <= 0 || count > n) return out;
  if (rule == PlacementRule::first_fit) {
    for (std::size_t i = 0; i < state.size() && static_cast<std::int64_t>(out.size()) < count; ++i)
      if (usable(state, excluded, i)) out.push_back(static_cast<std::int32_t>(i));
    if (static_cast<std::int64_t>(out.size()) < count) out.clear();
    return out;
  }
  const std::int64_t per_leaf = std::max<std::int64_t>(1, nodes_per_leaf);
  Leaves leaves;
  leaves.free.assign(static_cast<std::size_t>(leaf_count(n, per_leaf)), 0);
  leaves.crossings = crossings;
  for (std::size_t i = 0; i < state.size(); ++i)
    if (usable(state, excluded, i))
      ++leaves.free[static_cast<std::size_t>(leaf_of_node(static_cast<std::int64_t>(i), per_leaf))];
  const std::int64_t need = (count + per_leaf - 1) / per_leaf;
  std::vector<std::int64_t> chosen;
  if (need == 1) {
    chosen = best_fit_leaf(leaves, count);
  } else if (rule == PlacementRule::topology_aware) {
    chosen = quietest_run(leaves, count, need);
    if (chosen.empty()) chosen = fullest_leaves(leaves, count, need);
  } else {
    chosen = fullest_leaves(leaves, count, need);
  }
  if (chosen.empty() && rule == PlacementRule::topology_aware) chosen = least_crossed_leaves(leaves, count);
  for (const std::int64_t leaf : chosen) {
    const std::int64_t end = std::min(n, (leaf + 1) * per_leaf);
    for (std::int64_t i = leaf * per_leaf; i < end && static_cast<std::int64_t>(out.size()) < count; ++i)
      if (usable(state, excluded, static_cast<std::size_t>(i))) out.push_back(static_cast<std::int32_t>(i));
  }
  return out;
}

}  // namespace trainsim::model
