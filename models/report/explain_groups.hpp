#pragma once
// The communicator groups part of `trainsim explain`: where each parallel axis's group of the representative
// GPU runs (models/step/communicators.hpp) — its GPUs, how many share a node (an NVLink domain), how many
// nodes and leaf switches it spans — the numbers every collective of the step is priced on.
#include "models/report/explain.hpp"
#include "models/spec/parallel_plan.hpp"
#include "topologies/cluster_spec.hpp"

namespace trainsim::model {

/// The section "communicator groups (rank order …)": tensor, context, expert, pipeline and data-parallel
/// groups (the sharding group and HSDP's replicas when they differ), each a line of its size. Throws
/// InputError when the plan's ranks cannot be placed on the cluster.
[[nodiscard]] ExplainSection explain_groups(const ParallelPlan& plan, const topo::ClusterSpec& cluster);

}  // namespace trainsim::model
