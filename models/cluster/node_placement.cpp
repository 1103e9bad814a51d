#include "models/cluster/node_placement.hpp"

#include <algorithm>
#include <numeric>

namespace trainsim::model {

namespace {

bool usable(std::span<const std::int32_t> state, std::span<const char> excluded, std::size_t node) {
  return state[node] == kNodeFree && (excluded.empty() || excluded[node] == 0);
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
  const std::int64_t leaves = (n + per_leaf - 1) / per_leaf;
  std::vector<std::int64_t> free_in(static_cast<std::size_t>(leaves), 0);
  for (std::size_t i = 0; i < state.size(); ++i)
    if (usable(state, excluded, i))
      ++free_in[static_cast<std::size_t>(static_cast<std::int64_t>(i) / per_leaf)];
  const std::int64_t need = (count + per_leaf - 1) / per_leaf;
  std::vector<std::int64_t> chosen;
  if (need == 1) {
    std::int64_t best = -1;
    for (std::int64_t l = 0; l < leaves; ++l) {
      const std::int64_t f = free_in[static_cast<std::size_t>(l)];
      if (f >= count && (best < 0 || f < free_in[static_cast<std::size_t>(best)])) best = l;
    }
    if (best < 0) return out;
    chosen.push_back(best);
  } else {
    if (need > leaves) return out;
    const auto crossed = [&](std::int64_t l) {
      return crossings.empty() ? 0 : crossings[static_cast<std::size_t>(l)];
    };
    if (rule == PlacementRule::topology_aware) {
      std::int64_t best = -1;
      std::int64_t best_crossed = 0;
      for (std::int64_t first = 0; first + need <= leaves; ++first) {
        std::int64_t free = 0;
        std::int64_t cross = 0;
        for (std::int64_t l = first; l < first + need; ++l) {
          free += free_in[static_cast<std::size_t>(l)];
          cross += crossed(l);
        }
        if (free >= count && (best < 0 || cross < best_crossed)) {
          best = first;
          best_crossed = cross;
        }
      }
      if (best >= 0) {
        for (std::int64_t l = best; l < best + need; ++l) chosen.push_back(l);
      }
    }
    if (chosen.empty()) {
      std::vector<std::int64_t> order(static_cast<std::size_t>(leaves));
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
        const std::int64_t fa = free_in[static_cast<std::size_t>(a)];
        const std::int64_t fb = free_in[static_cast<std::size_t>(b)];
        return fa != fb ? fa > fb : crossed(a) < crossed(b);
      });
      std::int64_t total = 0;
      for (std::int64_t k = 0; k < need; ++k) {
        chosen.push_back(order[static_cast<std::size_t>(k)]);
        total += free_in[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])];
      }
      if (total < count) return out;
      std::sort(chosen.begin(), chosen.end());
    }
  }
  for (const std::int64_t leaf : chosen) {
    const std::int64_t end = std::min(n, (leaf + 1) * per_leaf);
    for (std::int64_t i = leaf * per_leaf; i < end && static_cast<std::int64_t>(out.size()) < count; ++i)
      if (usable(state, excluded, static_cast<std::size_t>(i))) out.push_back(static_cast<std::int32_t>(i));
  }
  return out;
}

}  // namespace trainsim::model
