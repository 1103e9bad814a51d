// One unit's op lists as the pieces both fidelities run (see unit_pricing.hpp).
#include "models/step/unit_pricing.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

#include "models/step/host_issue.hpp"
#include "models/step/shared_links.hpp"
#include "models/workload/kernel_time.hpp"
#include "sim/error.hpp"
#include "topologies/collective_cost.hpp"
#include "topologies/expert_dispatch.hpp"

namespace trainsim::model {

namespace {

// A MoE block's expert-parallel all-to-all (its dispatch or combine), priced by expert_all_to_all_estimate.
bool is_expert_all_to_all(const CommCost& c) {
  return c.group == CommGroup::ep && c.collective == Collective::all_to_all;
}

// The MoE all-to-all under a flex dispatcher backend (DeepEP, HybridEP): token-based, with no flow lowering.
bool token_based_ep(const CommCost& c, const Framework& fw) {
  return is_expert_all_to_all(c) && token_based(fw.moe_dispatcher);
}

// Shared links (the collapsed step), a context- or expert-parallel collective that leaves the node (not
// folded, not token-based): on the uncontended fabric, its bandwidth term slowed by the busiest link under
// every sibling group at once (shared_links.hpp); the closed form's own leaf shares where the cluster is too
// large to route.
topo::CollectiveEstimate on_fabric(const CommCost& c, const topo::CommGroup& group, const StepInput& in) {
  const FabricTraffic traffic =
      c.group == CommGroup::cp
          ? (c.collective == Collective::ring_exchange ? FabricTraffic::context_ring : FabricTraffic::context)
      : c.group == CommGroup::ep ? FabricTraffic::expert
                                 : FabricTraffic::expert_dispatch;
  return shared_links_estimate(in.plan, in.cluster, topo::uncontended_fabric(in.cluster), traffic,
                               to_topo(c.collective), c.bytes, group);
}

// A weight-gradient kernel (ZB-H1's W): the wgrad of a parameter matmul. The attention core's qk/av
// "wgrad" kernels are activation gradients and stay in B.
bool is_weight_grad(std::string_view name) {
  return name.ends_with(".wgrad") && !name.starts_with("qk.") && !name.starts_with("av.") &&
         !is_recomputed(name);
}

// TransformerEngine runs a reduce-scatter beside the forward GEMM producing it as a "pipeline" (proj_fprop,
// fc2_fprop; recomputed forwards alike), and beside a backward GEMM whole ("bulk": qkv_dgrad, fc1_dgrad).
bool is_backward_gemm(std::string_view name) {
  return name.ends_with(".dgrad") || name.ends_with(".wgrad");
}

// The seconds of the pieces' kernels.
double kernel_seconds(std::span<const CostPiece> pieces) {
  double t = 0;
  for (const CostPiece& x : pieces) t += x.compute;
  return t;
}

// The seconds of the pieces' weight-gradient kernels.
double weight_seconds(std::span<const CostPiece> pieces) {
  double t = 0;
  for (const CostPiece& x : pieces) t += x.weight;
  return t;
}

// Slows pieces' kernels beside collectives by `factor` (beside_collectives_factor's: the collectives'
// kernels take SMs and HBM bandwidth), except the `moved` seconds of their weight gradient, which run
// beside another all-to-all and are slowed by `moved_factor` (--delay-wgrad-compute, delayed_wgrad).
void slow_pieces(std::span<CostPiece> pieces, double factor, double moved = 0, double moved_factor = 1) {
  const double weight = weight_seconds(pieces);
  const double q = weight > 0 ? std::clamp(moved / weight, 0.0, 1.0) : 0.0;
  for (CostPiece& x : pieces) {
    const double w = x.weight;
    const double slowed_w = w * ((1 - q) * factor + q * moved_factor);
    x.compute = (x.compute - w) * factor + slowed_w;
    x.weight = slowed_w;
  }
}

// Splits an op list into pieces (see CostPiece). The sums match the rule every path has used: kernels
// add up; a blocking collective adds its time; an overlappable one runs under the next kernel and adds
// only what it exceeds it by (all of it when no kernel follows). With the framework's tp_comm_overlap
// (sequence parallelism), a tensor-parallel all-gather runs under the matmul after it and a
// reduce-scatter under the matmul before it, each such matmul slowed by tp_comm_overlap_slowdown, and what
// their chunks leave exposed following as a blocking piece (ring_exchange_exposure, pipeline_chunk_exposure).
// With `routed` (the routed full cluster's uncontended fabric), the context- and expert-parallel
// collectives whose group leaves the node are priced on it and listed as flows (CostPiece::routed).
// Ops are added in order; pieces() closes the list.
class PieceBuilder {
 public:
  PieceBuilder(const StepInput& in, const Communicators& g, const topo::ClusterSpec* routed,
               bool shared_links)
      : in_(in),
        g_(g),
        routed_(routed),
        shared_links_(shared_links),
        gpu_(in.cluster.node.gpu),
        fw_(in.plan.framework),
        tp_overlap_(fw_.tp_comm_overlap && in.plan.sequence_parallel),
        tp_slowed_(1.0 + fw_.tp_comm_overlap_slowdown) {
    reset_hidden();
  }

  void add(const LayerOp& op) {
    if (op.communication) {
      add_collective(op);
    } else {
      add_kernel(op);
    }
  }

  /// The host waits for the device here (host_issue.hpp): what was issued before is drained, so the kernels
  /// after start a new piece. Returns that piece's index.
  std::size_t mark_host_sync() {
    flush();
    if (hidden_.comm > 0) block_hidden();
    return out_.size();
  }

  std::vector<CostPiece> pieces() && {
    flush();
    if (hidden_.comm > 0) block_hidden();
    return std::move(out_);
  }

  /// framework.ep_comm_overlap: the pass's expert-parallel all-to-alls, left out of its pieces for
  /// pair_expert_all_to_alls.
  std::vector<ExpertAllToAll> take_all_to_alls() { return std::move(all_to_alls_); }

 private:
  // One collective's seconds over all its steps, and its flows when the routed fabric prices it.
  struct PricedComm {
    double seconds = 0;
    std::vector<RoutedComm> flows;
  };

  // A kernel: it runs under the collective waiting to be hidden, or it extends the run of kernels.
  void add_kernel(const LayerOp& op) {
    const double k = kernel_time(op.kernel, gpu_, in_.training.precision);
    const double w = is_weight_grad(op.name) ? k : 0.0;
    const bool matmul = op.kernel.kind == OpKind::matmul;
    if (hidden_.comm > 0 && hidden_needs_matmul_ && !matmul) block_hidden();
    if (hidden_.comm > 0) {
      // A ring-exchange all-gather's GEMM runs as one GEMM per rank of the group, each on the chunk it
      // received (chunked_matmul_time).
      const double chunked = hidden_needs_matmul_ ? chunked_matmul_time(op.kernel, g_.of(hidden_.group).size,
                                                                        gpu_, in_.training.precision)
                                                  : k;
      run_under_hidden(op.name, chunked, w > 0 ? chunked : 0.0);
      return;
    }
    if (kernels_ == 0) run_.name = op.name;
    before_last_ = kernels_ > 0 ? last_kernel_ : nullptr;
    last_kernel_ = &op.name;
    last_time_ = k;
    last_weight_ = w;
    last_cost_ = op.kernel;
    last_is_matmul_ = matmul;
    run_.compute += k;
    run_.weight += w;
    ++kernels_;
  }

  // The kernel the waiting collective runs under: one overlapped piece of both. A chunked tensor-parallel
  // collective slows its matmul by the framework's SM share; any other collective's NCCL kernels take SMs
  // and HBM bandwidth from the kernel beside them (per GPU) for as long as it runs.
  void run_under_hidden(const std::string& name, double k, double w) {
    flush();
    const double f = hidden_needs_matmul_ ? tp_slowed_
                                          : beside_collectives_factor(
                                                gpu_.efficiency.overlap_compute_slowdown, hidden_.comm, k);
    hidden_.compute = k * f;
    hidden_.weight = w * f;
    hidden_.name = name;
    const double last_chunk = hidden_needs_matmul_ ? ring_exchange_exposure(hidden_.compute, hidden_.comm,
                                                                            g_.of(hidden_.group).size)
                                                   : 0.0;
    const CommGroup group = hidden_.group;
    std::string last_chunk_name = last_chunk > 0 ? hidden_.comm_name + ".last_chunk" : std::string();
    out_.push_back(std::move(hidden_));
    reset_hidden();
    last_is_matmul_ = false;
    if (last_chunk > 0) push_exposed_chunk(group, std::move(last_chunk_name), last_chunk);
  }

  // The part of a chunked overlap that its pipeline leaves exposed, as a blocking piece after it.
  void push_exposed_chunk(CommGroup group, std::string name, double seconds) {
    CostPiece piece;
    piece.kind = CostPiece::Kind::collective;
    piece.group = group;
    piece.comm = seconds;
    piece.name = std::move(name);
    out_.push_back(std::move(piece));
  }

  // A collective: beside the paired micro-batch (ep_comm_overlap: kept apart, where it falls between the
  // pieces, as a blocking collective would), under the matmul that produced it, waiting for the kernel it
  // runs under, or blocking. A recomputed MoE block's all-to-alls (recompute full or of `moe`) block:
  // Megatron-Core refuses the overlap with either (TransformerConfig.__post_init__), so no merged layer
  // says what they would run beside, and the backward pairs only its own combine and dispatch.
  void add_collective(const LayerOp& op) {
    if (fw_.ep_comm_overlap && is_expert_all_to_all(op.comm) && !is_recomputed(op.name)) {
      flush();
      last_is_matmul_ = false;
      all_to_alls_.push_back({out_.size(),
                              collective_op_estimate(op.comm, g_.of(op.comm.group), in_.cluster, fw_).time_s,
                              op.name});
      return;
    }
    PricedComm priced = price(op.comm);
    const bool tp_chunked = tp_overlap_ && op.comm.group == CommGroup::tp;
    if (tp_chunked && op.comm.collective == Collective::reduce_scatter && kernels_ > 0 && last_is_matmul_) {
      run_under_producing_matmul(op, priced.seconds);
      return;
    }
    flush();
    last_is_matmul_ = false;
    const bool gathers_under_next = tp_chunked && op.comm.collective == Collective::all_gather;
    if (op.comm.overlappable || gathers_under_next) {
      if (hidden_.comm > 0 && hidden_needs_matmul_ != gathers_under_next) block_hidden();
      if (hidden_.comm == 0) {
        hidden_.comm_name = op.name;
        hidden_.group = op.comm.group;
      }
      hidden_.comm += priced.seconds;
      hidden_.routed.insert(hidden_.routed.end(), priced.flows.begin(), priced.flows.end());
      hidden_needs_matmul_ = gathers_under_next;
      return;
    }
    CostPiece piece;
    piece.kind = CostPiece::Kind::collective;
    piece.group = op.comm.group;
    piece.comm = priced.seconds;
    piece.name = op.name;
    piece.routed = std::move(priced.flows);
    out_.push_back(std::move(piece));
  }

  // The fabric a collective is priced on: the routed fabric (as flows) or the shared links for a context- or
  // expert-parallel group that leaves the node, the cluster's closed form otherwise. Folded expert groups
  // span data-parallel replicas, which the routed lowering keeps apart, and a token-based dispatch has no
  // flow lowering: both closed form.
  PricedComm price(const CommCost& comm) const {
    const topo::CommGroup& group =
        comm.collective == Collective::ring_exchange ? g_.cp_pair : g_.of(comm.group);
    const bool expert_group = comm.group == CommGroup::ep || comm.group == CommGroup::expert_tp_ep;
    const bool routable = group.crosses_nodes() && !token_based_ep(comm, fw_) &&
                          (comm.group == CommGroup::cp || (expert_group && !in_.plan.expert_folding));
    const bool routes = routed_ != nullptr && routable;
    const topo::CollectiveEstimate e = routes ? collective_op_estimate(comm, group, *routed_, fw_)
                                       : routable && shared_links_
                                           ? on_fabric(comm, group, in_)
                                           : collective_op_estimate(comm, group, in_.cluster, fw_);
    PricedComm out;
    out.seconds = e.time_s * comm.steps;
    if (routes && out.seconds > 0) {
      out.flows.push_back(RoutedComm{comm.group,
                                     {to_topo(comm.collective), comm.bytes * comm.steps, e.algo, e.protocol},
                                     out.seconds,
                                     e.latency_s * comm.steps});
    }
    return out;
  }

  // A chunked tensor-parallel reduce-scatter runs under the matmul that produces it: that matmul is split
  // off the kernels before it into one overlapped piece, slowed by tp_comm_overlap_slowdown; after a forward
  // matmul, its last chunk follows exposed.
  void run_under_producing_matmul(const LayerOp& op, double seconds) {
    run_.compute -= last_time_;
    run_.weight -= last_weight_;
    --kernels_;
    if (kernels_ > 0) {
      if (kernels_ > 1) run_.name.append("..").append(*before_last_);
      out_.push_back(std::move(run_));
    }
    run_ = CostPiece{};
    kernels_ = 0;
    CostPiece piece;
    piece.kind = CostPiece::Kind::overlapped;
    piece.group = op.comm.group;
    // A forward GEMM producing a pipelined reduce-scatter runs as kTeUserbufferPipelineSplits GEMMs
    // (chunked_matmul_time); the backward's bulk reduce-scatter runs beside the whole GEMM.
    const bool backward = is_backward_gemm(*last_kernel_);
    const double gemm =
        backward ? last_time_
                 : chunked_matmul_time(last_cost_, kTeUserbufferPipelineSplits, gpu_, in_.training.precision);
    piece.compute = gemm * tp_slowed_;
    piece.weight = (last_weight_ > 0 ? gemm : 0.0) * tp_slowed_;
    piece.comm = seconds;
    piece.name = *last_kernel_;
    piece.comm_name = op.name;
    const double last_chunk =
        backward ? 0.0 : pipeline_chunk_exposure(piece.compute, seconds, kTeUserbufferPipelineSplits);
    out_.push_back(std::move(piece));
    last_is_matmul_ = false;
    if (last_chunk > 0) push_exposed_chunk(op.comm.group, op.name + ".last_chunk", last_chunk);
  }

  // Closes the run of kernels as one compute piece named after its first and last kernel.
  void flush() {
    if (kernels_ == 0) return;
    if (kernels_ > 1) run_.name.append("..").append(*last_kernel_);
    out_.push_back(std::move(run_));
    run_ = CostPiece{};
    kernels_ = 0;
  }

  // Nothing (fit) to hide the waiting collective under: it blocks.
  void block_hidden() {
    hidden_.kind = CostPiece::Kind::collective;
    hidden_.name = hidden_.comm_name;
    hidden_.comm_name.clear();
    out_.push_back(std::move(hidden_));
    reset_hidden();
  }

  void reset_hidden() {
    hidden_ = CostPiece{};
    hidden_.kind = CostPiece::Kind::overlapped;
    hidden_needs_matmul_ = false;
  }

  const StepInput& in_;
  const Communicators& g_;
  const topo::ClusterSpec* routed_;
  bool shared_links_;
  const topo::GpuSpec& gpu_;
  const Framework& fw_;
  bool tp_overlap_;
  double tp_slowed_;

  std::vector<CostPiece> out_;
  CostPiece run_;    // the compute piece being gathered
  int kernels_ = 0;  // kernels in run_
  // The names of the run's last kernel and the one before it, in the op list being added (which outlives
  // the builder).
  const std::string* last_kernel_ = nullptr;
  const std::string* before_last_ = nullptr;
  double last_time_ = 0, last_weight_ = 0;
  KernelCost last_cost_;
  bool last_is_matmul_ = false;
  CostPiece hidden_;                  // an overlappable collective waiting for the kernel it runs under
  bool hidden_needs_matmul_ = false;  // a tp all-gather: only a matmul hides it
  std::vector<ExpertAllToAll> all_to_alls_;  // expert-parallel all-to-alls under framework.ep_comm_overlap
};

// The pass's pieces, and its host issue (UnitCost::PassIssue): the host seconds of its ops and, where the
// host waits for the device before op `sync`, the first piece after the wait.
std::vector<CostPiece> time_pieces(const std::vector<LayerOp>& ops, const StepInput& in,
                                   const Communicators& g, const topo::ClusterSpec* routed, bool shared_links,
                                   UnitCost::PassIssue& issue, std::vector<ExpertAllToAll>& all_to_alls,
                                   std::optional<std::size_t> sync = std::nullopt) {
  const Framework& fw = in.plan.framework;
  PieceBuilder pieces(in, g, routed, shared_links);
  issue = UnitCost::PassIssue{};
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (sync && i == *sync) {
      issue.sync_piece = pieces.mark_host_sync();
      issue.before_sync_s = issue.host_s;
    }
    pieces.add(ops[i]);
    issue.host_s += op_issue_s(ops[i], fw);
  }
  all_to_alls = pieces.take_all_to_alls();  // closing the pieces adds no all-to-all
  return std::move(pieces).pieces();
}

// The unit alone as a pass: its pieces summed in order.
void sum_pieces(UnitCost& u) {
  u.total = pass_sums(u);
}

// Removes the piece wait_for_host added, so that the pass's kernels can be changed and the floor set again.
void drop_host_wait(std::vector<CostPiece>& pieces) {
  std::erase_if(pieces, [](const CostPiece& x) { return x.name == kHostWaitPiece; });
}

// In eager mode the host issues every op of a pass one after another while the GPU runs the ones already
// issued, so the pass takes at least its ops' issue time (op_issue_s; the host runs ahead of a long
// kernel, so the bound holds for the pass, not for each kernel). A pass that waits on the host for the
// device (a MoE layer's forward, Framework::moe_host_sync, and a backward that runs it again before its
// own, recompute_sync_index) starts each stretch from a drained queue: from
// the wait the host issues this layer's ops after it, then the next layer's ops before it (layers of a
// run are alike), and that stretch costs drained_issue_s of the two, after the first op's issue during
// which the device has nothing to run. Under CUDA graphs the ops before the wait are one graph launch and
// those after it stay eager (Megatron-Core graphs the attention, router and dispatch preprocessing of a
// dropless MoE layer, not its experts); without a wait the host no longer bounds the pass. What the bound
// exceeds the pass's GPU time by is the GPU waiting for the host: one more piece on the compute stream,
// after the pass's own.
void wait_for_host(std::vector<CostPiece>& pieces, const UnitCost::PassIssue& issue, const Framework& fw) {
  if (!issue.sync_piece && (fw.cuda_graphs || issue.host_s <= 0)) return;
  const double gpu = device_seconds(pieces);
  const double gpu_before_sync =
      issue.sync_piece ? device_seconds(std::span(pieces).first(std::min(*issue.sync_piece, pieces.size())))
                       : 0;
  double pass = issue.host_s;
  if (issue.sync_piece) {
    const double first = fw.launch_overhead_s;
    const double after = std::max(0.0, issue.host_s - issue.before_sync_s - first);
    const double before = fw.cuda_graphs ? fw.launch_overhead_s : issue.before_sync_s;
    const std::array<IssuedBlock, 3> stretch{
        {{first, 0}, {after, gpu - gpu_before_sync}, {before, gpu_before_sync}}};
    pass = drained_issue_s(stretch);
  }
  if (pass <= gpu) return;
  CostPiece wait;
  wait.name = std::string(kHostWaitPiece);
  wait.compute = pass - gpu;
  pieces.push_back(std::move(wait));
}

}  // namespace

topo::CollectiveEstimate collective_op_estimate(const CommCost& c, const topo::CommGroup& group,
                                                const topo::ClusterSpec& cluster, const Framework& fw) {
  if (is_expert_all_to_all(c)) return expert_all_to_all_estimate(c.bytes, c.routing, fw, group, cluster);
  return topo::estimate_collective(to_topo(c.collective), c.bytes, group, cluster);
}

double chunked_matmul_time(const KernelCost& gemm, std::int64_t chunks, const topo::GpuSpec& gpu,
                           Precision precision) {
  const bool by_shape = gpu.sm_count > 0 && gemm.m > 0 && gemm.n > 0 && gemm.k > 0;
  if (chunks <= 1 || gemm.kind != OpKind::matmul || !by_shape) return kernel_time(gemm, gpu, precision);
  const double n = static_cast<double>(chunks);
  KernelCost chunk = gemm;
  chunk.m = gemm.m / n;
  chunk.flops = gemm.flops / n;
  chunk.bytes = gemm.bytes / n;
  return n * kernel_time(chunk, gpu, precision);
}

double pipeline_chunk_exposure(double gemm_s, double comm_s, int splits) {
  return std::min(gemm_s, comm_s) / splits;
}

double ring_exchange_exposure(double gemm_s, double comm_s, std::int64_t ranks) {
  const double chunk = gemm_s / static_cast<double>(ranks);
  return std::clamp(comm_s - (gemm_s - chunk), 0.0, chunk);
}

double expert_all_to_all_slowdown(const Framework& fw, const topo::GpuSpec& gpu) {
  const int sms = flex_dispatcher_sms(fw);
  if (sms <= 0 || gpu.sm_count <= 0) return gpu.efficiency.overlap_compute_slowdown;
  if (std::string problem = dispatcher_sms_problem(fw, gpu.sm_count, gpu.name); !problem.empty())
    throw InputError("framework.moe_dispatcher_sms: " + problem);
  return static_cast<double>(sms) / (gpu.sm_count - sms);
}

double dispatcher_copy_bytes_per_s(const Framework& fw, const topo::GpuSpec& gpu) {
  if (fw.moe_dispatcher != MoeDispatcher::deepep) return 0;
  return flex_dispatcher_sms(fw) * gpu.efficiency.sm_peer_copy_bytes_per_s;
}

topo::CollectiveEstimate expert_all_to_all_estimate(double bytes, const topo::TokenRouting& routing,
                                                    const Framework& fw, const topo::CommGroup& group,
                                                    const topo::ClusterSpec& cluster) {
  if (token_based(fw.moe_dispatcher)) {
    return topo::token_based_all_to_all(bytes, routing, group, cluster,
                                        dispatcher_copy_bytes_per_s(fw, cluster.node.gpu));
  }
  return topo::estimate_collective(topo::CollectiveOp::all_to_all, bytes, group, cluster);
}

namespace {

// Pass `pieces`' k-th segment as its all-to-alls cut it: the pieces from the one before it to it.
std::span<CostPiece> segment(std::vector<CostPiece>& pieces, const std::vector<ExpertAllToAll>& all_to_alls,
                             std::size_t k) {
  const std::size_t from = k == 0 ? 0 : all_to_alls[k - 1].at;
  const std::size_t to = k < all_to_alls.size() ? all_to_alls[k].at : pieces.size();
  return std::span<CostPiece>(pieces).subspan(from, to - from);
}

// Whether backward segment k holds a weight gradient Megatron-Core delays (framework.delay_wgrad_compute):
// the experts' (mlp, ended by the dispatch's backward, kExpertDispatchBackward) or the attention's and shared
// experts' (pre_dispatch_computation, right after it: its backward_dw runs the attention's and, unless they
// overlap the dispatch, the shared experts', models/common/utils.py _BackwardDWWrapper).
bool delays_wgrad(const std::vector<ExpertAllToAll>& backward_a2a, std::size_t k) {
  const auto is_dispatch = [&](std::size_t i) {
    return i < backward_a2a.size() && backward_a2a[i].name == kExpertDispatchBackward;
  };
  return is_dispatch(k) || (k >= 1 && is_dispatch(k - 1));
}

// The forward segment beside which backward segment k's moved weight gradient runs: the one of the same
// index, beside the backward all-to-all ending segment k (the experts' beside the dispatch's backward); for
// the pass's last segment (the attention's), whose gradient goes on to the next layer's combine backward,
// segment 0 of this unit, beside its combine backward (the layers of a run alike).
std::size_t joins_forward_segment(std::size_t k, std::size_t backward_all_to_alls) {
  return k < backward_all_to_alls ? k : 0;
}

// framework.delay_wgrad_compute: the weight-gradient seconds of each backward segment k ≥ 1 that run beside
// a backward all-to-all (joins_forward_segment's) rather than beside the forward's all-to-all k − 1: those of
// the segments delays_wgrad names; 0 elsewhere.
// Megatron-Core issues the delayed weight gradient (backward_dw) on the compute stream with no wait, right
// after the data gradient, and the next backward node waits only for the data gradient (the event its
// micro-batch recorded last; backward_dw records none): the weight gradient first fills what the forward's
// all-to-all A outlasts the data gradient D by, and only the rest, W − min(W, max(0, A − D)), runs beside the
// next backward all-to-all.
std::vector<double> delayed_wgrad(std::vector<CostPiece>& backward,
                                  const std::vector<ExpertAllToAll>& backward_a2a,
                                  const std::vector<ExpertAllToAll>& forward_a2a, bool delay_wgrad) {
  std::vector<double> moved(backward_a2a.size() + 1, 0.0);
  if (!delay_wgrad) return moved;
  for (std::size_t k = 1; k <= backward_a2a.size() && k - 1 < forward_a2a.size(); ++k) {
    if (!delays_wgrad(backward_a2a, k)) continue;
    const std::span<CostPiece> s = segment(backward, backward_a2a, k);
    const double weight = weight_seconds(s);
    const double data = device_seconds(s) - weight;
    moved[k] = weight - std::min(weight, std::max(0.0, forward_a2a[k - 1].seconds - data));
  }
  return moved;
}

// What the compute stream runs beside each all-to-all, in seconds after the slow-down (−1: nothing).
struct BesideSeconds {
  std::vector<double> forward;   ///< [k]: beside the backward's all-to-all k (forward segment k)
  std::vector<double> backward;  ///< [k]: beside the forward's all-to-all k − 1 (backward segment k)
};

// Runs the forward's segment k beside the backward's all-to-all k, and the backward's segment k beside the
// forward's all-to-all k − 1, each slowed by beside_collectives_factor over the kernels beside that
// all-to-all; a backward segment's `moved` weight gradient joins the forward segment joins_forward_segment
// names.
BesideSeconds run_beside(std::vector<CostPiece>& forward, const std::vector<ExpertAllToAll>& forward_a2a,
                         std::vector<CostPiece>& backward, const std::vector<ExpertAllToAll>& backward_a2a,
                         const std::vector<double>& moved, double slowdown) {
  const std::size_t nf = forward_a2a.size();
  const std::size_t nb = backward_a2a.size();
  BesideSeconds out{std::vector<double>(nf + 1, -1.0), std::vector<double>(nb + 1, -1.0)};
  std::vector<double> joined(nf + 1, 0.0);  // [j]: the moved seconds forward segment j runs beside
  for (std::size_t k = 0; k <= nb; ++k) {
    if (const std::size_t j = joins_forward_segment(k, nb); j <= nf) joined[j] += moved[k];
  }
  std::vector<double> factor(nf + 1, 1.0);
  for (std::size_t k = 0; k <= nf && k < nb; ++k) {
    const std::span<CostPiece> s = segment(forward, forward_a2a, k);
    factor[k] = beside_collectives_factor(slowdown, backward_a2a[k].seconds, kernel_seconds(s) + joined[k]);
    slow_pieces(s, factor[k]);
    out.forward[k] = device_seconds(s) + joined[k] * factor[k];
  }
  for (std::size_t k = 1; k <= nb && k - 1 < nf; ++k) {
    const std::span<CostPiece> s = segment(backward, backward_a2a, k);
    const double moved_factor = factor[std::min(joins_forward_segment(k, nb), nf)];
    const double f =
        beside_collectives_factor(slowdown, forward_a2a[k - 1].seconds, kernel_seconds(s) - moved[k]);
    slow_pieces(s, f, moved[k], moved_factor);
    out.backward[k] = device_seconds(s) - moved[k] * moved_factor;
  }
  return out;
}

// Puts in `pieces` what each of its all-to-alls outlasts the segment beside it by (`beside(k)` for the k-th,
// negative: none), as a blocking collective where the all-to-all falls; moves `sync` (a piece index) past
// the pieces put before it.
template <class Beside>
void put_exposed(std::vector<CostPiece>& pieces, const std::vector<ExpertAllToAll>& all_to_alls,
                 Beside beside, std::optional<std::size_t>* sync) {
  const bool moves_sync = sync != nullptr && sync->has_value();
  const std::size_t sync_at = moves_sync ? **sync : 0;
  for (std::size_t k = all_to_alls.size(); k-- > 0;) {
    const ExpertAllToAll& a = all_to_alls[k];
    const double exposed = a.seconds - std::max(0.0, beside(k));
    if (exposed <= 0) continue;
    pieces.insert(pieces.begin() + static_cast<std::ptrdiff_t>(a.at),
                  exposed_expert_piece(exposed, a.name + ".exposed"));
    if (moves_sync && a.at < sync_at) ++**sync;
  }
}

}  // namespace

double device_seconds(std::span<const CostPiece> pieces) {
  double t = 0;
  for (const CostPiece& x : pieces) {
    if (x.name != kHostWaitPiece) t += x.compute + x.exposed_comm();
  }
  return t;
}

CostPiece exposed_expert_piece(double seconds, std::string name) {
  CostPiece piece;
  piece.kind = CostPiece::Kind::collective;
  piece.group = CommGroup::ep;
  piece.comm = seconds;
  piece.name = std::move(name);
  return piece;
}

void pair_expert_all_to_alls(std::vector<CostPiece>& forward, const std::vector<ExpertAllToAll>& forward_a2a,
                             std::vector<CostPiece>& backward,
                             const std::vector<ExpertAllToAll>& backward_a2a, double slowdown,
                             bool delay_wgrad, std::optional<std::size_t>* forward_sync,
                             std::optional<std::size_t>* backward_sync) {
  const std::vector<double> moved = delayed_wgrad(backward, backward_a2a, forward_a2a, delay_wgrad);
  const BesideSeconds beside = run_beside(forward, forward_a2a, backward, backward_a2a, moved, slowdown);
  put_exposed(
      forward, forward_a2a,
      [&](std::size_t k) { return k + 1 < beside.backward.size() ? beside.backward[k + 1] : -1.0; },
      forward_sync);
  put_exposed(
      backward, backward_a2a,
      [&](std::size_t k) { return k < beside.forward.size() ? beside.forward[k] : -1.0; }, backward_sync);
}

UnitCost price_unit(std::string name, const LayerOps& ops, const StepInput& in, const Communicators& g,
                    const topo::ClusterSpec* routed, bool shared_links) {
  UnitCost u;
  u.name = std::move(name);
  std::vector<ExpertAllToAll> forward_all_to_alls, backward_all_to_alls;
  u.forward = time_pieces(ops.forward, in, g, routed, shared_links, u.forward_issue, forward_all_to_alls,
                          host_sync_index(ops.forward, in.plan.framework));
  u.backward = time_pieces(ops.backward, in, g, routed, shared_links, u.backward_issue, backward_all_to_alls,
                           recompute_sync_index(ops.backward, in.plan.framework));
  if (!forward_all_to_alls.empty() || !backward_all_to_alls.empty()) {
    // Alone, a pass runs its kernels as they are and its all-to-alls whole between them: what that adds to
    // the merged pass, and the kernels' part of it (the slow-down beside the other pass's all-to-alls, taken
    // back), which a straggler's compute_scale scales (pass_sums).
    const auto alone = [](const std::vector<CostPiece>& pieces, const std::vector<ExpertAllToAll>& a2a) {
      double t = device_seconds(pieces);
      for (const ExpertAllToAll& a : a2a) t += a.seconds;
      return t;
    };
    const double forward_alone = alone(u.forward, forward_all_to_alls);
    const double backward_alone = alone(u.backward, backward_all_to_alls);
    const double forward_kernels = kernel_seconds(u.forward);
    const double backward_kernels = kernel_seconds(u.backward);
    pair_expert_all_to_alls(u.forward, forward_all_to_alls, u.backward, backward_all_to_alls,
                            expert_all_to_all_slowdown(in.plan.framework, in.cluster.node.gpu),
                            in.plan.framework.delay_wgrad_compute, &u.forward_issue.sync_piece,
                            &u.backward_issue.sync_piece);
    u.forward_alone_s = forward_alone - device_seconds(u.forward);
    u.backward_alone_s = backward_alone - device_seconds(u.backward);
    u.forward_alone_kernels_s = forward_kernels - kernel_seconds(u.forward);
    u.backward_alone_kernels_s = backward_kernels - kernel_seconds(u.backward);
  }
  for (const auto* pieces : {&u.forward, &u.backward}) {
    for (const CostPiece& x : *pieces) u.routes_pieces = u.routes_pieces || !x.routed.empty();
  }
  wait_for_host(u.forward, u.forward_issue, in.plan.framework);
  wait_for_host(u.backward, u.backward_issue, in.plan.framework);
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
    pc.forward_alone += n * u.forward_alone;
    pc.backward_alone += n * u.backward_alone;
  }
  return pc;
}

void slow_unit_beside_collectives(UnitCost& u, double forward_beside_s, double backward_beside_s,
                                  const topo::GpuSpec& gpu, const Framework& fw) {
  // The host issues the ops as before: its floor is set again against the slowed kernels.
  drop_host_wait(u.forward);
  drop_host_wait(u.backward);
  const double s = gpu.efficiency.overlap_compute_slowdown;
  slow_pieces(u.forward, beside_collectives_factor(s, forward_beside_s, kernel_seconds(u.forward)));
  slow_pieces(u.backward, beside_collectives_factor(s, backward_beside_s, kernel_seconds(u.backward)));
  wait_for_host(u.forward, u.forward_issue, fw);
  wait_for_host(u.backward, u.backward_issue, fw);
  sum_pieces(u);
}

PassCost pass_sums(const UnitCost& u, double compute_scale) {
  // No copy of a piece: the full-cluster lowering calls this once per task of a slowed replica.
  PassCost t;
  // Kept at 0 or more: the event lowering puts it as a blocking collective at the pass's end, which cannot
  // take time back, and the analytic fidelity keeps the same rule (UnitCost::forward_alone_s).
  t.forward_alone = std::max(0.0, u.forward_alone_s + (compute_scale - 1) * u.forward_alone_kernels_s);
  t.backward_alone = std::max(0.0, u.backward_alone_s + (compute_scale - 1) * u.backward_alone_kernels_s);
  for (const CostPiece& x : u.forward) {
    const double exposed = x.exposed_comm(compute_scale);
    t.forward_compute += x.compute * compute_scale;
    t.forward_comm += exposed;
    if (is_expert_dispatch(x.group)) t.forward_ep_comm += exposed;
  }
  for (const CostPiece& x : u.backward) {
    t.backward_compute += x.compute * compute_scale;
    const double exposed = x.exposed_comm(compute_scale);
    t.backward_comm += exposed;
    if (is_expert_dispatch(x.group)) t.backward_ep_comm += exposed;
    t.weight_compute += x.weight * compute_scale;
  }
  return t;
}

}  // namespace trainsim::model
