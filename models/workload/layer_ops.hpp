#pragma once
// The kernels and collectives of one transformer layer (and of the embedding and LM-head ends) for one
// micro-batch on one tensor-parallel rank, in execution order, as data the step simulator lowers into
// engine tasks (compute ops onto the compute stream via kernel_time, collectives onto the network).
//
// Forward of a layer (Megatron-LM order; tokens T = b·s/cp, T_sp = T/tp under sequence parallelism):
//   ln1 → [SP: all-gather] → qkv → attention core → out_proj → [all-reduce | SP: reduce-scatter]
//   → dropout+residual → ln2 → [SP: all-gather] → fc1 → act → fc2 → [all-reduce | reduce-scatter]
//   → dropout+residual
//   attention core: standard = qk (matmul) → softmax → attn_dropout (memory-bound, s²-sized) → av;
//                   flash = one fused_attention op; cp > 1 adds a cp ring exchange of K/V blocks
//                   (marked overlappable with the attention compute), or with cp_kv_all_gather a blocking
//                   all-gather of K/V before it (and a reduce-scatter of their gradients in backward);
//                   unpadded_attention adds the wrapper's gather/scatter copies around the kernel.
//   qkv is the attention block's input projections (models/workload/attention_projections.hpp): under
//   multi-head latent attention q_down → q_down.norm → q_up → kv_down → kv_down.norm → kv_up, the down
//   projections whole on every tp rank.
//   MoE replaces fc1/act/fc2 by router → [shared experts: shared_fc1 → act → shared_fc2 on every token,
//   split over tp] → all-to-all (ep) → expert fc1/act/fc2 → all-to-all (ep) (under tp with sequence
//   parallelism as Megatron-Core's all-to-all dispatcher: each rank sends its own T/tp tokens' slots, a tp
//   all-gather of the slots that arrive before the experts and a tp reduce-scatter after them, and the
//   block's input gather and output reduction only for shared experts), on
//   T·top_k·expert_load token slots (TransformerSpec::expert_load: the busiest rank's load under the
//   model's routing, the padding to a capacity included; the padding and the imbalance are
//   executed work, but not model FLOPs). With the framework's moe_dispatcher: allgather the all-to-alls are
//   Megatron-Core's all-gather dispatcher's collectives over the expert_tp × ep group instead: all-gathers of
//   the routing map, the probabilities and the tokens before the experts and a reduce-scatter of their
//   outputs after them (backward: an all-gather of the output gradient, reduce-scatters of the input's and
//   the probabilities' gradients), the block's tp gather and reduction again only for shared experts.
// Every parameter GEMM carries its shape (m, n, k; MoE experts as one grouped GEMM of experts/ep groups
// on token_slots/(experts/ep) rows each), so kernel_time prices it by tile and wave quantisation.
// Activations are 16 bit under fp8 training; only parameter GEMMs run in fp8 (Transformer Engine), each
// preceded by a cast_transpose of its input (forward) and of its output gradient (backward); the LM head,
// the router and the standard attention core stay 16 bit. Dropout kernels and masks exist only when
// spec.dropout > 0 (otherwise a plain residual add).
// Backward: in reverse, each matmul as dgrad then wgrad (each = its forward FLOPs), memory-bound ops
// with 1.5 × their forward traffic (read input and output gradient, write input gradient), the fused
// attention backward = kFlashBackwardFactor × forward, and the mirror collectives (no SP: an all-reduce after
// the qkv and fc1 dgrads; SP: all-gather before the fc2 and out_proj dgrads, reduce-scatter after the fc1 and
// qkv dgrads; cp: K/V and dK/dV ring exchanges; MoE: two all-to-alls). Recompute prepends to the backward the
// forward ops it recomputes (names prefixed "recompute."): full = the whole forward layer with its
// collectives; selective = the standard attention core (qk, softmax, attn_dropout, av); nothing under flash.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "models/spec/transformer_spec.hpp"
#include "models/workload/kernel_time.hpp"
#include "models/workload/shard.hpp"
#include "topologies/collective_cost.hpp"
#include "topologies/expert_dispatch.hpp"

namespace trainsim::model {

enum class Collective { all_reduce, reduce_scatter, all_gather, all_to_all, ring_exchange };
/// The collective the topology prices for an op list's: a ring exchange step is a send-recv.
[[nodiscard]] constexpr topo::CollectiveOp to_topo(Collective c) {
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
/// expert_tp_ep: the expert_tp × ep ranks over which Megatron-Core's all-gather token dispatcher gathers.
enum class CommGroup { tp, cp, ep, expert_tp, expert_tp_ep };
/// How many CommGroups there are (expert_tp_ep is the last).
inline constexpr std::size_t kCommGroups = static_cast<std::size_t>(CommGroup::expert_tp_ep) + 1;
/// The groups of MoE token dispatch and combine: the expert-parallel all-to-all, the all-gather
/// dispatcher's expert_tp × ep group, and an expert's own tensor-parallel slot gathers.
[[nodiscard]] constexpr bool is_expert_dispatch(CommGroup g) {
  return g == CommGroup::ep || g == CommGroup::expert_tp || g == CommGroup::expert_tp_ep;
}

/// One collective among the ranks of a group.
struct CommCost {
  Collective collective = Collective::all_reduce;
  CommGroup group = CommGroup::tp;
  /// Bytes in nccl-tests' "size" convention: all_reduce: the buffer each rank holds; reduce_scatter:
  /// the full input (each rank keeps 1/n); all_gather: the full output; all_to_all: what each rank sends
  /// in total; ring_exchange: what each rank sends at ONE step.
  double bytes = 0;
  int steps = 1;              ///< ring_exchange: sequential send/recv steps (cp - 1); others 1
  bool overlappable = false;  ///< may run concurrently with the neighbouring compute (cp ring exchange)
  /// all_to_all of MoE slots: where each token's copies among `bytes` go (top_k · expert_load copies, the
  /// model's routing groups); one copy otherwise.
  topo::TokenRouting routing;
};

/// One entry of an op list: a kernel (communication == false) or a collective (communication == true).
struct LayerOp {
  std::string name;  ///< e.g. "qkv", "fc1.dgrad", "tp_all_reduce", "recompute.qk"
  bool communication = false;
  KernelCost kernel;  ///< when !communication
  CommCost comm;      ///< when communication
};

/// The name of a MoE layer's backward dispatch (the all-to-all that returns the experts' input gradients):
/// framework.delay_wgrad_compute splits the backward segments on either side of it, the experts' and the
/// attention's, into data and weight gradients (models/step/unit_pricing.cpp).
inline constexpr std::string_view kExpertDispatchBackward = "ep_dispatch.bwd";

/// What prepend_recompute puts before the name of an op a backward runs again (recompute).
inline constexpr std::string_view kRecomputePrefix = "recompute.";

/// Whether an op is one a backward runs again: its name starts with kRecomputePrefix.
[[nodiscard]] constexpr bool is_recomputed(std::string_view op_name) {
  return op_name.starts_with(kRecomputePrefix);
}

/// The forward and backward op lists of one unit (a layer, the embedding, or the head).
struct LayerOps {
  std::vector<LayerOp> forward;
  std::vector<LayerOp> backward;  ///< including recomputed forward ops, first

  /// Sum of kernel FLOPs (executed) over forward / backward ops.
  [[nodiscard]] double forward_flops() const;
  [[nodiscard]] double backward_flops() const;
};

/// One transformer layer. Throws InputError when tp does not divide heads or ffn, cp the sequence, or ep
/// the experts, and for generic specs (use generic_layer_ops).
[[nodiscard]] LayerOps transformer_layer_ops(const TransformerSpec& spec, const Shard& shard);

/// First stage: token (+ learned position) embedding lookup; vocab-parallel over tp, so the forward ends
/// with an all-reduce (SP: reduce-scatter) of T·h activations. Backward: the scatter-add of gradients.
[[nodiscard]] LayerOps embedding_ops(const TransformerSpec& spec, const Shard& shard);

/// Last stage: final norm, [SP: all-gather], LM head matmul (2·T·h·v/tp, 16 bit), vocab-parallel
/// cross-entropy (one memory-bound pass each way over fp32 logits, see layer_ops.cpp; a small tp
/// all-reduce of per-token max and sum). Backward: loss gradient, LM head dgrad and wgrad, the tp
/// all-reduce (SP: reduce-scatter) of the input gradient, final norm.
[[nodiscard]] LayerOps head_ops(const TransformerSpec& spec, const Shard& shard);

/// A multi-token-prediction module's own ops, before its transformer layer (layer ops of the model's
/// last layer) and the output head (head_ops) run on its tokens: the vocab-parallel lookup of the tokens
/// ahead (as embedding_ops, with its tp reduction), the two input norms and their concatenation,
/// [SP: an all-gather of the 2h-wide input over tp], the column-parallel 2h → h projection (2·T·2h·h/tp)
/// and an all-gather of its h/tp-wide output slices over tp. Backward: the projection's dgrad and wgrad,
/// [SP: the reduce-scatter of its input gradient], the norms', the lookup's scatter-add.
[[nodiscard]] LayerOps mtp_ops(const TransformerSpec& spec, const Shard& shard);

/// A generic layer: one matmul of forward_flops_per_sample · micro_batch / tp FLOPs whose traffic is
/// its activation bytes; backward 2 × forward; full recompute prepends the forward.
[[nodiscard]] LayerOps generic_layer_ops(const GenericLayer& layer, const Shard& shard);

}  // namespace trainsim::model
