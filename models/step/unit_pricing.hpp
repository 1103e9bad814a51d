#pragma once
// One unit (a transformer layer, the embedding, the head, a generic layer) priced on one GPU: its forward
// and backward op lists (models/workload/layer_ops.hpp) cut into the ordered pieces both fidelities run
// (CostPiece): kernels between two collectives timed by kernel_time, each blocking tensor-, context- or
// expert-parallel collective on the communicator the placement gives, each overlappable one paired with the
// kernel it runs under. The framework's habits enter here: tp_comm_overlap's chunked matmuls,
// ep_comm_overlap's all-to-alls beside the paired micro-batch, and the eager host's launch floor.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/spec/framework.hpp"
#include "models/step/communicators.hpp"
#include "models/step/step_costs.hpp"
#include "topologies/cluster_spec.hpp"
#include "topologies/collective_cost.hpp"

namespace trainsim::model {

/// A GEMM as userbuffers' overlaps run it: `chunks` GEMMs of m/chunks rows, one launch each
/// (TransformerEngine's CommOverlapP2PBase::split_overlap_ag and CommOverlapBase::split_overlap_rs loop over
/// the chunks, one cuBLAS GEMM each: transformer_engine/common/comm_gemm_overlap/comm_gemm_overlap.cpp).
/// On a GPU that times GEMMs by their shape (an SM count), chunks × kernel_time of one chunk, at a chunks-th
/// of the FLOPs and bytes: smaller GEMMs fill fewer tiles and waves (models/workload/gemm_time.hpp) and each
/// pays its launch. On one that times them by FLOPs alone, whose size term (and launch cost: the A100
/// presets' fit drives it to zero) was fitted to whole GEMMs in whole steps, and for one chunk: the GEMM's
/// own time. The chunks are issued round-robin on a few compute streams, so two may share a partial last
/// wave; that is not counted, which makes this the chunks' upper cost.
[[nodiscard]] double chunked_matmul_time(const KernelCost& gemm, std::int64_t chunks,
                                         const topo::GpuSpec& gpu, Precision precision);

/// TransformerEngine's chunked tensor-parallel overlaps as the two-stage pipelines they are (kTeUserbuffer*
/// in models/spec/framework.hpp). An overlapped piece charges max(g, c) for a GEMM of g seconds beside a
/// collective of c; these return what the chunking adds to that, charged as the exposed last chunk.
///
/// "pipeline", a reduce-scatter after the GEMM producing it, in n chunks: chunk i's reduce-scatter starts
/// when chunk i's GEMM ends, so the first GEMM chunk and the last reduce-scatter chunk run alone:
/// g/n + (n − 1)·max(g, c)/n + c/n = max(g, c) + min(g, c)/n.
[[nodiscard]] double pipeline_chunk_exposure(double gemm_s, double comm_s, int splits);

/// "ring_exchange", an all-gather before the GEMM consuming it, in one chunk per rank (n): the GEMM starts on
/// the local chunk while the n − 1 others arrive one a step, each step the longer of a GEMM chunk and one
/// transfer, c/(n − 1); the last GEMM chunk runs alone: max(g·(n − 1)/n, c) + g/n, which exceeds max(g, c)
/// by c − g·(n − 1)/n, kept between 0 and g/n.
[[nodiscard]] double ring_exchange_exposure(double gemm_s, double comm_s, std::int64_t ranks);

/// The most a flex dispatcher's kernels copy over NVLink a second on `gpu`, every row a rank receives
/// counted: DeepEP's normal kernels copy with loads and stores on the SMs they hold, flex_dispatcher_sms(fw)
/// × the GPU's sm_peer_copy_bytes_per_s (DeepEP's B200 benchmark: 348, 494 and 619 GB/s at 16, 24 and 32
/// SMs, topologies/presets/gpus/b200.yaml). 0, no bound, for HybridEP (its TMA copies reach the same rate at
/// 16 and 32 SMs: 750 and 764 GB/s on GB200 at EP 8), the NCCL dispatchers, and a GPU without the rate.
[[nodiscard]] double dispatcher_copy_bytes_per_s(const Framework& fw, const topo::GpuSpec& gpu);

/// An expert-parallel all-to-all (a MoE block's dispatch or combine, forward or backward) of `bytes` per
/// rank, each token's slots among them going where `routing` says, over `group` as fw.moe_dispatcher sends
/// it, in closed form: token-based under the flex dispatcher's backends (topo::token_based_all_to_all, its
/// NVLink leg no faster than dispatcher_copy_bytes_per_s), the plain all-to-all of every slot otherwise. The
/// analytic fidelity prices every such op by it. The event fidelity and the routed full cluster do too,
/// except a plain all-to-all whose group is not folded, leaves the node and runs blocking (not beside the
/// paired micro-batch of framework.ep_comm_overlap, which stays in closed form): that one they price on the
/// fabric's links (shared_links.hpp's slowdown; flows on the routed fabric). `trainsim validate`'s dispatch
/// cases check this estimate against measured dispatch latencies.
[[nodiscard]] topo::CollectiveEstimate expert_all_to_all_estimate(double bytes,
                                                                  const topo::TokenRouting& routing,
                                                                  const Framework& fw,
                                                                  const topo::CommGroup& group,
                                                                  const topo::ClusterSpec& cluster);

/// The name of the piece a pass of an eager framework gains when its host issues the ops more slowly than
/// the GPU runs them: the GPU's wait, on the compute stream after the pass's own pieces.
inline constexpr std::string_view kHostWaitPiece = "host_launches";

/// The seconds a pass's pieces keep the GPU busy: their kernels and what their collectives add, the GPU's
/// wait for the host (kHostWaitPiece), when the pass has one, left out.
[[nodiscard]] double device_seconds(std::span<const CostPiece> pieces);

/// One collective of an op list on its group in closed form: an expert-parallel all-to-all by
/// expert_all_to_all_estimate, any other by topo::estimate_collective.
[[nodiscard]] topo::CollectiveEstimate collective_op_estimate(const CommCost& c, const topo::CommGroup& group,
                                                              const topo::ClusterSpec& cluster,
                                                              const Framework& fw);

/// framework.ep_comm_overlap: the slow-down s (beside_collectives_factor) of the kernels that run beside a
/// MoE layer's dispatch or combine. A flex dispatcher's kernels hold flex_dispatcher_sms(fw) of the GPU's
/// SMs for as long as they run, and the kernels beside them run on the rest: s = sms / (SMs − sms).
/// DeepEP's default 20 of an H100's 132 gives 0.18, which the Megatron-Core MoE report (arXiv:2603.07685,
/// Sec. 4.2.3) measures as "roughly 20% GEMM-efficiency overhead". NCCL's all-to-all, and any dispatcher on a
/// GPU of unknown SM count: the GPU's overlap_compute_slowdown, as every other overlapped collective. Throws
/// InputError when the dispatcher would hold all of the GPU's SMs (the scenario reader refuses that first).
[[nodiscard]] double expert_all_to_all_slowdown(const Framework& fw, const topo::GpuSpec& gpu);

/// framework.ep_comm_overlap: one expert-parallel all-to-all of a pass, kept out of its pieces: it falls
/// before piece `at` and takes `seconds` alone.
struct ExpertAllToAll {
  std::size_t at = 0;
  double seconds = 0;
  std::string name;
};

/// framework.ep_comm_overlap: what an expert all-to-all leaves exposed, as a blocking expert-parallel
/// collective of `seconds` (beyond the segment beside it, or whole in a pass run alone), named `name`.
[[nodiscard]] CostPiece exposed_expert_piece(double seconds, std::string name);

/// framework.ep_comm_overlap as Megatron-Core runs it (--overlap-moe-expert-parallel-comm): one layer's
/// forward (micro-batch i+1) merged with its backward (micro-batch i) on a compute and a communication
/// stream (Megatron-LM megatron/core/models/common/model_chunk_schedule_plan.py,
/// TransformerLayerSchedulePlan.run):
///   comm stream:    combine_bwd      | dispatch_fwd -> dispatch_bwd        | combine_fwd
///   compute stream: pre_dispatch_fwd | mlp_bwd (-> mlp_bwd_dw) -> mlp_fwd | pre_dispatch_bwd
/// Each node waits for the event its micro-batch recorded last and records it when done
/// (megatron/core/pipeline_parallel/utils.py, ScheduleNode.stream_acquire_context), and a stream runs its
/// nodes in the order issued, so every pair starts when both nodes of the pair before it are done: the
/// layer takes the sum over its four pairs of max(communication, compute). With `delay_wgrad`
/// (--delay-wgrad-compute, framework.delay_wgrad_compute) the experts' backward is split into its data
/// gradient (mlp_bwd) and weight gradient (mlp_bwd_dw, a node of its own): dispatch_bwd waits only for the
/// data gradient; the weight gradient, issued right after the data gradient with no wait, runs beside the
/// forward's dispatch while that outlasts the data gradient, and the rest beside dispatch_bwd, before
/// mlp_fwd. The attention's and shared experts' backward (pre_dispatch_bwd) splits the same way: its weight
/// gradient fills what combine_fwd outlasts its data gradient by, and the rest runs beside the next layer's
/// combine_bwd (which waits only for the data gradient), with that layer's pre_dispatch_fwd: here the
/// forward's segment 0 of the same unit, the layers of a run alike. Over a pass's pieces, its
/// all-to-alls cut it into segments; a forward's all-to-all k (dispatch, combine) runs beside the backward's
/// segment k + 1 (the experts' backward, the attention's backward), and a backward's all-to-all k (combine,
/// dispatch) beside the forward's segment k (attention to the dispatch, the experts); under `delay_wgrad`
/// what the weight gradient of a delayed backward segment (the experts', ended by the dispatch's backward;
/// the attention's, after it) does not fill of the forward's all-to-all beside it runs beside the next
/// backward all-to-all instead, with the forward's segment beside that one. The
/// paired pass is this unit's other pass. That is an approximation: Megatron-Core's
/// TransformerModelChunkSchedulePlan pairs the forward's layer i with the backward's layer taken from the
/// chunk's end, so where a chunk mixes dense and MoE layers (DeepSeek-V3's 3 dense first layers) a MoE
/// forward can meet a dense backward and vice versa; here a dense unit has no all-to-alls and every MoE unit
/// pairs with itself, as in a chunk of MoE layers only. Each segment's kernels are slowed beside its
/// all-to-all by `slowdown` (expert_all_to_all_slowdown, beside_collectives_factor); what an all-to-all
/// outlasts its segment by is put where it falls, a blocking collective named
/// "<op>.exposed"; one with no segment beside it is exposed whole. The forward's last segment and the
/// backward's first (the unpermute and residual around the combine) run beside nothing. `forward_sync` and
/// `backward_sync`, when given, are the index of each pass's first piece after a host wait, moved past the
/// pieces put before it.
void pair_expert_all_to_alls(std::vector<CostPiece>& forward, const std::vector<ExpertAllToAll>& forward_a2a,
                             std::vector<CostPiece>& backward,
                             const std::vector<ExpertAllToAll>& backward_a2a, double slowdown,
                             bool delay_wgrad = false, std::optional<std::size_t>* forward_sync = nullptr,
                             std::optional<std::size_t>* backward_sync = nullptr);

/// The unit's pieces and sums. With `routed` (the routed full cluster's uncontended fabric), the context-
/// and expert-parallel collectives whose group leaves the node are priced on it and listed as flows; with
/// `shared_links` (FabricPricing::shared_links) they are priced on the links their groups cross
/// (shared_links.hpp).
[[nodiscard]] UnitCost price_unit(std::string name, const LayerOps& ops, const StepInput& in,
                                  const Communicators& comms, const topo::ClusterSpec* routed,
                                  bool shared_links = false);

/// ZeRO-3: slows the unit's kernels beside the collectives of its neighbours (beside_collectives_factor:
/// `forward_beside_s` in the forward, `backward_beside_s` in the backward), sets the host's launch floor
/// again against the slowed kernels, and sums the unit again.
void slow_unit_beside_collectives(UnitCost& unit, double forward_beside_s, double backward_beside_s,
                                  const topo::GpuSpec& gpu, const Framework& framework);

/// A virtual stage's pass costs: its runs of units, in forward order.
[[nodiscard]] PassCost pass_cost(const std::vector<UnitCost>& units, const std::vector<UnitRun>& runs);

/// A unit's pass sums (UnitCost::total) with every kernel `compute_scale` times as long — a straggler's —
/// and its collectives keeping their time: an overlapped collective then adds only what it exceeds the
/// slower kernel by, and a pass run alone adds UnitCost::forward_alone_s with its kernels' part scaled,
/// kept at 0 or more.
[[nodiscard]] PassCost pass_sums(const UnitCost& unit, double compute_scale = 1.0);

}  // namespace trainsim::model
