// One unit's op lists as the pieces both fidelities run (see unit_pricing.hpp).
#include "models/step/unit_pricing.hpp"

#include <string_view>
#include <utility>

#include "models/step/fabric_shares.hpp"
#include "models/workload/kernel_time.hpp"
#include "topologies/collective_cost.hpp"
#include "topologies/expert_dispatch.hpp"

namespace trainsim::model {

namespace {

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

// The MoE all-to-all under a flex dispatcher backend (DeepEP, HybridEP): sent once per destination node.
bool deduplicated(const CommCost& c, const Framework& fw) {
  return c.group == CommGroup::ep && c.collective == Collective::all_to_all &&
         deduplicates_nodes(fw.moe_dispatcher);
}

// One collective of an op list on its group.
topo::CollectiveEstimate estimate(const CommCost& c, const topo::CommGroup& group,
                                  const topo::ClusterSpec& cluster, const Framework& fw) {
  if (deduplicated(c, fw)) return topo::deduplicated_all_to_all(c.bytes, c.copies, group, cluster);
  return topo::estimate_collective(to_topo(c.collective), c.bytes, group, cluster);
}

// Shared links (the collapsed step), a context- or expert-parallel collective that leaves the node (not
// folded, not deduplicated): on the uncontended fabric, its bandwidth term slowed by the busiest link under
// every sibling group at once (fabric_shares.hpp); the closed form's own leaf shares where the cluster is too
// large to route.
topo::CollectiveEstimate on_fabric(const CommCost& c, const topo::CommGroup& group, const StepInput& in,
                                   const Framework& fw) {
  const FabricTraffic traffic =
      c.group == CommGroup::cp
          ? (c.collective == Collective::ring_exchange ? FabricTraffic::context_ring : FabricTraffic::context)
      : c.group == CommGroup::ep ? FabricTraffic::expert
                                 : FabricTraffic::expert_dispatch;
  const topo::CollectiveEstimate open = estimate(c, group, topo::uncontended_fabric(in.cluster), fw);
  if (const auto slowdown =
          fabric_slowdown(in.plan, in.cluster, traffic, to_topo(c.collective), c.bytes, open))
    return slowed_by_fabric(open, *slowdown);
  return estimate(c, group, in.cluster, fw);
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
std::vector<CostPiece> time_pieces(const std::vector<LayerOp>& ops, const StepInput& in,
                                   const Communicators& g, const topo::ClusterSpec* routed,
                                   bool shared_links) {
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
    const topo::CommGroup& group = g.of(op.comm.group);
    if (fw.ep_comm_overlap && op.comm.group == CommGroup::ep &&
        op.comm.collective == Collective::all_to_all) {
      beside_other_micro_batch += estimate(op.comm, group, in.cluster, fw).time_s;
      continue;
    }
    const topo::CommGroup& priced = op.comm.collective == Collective::ring_exchange ? g.cp_pair : group;
    // Folded expert groups span data-parallel replicas, which the routed lowering keeps apart: closed form.
    const bool expert_group = op.comm.group == CommGroup::ep || op.comm.group == CommGroup::expert_tp_ep;
    // A deduplicating dispatch has no flow lowering: closed form.
    const bool routable = priced.crosses_nodes() && !deduplicated(op.comm, fw) &&
                          (op.comm.group == CommGroup::cp || (expert_group && !in.plan.expert_folding));
    const bool routes = routed != nullptr && routable;
    const topo::CollectiveEstimate e = routes                     ? estimate(op.comm, priced, *routed, fw)
                                       : routable && shared_links ? on_fabric(op.comm, priced, in, fw)
                                                                  : estimate(op.comm, priced, in.cluster, fw);
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

}  // namespace

UnitCost price_unit(std::string name, const LayerOps& ops, const StepInput& in, const Communicators& g,
                    const topo::ClusterSpec* routed, bool shared_links) {
  UnitCost u;
  u.name = std::move(name);
  u.forward = time_pieces(ops.forward, in, g, routed, shared_links);
  u.backward = time_pieces(ops.backward, in, g, routed, shared_links);
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
    pc.forward_ep_comm += n * u.forward_ep_comm;
    pc.backward_ep_comm += n * u.backward_ep_comm;
  }
  return pc;
}

void slow_unit_beside_collectives(UnitCost& u, double forward_beside_s, double backward_beside_s,
                                  const topo::GpuSpec& gpu, const Framework& fw) {
  // The host issues the ops as before: its floor is set again against the slowed kernels.
  drop_host_wait(u.forward);
  drop_host_wait(u.backward);
  slow_beside_collectives(u.forward, forward_beside_s, gpu);
  slow_beside_collectives(u.backward, backward_beside_s, gpu);
  wait_for_host(u.forward, u.forward_ops, fw);
  wait_for_host(u.backward, u.backward_ops, fw);
  sum_pieces(u);
}

PassCost pass_sums(const UnitCost& u, double compute_scale) {
  PassCost t;
  for (const CostPiece& x : u.forward) {
    CostPiece slowed = x;
    slowed.compute *= compute_scale;
    const double exposed = slowed.exposed_comm();
    t.forward_compute += slowed.compute;
    t.forward_comm += exposed;
    if (is_expert_dispatch(x.group)) t.forward_ep_comm += exposed;
  }
  for (const CostPiece& x : u.backward) {
    CostPiece slowed = x;
    slowed.compute *= compute_scale;
    t.backward_compute += slowed.compute;
    const double exposed = slowed.exposed_comm();
    t.backward_comm += exposed;
    if (is_expert_dispatch(x.group)) t.backward_ep_comm += exposed;
    t.weight_compute += x.weight * compute_scale;
  }
  return t;
}

}  // namespace trainsim::model
