// The placement of a plan's ranks and its communicator groups (see communicators.hpp).
#include "models/step/communicators.hpp"

#include <algorithm>
#include <array>
#include <span>
#include <utility>

#include "sim/error.hpp"

namespace trainsim::model {

namespace {

// Two neighbouring ranks of `axis_group`: on one node, or on two (then sharing the NICs with the other
// groups that send at the same moment, as the axis group's NIC sharing says).
topo::CommGroup neighbour_pair(const topo::CommGroup& axis_group) {
  const bool crosses = axis_group.crosses_nodes();
  return topo::CommGroup{2, crosses ? 1 : 2, crosses ? 2 : 1, axis_group.crosses_leaf() ? 2 : 1,
                         crosses ? axis_group.groups_sharing_nics : 1};
}

// The parallel axes in the plan's order, every one of the five present.
std::vector<ParallelAxis> placement_order(const ParallelPlan& plan) {
  std::vector<ParallelAxis> axes = plan.order;
  for (ParallelAxis a :
       {ParallelAxis::tp, ParallelAxis::cp, ParallelAxis::ep, ParallelAxis::pp, ParallelAxis::dp}) {
    if (std::find(axes.begin(), axes.end(), a) == axes.end()) axes.push_back(a);
  }
  return axes;
}

// The placement of a plan's ranks: the parallel axes in the plan's order, each as one placement axis or
// split in two (an inner part of `inner[a]` ranks, then the rest), dp always as its sharding groups inside
// their replicas (a sharding group is consecutive dp ranks; `inner[dp]` splits the sharding part). `at` is
// the first placement axis of each parallel axis.
PlanPlacement place_axes(const ParallelPlan& plan, const topo::ClusterSpec& cluster,
                         const std::array<std::int64_t, 5>& inner = {1, 1, 1, 1, 1}) {
  std::vector<std::int64_t> sizes;
  std::array<std::size_t, 5> at{};
  auto add = [&](std::int64_t whole, std::int64_t part) {
    if (part > 1 && part < whole) {
      sizes.push_back(part);
      sizes.push_back(whole / part);
    } else {
      sizes.push_back(whole);
    }
  };
  for (ParallelAxis a : placement_order(plan)) {
    const auto k = static_cast<std::size_t>(a);
    at[k] = sizes.size();
    switch (a) {
      case ParallelAxis::tp:
        add(plan.tp, inner[k]);
        break;
      case ParallelAxis::cp:
        add(plan.cp, inner[k]);
        break;
      case ParallelAxis::ep:
        sizes.push_back(plan.ep_axis());
        break;
      case ParallelAxis::pp:
        sizes.push_back(plan.pp);
        break;
      case ParallelAxis::dp:
        add(plan.dp_shard(), inner[k]);
        sizes.push_back(plan.dp / plan.dp_shard());
        break;
    }
  }
  return PlanPlacement{topo::Placement(sizes, cluster), at};
}

}  // namespace

PlanPlacement plan_placement(const ParallelPlan& plan, const topo::ClusterSpec& cluster) {
  return place_axes(plan, cluster);
}

namespace {

// Folded expert parallelism (ParallelPlan::expert_folding) and experts split over fewer ranks than tp
// (ParallelPlan::expert_tp): the expert-parallel group is the first ep ranks of (tp/expert_tp) × cp × dp, in
// that order, and an expert's own tensor-parallel group the first expert_tp ranks of tp. Placed with tp, cp
// and dp's sharding part each split at the size the groups take, both are products of whole axes.
struct ExpertGroups {
  topo::CommGroup ep, expert_tp, expert_tp_ep, expert_grad, expert_shard;
};
ExpertGroups folded_expert_groups(const ParallelPlan& plan, const topo::ClusterSpec& cluster) {
  const std::int64_t etp = plan.expert_tensor_parallel();
  const auto [tp_part, cp_part, dp_part, valid] = plan.folded_experts();
  TRAINSIM_CHECK(valid, "folded_expert_groups needs a layout that passed layout_rules");
  std::array<std::int64_t, 5> inner{1, 1, 1, 1, 1};
  inner[static_cast<std::size_t>(ParallelAxis::tp)] = etp;
  inner[static_cast<std::size_t>(ParallelAxis::cp)] = cp_part;
  inner[static_cast<std::size_t>(ParallelAxis::dp)] = dp_part;
  const PlanPlacement placed = place_axes(plan, cluster, inner);
  const topo::Placement& placement = placed.placement;
  const std::size_t tp_at = placed.axis(ParallelAxis::tp);  // expert_tp (or the whole tp) here
  const bool tp_split = etp > 1 && etp < plan.tp;
  std::vector<std::size_t> ep_axes;  // inner parts sit at each axis's first placement axis
  if (tp_part > 1) ep_axes.push_back(tp_split ? tp_at + 1 : tp_at);
  if (cp_part > 1) ep_axes.push_back(placed.axis(ParallelAxis::cp));
  if (dp_part > 1) ep_axes.push_back(placed.axis(ParallelAxis::dp));
  ExpertGroups out;
  if (!ep_axes.empty()) out.ep = placement.group(std::span<const std::size_t>(ep_axes), 0);
  if (etp > 1) out.expert_tp = placement.group(tp_at, 0);
  // The all-gather dispatcher's group: an expert's own tp ranks with its expert-parallel ones.
  if (etp > 1) ep_axes.insert(ep_axes.begin(), tp_at);
  if (!ep_axes.empty()) out.expert_tp_ep = placement.group(std::span<const std::size_t>(ep_axes), 0);
  // The expert-data-parallel group: the parts of cp and of dp's sharding part outside the ep group (tp's
  // part outside expert_tp is always in it), then dp's replicas. An axis split in two has its outer part
  // one placement axis further; one taken whole by ep adds nothing.
  std::vector<std::size_t> edp_axes;
  const std::size_t cp_at = placed.axis(ParallelAxis::cp);
  const std::size_t dp_at = placed.axis(ParallelAxis::dp);
  if (cp_part < plan.cp) edp_axes.push_back(cp_part > 1 ? cp_at + 1 : cp_at);
  const bool dp_split = dp_part > 1 && dp_part < plan.dp_shard();
  if (dp_part < plan.dp_shard()) edp_axes.push_back(dp_split ? dp_at + 1 : dp_at);
  const std::size_t replica_at = dp_split ? dp_at + 2 : dp_at + 1;
  if (!edp_axes.empty()) out.expert_shard = placement.group(std::span<const std::size_t>(edp_axes), 0);
  edp_axes.push_back(replica_at);
  out.expert_grad = placement.group(std::span<const std::size_t>(edp_axes), 0);
  return out;
}

}  // namespace

const topo::CommGroup& Communicators::of(CommGroup group) const {
  switch (group) {
    case CommGroup::tp:
      return tp;
    case CommGroup::cp:
      return cp;
    case CommGroup::ep:
      return ep;
    case CommGroup::expert_tp:
      return expert_tp;
    case CommGroup::expert_tp_ep:
      return expert_tp_ep;
  }
  return tp;
}

std::array<topo::CommGroup, kCommGroups + 1> Communicators::unit_groups() const {
  std::array<topo::CommGroup, kCommGroups + 1> out;
  for (std::size_t g = 0; g < kCommGroups; ++g) out[g] = of(static_cast<CommGroup>(g));
  out[kCommGroups] = cp_pair;
  return out;
}

Communicators communicators(const ParallelPlan& plan, const topo::ClusterSpec& cluster) {
  const PlanPlacement placed = plan_placement(plan, cluster);
  const topo::Placement& placement = placed.placement;
  auto index_of = [&](ParallelAxis a) { return placed.axis(a); };
  auto group = [&](ParallelAxis a) { return placement.group(index_of(a), 0); };
  Communicators g;
  g.tp = group(ParallelAxis::tp);
  g.cp = group(ParallelAxis::cp);
  if (plan.expert_folding) {
    const ExpertGroups experts = folded_expert_groups(plan, cluster);
    g.ep = experts.ep;
    g.expert_tp = experts.expert_tp;
    g.expert_tp_ep = experts.expert_tp_ep;
    g.expert_grad = experts.expert_grad;
    g.expert_shard = experts.expert_shard;
  } else {
    g.ep = group(ParallelAxis::ep);
    g.expert_tp = g.tp;
    const std::array<std::size_t, 2> dispatch_axes{index_of(ParallelAxis::tp), index_of(ParallelAxis::ep)};
    g.expert_tp_ep = placement.group(dispatch_axes, 0);
  }
  g.pp = group(ParallelAxis::pp);
  for (std::int64_t s = 0; s < plan.pp; ++s) {
    g.stage_node.push_back(placement.node_of(s * placement.axis_stride(index_of(ParallelAxis::pp))));
  }
  const std::size_t dp_shard = index_of(ParallelAxis::dp);
  const std::array<std::size_t, 4> grad_axes{dp_shard, dp_shard + 1, index_of(ParallelAxis::cp),
                                             index_of(ParallelAxis::ep)};
  g.grad = placement.group(grad_axes, 0);
  if (plan.dp_shard() == plan.dp) {  // one sharding group: listed once (a group can hold a million ranks)
    g.shard = g.grad;
  } else {
    const std::array<std::size_t, 3> shard_axes{dp_shard, index_of(ParallelAxis::cp),
                                                index_of(ParallelAxis::ep)};
    g.shard = placement.group(shard_axes, 0);
    g.replica = placement.group(dp_shard + 1, 0);
  }
  if (!plan.expert_folding) {  // an expert's copies: dp × cp, the ep ranks holding other experts
    const std::array<std::size_t, 3> expert_axes{dp_shard, dp_shard + 1, index_of(ParallelAxis::cp)};
    g.expert_grad = placement.group(expert_axes, 0);
    const std::array<std::size_t, 2> expert_shard_axes{dp_shard, index_of(ParallelAxis::cp)};
    g.expert_shard = placement.group(expert_shard_axes, 0);
  }
  // Consecutive pipeline stages exchange activations; consecutive context-parallel ranks pass K/V blocks
  // around their ring.
  g.p2p = neighbour_pair(g.pp);
  g.cp_pair = neighbour_pair(g.cp);
  return g;
}

std::vector<std::int64_t> full_cluster_gpus(const ParallelPlan& plan, const topo::ClusterSpec& cluster) {
  const PlanPlacement placed = plan_placement(plan, cluster);
  const topo::Placement& placement = placed.placement;
  auto stride = [&](ParallelAxis a) { return placement.axis_stride(placed.axis(a)); };
  const std::size_t dp_shard = placed.axis(ParallelAxis::dp);
  const std::int64_t model_ranks = static_cast<std::int64_t>(plan.tp) * plan.cp * plan.ep_axis();
  const std::int64_t shard = plan.dp_shard();
  std::vector<std::int64_t> gpus;
  gpus.reserve(static_cast<std::size_t>(model_ranks * plan.dp * plan.pp));
  for (std::int64_t d = 0; d < plan.dp; ++d) {
    const std::int64_t dp_rank =
        (d % shard) * placement.axis_stride(dp_shard) + (d / shard) * placement.axis_stride(dp_shard + 1);
    for (std::int64_t k = 0; k < model_ranks; ++k) {
      const std::int64_t tp = k % plan.tp;
      const std::int64_t cp = (k / plan.tp) % plan.cp;
      const std::int64_t ep = k / (static_cast<std::int64_t>(plan.tp) * plan.cp);
      const std::int64_t model_rank =
          tp * stride(ParallelAxis::tp) + cp * stride(ParallelAxis::cp) + ep * stride(ParallelAxis::ep);
      for (std::int64_t s = 0; s < plan.pp; ++s) {
        gpus.push_back(dp_rank + model_rank + s * stride(ParallelAxis::pp));
      }
    }
  }
  return gpus;
}

}  // namespace trainsim::model
