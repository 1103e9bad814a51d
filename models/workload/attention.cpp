#include "models/workload/attention.hpp"

#include <algorithm>

#include "sim/error.hpp"
#include "topologies/precision.hpp"

namespace trainsim::model {

double causal_work_fraction(Attention kind, bool causal) {
  return is_fused(kind) && causal ? kFlashCausalWorkFraction : 1.0;
}

double window_score_elements(double s, double w) {
  if (w >= s) return 0.5 * s * (s + 1.0);
  return w * s - 0.5 * w * (w - 1.0);
}

AttentionCost attention_cost(const TransformerSpec& spec, const Shard& shard) {
  if (!spec.generic_layers.empty()) throw InputError("a generic model has no attention layers");
  check_shard(spec, shard);
  const auto b = static_cast<double>(shard.micro_batch);
  const auto s = static_cast<double>(spec.seq_len);
  const auto t = static_cast<double>(shard.tp);
  const auto heads = static_cast<double>(spec.heads);
  // Query/key and value widths of a head (equal but under MLA: qk_nope + qk_rope and v_head_dim).
  const auto d = static_cast<double>(spec.qk_head_dim());
  const auto dv = static_cast<double>(spec.value_head_dim());
  const double sq = s / static_cast<double>(shard.cp);  // queries on this rank
  const double p = topo::bytes_per_element(shard.precision);
  // Key/value heads per rank: split by tp, replicated once tp exceeds them (Megatron-LM's GQA rule).
  const double kv_heads_rank = std::max(1.0, static_cast<double>(spec.kv_heads_or_heads()) / t);
  const double heads_rank = heads / t;
  const double scores = b * heads_rank * sq * s;  // score elements on this rank (full square)
  const auto window = static_cast<double>(spec.uniform_window());  // 0, or a window shorter than s
  TRAINSIM_CHECK(window == 0 || shard.cp == 1, "sliding-window attention under context parallelism");
  // Model-FLOPs scores: a windowed query counts W keys.
  const double model_scores = window > 0 ? b * heads_rank * sq * window : scores;
  const double q_bytes = p * b * sq * heads_rank * d;             // Q (and dQ)
  const double o_bytes = p * b * sq * heads_rank * dv;            // O (and dO)
  const double kv_bytes = p * b * sq * kv_heads_rank * (d + dv);  // local K and V

  AttentionCost c;
  c.score_elements = scores;
  c.q_bytes = q_bytes;
  c.kv_bytes = kv_bytes * static_cast<double>(shard.cp);
  c.head_dim = d;
  c.query_len = sq;
  c.o_bytes = o_bytes;
  c.window = window;
  c.model_forward_flops = 2.0 * model_scores * (d + dv);  // QKᵀ and AV, 2 FLOPs per multiply-add
  const double fraction = causal_work_fraction(spec.attention, spec.causal);
  if (window == 0) {
    c.forward_flops = c.model_forward_flops * fraction;
  } else if (is_fused(spec.attention)) {
    c.forward_flops = 2.0 * b * heads_rank * window_score_elements(s, window) * (d + dv);  // the band
  } else {
    c.forward_flops = 2.0 * scores * (d + dv);  // the whole square, masked
  }
  c.kv_block_bytes = shard.cp > 1 ? kv_bytes : 0.0;
  if (is_fused(spec.attention)) {
    c.backward_flops = kFlashBackwardFactor * c.forward_flops;
    c.recompute_flops = 2.0 * model_scores * d;  // QKᵀ again
    // Forward reads Q, K, V (all K/V of the sequence stream through, counted once) and writes O;
    // backward reads Q, K, V, O, dO and writes dQ, dK, dV.
    c.forward_bytes = q_bytes + o_bytes + c.kv_bytes;
    c.backward_bytes = 2.0 * (q_bytes + o_bytes) + 2.0 * c.kv_bytes;
    c.stored_bytes = 0.0;
    const double later_steps = static_cast<double>(shard.cp - 1);
    c.ring_merge_bytes = later_steps * 3.0 * o_bytes;
    c.ring_grad_merge_bytes = later_steps * 3.0 * (q_bytes + kv_bytes);
  } else {
    c.backward_flops = 2.0 * c.forward_flops;
    c.recompute_flops = 0.0;
    // Score-sized traffic dominates: QKᵀ writes scores (p), softmax reads and writes them (2p), dropout
    // reads them and writes output and mask (2p + 1), AV reads the dropout output (p).
    c.forward_bytes = (6.0 * p + 1.0) * scores + q_bytes + o_bytes + c.kv_bytes;
    // Backward: AV dgrad/wgrad read the stored dropout output and write its gradient, dropout and
    // softmax backward read the mask, softmax output and gradient and write the score gradient, QKᵀ
    // dgrad reads it: about twice the forward traffic.
    c.backward_bytes = 2.0 * c.forward_bytes;
    c.stored_bytes = (2.0 * p + 1.0) * scores;
  }
  return c;
}

}  // namespace trainsim::model
