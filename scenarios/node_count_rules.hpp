#pragma once
// The keys that name nodes, against a node count other than the scenario's own: a torus's sizes multiply to
// the node count, a straggler or degraded NIC names a node the cluster has, and concurrent tuning trials get
// a node each. The reader checks them against cluster.nodes (and again for every `--set cluster.nodes=N` and
// sweep point, which re-read the file); `search --nodes N` prices node counts the file never read, so it asks
// here first.
#include <cstdint>
#include <string>
#include <vector>

#include "scenarios/scenario.hpp"

namespace trainsim::scenario {

/// What is wrong with a torus of `dims` on `nodes` nodes (its sizes multiply to another count); "" when
/// nothing. The reader places it at cluster.network.torus_dims.
[[nodiscard]] std::string torus_dims_problem(const std::vector<int>& dims, std::int64_t nodes);

/// What is wrong with `concurrent` tuning trials at a time on `nodes` nodes (each needs one); "" when
/// nothing. The reader places it at tuning.concurrent.
[[nodiscard]] std::string concurrent_trials_problem(std::int64_t concurrent, std::int64_t nodes);

/// The first problem `s`'s node-naming keys have on `nodes` nodes, as "key path: what is wrong"; "" when
/// none.
[[nodiscard]] std::string node_count_problem(const Scenario& s, std::int64_t nodes);

}  // namespace trainsim::scenario
