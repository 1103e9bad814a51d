#pragma once
// Where a layout's ranks run and the communicator groups that follow: the one placement of a plan's ranks
// that the closed-form step, the full-cluster lowering and the asymmetry slow-downs all read.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/spec/parallel_plan.hpp"
#include "models/workload/layer_ops.hpp"
#include "topologies/cluster_spec.hpp"
#include "topologies/collective_cost.hpp"
#include "topologies/placement.hpp"

namespace trainsim::model {

/// The placement of a plan's ranks (the parallel axes in the plan's order, innermost first; dp as its
/// sharding part, then its replicas as the next placement axis) and the placement axis of each ParallelAxis.
struct PlanPlacement {
  topo::Placement placement;
  std::array<std::size_t, 5> at{};
  [[nodiscard]] std::size_t axis(ParallelAxis a) const { return at[static_cast<std::size_t>(a)]; }
};

[[nodiscard]] PlanPlacement plan_placement(const ParallelPlan& plan, const topo::ClusterSpec& cluster);

/// The communicator groups of the representative GPU (rank 0 of the placement).
struct Communicators {
  topo::CommGroup tp, cp, ep, pp;
  topo::CommGroup p2p;        ///< two consecutive pipeline ranks
  topo::CommGroup cp_pair;    ///< two consecutive context-parallel ranks (the ring exchange)
  topo::CommGroup expert_tp;  ///< the ranks splitting one expert: the tp group, or its first expert_tp ranks
  topo::CommGroup expert_tp_ep;          ///< expert_tp × ep: the all-gather token dispatcher's ranks
  std::vector<std::int64_t> stage_node;  ///< node of pipeline rank s's representative GPU
  /// The ranks holding copies of the same (dense) gradients: data replicas over dp, the context-parallel
  /// ranks of one sequence, and the expert-parallel ranks, which are data replicas for the dense layers.
  topo::CommGroup grad;
  /// The part of `grad` that shards ZeRO state (shard_group dp ranks × cp × ep; all of it without
  /// shard_group), and the replicas of one shard across the sharding groups (size 1 without).
  topo::CommGroup shard, replica;
  /// The ranks holding copies of the same expert shard: Megatron-Core's expert-data-parallel group, of
  /// world / (pp · ep · expert_tp) ranks (parallel_state.initialize_model_parallel), over which its
  /// DistributedDataParallel reduces the expert buffers' gradients and its distributed optimizer shards and
  /// gathers expert parameters. Unfolded: dp × cp; folded: the cp and dp ranks the ep group leaves out.
  /// Size 1 (no reduction) when ep takes all of them. `expert_shard` is its part in one sharding group;
  /// its replicas are `replica`.
  topo::CommGroup expert_grad, expert_shard;

  /// The group a layer op's collective runs over.
  [[nodiscard]] const topo::CommGroup& of(CommGroup group) const;
  /// Every group a unit's collectives run over: of(g) at index g for each CommGroup, then cp_pair (the cp
  /// ring's exchange). What keeps priced units apart (kept_units.hpp) reads this list, so a group added to
  /// of() is in it.
  [[nodiscard]] std::array<topo::CommGroup, kCommGroups + 1> unit_groups() const;
};

/// Precondition: the plan passed layout_rules.
[[nodiscard]] Communicators communicators(const ParallelPlan& plan, const topo::ClusterSpec& cluster);

/// The cluster GPU (node · GPUs per node + local index, as topo::ClusterGraph::gpu numbers them) of every
/// GPU a full-cluster step simulates, in the lowering's numbering: instance i = dp index · (tp·cp·ep) +
/// model-parallel rank (tp fastest, then cp, then ep), pipeline rank s → entry i · pp + s
/// (step_network.hpp's StepLayout). The placement is the one the communicator groups come from.
[[nodiscard]] std::vector<std::int64_t> full_cluster_gpus(const ParallelPlan& plan,
                                                          const topo::ClusterSpec& cluster);

}  // namespace trainsim::model
