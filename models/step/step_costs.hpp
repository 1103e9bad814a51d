#pragma once
// The costs of one step's pieces, shared by both fidelities (the analytic fast path, analytic_step.hpp,
// and the event-driven lowering, step_lowering.hpp).
//
// step_costs() prices, for one GPU of each pipeline stage (one tensor-parallel rank of one data-parallel
// replica — all others are symmetric to it):
//  - each unit (one transformer layer, the embedding, the LM head, or one generic layer) as the ordered
//    pieces of its forward and backward op lists (models/layer_ops.hpp): the kernels between two
//    collectives (timed by kernel_time), each blocking tensor/context/expert-parallel collective (timed by
//    collective_time on the communicator group the placement gives; on the critical path, as in
//    Megatron-LM), and each overlappable one (the cp ring exchange) paired with the kernel it runs under;
//    recomputation stays inside the backward's kernels. Each virtual stage is a list of runs of units
//    (embedding, n identical layers — a MoE model's dense first layers a run of their own, priced as a
//    dense layer, before its MoE layers —, head; generic models one run per layer), and its PassCost — what
//    the analytic path and the schedule replay use — is the sum of those pieces, so the event path, which
//    lowers the pieces one by one (step_lowering.hpp), charges the same seconds;
//  - the activation hand-over between stages (send/recv of b·s/cp·h elements, ÷ tp under sequence
//    parallelism, on the pipeline group's links);
//  - data-parallel traffic: gradient all-reduce (ZeRO 0) or reduce-scatter + parameter all-gather after the
//    update (ZeRO 1–2, Megatron's distributed optimizer), in buckets of plan.bucket_bytes; ZeRO-3 as the
//    frameworks run it: each unit (a layer, or framework.gathers_per_layer pieces of it; the embedding;
//    the head) gathers its own weights over the sharding group before it computes in the forward (and,
//    resharded, again in the backward) and reduce-scatters its own gradients after its backward, every
//    collective paying its full α-β time over the real communicator. With parallelism.shard_group (HSDP)
//    the sharding group is shard_group dp ranks (× cp × ep) and the gradients' shard is then all-reduced
//    over the replicas; ZeRO 1–2 buckets reduce the same way. Gradients are reduced in
//    framework.grad_reduce_dtype when set;
//  - with framework.tp_comm_overlap and sequence parallelism, tensor-parallel all-gathers run under the
//    matmul after them and reduce-scatters under the matmul before them (TransformerEngine's chunked
//    overlap), each such matmul slowed by framework.tp_comm_overlap_slowdown;
//  - the optimizer update, memory-bound on HBM (bytes from D2's optimizer_cost, ÷ dp under ZeRO ≥ 1), its
//    whole-matrix work (Muon, Shampoo, SOAP: matmuls on the busiest owner, and their collectives priced as
//    the data-parallel ones are, distributed_update.hpp), and the gradient-norm all-reduces (clipping, LAMB,
//    Muon).
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/step/step_plan.hpp"
#include "models/step/step_simulator.hpp"
#include "models/workload/layer_ops.hpp"
#include "topologies/collective_cost.hpp"

namespace trainsim::model {

/// One micro-batch through one virtual stage on one GPU, seconds.
struct PassCost {
  double forward_compute = 0;   ///< kernels of the forward pass (embedding / LM head included on the ends)
  double forward_comm = 0;      ///< exposed tp/cp/ep collectives of the forward pass
  double backward_compute = 0;  ///< kernels of the backward pass, recomputation included
  double backward_comm = 0;     ///< exposed collectives of the backward pass
  double weight_compute = 0;    ///< the weight-gradient (wgrad) part of backward_compute (ZB-H1's W)
  /// The MoE token dispatch's part of forward_comm and backward_comm (is_expert_dispatch groups).
  double forward_ep_comm = 0;
  double backward_ep_comm = 0;
  /// framework.ep_comm_overlap: what a forward or a backward adds when it runs alone, not merged with
  /// another micro-batch's pass (UnitCost::forward_alone_s summed over the units).
  double forward_alone = 0;
  double backward_alone = 0;

  [[nodiscard]] double forward() const { return forward_compute + forward_comm; }
  [[nodiscard]] double backward() const { return backward_compute + backward_comm; }
};

/// Which ranks a data-parallel collective spans.
enum class DataGroup : std::uint8_t {
  gradient,  ///< every copy of the dense gradients: the dp · cp · ep ranks of one tensor-parallel index
  shard,     ///< one sharding group: HSDP's shard_group dp ranks × cp × ep (all of gradient without it)
  replicas,  ///< HSDP: the copies of one shard, one in each sharding group (dense or expert: the same GPUs)
  /// Every copy of one expert shard's gradients: the expert-data-parallel group (Communicators::expert_grad)
  expert_gradient,
  expert_shard,  ///< its part in one sharding group (Communicators::expert_shard)
};

/// A collective as the routed full cluster lowers it into flows over the cluster graph
/// (topo::lower_collective, the flow fidelity's one lowering of each algorithm: rings per channel, trees,
/// hierarchical, halving-doubling, NVLS, all-to-all, send-recv): what it moves and the algorithm and
/// protocol the closed form chose for it.
struct RoutedCollective {
  topo::CollectiveOp op = topo::CollectiveOp::all_reduce;
  double bytes = 0;  ///< nccl size (as topo::collective_time counts it), all its calls together
  topo::CollectiveAlgo algo = topo::CollectiveAlgo::ring;
  topo::CollectiveProtocol protocol = topo::CollectiveProtocol::simple;
  DataGroup over = DataGroup::shard;  ///< a data-parallel one's ranks
};
/// Collectives run one after another (HSDP's reduce-scatter, then the replicas' all-reduce; ZeRO-3's
/// per-tensor gathers).
using RoutedCollectives = std::vector<RoutedCollective>;

/// A context- or expert-parallel collective whose group leaves the node, in the routed full cluster
/// (FabricPricing::routed): priced on the uncontended fabric and lowered as flows, so that what the fabric
/// takes from it is counted once, by the flows. A ring exchange (send_recv) is every member sending to its
/// ring successor at once.
struct RoutedComm {
  CommGroup group = CommGroup::cp;
  RoutedCollective flows;
  double seconds = 0;    ///< closed-form time on the uncontended fabric
  double latency_s = 0;  ///< its size-independent part
};

/// One piece of a unit's forward or backward, in execution order.
struct CostPiece {
  enum class Kind : std::uint8_t {
    compute,     ///< consecutive kernels between two collectives: `compute` seconds on the compute stream
    collective,  ///< a blocking collective: `comm` seconds, the compute after it waits
    overlapped,  ///< an overlappable collective (`comm`) running beside one kernel (`compute`): max of both
  };
  Kind kind = Kind::compute;
  CommGroup group = CommGroup::tp;  ///< collective, overlapped: the communicator
  double compute = 0;               ///< kernel seconds (compute, overlapped)
  double weight = 0;                ///< the weight-gradient (wgrad) part of `compute`
  double comm = 0;                  ///< collective seconds (collective, overlapped)
  std::string name;                 ///< the kernels ("qkv..out_proj") or the collective ("tp_all_reduce")
  std::string comm_name;            ///< overlapped: the collective's name
  /// Routed full cluster: the collectives of `comm` that leave the node, in order (their seconds are part
  /// of comm); the rest of comm stays a busy task.
  std::vector<RoutedComm> routed;

  /// What the piece adds to the pass beyond its kernels: comm, or what the overlapped part exceeds, its
  /// kernels `compute_scale` times as long (a slowed GPU's).
  [[nodiscard]] double exposed_comm(double compute_scale = 1.0) const {
    return kind == Kind::overlapped ? std::max(0.0, comm - compute * compute_scale) : comm;
  }
};

/// A collective's closed-form time split into its size-independent part (launch, α, host issue:
/// topo::CollectiveEstimate::latency_s) and its bandwidth term, both fidelities' one rule.
struct LatencySplit {
  double latency_s = 0;
  double bandwidth_s = 0;
};
/// `seconds` (below 0: 0) split at `latency_s`, clamped to [0, seconds] so that the two parts are never
/// negative and always sum to the collective's time: a latency longer than the whole (a time that was
/// scaled down, or rounding) costs the whole, not more.
[[nodiscard]] inline LatencySplit split_latency(double seconds, double latency_s) {
  const double total = std::max(0.0, seconds);
  const double latency = std::clamp(latency_s, 0.0, total);
  return {latency, total - latency};
}
/// `seconds` with its bandwidth part (split_latency) `factor` times as long, its latency as it was.
[[nodiscard]] inline double slowed_bandwidth(double seconds, double latency_s, double factor) {
  const LatencySplit part = split_latency(seconds, latency_s);
  return part.latency_s + part.bandwidth_s * factor;
}

/// One unit's pieces and their sums (each sum adds the pieces in order).
struct UnitCost {
  std::string name;  ///< "layer", "dense_layer", "embedding", "head", or a generic layer's name
  std::vector<CostPiece> forward, backward;
  PassCost total;  ///< the unit alone as a pass: its pieces summed
  /// ZeRO-3 (StepCosts::gathers_weights): the unit's own collectives over the sharding group, each
  /// paying its full α-β time, summed over the framework's collectives per unit — the all-gather of its
  /// weights, and the reduce-scatter of its gradients (HSDP: then the all-reduce of the shard over its
  /// replicas); *_latency_s is the size-independent part. 0 otherwise.
  double gather_s = 0;
  double gather_latency_s = 0;
  double reduce_s = 0;
  double reduce_latency_s = 0;
  /// Routed full cluster: gather_s's and reduce_s's collectives as flows.
  RoutedCollectives gather_flows, reduce_flows;
  /// Routed full cluster: some piece has collectives lowered as flows (CostPiece::routed).
  bool routes_pieces = false;
  /// The host's issue of one pass (models/step/host_issue.hpp): host seconds for all its ops, and where the
  /// host waits for the device (Framework::moe_host_sync), the first piece after the wait and the host
  /// seconds of the ops before it.
  struct PassIssue {
    double host_s = 0;
    std::optional<std::size_t> sync_piece;
    double before_sync_s = 0;
  };
  PassIssue forward_issue, backward_issue;
  /// framework.ep_comm_overlap: what the unit's forward and backward add when they run alone (the warm-up
  /// forwards and cool-down backwards: merged_passes.hpp): their kernels unslowed and their all-to-alls
  /// whole, less what the pieces, priced merged (pair_expert_all_to_alls), take. It can be below 0 for one
  /// pass (the other pass's all-to-alls slowed its kernels by more than its own all-to-alls outlast
  /// theirs; the two passes' sum never is, with overlap_compute_slowdown ≤ 1); pass_sums keeps what both
  /// fidelities add to such a pass at 0 or more, since the event lowering adds it as a blocking collective.
  double forward_alone_s = 0;
  double backward_alone_s = 0;
  /// The kernels' part of forward_alone_s and backward_alone_s (the slow-down taken back, ≤ 0), which a
  /// straggler's compute_scale scales in pass_sums.
  double forward_alone_kernels_s = 0;
  double backward_alone_kernels_s = 0;
};

/// A run of identical consecutive units of one virtual stage, in forward order.
struct UnitRun {
  int unit = 0;          ///< index into StepCosts::units
  int count = 1;         ///< copies (the transformer layers of a chunk)
  int first_layer = -1;  ///< model layer of the first copy; -1 for the embedding and the head
};

/// Per pipeline rank: data-parallel and optimizer costs, seconds and bytes, one GPU.
struct StageCost {
  double params = 0;  ///< parameters on one GPU before ZeRO sharding
  /// Of them, expert parameters: under ZeRO 0–2 reduced and gathered over the expert-data-parallel group
  /// (Communicators::expert_grad, expert_shard), not the dense one.
  double expert_params = 0;
  double grad_bytes = 0;         ///< its gradients, bytes
  double weight_bytes = 0;       ///< its weights in storage precision, bytes
  int buckets = 1;               ///< gradient buckets (ZeRO 0–2)
  double bucket_s = 0;           ///< time of one bucket's reduction (all-reduce or reduce-scatter)
  double param_gather_s = 0;     ///< ZeRO 1–2: all-gather of the updated weights after the optimizer
  double zero3_gather_s = 0;     ///< ZeRO-3: its units' gathers summed: all this rank's weights once
  double zero3_reduce_s = 0;     ///< ZeRO-3: its units' gradient reductions summed
  double optimizer_s = 0;        ///< the update kernels
  double grad_norm_s = 0;        ///< all-reduces of the norm(s)
  double dp_bytes_per_step = 0;  ///< data-parallel bytes this GPU's collectives carry per step (nccl size)
  /// The size-independent part (launch and per-step α, topo::CollectiveEstimate::latency_s) of bucket_s
  /// and param_gather_s: the event fidelity runs the rest as a flow.
  double bucket_latency_s = 0;
  double param_gather_latency_s = 0;
  /// Whole-matrix updates under ZeRO ≥ 1 (distributed_update.hpp: Muon's gather and scatter, Shampoo's and
  /// SOAP's gradient gather and search-direction all-gather) over the sharding group, one after another, and
  /// their size-independent part.
  double optimizer_comm_s = 0;
  double optimizer_comm_latency_s = 0;
  /// Routed full cluster: one bucket's, the parameter gather's and the whole-matrix update's collectives as
  /// flows.
  RoutedCollectives bucket_flows, param_gather_flows, optimizer_comm_flows;
};

/// Who prices the links beyond the NICs for the data-parallel collectives and the pipeline sends.
enum class FabricPricing : std::uint8_t {
  /// The closed form: the tiers a communicator crosses, the leaf uplinks' share of an oversubscribed or
  /// shared fabric, a degraded NIC's pace (degraded_nic_slowdowns). The analytic fidelity's (search's
  /// inner loop, where routing every layout's groups would cost several times the step itself).
  closed_form,
  /// The closed form on topo::uncontended_fabric, the bandwidth terms of the data-parallel collectives, the
  /// pipeline sends and the node-crossing context- and expert-parallel collectives slowed by the busiest link
  /// their sibling groups meet on the cluster graph (shared_links.hpp). The collapsed simulation's: it
  /// agrees with the routed full cluster.
  shared_links,
  /// The flows: those transfers are priced on topo::uncontended_fabric(cluster) and their flows routed
  /// over the cluster graph, whose links carry the oversubscription, the background share and the
  /// degraded NICs (step_network.hpp). The full-cluster simulation's.
  routed,
};

struct StepCosts {
  std::vector<PassCost> passes;  ///< per virtual stage vs = chunk·pp + rank: the sums of its units' pieces
  std::vector<UnitCost> units;   ///< the distinct units (empty in hand-made costs: analytic_step only)
  std::vector<std::vector<UnitRun>> chunk_units;  ///< per virtual stage, forward order
  std::vector<StageCost> stages;                  ///< per pipeline rank
  /// ZeRO-3 with a sharding group of more than one rank: units gather their weights (UnitCost::gather_s).
  bool gathers_weights = false;
  int zero3_prefetch = 1;  ///< units gathered ahead of the computing one (framework prefetch_units)
  /// ZeRO-3 with the framework's synchronous_collectives: a unit's gradients are reduced before the next
  /// unit's gather is issued (the host waits for the device), so nothing overlaps them.
  bool synchronous_zero3 = false;
  double p2p_s = 0;  ///< one activation (or its gradient) between consecutive stages
  double p2p_bytes = 0;
  double p2p_latency_s = 0;  ///< the size-independent part of p2p_s
  /// Where the traffic runs (for the event fidelity's flows, step_network.hpp): the node of each pipeline
  /// rank's representative GPU (the placement's, data-parallel and tensor-parallel index 0), and whether a
  /// data-parallel ring step leaves the node (the gradient group spans nodes).
  std::vector<std::int64_t> stage_node;
  bool dp_crosses_nodes = false;
  /// How the data-parallel collectives and pipeline sends were priced; the lowering routes their flows
  /// over the cluster graph exactly when they were priced for it (FabricPricing::routed).
  FabricPricing fabric = FabricPricing::closed_form;
  /// ZeRO 0–2 with overlap_grad_reduce: the GPU's overlap_compute_slowdown, which slows the kernels beside
  /// which each chunk's gradient buckets are reduced (last_grads_extra); 0 when no bucket overlaps compute.
  double bucket_overlap_slowdown = 0;
  /// ZB-H1: the weight gradients run as their own W pass, which is then the pass that makes them final.
  bool weight_pass = false;
};

/// How many times as long kernels of `kernels_s` seconds take while collectives of `collective_s` seconds
/// run beside them on other streams, NCCL's kernels taking SMs and HBM bandwidth: 1 + s·min(1, C/K), where
/// s is the GPU's overlap_compute_slowdown (`slowdown`). The one rule of every collective that overlaps
/// compute.
[[nodiscard]] inline double beside_collectives_factor(double slowdown, double collective_s,
                                                      double kernels_s) {
  if (kernels_s <= 0 || collective_s <= 0) return 1.0;
  return 1.0 + slowdown * std::min(1.0, collective_s / kernels_s);
}

/// ZeRO 0–2 with overlap_grad_reduce: how many times as long the kernels of virtual stage vs's
/// gradient-producing pass of the last micro-batch (its backward, or ZB-H1's W pass) take, the chunk's
/// share of its rank's gradient buckets being reduced beside them (beside_collectives_factor); 1 otherwise.
/// From the costs as they stand (after slow_data_parallel or slow_stages). The lowering scales that pass's
/// kernels by it.
[[nodiscard]] double last_grads_slowdown(const StepCosts& costs, const StepPlan& plan, int vs);

/// The seconds last_grads_slowdown adds to that pass: the analytic replay adds them to it, and stage_work
/// counts them as compute.
[[nodiscard]] double last_grads_extra(const StepCosts& costs, const StepPlan& plan, int vs);

/// ZeRO-3: pipeline rank `stage`'s units' gathers and gradient reductions (UnitCost::gather_s, reduce_s)
/// summed over its chunks into its StageCost's zero3_gather_s and zero3_reduce_s.
void sum_zero3_stage(StepCosts& costs, const StepPlan& plan, int stage);
/// The pieces' costs. Precondition: plan.feasible. Throws InputError for inputs that are not a layout.
[[nodiscard]] StepCosts step_costs(const StepInput& input, const StepPlan& plan,
                                   FabricPricing fabric = FabricPricing::closed_form);

/// The breakdown of pipeline rank `stage` that both fidelities attribute alike, from its costs alone: the
/// kernels of its m·v passes with each chunk's last_grads_extra (compute), their blocking tp/cp/ep
/// collectives (exposed_tp_comm, the MoE token dispatch's in exposed_ep_comm) and the optimizer with its
/// gradient norm. The data-parallel, pipeline and bubble parts are each fidelity's own.
[[nodiscard]] TimeBreakdown stage_work(const StepCosts& costs, const StepPlan& plan, int stage);

/// stage_work of every pipeline rank, indexed by rank: computed once where several readers need them all.
[[nodiscard]] std::vector<TimeBreakdown> stage_works(const StepCosts& costs, const StepPlan& plan);

}  // namespace trainsim::model
