#include "models/step/analytic_step.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "models/workload/layer_ops.hpp"
#include "models/step/memory.hpp"
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

/// The communicator groups of the representative GPU (rank 0 of the placement).
struct Groups {
  topo::CommGroup tp, cp, ep, dp, pp, p2p, cp_pair;
  std::vector<std::int64_t> stage_node;  ///< node of pipeline rank s's representative GPU
  /// The ranks holding copies of the same (dense) gradients: data replicas over dp, the context-parallel
  /// ranks of one sequence, and the expert-parallel ranks, which are data replicas for the dense layers.
  topo::CommGroup grad;
};

// Two neighbouring ranks of `axis_group`: on one node, or on two (then sharing the NICs with the other
// groups that send at the same moment, as the axis group's NIC sharing says).
topo::CommGroup neighbour_pair(const topo::CommGroup& axis_group) {
  const bool crosses = axis_group.crosses_nodes();
  return topo::CommGroup{2, crosses ? 1 : 2, crosses ? 2 : 1, axis_group.crosses_leaf() ? 2 : 1,
                         crosses ? axis_group.groups_sharing_nics : 1};
}

Groups communicator_groups(const ParallelPlan& plan, const topo::ClusterSpec& cluster) {
  std::vector<std::int64_t> sizes;
  std::vector<ParallelAxis> axes = plan.order;
  for (ParallelAxis a :
       {ParallelAxis::tp, ParallelAxis::cp, ParallelAxis::ep, ParallelAxis::pp, ParallelAxis::dp}) {
    if (std::find(axes.begin(), axes.end(), a) == axes.end()) axes.push_back(a);
  }
  for (ParallelAxis a : axes) {
    switch (a) {
      case ParallelAxis::tp:
        sizes.push_back(plan.tp);
        break;
      case ParallelAxis::cp:
        sizes.push_back(plan.cp);
        break;
      case ParallelAxis::ep:
        sizes.push_back(plan.ep);
        break;
      case ParallelAxis::pp:
        sizes.push_back(plan.pp);
        break;
      case ParallelAxis::dp:
        sizes.push_back(plan.dp);
        break;
    }
  }
  const topo::Placement placement(sizes, cluster);
  auto index_of = [&](ParallelAxis a) {
    return static_cast<std::size_t>(std::find(axes.begin(), axes.end(), a) - axes.begin());
  };
  auto group = [&](ParallelAxis a) { return placement.group(index_of(a), 0); };
  Groups g{group(ParallelAxis::tp),
           group(ParallelAxis::cp),
           group(ParallelAxis::ep),
           group(ParallelAxis::dp),
           group(ParallelAxis::pp),
           {},
           {},
           {},
           {}};
  for (std::int64_t s = 0; s < plan.pp; ++s) {
    g.stage_node.push_back(placement.node_of(s * placement.axis_stride(index_of(ParallelAxis::pp))));
  }
  const std::array<std::size_t, 3> grad_axes{index_of(ParallelAxis::dp), index_of(ParallelAxis::cp),
                                             index_of(ParallelAxis::ep)};
  g.grad = placement.group(grad_axes, 0);
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

// Splits an op list into pieces (see CostPiece). The sums match the rule every path has used: kernels
// add up; a blocking collective adds its time; an overlappable one runs under the next kernel and adds
// only what it exceeds it by (all of it when no kernel follows).
std::vector<CostPiece> time_pieces(const std::vector<LayerOp>& ops, const StepInput& in, const Groups& g) {
  std::vector<CostPiece> out;
  const auto& gpu = in.cluster.node.gpu;
  CostPiece run;  // the compute piece being gathered
  std::string last_kernel;
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
  for (const LayerOp& op : ops) {
    if (!op.communication) {
      const double k = kernel_time(op.kernel, gpu, in.training.precision);
      const double w = is_weight_grad(op.name) ? k : 0.0;
      if (hidden.comm > 0) {
        flush();
        // The collective's NCCL kernels take SMs and HBM bandwidth from the kernel it runs beside.
        const double slowed = 1.0 + gpu.efficiency.overlap_compute_slowdown;
        hidden.compute = k * slowed;
        hidden.weight = w * slowed;
        hidden.name = op.name;
        out.push_back(std::move(hidden));
        hidden = CostPiece{};
        hidden.kind = CostPiece::Kind::overlapped;
        continue;
      }
      if (kernels == 0) run.name = op.name;
      last_kernel = op.name;
      run.compute += k;
      run.weight += w;
      ++kernels;
      continue;
    }
    const topo::CommGroup& group = op.comm.group == CommGroup::tp   ? g.tp
                                   : op.comm.group == CommGroup::cp ? g.cp
                                                                    : g.ep;
    const double c = topo::collective_time(
                         to_topo(op.comm.collective), op.comm.bytes,
                         op.comm.collective == Collective::ring_exchange ? g.cp_pair : group, in.cluster) *
                     op.comm.steps;
    flush();
    if (op.comm.overlappable) {
      if (hidden.comm == 0) {
        hidden.comm_name = op.name;
        hidden.group = op.comm.group;
      }
      hidden.comm += c;
      continue;
    }
    CostPiece piece;
    piece.kind = CostPiece::Kind::collective;
    piece.group = op.comm.group;
    piece.comm = c;
    piece.name = op.name;
    out.push_back(std::move(piece));
  }
  flush();
  if (hidden.comm > 0) {  // nothing left to hide under: it blocks
    hidden.kind = CostPiece::Kind::collective;
    hidden.name = hidden.comm_name;
    hidden.comm_name.clear();
    out.push_back(std::move(hidden));
  }
  return out;
}

UnitCost unit_cost(std::string name, const LayerOps& ops, const StepInput& in, const Groups& g) {
  UnitCost u;
  u.name = std::move(name);
  u.forward = time_pieces(ops.forward, in, g);
  u.backward = time_pieces(ops.backward, in, g);
  PassCost& t = u.total;
  for (const CostPiece& x : u.forward) {
    t.forward_compute += x.compute;
    t.forward_comm += x.exposed_comm();
  }
  for (const CostPiece& x : u.backward) {
    t.backward_compute += x.compute;
    t.backward_comm += x.exposed_comm();
    t.weight_compute += x.weight;
  }
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

// Gradient buckets of rank s: each chunk's share of the buckets becomes ready evenly over its last
// backward (or all after the rank's last pass without overlap_grad_reduce); the dp stream reduces them in
// order of readiness. Returns when the stream is free (0 without buckets). on_bucket(chunk, start, end)
// sees each bucket: a template parameter so that the timing-only path, which passes a no-op, pays nothing.
template <class OnBucket>
double lay_buckets(const ParallelPlan& pl, const StepPlan& plan, const StageCost& sc,
                   const ScheduleTimeline& tl, int s, OnBucket&& on_bucket) {
  double dp_free = 0;
  if (pl.zero >= 3 || sc.bucket_s <= 0) return dp_free;
  const int p = plan.pp;
  const int v = plan.virtual_stages;
  std::vector<int> chunks(static_cast<std::size_t>(v));
  for (int c = 0; c < v; ++c) chunks[static_cast<std::size_t>(c)] = c;
  auto vs_of = [&](int c) { return static_cast<std::size_t>(c * p + s); };
  std::sort(chunks.begin(), chunks.end(),
            [&](int a, int b) { return tl.grads_ready[vs_of(a)] < tl.grads_ready[vs_of(b)]; });
  for (int c : chunks) {
    const int nb = std::max(
        1, static_cast<int>(std::lround(static_cast<double>(sc.buckets) * plan.chunk_layers[vs_of(c)] /
                                        plan.stage_layers[static_cast<std::size_t>(s)])));
    const double from = tl.grads_from[vs_of(c)];
    const double ready = tl.grads_ready[vs_of(c)];
    const double chunk_total = sc.bucket_s * sc.buckets * plan.chunk_layers[vs_of(c)] /
                               plan.stage_layers[static_cast<std::size_t>(s)];
    const double each = chunk_total / nb;
    for (int i = 0; i < nb; ++i) {
      const double available = pl.overlap_grad_reduce ? from + (ready - from) * (i + 1) / nb
                                                      : tl.rank_end[static_cast<std::size_t>(s)];
      const double start = std::max(dp_free, available);
      dp_free = start + each;
      on_bucket(c, start, dp_free);
    }
  }
  return dp_free;
}

}  // namespace

StepCosts step_costs(const StepInput& in, const StepPlan& plan) {
  TRAINSIM_CHECK(plan.feasible, "step_costs needs a feasible plan");
  const ParallelPlan& pl = in.plan;
  const Groups g = communicator_groups(pl, in.cluster);
  const Shard shard = shard_of(pl, in.training.precision);
  const int p = plan.pp;
  const int v = plan.virtual_stages;
  const int nvs = p * v;
  StepCosts out;
  out.passes.assign(static_cast<std::size_t>(nvs), PassCost{});

  const bool generic = !in.model.generic_layers.empty();
  out.chunk_units.assign(static_cast<std::size_t>(nvs), {});
  if (generic) {
    for (int vs = 0; vs < nvs; ++vs) {
      const int first = plan.first_layer_of(vs);
      for (int l = first; l < first + plan.chunk_layers[static_cast<std::size_t>(vs)]; ++l) {
        const GenericLayer& layer = in.model.generic_layers[static_cast<std::size_t>(l)];
        out.chunk_units[static_cast<std::size_t>(vs)].push_back(
            UnitRun{static_cast<int>(out.units.size()), 1, l});
        out.units.push_back(unit_cost(layer.name, generic_layer_ops(layer, shard), in, g));
      }
    }
  } else {
    // Transformer layers are identical: price one, repeat it for the layers of each virtual stage.
    out.units.push_back(unit_cost("layer", transformer_layer_ops(in.model, shard), in, g));
    out.units.push_back(unit_cost("embedding", embedding_ops(in.model, shard), in, g));
    out.units.push_back(unit_cost("head", head_ops(in.model, shard), in, g));
    for (int vs = 0; vs < nvs; ++vs) {
      auto& runs = out.chunk_units[static_cast<std::size_t>(vs)];
      if (vs == 0) runs.push_back(UnitRun{1, 1, -1});
      const int n = plan.chunk_layers[static_cast<std::size_t>(vs)];
      if (n > 0) runs.push_back(UnitRun{0, n, plan.first_layer_of(vs)});
      if (vs == nvs - 1) runs.push_back(UnitRun{2, 1, -1});
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
    const auto e = topo::estimate_collective(topo::CollectiveOp::send_recv, out.p2p_bytes, g.p2p, in.cluster);
    out.p2p_s = e.time_s;
    out.p2p_latency_s = e.latency_s;
  }
  out.stage_node = g.stage_node;
  out.dp_crosses_nodes = g.grad.crosses_nodes();

  // Data parallelism and the optimizer, per pipeline rank (the layer split of the plan, not memory's own).
  ParallelPlan split = pl;
  split.stage_layers = plan.stage_layers;
  const OptimizerSpec& opt = in.training.optimizer;
  const double grad_elem = topo::bytes_per_element(gradient_precision(opt, in.training.precision));
  const double weight_elem = topo::bytes_per_element(weight_storage_precision(in.training.precision));
  const double shard_degree = static_cast<double>(g.grad.size);  // = dp·cp·ep, as memory shards
  const auto m = static_cast<double>(plan.micro_batches);
  const auto& gpu = in.cluster.node.gpu;
  out.stages.assign(static_cast<std::size_t>(p), StageCost{});
  for (int s = 0; s < p; ++s) {
    StageCost& sc = out.stages[static_cast<std::size_t>(s)];
    const auto tensors = stage_parameter_tensors(in.model, split, s);
    for (const auto& t : tensors) sc.params += t.elements();
    sc.grad_bytes = sc.params * grad_elem;
    sc.weight_bytes = sc.params * weight_elem;
    if (pl.zero < 3) {
      const double want = std::ceil(sc.grad_bytes / std::max(pl.bucket_bytes, 1.0));
      sc.buckets = static_cast<int>(std::clamp(want, 1.0, static_cast<double>(kMaxBuckets)));
      const auto op = pl.zero == 0 ? topo::CollectiveOp::all_reduce : topo::CollectiveOp::reduce_scatter;
      const auto bucket = topo::estimate_collective(op, sc.grad_bytes / sc.buckets, g.grad, in.cluster);
      sc.bucket_s = bucket.time_s;
      sc.bucket_latency_s = bucket.latency_s;
      sc.dp_bytes_per_step = g.grad.size > 1 ? sc.grad_bytes : 0.0;
      if (pl.zero >= 1) {
        const auto gather =
            topo::estimate_collective(topo::CollectiveOp::all_gather, sc.weight_bytes, g.grad, in.cluster);
        sc.param_gather_s = gather.time_s;
        sc.param_gather_latency_s = gather.latency_s;
        sc.dp_bytes_per_step += g.grad.size > 1 ? sc.weight_bytes : 0.0;
      }
    } else {
      sc.buckets = 0;
      const auto gather =
          topo::estimate_collective(topo::CollectiveOp::all_gather, sc.weight_bytes, g.grad, in.cluster);
      const auto reduce =
          topo::estimate_collective(topo::CollectiveOp::reduce_scatter, sc.grad_bytes, g.grad, in.cluster);
      sc.zero3_gather_s = gather.time_s;
      sc.zero3_gather_latency_s = gather.latency_s;
      sc.zero3_reduce_s = reduce.time_s;
      sc.zero3_reduce_latency_s = reduce.latency_s;
      // Gathered before every forward and every backward pass, gradients reduce-scattered after every
      // backward (FSDP reshards after each pass; no gradient accumulation in full precision).
      sc.dp_bytes_per_step = g.grad.size > 1 ? m * (2.0 * sc.weight_bytes + sc.grad_bytes) : 0.0;
    }
    const OptimizerCost oc = optimizer_cost(opt, in.training.precision, tensors);
    const double opt_shard = pl.zero >= 1 ? shard_degree : 1.0;
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

PassTimes pass_times(const StepCosts& costs) {
  PassTimes t;
  t.p2p_s = costs.p2p_s;
  for (const PassCost& pc : costs.passes) {
    t.forward.push_back(pc.forward());
    t.backward.push_back(pc.backward());
    t.weight.push_back(pc.weight_compute);
  }
  return t;
}

StepTiming analytic_step(const StepInput& in, const StepPlan& plan, const StepCosts& costs,
                         AnalyticLayout* layout) {
  const ParallelPlan& pl = in.plan;
  const int p = plan.pp;
  const int v = plan.virtual_stages;
  const auto m = static_cast<int>(plan.micro_batches);
  const PipelineOrder order = pipeline_schedule(pl.schedule, p, m, v);

  // ZeRO-3: each layer waits for its weights; gathers are prefetched one layer ahead on the dp stream, so a
  // pass is lengthened only by what its dp traffic exceeds its own compute (and the very first layer's
  // gather).
  PassTimes times = pass_times(costs);
  std::vector<double> zero3_exposed(static_cast<std::size_t>(p), 0.0);  // per rank, within the replay
  std::vector<double> first_gather(static_cast<std::size_t>(p), 0.0);   // per rank, before its first pass
  if (pl.zero == 3 && pl.dp * pl.cp * pl.ep > 1) {  // gradients have copies to gather from
    for (int vs = 0; vs < p * v; ++vs) {
      const int s = vs % p;
      const StageCost& sc = costs.stages[static_cast<std::size_t>(s)];
      const double share = static_cast<double>(plan.chunk_layers[static_cast<std::size_t>(vs)]) /
                           plan.stage_layers[static_cast<std::size_t>(s)];
      const PassCost& pc = costs.passes[static_cast<std::size_t>(vs)];
      const double f = std::max(0.0, share * sc.zero3_gather_s - pc.forward());
      const double b = std::max(0.0, share * (sc.zero3_gather_s + sc.zero3_reduce_s) - pc.backward());
      times.forward[static_cast<std::size_t>(vs)] += f;
      times.backward[static_cast<std::size_t>(vs)] += b;
      zero3_exposed[static_cast<std::size_t>(s)] += m * (f + b);
      // Weights are gathered layer by layer: only the first layer's gather cannot be prefetched.
      if (vs == s) {
        first_gather[static_cast<std::size_t>(s)] =
            sc.zero3_gather_s / std::max(1, plan.stage_layers[static_cast<std::size_t>(s)]);
      }
    }
  }
  const ScheduleTimeline tl = time_schedule(order, p, m, v, times, layout ? &layout->passes : nullptr);
  if (layout != nullptr) {
    layout->order = order;
    layout->first_gather = first_gather;
    layout->buckets.assign(static_cast<std::size_t>(p), {});
    layout->reduced.assign(static_cast<std::size_t>(p), 0.0);
    layout->finish.assign(static_cast<std::size_t>(p), 0.0);
  }

  StepTiming out;
  std::vector<double> finish(static_cast<std::size_t>(p), 0.0);
  std::vector<double> dp_tail(static_cast<std::size_t>(p), 0.0);
  for (int s = 0; s < p; ++s) {
    const StageCost& sc = costs.stages[static_cast<std::size_t>(s)];
    const double end = tl.rank_end[static_cast<std::size_t>(s)] + first_gather[static_cast<std::size_t>(s)];
    const double dp_free =
        layout == nullptr
            ? lay_buckets(pl, plan, sc, tl, s, [](int, double, double) {})
            : lay_buckets(pl, plan, sc, tl, s, [&](int c, double from, double to) {
                layout->buckets[static_cast<std::size_t>(s)].push_back(AnalyticLayout::Bucket{c, from, to});
              });
    const double reduced = std::max(end, dp_free);
    dp_tail[static_cast<std::size_t>(s)] = reduced - end;
    finish[static_cast<std::size_t>(s)] = reduced + sc.grad_norm_s + sc.optimizer_s + sc.param_gather_s;
    if (layout != nullptr) {
      layout->reduced[static_cast<std::size_t>(s)] = reduced;
      layout->finish[static_cast<std::size_t>(s)] = finish[static_cast<std::size_t>(s)];
    }
  }
  const int crit = static_cast<int>(std::max_element(finish.begin(), finish.end()) - finish.begin());
  const auto cs = static_cast<std::size_t>(crit);
  out.critical_stage = crit;
  out.iteration_time = finish[cs];

  TimeBreakdown& tb = out.time;
  for (int c = 0; c < v; ++c) {
    const PassCost& pc = costs.passes[static_cast<std::size_t>(c * p + crit)];
    tb.compute += m * (pc.forward_compute + pc.backward_compute);
    tb.exposed_tp_comm += m * (pc.forward_comm + pc.backward_comm);
  }
  const StageCost& sc = costs.stages[cs];
  tb.exposed_dp_comm = zero3_exposed[cs] + first_gather[cs] + dp_tail[cs] + sc.param_gather_s;
  tb.optimizer = sc.optimizer_s + sc.grad_norm_s;
  // Pipeline hand-overs: what they add to this rank's end, measured against the same schedule without them.
  if (costs.p2p_s > 0) {
    PassTimes no_p2p = times;
    no_p2p.p2p_s = 0;
    const double without = time_schedule(order, p, m, v, no_p2p).rank_end[cs];
    tb.exposed_pp_comm = std::max(0.0, tl.rank_end[cs] - without);
  }
  tb.bubble = out.iteration_time -
              (tb.compute + tb.exposed_tp_comm + tb.exposed_dp_comm + tb.exposed_pp_comm + tb.optimizer);
  if (tb.bubble < 0) {  // rounding only: the parts above are each a lower bound of the rank's time
    tb.exposed_pp_comm = std::max(0.0, tb.exposed_pp_comm + tb.bubble);
    tb.bubble = 0;
  }
  out.bubble_fraction = out.iteration_time > 0 ? tb.bubble / out.iteration_time : 0.0;
  return out;
}

}  // namespace trainsim::model
