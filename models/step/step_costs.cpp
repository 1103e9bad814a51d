#include "models/step/step_costs.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "models/step/memory.hpp"
#include "models/workload/layer_ops.hpp"
#include "models/workload/optimizer.hpp"
#include "models/workload/shard.hpp"
#include "sim/error.hpp"
#include "topologies/collective_cost.hpp"
#include "topologies/placement.hpp"

namespace trainsim::model {

namespace {

// Bucket counts above this are merged: per-bucket latency is then < 1% of a bucket and the event graph
// stays small. Megatron's own default (40 MB) gives ~70 buckets per stage for GPT-3 on 128-way model
// parallelism.
constexpr int kMaxBuckets = 128;

// A kind of transformer layer (a MoE model's dense first layer or not, a sliding window or not) and the
// unit that prices it.
struct LayerKind {
  bool dense = false;
  bool windowed = false;
  int unit = 0;
};

/// The communicator groups of the representative GPU (rank 0 of the placement).
struct Groups {
  topo::CommGroup tp, cp, ep, pp, p2p, cp_pair;
  topo::CommGroup expert_tp;  ///< the ranks splitting one expert: the tp group, or its first expert_tp ranks
  topo::CommGroup expert_tp_ep;          ///< expert_tp × ep: the all-gather token dispatcher's ranks
  std::vector<std::int64_t> stage_node;  ///< node of pipeline rank s's representative GPU
  /// The ranks holding copies of the same (dense) gradients: data replicas over dp, the context-parallel
  /// ranks of one sequence, and the expert-parallel ranks, which are data replicas for the dense layers.
  topo::CommGroup grad;
  /// The part of `grad` that shards ZeRO state (shard_group dp ranks × cp × ep; all of it without
  /// shard_group), and the replicas of one shard across the sharding groups (size 1 without).
  topo::CommGroup shard, replica;
};

const topo::CommGroup& communicator(const Groups& g, CommGroup group) {
  switch (group) {
    case CommGroup::tp:
      return g.tp;
    case CommGroup::cp:
      return g.cp;
    case CommGroup::ep:
      return g.ep;
    case CommGroup::expert_tp:
      return g.expert_tp;
    case CommGroup::expert_tp_ep:
      return g.expert_tp_ep;
  }
  return g.tp;
}

// Two neighbouring ranks of `axis_group`: on one node, or on two (then sharing the NICs with the other
// groups that send at the same moment, as the axis group's NIC sharing says).
topo::CommGroup neighbour_pair(const topo::CommGroup& axis_group) {
  const bool crosses = axis_group.crosses_nodes();
  return topo::CommGroup{2, crosses ? 1 : 2, crosses ? 2 : 1, axis_group.crosses_leaf() ? 2 : 1,
                         crosses ? axis_group.groups_sharing_nics : 1};
}

// The placement of a plan's ranks, and the placement axis of each ParallelAxis (dp: its sharding part; its
// replicas are the next axis).
struct PlanPlacement {
  topo::Placement placement;
  std::array<std::size_t, 5> at{};
  [[nodiscard]] std::size_t axis(ParallelAxis a) const { return at[static_cast<std::size_t>(a)]; }
};

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

PlanPlacement plan_placement(const ParallelPlan& plan, const topo::ClusterSpec& cluster) {
  return place_axes(plan, cluster);
}

// Folded expert parallelism (ParallelPlan::expert_folding) and experts split over fewer ranks than tp
// (ParallelPlan::expert_tp): the expert-parallel group is the first ep ranks of (tp/expert_tp) × cp × dp, in
// that order, and an expert's own tensor-parallel group the first expert_tp ranks of tp. Placed with tp, cp
// and dp's sharding part each split at the size the groups take, both are products of whole axes.
struct ExpertGroups {
  topo::CommGroup ep, expert_tp, expert_tp_ep;
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
  return out;
}

Groups communicator_groups(const ParallelPlan& plan, const topo::ClusterSpec& cluster) {
  const PlanPlacement placed = plan_placement(plan, cluster);
  const topo::Placement& placement = placed.placement;
  auto index_of = [&](ParallelAxis a) { return placed.axis(a); };
  auto group = [&](ParallelAxis a) { return placement.group(index_of(a), 0); };
  Groups g;
  g.tp = group(ParallelAxis::tp);
  g.cp = group(ParallelAxis::cp);
  if (plan.expert_folding) {
    const ExpertGroups experts = folded_expert_groups(plan, cluster);
    g.ep = experts.ep;
    g.expert_tp = experts.expert_tp;
    g.expert_tp_ep = experts.expert_tp_ep;
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
  // Consecutive pipeline stages exchange activations; consecutive context-parallel ranks pass K/V blocks
  // around their ring.
  g.p2p = neighbour_pair(g.pp);
  g.cp_pair = neighbour_pair(g.cp);
  return g;
}

topo::CollectiveOp to_topo(Collective c) {
  switch (c) {
    case Collective::all_reduce:
      return topo::CollectiveOp::all_reduce;
    case Collective::reduce_scatter:
      return topo::CollectiveOp::reduce_scatter;
    case Collective::all_gather:
      return topo::CollectiveOp::all_gather;
    case Collective::all_to_all:
      return topo::CollectiveOp::all_to_all;
    case Collective::ring_exchange:
      return topo::CollectiveOp::send_recv;
  }
  return topo::CollectiveOp::all_reduce;
}

// A weight-gradient kernel (ZB-H1's W): the wgrad of a parameter matmul. The attention core's qk/av
// "wgrad" kernels are activation gradients and stay in B.
bool is_weight_grad(std::string_view name) {
  return name.ends_with(".wgrad") && !name.starts_with("qk.") && !name.starts_with("av.") &&
         !name.starts_with("recompute.");
}

// Kernels that run while collectives of `collective_s` seconds run beside them on other streams: NCCL's
// kernels take SMs and HBM bandwidth, so the kernels are slowed by the GPU's overlap_compute_slowdown over
// the share of their time the collectives cover (all of it when the collectives outlast them). Returns the
// kernels' time before the slow-down.
double slow_beside_collectives(std::vector<CostPiece>& pieces, double collective_s,
                               const topo::GpuSpec& gpu) {
  double kernels = 0;
  for (const CostPiece& x : pieces) kernels += x.compute;
  const double slowed =
      beside_collectives_factor(gpu.efficiency.overlap_compute_slowdown, collective_s, kernels);
  if (slowed > 1) {
    for (CostPiece& x : pieces) {
      x.compute *= slowed;
      x.weight *= slowed;
    }
  }
  return kernels;
}

// framework.ep_comm_overlap (DeepSeek-V3's DualPipe, Megatron-Core's --overlap-moe-expert-parallel-comm):
// a pass's expert-parallel all-to-alls run beside the kernels of the pass it is paired with (a forward with
// another micro-batch's backward), whose compute is as long as this pass's own in the steady state. The
// kernels are slowed by the GPU's overlap_compute_slowdown while the all-to-alls run (the SMs and HBM
// bandwidth the communication takes); what the all-to-alls outlast the kernels by stays exposed, as one
// blocking collective at the pass's end.
void overlap_with_paired_pass(std::vector<CostPiece>& pieces, double all_to_all, const topo::GpuSpec& gpu) {
  const double kernels = slow_beside_collectives(pieces, all_to_all, gpu);
  if (all_to_all <= kernels) return;
  CostPiece rest;
  rest.kind = CostPiece::Kind::collective;
  rest.group = CommGroup::ep;
  rest.comm = all_to_all - kernels;
  rest.name = "ep_all_to_all_exposed";
  pieces.push_back(std::move(rest));
}

// Splits an op list into pieces (see CostPiece). The sums match the rule every path has used: kernels
// add up; a blocking collective adds its time; an overlappable one runs under the next kernel and adds
// only what it exceeds it by (all of it when no kernel follows). With the framework's tp_comm_overlap
// (sequence parallelism), a tensor-parallel all-gather runs under the matmul after it and a
// reduce-scatter under the matmul before it, each such matmul slowed by tp_comm_overlap_slowdown.
// With `routed` (the routed full cluster's uncontended fabric), the context- and expert-parallel
// collectives whose group leaves the node are priced on it and listed as flows (CostPiece::routed).
std::vector<CostPiece> time_pieces(const std::vector<LayerOp>& ops, const StepInput& in, const Groups& g,
                                   const topo::ClusterSpec* routed) {
  std::vector<CostPiece> out;
  const auto& gpu = in.cluster.node.gpu;
  const Framework& fw = in.plan.framework;
  const bool tp_overlap = fw.tp_comm_overlap && in.plan.sequence_parallel;
  const double slowed = 1.0 + fw.tp_comm_overlap_slowdown;
  CostPiece run;                        // the compute piece being gathered
  double beside_other_micro_batch = 0;  // expert-parallel all-to-alls under framework.ep_comm_overlap
  std::string last_kernel, before_last;
  double last_time = 0, last_weight = 0;
  bool last_is_matmul = false;
  int kernels = 0;
  auto flush = [&] {
    if (kernels == 0) return;
    if (kernels > 1) run.name += ".." + last_kernel;
    out.push_back(std::move(run));
    run = CostPiece{};
    kernels = 0;
  };
  CostPiece hidden;  // an overlappable collective waiting for the kernel it runs under
  hidden.kind = CostPiece::Kind::overlapped;
  bool hidden_needs_matmul = false;  // a tp all-gather: only a matmul hides it
  auto block_hidden = [&] {          // nothing (fit) to hide under: it blocks
    hidden.kind = CostPiece::Kind::collective;
    hidden.name = hidden.comm_name;
    hidden.comm_name.clear();
    out.push_back(std::move(hidden));
    hidden = CostPiece{};
    hidden.kind = CostPiece::Kind::overlapped;
    hidden_needs_matmul = false;
  };
  for (const LayerOp& op : ops) {
    if (!op.communication) {
      const double k = kernel_time(op.kernel, gpu, in.training.precision);
      const double w = is_weight_grad(op.name) ? k : 0.0;
      const bool matmul = op.kernel.kind == OpKind::matmul;
      if (hidden.comm > 0 && hidden_needs_matmul && !matmul) block_hidden();
      if (hidden.comm > 0) {
        flush();
        // A chunked tensor-parallel collective slows its matmul by the framework's SM share; any other
        // collective's NCCL kernels take SMs and HBM bandwidth from the kernel beside them (per GPU) for
        // as long as it runs.
        const double f = hidden_needs_matmul ? slowed
                                             : beside_collectives_factor(
                                                   gpu.efficiency.overlap_compute_slowdown, hidden.comm, k);
        hidden.compute = k * f;
        hidden.weight = w * f;
        hidden.name = op.name;
        out.push_back(std::move(hidden));
        hidden = CostPiece{};
        hidden.kind = CostPiece::Kind::overlapped;
        hidden_needs_matmul = false;
        kernels = 0;
        last_is_matmul = false;
        continue;
      }
      if (kernels == 0) run.name = op.name;
      before_last = kernels > 0 ? last_kernel : std::string();
      last_kernel = op.name;
      last_time = k;
      last_weight = w;
      last_is_matmul = matmul;
      run.compute += k;
      run.weight += w;
      ++kernels;
      continue;
    }
    const topo::CommGroup& group = communicator(g, op.comm.group);
    if (fw.ep_comm_overlap && op.comm.group == CommGroup::ep &&
        op.comm.collective == Collective::all_to_all) {
      beside_other_micro_batch +=
          topo::collective_time(to_topo(op.comm.collective), op.comm.bytes, group, in.cluster);
      continue;
    }
    const topo::CommGroup& priced = op.comm.collective == Collective::ring_exchange ? g.cp_pair : group;
    // Folded expert groups span data-parallel replicas, which the routed lowering keeps apart: closed form.
    const bool expert_group = op.comm.group == CommGroup::ep || op.comm.group == CommGroup::expert_tp_ep;
    const bool routes = routed != nullptr && priced.crosses_nodes() &&
                        (op.comm.group == CommGroup::cp || (expert_group && !in.plan.expert_folding));
    const topo::CollectiveEstimate e = topo::estimate_collective(to_topo(op.comm.collective), op.comm.bytes,
                                                                 priced, routes ? *routed : in.cluster);
    const double c = e.time_s * op.comm.steps;
    std::vector<RoutedComm> flows;
    if (routes && c > 0) {
      flows.push_back(
          RoutedComm{op.comm.group,
                     {to_topo(op.comm.collective), op.comm.bytes * op.comm.steps, e.algo, e.protocol},
                     c,
                     e.latency_s * op.comm.steps});
    }
    const bool tp_chunked = tp_overlap && op.comm.group == CommGroup::tp;
    if (tp_chunked && op.comm.collective == Collective::reduce_scatter && kernels > 0 && last_is_matmul) {
      // Runs under the matmul that produces it: split that matmul off the kernels before it.
      run.compute -= last_time;
      run.weight -= last_weight;
      --kernels;
      const std::string first = run.name;
      if (kernels > 0) {
        if (kernels > 1) run.name += ".." + before_last;
        out.push_back(std::move(run));
      }
      run = CostPiece{};
      kernels = 0;
      CostPiece piece;
      piece.kind = CostPiece::Kind::overlapped;
      piece.group = op.comm.group;
      piece.compute = last_time * slowed;
      piece.weight = last_weight * slowed;
      piece.comm = c;
      piece.name = last_kernel;
      piece.comm_name = op.name;
      out.push_back(std::move(piece));
      last_is_matmul = false;
      continue;
    }
    flush();
    last_is_matmul = false;
    const bool gathers_under_next = tp_chunked && op.comm.collective == Collective::all_gather;
    if (op.comm.overlappable || gathers_under_next) {
      if (hidden.comm > 0 && hidden_needs_matmul != gathers_under_next) block_hidden();
      if (hidden.comm == 0) {
        hidden.comm_name = op.name;
        hidden.group = op.comm.group;
      }
      hidden.comm += c;
      hidden.routed.insert(hidden.routed.end(), flows.begin(), flows.end());
      hidden_needs_matmul = gathers_under_next;
      continue;
    }
    CostPiece piece;
    piece.kind = CostPiece::Kind::collective;
    piece.group = op.comm.group;
    piece.comm = c;
    piece.name = op.name;
    piece.routed = std::move(flows);
    out.push_back(std::move(piece));
  }
  flush();
  if (hidden.comm > 0) block_hidden();
  if (beside_other_micro_batch > 0) overlap_with_paired_pass(out, beside_other_micro_batch, gpu);
  return out;
}

// The unit alone as a pass: its pieces summed in order.
void sum_pieces(UnitCost& u) {
  u.total = pass_sums(u);
}

constexpr std::string_view kHostWaitPiece = "host_launches";

// Removes the piece wait_for_host added, so that the pass's kernels can be changed and the floor set again.
void drop_host_wait(std::vector<CostPiece>& pieces) {
  std::erase_if(pieces, [](const CostPiece& x) { return x.name == kHostWaitPiece; });
}

// In eager mode the host issues every op of a pass one after another while the GPU runs the ones already
// issued, so the pass takes at least ops × launch_overhead (the host runs ahead of a long kernel, so the
// bound holds for the pass, not for each kernel). What that floor exceeds the pass's GPU time by is the
// GPU waiting for launches: one more piece on the compute stream, after the pass's own.
void wait_for_host(std::vector<CostPiece>& pieces, std::size_t ops, const Framework& fw) {
  if (fw.cuda_graphs || fw.launch_overhead_s <= 0 || ops == 0) return;
  double gpu = 0;
  for (const CostPiece& x : pieces) gpu += x.compute + x.exposed_comm();
  const double host = static_cast<double>(ops) * fw.launch_overhead_s;
  if (host <= gpu) return;
  CostPiece wait;
  wait.name = std::string(kHostWaitPiece);
  wait.compute = host - gpu;
  pieces.push_back(std::move(wait));
}

UnitCost unit_cost(std::string name, const LayerOps& ops, const StepInput& in, const Groups& g,
                   const topo::ClusterSpec* routed) {
  UnitCost u;
  u.name = std::move(name);
  u.forward = time_pieces(ops.forward, in, g, routed);
  u.backward = time_pieces(ops.backward, in, g, routed);
  for (const auto* pieces : {&u.forward, &u.backward}) {
    for (const CostPiece& x : *pieces) u.routes_pieces = u.routes_pieces || !x.routed.empty();
  }
  u.forward_ops = ops.forward.size();
  u.backward_ops = ops.backward.size();
  wait_for_host(u.forward, u.forward_ops, in.plan.framework);
  wait_for_host(u.backward, u.backward_ops, in.plan.framework);
  sum_pieces(u);
  return u;
}

// A virtual stage's pass costs: its runs of units, in forward order.
PassCost pass_cost(const std::vector<UnitCost>& units, const std::vector<UnitRun>& runs) {
  PassCost pc;
  for (const UnitRun& r : runs) {
    const PassCost& u = units[static_cast<std::size_t>(r.unit)].total;
    const double n = r.count;
    pc.forward_compute += n * u.forward_compute;
    pc.forward_comm += n * u.forward_comm;
    pc.backward_compute += n * u.backward_compute;
    pc.backward_comm += n * u.backward_comm;
    pc.weight_compute += n * u.weight_compute;
  }
  return pc;
}

}  // namespace

PassCost pass_sums(const UnitCost& u, double compute_scale) {
  PassCost t;
  for (const CostPiece& x : u.forward) {
    CostPiece slowed = x;
    slowed.compute *= compute_scale;
    t.forward_compute += slowed.compute;
    t.forward_comm += slowed.exposed_comm();
  }
  for (const CostPiece& x : u.backward) {
    CostPiece slowed = x;
    slowed.compute *= compute_scale;
    t.backward_compute += slowed.compute;
    t.backward_comm += slowed.exposed_comm();
    t.weight_compute += x.weight * compute_scale;
  }
  return t;
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

StepCosts step_costs(const StepInput& in, const StepPlan& plan, FabricPricing fabric) {
  TRAINSIM_CHECK(plan.feasible, "step_costs needs a feasible plan");
  const ParallelPlan& pl = in.plan;
  const Groups g = communicator_groups(pl, in.cluster);
  // The data-parallel collectives and the pipeline sends: routed, their flows meet the fabric's shared
  // links in the simulation, so the closed form must not count them too.
  // (A copy only then: the closed form, search's inner loop, reads the scenario's own.)
  std::optional<topo::ClusterSpec> routed_cluster;
  if (fabric == FabricPricing::routed) routed_cluster = topo::uncontended_fabric(in.cluster);
  const topo::ClusterSpec& transfer_cluster = routed_cluster ? *routed_cluster : in.cluster;
  const topo::ClusterSpec* routed = routed_cluster ? &*routed_cluster : nullptr;
  // Routed, every data-parallel collective is listed as its algorithm's flows (RoutedCollective), over the
  // sharding group or (HSDP) the replicas of one shard.
  auto add_flows = [&](RoutedCollectives& list, topo::CollectiveOp op, double bytes,
                       const topo::CollectiveEstimate& e, DataGroup over) {
    const topo::CommGroup& group = over == DataGroup::replicas ? g.replica
                                   : over == DataGroup::shard  ? g.shard
                                                               : g.grad;
    if (routed != nullptr && group.size > 1 && bytes > 0)
      list.push_back(RoutedCollective{op, bytes, e.algo, e.protocol, over});
  };
  const Shard shard = shard_of(pl, in.training.precision);
  const int p = plan.pp;
  const int v = plan.virtual_stages;
  const int nvs = p * v;
  StepCosts out;
  out.passes.assign(static_cast<std::size_t>(nvs), PassCost{});

  const bool generic = !in.model.generic_layers.empty();
  std::vector<LayerKind> layer_kinds;  // the transformer's layer units
  out.chunk_units.assign(static_cast<std::size_t>(nvs), {});
  if (generic) {
    for (int vs = 0; vs < nvs; ++vs) {
      const int first = plan.first_layer_of(vs);
      for (int l = first; l < first + plan.chunk_layers[static_cast<std::size_t>(vs)]; ++l) {
        const GenericLayer& layer = in.model.generic_layers[static_cast<std::size_t>(l)];
        out.chunk_units[static_cast<std::size_t>(vs)].push_back(
            UnitRun{static_cast<int>(out.units.size()), 1, l});
        out.units.push_back(unit_cost(layer.name, generic_layer_ops(layer, shard), in, g, routed));
      }
    }
  } else {
    // Transformer layers are identical but for a MoE model's dense first layers and for their attention
    // (full, or a sliding window on some layers): price one layer of each kind, repeat it for each run of
    // consecutive layers of that kind in each virtual stage. Units 0 (the kind of the first MoE layer, or
    // of the first layer of a dense model), 1 the embedding, 2 the head, then the other kinds as they come.
    const auto dense_layers = static_cast<int>(in.model.is_moe() ? in.model.dense_layer_count() : 0);
    auto layer_unit = [&](int layer) {
      const bool dense = layer < dense_layers;
      const bool windowed = in.model.is_windowed(layer);
      const auto kind = std::find_if(layer_kinds.begin(), layer_kinds.end(), [&](const LayerKind& k) {
        return k.dense == dense && k.windowed == windowed;
      });
      if (kind != layer_kinds.end()) return kind->unit;
      const TransformerSpec spec =
          (dense ? in.model.as_dense_layer() : in.model).as_attention_layer(windowed);
      const std::string name = std::string(dense ? "dense_" : "") + (windowed ? "windowed_layer" : "layer");
      layer_kinds.push_back(LayerKind{dense, windowed, static_cast<int>(out.units.size())});
      out.units.push_back(unit_cost(name, transformer_layer_ops(spec, shard), in, g, routed));
      return layer_kinds.back().unit;
    };
    layer_unit(std::min(dense_layers, static_cast<int>(in.model.layers) - 1));
    out.units.push_back(unit_cost("embedding", embedding_ops(in.model, shard), in, g, routed));
    out.units.push_back(unit_cost("head", head_ops(in.model, shard), in, g, routed));
    // Multi-token prediction on the last virtual stage, after the head: per module its own ops, a layer
    // like the model's last, and the head again.
    const int mtp_unit = static_cast<int>(out.units.size());
    if (in.model.mtp_layers > 0)
      out.units.push_back(unit_cost("mtp", mtp_ops(in.model, shard), in, g, routed));
    for (int vs = 0; vs < nvs; ++vs) {
      auto& runs = out.chunk_units[static_cast<std::size_t>(vs)];
      if (vs == 0) runs.push_back(UnitRun{1, 1, -1});
      const int first = plan.first_layer_of(vs);
      for (int l = first; l < first + plan.chunk_layers[static_cast<std::size_t>(vs)]; ++l) {
        const int unit = layer_unit(l);
        if (!runs.empty() && runs.back().unit == unit) {
          ++runs.back().count;
        } else {
          runs.push_back(UnitRun{unit, 1, l});
        }
      }
      if (vs == nvs - 1) {
        runs.push_back(UnitRun{2, 1, -1});
        for (std::int64_t d = 0; d < in.model.mtp_layers; ++d) {
          runs.push_back(UnitRun{mtp_unit, 1, -1});
          runs.push_back(UnitRun{layer_unit(static_cast<int>(in.model.layers) - 1), 1, -1});
          runs.push_back(UnitRun{2, 1, -1});
        }
      }
    }
  }

  const OptimizerSpec& opt = in.training.optimizer;
  const Framework& fw = pl.framework;
  const double grad_elem = topo::bytes_per_element(gradient_precision(opt, in.training.precision));
  const double reduce_elem =
      fw.grad_reduce_dtype ? topo::bytes_per_element(*fw.grad_reduce_dtype) : grad_elem;
  const double weight_elem = topo::bytes_per_element(weight_storage_precision(in.training.precision));
  // Gradients reduced over the sharding group, then (HSDP) the shard all-reduced over its replicas; their
  // flows appended to `list` (routed).
  auto reduce_gradients = [&](double bytes, RoutedCollectives& list) {
    auto e = topo::estimate_collective(topo::CollectiveOp::reduce_scatter, bytes, g.shard, transfer_cluster);
    add_flows(list, topo::CollectiveOp::reduce_scatter, bytes, e, DataGroup::shard);
    if (g.replica.size > 1) {
      const double shard_bytes = bytes / static_cast<double>(g.shard.size);
      const auto r =
          topo::estimate_collective(topo::CollectiveOp::all_reduce, shard_bytes, g.replica, transfer_cluster);
      add_flows(list, topo::CollectiveOp::all_reduce, shard_bytes, r, DataGroup::replicas);
      e.time_s += r.time_s;
      e.latency_s += r.latency_s;
    }
    return e;
  };

  // ZeRO-3 / FSDP: every unit gathers its own weights over the sharding group before it computes and
  // reduces its own gradients after its backward, `collectives` collectives per unit (or one per tensor),
  // each paying its full α-β time and the host's time to issue it.
  out.gathers_weights = shards_weights(pl.zero) && g.shard.size > 1;
  out.weight_pass = pl.schedule == Schedule::zero_bubble_h1;
  if (!shards_weights(pl.zero) && pl.overlap_grad_reduce && g.grad.size > 1)
    out.bucket_overlap_slowdown = in.cluster.node.gpu.efficiency.overlap_compute_slowdown;
  if (out.gathers_weights) {
    const UnitParameters up = unit_parameters(in.model, pl);
    const int per_layer = std::max(1, fw.gathers_per_layer);
    out.zero3_prefetch = prefetch_units(fw, up.layer / per_layer);
    out.synchronous_zero3 = fw.synchronous_collectives;
    const double rank_host = fw.collective_host_per_rank_s * static_cast<double>(g.shard.size);
    const double staging_bytes = gradient_staging_bytes(fw.gradient_staging, grad_elem, reduce_elem);
    // `n` collectives of `params` parameters each; routed, their flows as n times the bytes of one (the
    // bandwidth terms of equal collectives add up).
    auto price_pieces = [&](UnitCost& u, double params, double n) {
      if (!(params > 0) || !(n > 0)) return;
      const auto gather = topo::estimate_collective(topo::CollectiveOp::all_gather, params * weight_elem,
                                                    g.shard, transfer_cluster);
      add_flows(u.gather_flows, topo::CollectiveOp::all_gather, n * params * weight_elem, gather,
                DataGroup::shard);
      RoutedCollectives reduce_flows;
      const auto reduce = reduce_gradients(params * reduce_elem, reduce_flows);
      for (RoutedCollective& c : reduce_flows) c.bytes *= n;
      u.reduce_flows.insert(u.reduce_flows.end(), reduce_flows.begin(), reduce_flows.end());
      const double gather_host = fw.gather_host_s + rank_host;
      u.gather_s += n * (gather.time_s + gather_host);
      u.gather_latency_s += n * (gather.latency_s + gather_host);
      // The gradients' staging copies run on the reduce stream before each collective (not a flow).
      const double staging = staging_bytes > 0
                                 ? kernel_time(KernelCost{OpKind::memory_bound, 0, params * staging_bytes},
                                               in.cluster.node.gpu, in.training.precision)
                                 : 0.0;
      u.reduce_s += n * (reduce.time_s + rank_host + staging);
      u.reduce_latency_s += n * (reduce.latency_s + rank_host + staging);
    };
    auto price = [&](UnitCost& u, double params, const std::vector<TensorShape>& tensors, int collectives) {
      if (!fw.gather_per_tensor || tensors.empty()) {
        price_pieces(u, params / collectives, collectives);
        return;
      }
      for (const TensorShape& t : tensors) price_pieces(u, t.elements() / t.count, t.count);
    };
    if (generic) {
      for (const auto& runs : out.chunk_units) {
        for (const UnitRun& r : runs) {
          price_pieces(out.units[static_cast<std::size_t>(r.unit)],
                       in.model.generic_layers[static_cast<std::size_t>(r.first_layer)].params / pl.tp, 1);
        }
      }
    } else {
      price(out.units[0], up.layer, up.layer_tensors, per_layer);
      price(out.units[1], up.embedding, up.embedding_tensors, 1);
      price(out.units[2], up.head, up.head_tensors, 1);
      // Every other layer kind gathers as much as a MoE layer (unit_parameters sizes one MoE layer; the
      // dense first layers are taken at its size, a window adds no weights).
      for (const LayerKind& k : layer_kinds) {
        if (k.unit != 0)
          price(out.units[static_cast<std::size_t>(k.unit)], up.layer, up.layer_tensors, per_layer);
      }
    }
    // A unit computes beside its neighbours' collectives: in the forward the gather of the unit ahead
    // (when gathers run ahead), in the backward that gather again (resharded weights) and the reduction
    // of the unit behind. Those are units like it, so their time is taken as its own.
    const bool ahead = out.zero3_prefetch > 0;
    for (UnitCost& u : out.units) {
      const double forward_beside = ahead ? u.gather_s : 0.0;
      const double backward_beside = (ahead && fw.reshard_after_forward ? u.gather_s : 0.0) +
                                     (fw.synchronous_collectives ? 0.0 : u.reduce_s);
      // The host issues the ops as before: its floor is set again against the slowed kernels.
      drop_host_wait(u.forward);
      drop_host_wait(u.backward);
      slow_beside_collectives(u.forward, forward_beside, in.cluster.node.gpu);
      slow_beside_collectives(u.backward, backward_beside, in.cluster.node.gpu);
      wait_for_host(u.forward, u.forward_ops, fw);
      wait_for_host(u.backward, u.backward_ops, fw);
      sum_pieces(u);
    }
  }
  for (int vs = 0; vs < nvs; ++vs) {
    out.passes[static_cast<std::size_t>(vs)] =
        pass_cost(out.units, out.chunk_units[static_cast<std::size_t>(vs)]);
  }

  // Activations handed between stages: Megatron scatters them over the tp ranks (sequence parallel) so
  // each rank sends 1/tp.
  const double tokens = static_cast<double>(pl.micro_batch) * static_cast<double>(in.model.seq_len) / pl.cp;
  const double width = generic ? 0.0 : static_cast<double>(in.model.hidden);
  out.p2p_bytes = p > 1 ? tokens * width * topo::bytes_per_element(in.training.precision) /
                              (pl.sequence_parallel ? pl.tp : 1)
                        : 0.0;
  if (p > 1) {
    const auto e =
        topo::estimate_collective(topo::CollectiveOp::send_recv, out.p2p_bytes, g.p2p, transfer_cluster);
    out.p2p_s = e.time_s;
    out.p2p_latency_s = e.latency_s;
  }
  out.stage_node = g.stage_node;
  out.dp_crosses_nodes = g.grad.crosses_nodes();
  out.fabric = fabric;

  // Data parallelism and the optimizer, per pipeline rank (the layer split of the plan, not memory's own).
  ParallelPlan split = pl;
  split.stage_layers = plan.chunk_layers;  // per virtual stage: the split exactly as planned
  const double shard_degree = static_cast<double>(g.shard.size);  // = dp_shard·cp·ep, as memory shards
  const auto m = static_cast<double>(plan.micro_batches);
  const auto& gpu = in.cluster.node.gpu;
  out.stages.assign(static_cast<std::size_t>(p), StageCost{});
  for (int s = 0; s < p; ++s) {
    StageCost& sc = out.stages[static_cast<std::size_t>(s)];
    const auto tensors = stage_parameter_tensors(in.model, split, s);
    for (const auto& t : tensors) sc.params += t.elements();
    sc.grad_bytes = sc.params * grad_elem;
    sc.weight_bytes = sc.params * weight_elem;
    if (!shards_weights(pl.zero)) {
      const double want = std::ceil(sc.grad_bytes / std::max(pl.bucket_bytes, 1.0));
      sc.buckets = static_cast<int>(std::clamp(want, 1.0, static_cast<double>(kMaxBuckets)));
      const double bucket_bytes = sc.params * reduce_elem / sc.buckets;
      topo::CollectiveEstimate bucket;
      if (pl.zero == ZeroStage::none) {
        bucket =
            topo::estimate_collective(topo::CollectiveOp::all_reduce, bucket_bytes, g.grad, transfer_cluster);
        add_flows(sc.bucket_flows, topo::CollectiveOp::all_reduce, bucket_bytes, bucket, DataGroup::gradient);
      } else {
        bucket = reduce_gradients(bucket_bytes, sc.bucket_flows);
      }
      sc.bucket_s = bucket.time_s;
      sc.bucket_latency_s = bucket.latency_s;
      sc.dp_bytes_per_step = g.grad.size > 1 ? sc.params * reduce_elem : 0.0;
      if (shards_optimizer_states(pl.zero)) {
        const auto gather = topo::estimate_collective(topo::CollectiveOp::all_gather, sc.weight_bytes,
                                                      g.shard, transfer_cluster);
        sc.param_gather_s = gather.time_s;
        sc.param_gather_latency_s = gather.latency_s;
        add_flows(sc.param_gather_flows, topo::CollectiveOp::all_gather, sc.weight_bytes, gather,
                  DataGroup::shard);
        sc.dp_bytes_per_step += g.grad.size > 1 ? sc.weight_bytes : 0.0;
      }
    } else {
      sc.buckets = 0;
      for (int c = 0; c < v; ++c) {
        for (const UnitRun& r : out.chunk_units[plan.virtual_stage_index(c, s)]) {
          const UnitCost& u = out.units[static_cast<std::size_t>(r.unit)];
          sc.zero3_gather_s += r.count * u.gather_s;
          sc.zero3_reduce_s += r.count * u.reduce_s;
        }
      }
      // Gathered before every forward and (resharded after it) every backward pass, gradients reduced
      // after every backward (no gradient accumulation in full precision).
      const double gathers = fw.reshard_after_forward ? 2.0 : 1.0;
      sc.dp_bytes_per_step =
          out.gathers_weights ? m * (gathers * sc.weight_bytes + sc.params * reduce_elem) : 0.0;
    }
    const OptimizerCost oc = optimizer_cost(opt, in.training.precision, tensors);
    const double opt_shard = shards_optimizer_states(pl.zero) ? shard_degree : 1.0;
    sc.optimizer_s = kernel_time(
        KernelCost{OpKind::memory_bound, oc.elementwise_flops / opt_shard, oc.bytes_moved / opt_shard, 0, 0},
        gpu, Precision::fp32);
    if (oc.matmul_flops > 0) {
      sc.optimizer_s +=
          kernel_time(KernelCost{OpKind::matmul, oc.matmul_flops, 0, 0, 0}, gpu, in.training.precision);
    }
    if (opt.grad_clipping || oc.reduction_values > 0) {
      // Local partial norms, then one small fp32 all-reduce over each axis the gradients are spread on.
      const double bytes = 4.0 * std::max(1.0, oc.reduction_values / opt_shard);
      for (const topo::CommGroup* grp : {&g.tp, &g.pp, &g.grad}) {
        sc.grad_norm_s += topo::collective_time(topo::CollectiveOp::all_reduce, bytes, *grp, in.cluster);
      }
    }
  }
  return out;
}

namespace {

// The kernels of virtual stage vs's gradient-producing pass: its backward, or under ZB-H1 its W pass.
double grads_pass_kernels(const StepCosts& costs, int vs) {
  const PassCost& pc = costs.passes[static_cast<std::size_t>(vs)];
  return costs.weight_pass ? pc.weight_compute : pc.backward_compute;
}

}  // namespace

double last_grads_slowdown(const StepCosts& costs, const StepPlan& plan, int vs) {
  if (costs.bucket_overlap_slowdown <= 0) return 1.0;
  const int s = vs % plan.pp;
  const StageCost& sc = costs.stages[static_cast<std::size_t>(s)];
  const double stage_layers = std::max(1, plan.stage_layers[static_cast<std::size_t>(s)]);
  const double buckets_s =
      sc.bucket_s * sc.buckets * plan.chunk_layers[static_cast<std::size_t>(vs)] / stage_layers;
  return beside_collectives_factor(costs.bucket_overlap_slowdown, buckets_s, grads_pass_kernels(costs, vs));
}

double last_grads_extra(const StepCosts& costs, const StepPlan& plan, int vs) {
  return (last_grads_slowdown(costs, plan, vs) - 1.0) * grads_pass_kernels(costs, vs);
}

TimeBreakdown stage_work(const StepCosts& costs, const StepPlan& plan, int stage) {
  TimeBreakdown tb;
  const auto m = static_cast<double>(plan.micro_batches);
  for (int c = 0; c < plan.virtual_stages; ++c) {
    const std::size_t vs = plan.virtual_stage_index(c, stage);
    const PassCost& pc = costs.passes[vs];
    tb.compute +=
        m * (pc.forward_compute + pc.backward_compute) + last_grads_extra(costs, plan, static_cast<int>(vs));
    tb.exposed_tp_comm += m * (pc.forward_comm + pc.backward_comm);
  }
  const StageCost& sc = costs.stages[static_cast<std::size_t>(stage)];
  tb.optimizer = sc.optimizer_s + sc.grad_norm_s;
  return tb;
}

std::map<std::int64_t, std::vector<double>> replica_slowdowns(const ParallelPlan& plan,
                                                              const topo::ClusterSpec& cluster) {
  if (cluster.stragglers.empty()) return {};
  const PlanPlacement placed = plan_placement(plan, cluster);
  const topo::Placement& placement = placed.placement;
  const std::size_t dp = placed.axis(ParallelAxis::dp);
  const std::size_t pp = placed.axis(ParallelAxis::pp);
  const std::int64_t gpn = cluster.gpus_in_use_per_node();
  // A replica is its data-parallel coordinates (sharding group inner: full_cluster_gpus' numbering); its
  // tp/cp/ep ranks of one stage wait for each other in their blocking collectives, so the slowest GPU of a
  // stage sets the stage.
  std::map<std::int64_t, std::vector<double>> replicas;
  for (const topo::Straggler& s : cluster.stragglers) {
    const std::int64_t end = std::min(placement.world_size(), (s.node + 1) * gpn);
    for (std::int64_t r = s.node * gpn; r < end; ++r) {
      const std::vector<std::int64_t> c = placement.coordinates(r);
      std::vector<double>& f = replicas[c[dp + 1] * plan.dp_shard() + c[dp]];
      if (f.empty()) f.assign(static_cast<std::size_t>(plan.pp), 1.0);
      double& stage = f[static_cast<std::size_t>(c[pp])];
      stage = std::max(stage, s.slowdown);
    }
  }
  return replicas;
}

std::vector<std::vector<double>> straggler_slowdowns(const ParallelPlan& plan,
                                                     const topo::ClusterSpec& cluster) {
  std::vector<std::vector<double>> distinct;
  for (auto& [replica, f] : replica_slowdowns(plan, cluster)) {
    if (std::find(distinct.begin(), distinct.end(), f) == distinct.end()) distinct.push_back(std::move(f));
  }
  return distinct;
}

namespace {

// Gives pipeline rank `s` its own copy of every unit it runs, changed by `change`, so that the other ranks
// keep theirs (a unit run by several chunks of the rank is copied once).
template <class Change>
void change_rank_units(StepCosts& costs, const StepPlan& plan, int s, Change&& change) {
  std::map<int, int> copies;  // unit -> its changed copy
  for (int c = 0; c < plan.virtual_stages; ++c) {
    for (UnitRun& run : costs.chunk_units[plan.virtual_stage_index(c, s)]) {
      auto it = copies.find(run.unit);
      if (it == copies.end()) {
        UnitCost u = costs.units[static_cast<std::size_t>(run.unit)];
        change(u);
        it = copies.emplace(run.unit, static_cast<int>(costs.units.size())).first;
        costs.units.push_back(std::move(u));
      }
      run.unit = it->second;
    }
  }
}

}  // namespace

void slow_stages(StepCosts& costs, const StepPlan& plan, const std::vector<double>& slowdown) {
  TRAINSIM_CHECK(slowdown.size() == static_cast<std::size_t>(plan.pp), "one slowdown per pipeline rank");
  const int p = plan.pp;
  for (int s = 0; s < p; ++s) {
    const double f = slowdown[static_cast<std::size_t>(s)];
    if (f == 1) continue;
    if (costs.chunk_units.empty()) {  // hand-made costs: the pass sums only
      for (int c = 0; c < plan.virtual_stages; ++c) {
        PassCost& pass = costs.passes[plan.virtual_stage_index(c, s)];
        pass.forward_compute *= f;
        pass.backward_compute *= f;
        pass.weight_compute *= f;
      }
    } else {
      change_rank_units(costs, plan, s, [f](UnitCost& u) {
        for (auto* pieces : {&u.forward, &u.backward}) {
          for (CostPiece& piece : *pieces) {
            piece.compute *= f;
            piece.weight *= f;
          }
        }
        sum_pieces(u);
      });
      for (int c = 0; c < plan.virtual_stages; ++c) {
        const std::size_t vs = plan.virtual_stage_index(c, s);
        costs.passes[vs] = pass_cost(costs.units, costs.chunk_units[vs]);
      }
    }
    costs.stages[static_cast<std::size_t>(s)].optimizer_s *= f;
  }
}

std::vector<double> degraded_nic_slowdowns(const ParallelPlan& plan, const topo::ClusterSpec& cluster,
                                           const StepCosts& costs) {
  if (cluster.degraded.empty() || !costs.dp_crosses_nodes) return {};
  const PlanPlacement placed = plan_placement(plan, cluster);
  const topo::Placement& placement = placed.placement;
  const std::size_t pp = placed.axis(ParallelAxis::pp);
  const std::int64_t gpn = cluster.gpus_in_use_per_node();
  std::vector<double> f(static_cast<std::size_t>(plan.pp), 1.0);
  for (const topo::DegradedNic& d : cluster.degraded) {
    const double ratio = cluster.nic_bytes_per_s() / d.bytes_per_s;
    for (std::int64_t g = 0; g < gpn; ++g) {
      const std::int64_t r = d.node * gpn + g;
      if (cluster.nic_of_gpu(g) != d.nic || r >= placement.world_size()) continue;
      double& stage = f[static_cast<std::size_t>(placement.coordinates(r)[pp])];
      stage = std::max(stage, ratio);
    }
  }
  return f;
}

void slow_data_parallel(StepCosts& costs, const StepPlan& plan, const std::vector<double>& slowdown) {
  TRAINSIM_CHECK(slowdown.size() == static_cast<std::size_t>(plan.pp), "one slowdown per pipeline rank");
  const auto slow = [](double& seconds, double latency, double f) {
    seconds = latency + (seconds - latency) * f;
  };
  for (int s = 0; s < plan.pp; ++s) {
    const double f = slowdown[static_cast<std::size_t>(s)];
    if (f <= 1) continue;
    StageCost& sc = costs.stages[static_cast<std::size_t>(s)];
    slow(sc.bucket_s, sc.bucket_latency_s, f);
    slow(sc.param_gather_s, sc.param_gather_latency_s, f);
    if (!costs.gathers_weights) continue;
    // ZeRO-3: this rank's units, copied so the other ranks keep theirs.
    change_rank_units(costs, plan, s, [&](UnitCost& u) {
      slow(u.gather_s, u.gather_latency_s, f);
      slow(u.reduce_s, u.reduce_latency_s, f);
    });
    sc.zero3_gather_s = 0;
    sc.zero3_reduce_s = 0;
    for (int c = 0; c < plan.virtual_stages; ++c) {
      for (const UnitRun& run : costs.chunk_units[plan.virtual_stage_index(c, s)]) {
        const UnitCost& u = costs.units[static_cast<std::size_t>(run.unit)];
        sc.zero3_gather_s += run.count * u.gather_s;
        sc.zero3_reduce_s += run.count * u.reduce_s;
      }
    }
  }
}

}  // namespace trainsim::model
