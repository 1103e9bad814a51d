#include "models/cluster/uplink_shares.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/cluster/node_placement.hpp"

namespace trainsim::model {

std::vector<std::int64_t> leaves_crossed(std::span<const std::int32_t> nodes, std::int64_t nodes_per_leaf) {
  std::vector<std::int64_t> out;
  out.reserve(nodes.size());
  for (const std::int32_t n : nodes) out.push_back(leaf_of_node(n, nodes_per_leaf));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.size() < 2) out.clear();
  return out;
}

UplinkShares uplink_shares(std::span<const FabricJob> jobs, std::int64_t leaf_count) {
  const auto links = static_cast<std::size_t>(std::max<std::int64_t>(leaf_count, 0));
  UplinkShares out;
  out.share.assign(jobs.size(), 1.0);
  out.bottleneck.assign(jobs.size(), -1);
  std::vector<double>& share = out.share;
  std::vector<char> frozen(jobs.size(), 0);
  std::vector<std::vector<std::size_t>> on(links);  // the jobs crossing each link
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    if (jobs[j].leaves.empty() || !(jobs[j].weight > 0)) {
      frozen[j] = 1;
      continue;
    }
    for (const std::int64_t l : jobs[j].leaves) on[static_cast<std::size_t>(l)].push_back(j);
  }
  // A link with one job on it never limits it (share 1 is its own step model's fabric).
  std::vector<double> used(links, 0.0);  // shares of the frozen jobs on each link
  for (;;) {
    double level = std::numeric_limits<double>::infinity();
    std::size_t full = links;
    for (std::size_t l = 0; l < links; ++l) {
      if (on[l].size() < 2) continue;
      double weight = 0;
      for (const std::size_t j : on[l])
        if (frozen[j] == 0) weight += jobs[j].weight;
      if (weight <= 0) continue;
      const double at = std::max(0.0, 1.0 - used[l]) / weight;
      if (at < level) {
        level = at;
        full = l;
      }
    }
    // No job may pass share 1: the heaviest unfrozen job reaches it at level 1 / weight.
    double heaviest = 0;
    for (std::size_t j = 0; j < jobs.size(); ++j)
      if (frozen[j] == 0) heaviest = std::max(heaviest, jobs[j].weight);
    if (heaviest <= 0) break;
    if (full == links || 1.0 / heaviest <= level) {
      // Every remaining job reaches share 1 no later than any link fills: freeze those that do now.
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        if (frozen[j] != 0 || jobs[j].weight < heaviest) continue;
        frozen[j] = 1;
        share[j] = 1.0;
        for (const std::int64_t l : jobs[j].leaves) used[static_cast<std::size_t>(l)] += 1.0;
      }
      continue;
    }
    for (const std::size_t j : on[full]) {
      if (frozen[j] != 0) continue;
      frozen[j] = 1;
      share[j] = std::min(1.0, level * jobs[j].weight);
      if (share[j] < 1.0) out.bottleneck[j] = static_cast<std::int64_t>(full);
      for (const std::int64_t l : jobs[j].leaves) used[static_cast<std::size_t>(l)] += share[j];
    }
  }
  return out;
}

double share_bucket(double share) {
  const double b = std::round(std::clamp(share, 0.0, 1.0) * kShareBuckets);
  return std::max(1.0, b) / kShareBuckets;
}

}  // namespace trainsim::model
