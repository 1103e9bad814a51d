#pragma once
// The attention core of one layer (scores QKᵀ, softmax, dropout, context AV) for one micro-batch on one
// rank, under the two kernels of SPEC `model.attention`:
//  - standard: QKᵀ and AV as batched matmuls, softmax and dropout as memory-bound kernels over the
//    seq²-sized score tensor, which is kept for backward (5·a·s²·b bytes at 16 bit: softmax output 2,
//    dropout mask 1, dropout output 2 — Korthikanti et al. 2022, Sec. 4.1);
//  - flash: one fused kernel (FlashAttention 1/2/3) that keeps only Q, K, V, O (and per-row softmax
//    statistics, neglected: < 0.2% of a layer's activations), and whose backward recomputes the scores:
//    backward = 5 matmul-equivalents of QKᵀ size (recompute S, dV, dP, dQ, dK) = 2.5 × forward.
// Under multi-head latent attention the query/key width (qk_nope + qk_rope) and the value width
// (v_head_dim) differ: QKᵀ runs over the first, AV over the second.
// Causal masking: model FLOPs always count the full s×s scores (as Megatron-LM and Korthikanti report);
// the executed work is multiplied by causal_work_fraction (flash skips fully masked blocks: 0.5;
// standard kernels compute the whole square and mask it: 1.0).
// Sliding-window layers (spec.sliding_window W < s, one kind per spec: TransformerSpec::as_attention_layer):
// query i attends to keys max(0, i−W+1)..i. Model FLOPs count s·W scores per head (each query against a
// full window, the first queries' shorter windows ignored as the causal mask is for full layers); the fused
// kernel executes the band exactly, window_score_elements; the standard kernels still compute and keep
// the whole masked square. The fused kernel's HBM traffic and kept activations are linear in s (Q, K, V, O
// read or written once) and do not change with the window. Context parallelism is not modelled with a
// window (layout_rules refuses it).
// With context parallelism (cp) each rank holds s/cp queries and streams the other ranks' K/V blocks
// around a ring (cp-1 steps, each carrying one rank's K and V), overlapped with the block computations.
#include "models/spec/transformer_spec.hpp"
#include "models/workload/shard.hpp"

namespace trainsim::model {

/// Fraction of the full (unmasked) score work a causal flash kernel executes: FlashAttention-2 skips
/// the blocks above the diagonal (Dao 2023, Sec. 3.1), so about half. A stated model parameter.
inline constexpr double kFlashCausalWorkFraction = 0.5;

/// Backward / forward FLOPs of the fused kernel: 5 score-sized matmuls against 2 (Dao 2023, Sec. 3.1.2).
inline constexpr double kFlashBackwardFactor = 2.5;

/// Executed / counted score work for a kernel: kFlashCausalWorkFraction for causal flash, else 1.
[[nodiscard]] double causal_work_fraction(Attention kind, bool causal);

/// Score elements one head of one sequence of s queries executes under a causal window of w keys: query
/// i sees min(i + 1, w) keys, so for s ≥ w the first w queries see 1..w and the other s − w see w:
/// w·s − w(w−1)/2; for s < w the causal triangle s(s+1)/2.
[[nodiscard]] double window_score_elements(double s, double w);

/// Costs of the attention core of one layer, one micro-batch, one rank. FLOPs in FLOP, bytes in bytes.
struct AttentionCost {
  double model_forward_flops = 0;  ///< QKᵀ + AV, full square: 4·b·(s/cp)·s·h / tp (the model-FLOPs count)
  double forward_flops = 0;        ///< executed forward (× causal_work_fraction)
  double backward_flops = 0;       ///< executed backward (standard: 2 × forward; flash: 2.5 × forward)
  double recompute_flops = 0;      ///< counted FLOPs the backward adds beyond 2 × model forward
                                   ///< (flash: the recomputed QKᵀ, 2·b·(s/cp)·s·h/tp; standard: 0)
  double forward_bytes = 0;        ///< HBM traffic of the forward kernels (standard: incl. scores)
  double backward_bytes = 0;       ///< HBM traffic of the backward kernels
  double stored_bytes = 0;         ///< seq²-sized activations kept for backward (flash: 0)
  double kv_block_bytes = 0;       ///< cp > 1: one rank's K and V block, sent at each of cp-1 ring steps
  /// cp > 1, fused kernels: HBM traffic of merging the ring steps' partial outputs (each of the cp-1 later
  /// steps reads the running O and the step's O and writes O back, rescaled by the softmax statistics)
  double ring_merge_bytes = 0;
  /// … and of the backward's accumulation of dQ and of the travelling dK, dV over the cp-1 later steps
  double ring_grad_merge_bytes = 0;
  double score_elements = 0;  ///< b·(heads/tp)·(s/cp)·s, the full score square on this rank
  double q_bytes = 0;         ///< this rank's Q (equally its dQ), bytes
  double o_bytes = 0;         ///< this rank's O (equally its dO), bytes; = q_bytes but under MLA
  double kv_bytes = 0;        ///< K and V of the whole sequence streaming through this rank, bytes
  double head_dim = 0;        ///< d = h / heads (MLA: the query/key width qk_nope + qk_rope)
  double query_len = 0;       ///< queries per rank, s / cp
  double window = 0;          ///< keys per query of a windowed layer (W < s); 0: full attention
};

/// Attention-core costs for spec.attention. Throws InputError when heads do not divide by tp or the
/// sequence by cp.
[[nodiscard]] AttentionCost attention_cost(const TransformerSpec& spec, const Shard& shard);

}  // namespace trainsim::model
