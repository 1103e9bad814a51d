#pragma once
// How running jobs share the fabric between leaves (SPEC "Shared clusters", contention): the links a job
// crosses and each job's steady-state share of them, for one placement epoch (the set of running jobs
// between two changes). Pure functions; the queue simulator (queue_simulator.hpp) calls them whenever the
// running set changes.
//
// The links are the leaf uplink bundles of a two-tier fat-tree: a job whose nodes sit under more than one
// leaf sends its inter-node traffic through the uplinks of every leaf it occupies; a job under one leaf
// never leaves it. Rails are symmetric (every job uses every rail alike, so one bundle stands for a leaf's
// uplinks on all rails) and the spines add no sharing of their own (each leaf has one link to each spine:
// the uplinks are the spine links).
//
// Sharing: weighted max-min by progressive filling. Every job's share rises as level × its weight; a link
// is full when the shares of the jobs crossing it sum to 1; its jobs are frozen at that level; the rest
// go on. A job crossing no link, or alone on all of its links, keeps share 1 (the whole fabric as its own
// step model prices it). Deterministic: links and jobs are visited in index order.
#include <cstdint>
#include <span>
#include <vector>

namespace trainsim::model {

/// One running job as the fabric sees it.
struct FabricJob {
  std::vector<std::int64_t> leaves;  ///< the leaves whose uplinks it crosses, ascending; empty: none
  double weight = 0;                 ///< its inter-node traffic per step (bytes, any common unit); > 0
};

/// The leaves whose uplinks a job on `nodes` crosses: every leaf it occupies when it occupies more than one,
/// else none. Ascending, distinct.
[[nodiscard]] std::vector<std::int64_t> leaves_crossed(std::span<const std::int32_t> nodes,
                                                       std::int64_t nodes_per_leaf);

struct UplinkShares {
  std::vector<double> share;             ///< per job, in (0, 1]
  std::vector<std::int64_t> bottleneck;  ///< per job, the leaf whose uplinks set its share; -1: share 1
};

/// Each job's share of the links it crosses (see the file comment), in `jobs` order. `leaf_count` bounds
/// the leaf indices.
[[nodiscard]] UplinkShares uplink_shares(std::span<const FabricJob> jobs, std::int64_t leaf_count);

/// Shares are priced in steps of 1/kShareBuckets, rounded to the nearest (never to 0): memoised step times
/// stay few while a share is off by at most half a step.
inline constexpr int kShareBuckets = 20;
[[nodiscard]] double share_bucket(double share);

}  // namespace trainsim::model
