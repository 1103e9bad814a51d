#include "models/workload/layer_ops.hpp"

#include <algorithm>
#include <utility>

#include "models/workload/attention.hpp"
#include "sim/error.hpp"

namespace trainsim::model {

namespace {

double as_double(std::int64_t v) {
  return static_cast<double>(v);
}

constexpr double kMaskBytes = 1.0;   // dropout masks are uint8
constexpr double kLogitBytes = 4.0;  // the cross-entropy works on fp32 logits
// An element-wise backward reads the saved input and the output gradient and writes the input gradient:
// three tensor passes against the forward's two.
constexpr double kBackwardTraffic = 1.5;

// Appends ops to one list; every kernel and collective of this file is made here.
class OpList {
 public:
  explicit OpList(std::vector<LayerOp>& ops, double p) : ops_(ops), p_(p) {}

  /// (m×k)·(k×n): 2·m·n·k FLOPs, reads both inputs and writes the output.
  void matmul(std::string name, double m, double n, double k) {
    kernel(std::move(name), KernelCost{OpKind::matmul, 2.0 * m * n * k, p_ * (m * k + k * n + m * n), 0, 0});
  }
  void memory(std::string name, double bytes) {
    kernel(std::move(name), KernelCost{OpKind::memory_bound, 0.0, bytes, 0, 0});
  }
  void kernel(std::string name, KernelCost cost) {
    LayerOp op;
    op.name = std::move(name);
    op.kernel = cost;
    ops_.push_back(std::move(op));
  }
  void comm(std::string name, Collective collective, CommGroup group, double bytes, int steps = 1,
            bool overlappable = false) {
    LayerOp op;
    op.name = std::move(name);
    op.communication = true;
    op.comm = CommCost{collective, group, bytes, steps, overlappable};
    ops_.push_back(std::move(op));
  }

 private:
  std::vector<LayerOp>& ops_;
  double p_;
};

// The tensor-parallel collective after a row-parallel matmul (forward) or before/after one in backward.
struct TpComm {
  bool active;   // tp > 1
  bool sp;       // sequence parallel
  double bytes;  // p·T·h, the full activation
};

void tp_reduce(OpList& ops, const TpComm& c) {
  if (!c.active) return;
  if (c.sp) {
    ops.comm("tp_reduce_scatter", Collective::reduce_scatter, CommGroup::tp, c.bytes);
  } else {
    ops.comm("tp_all_reduce", Collective::all_reduce, CommGroup::tp, c.bytes);
  }
}

void sp_gather(OpList& ops, const TpComm& c) {
  if (c.active && c.sp) ops.comm("tp_all_gather", Collective::all_gather, CommGroup::tp, c.bytes);
}

// A matmul's backward: dgrad (input gradient) and wgrad (weight gradient), each its forward's size.
void matmul_backward(OpList& ops, const std::string& name, double m, double n, double k) {
  ops.matmul(name + ".dgrad", m, k, n);
  ops.matmul(name + ".wgrad", k, n, m);
}

void prepend_recompute(LayerOps& ops, const std::vector<LayerOp>& recomputed) {
  std::vector<LayerOp> backward;
  backward.reserve(recomputed.size() + ops.backward.size());
  for (LayerOp op : recomputed) {
    op.name = "recompute." + op.name;
    backward.push_back(std::move(op));
  }
  backward.insert(backward.end(), ops.backward.begin(), ops.backward.end());
  ops.backward = std::move(backward);
}

double sum_flops(const std::vector<LayerOp>& ops) {
  double f = 0;
  for (const LayerOp& op : ops) {
    if (!op.communication) f += op.kernel.flops;
  }
  return f;
}

}  // namespace

double LayerOps::forward_flops() const {
  return sum_flops(forward);
}
double LayerOps::backward_flops() const {
  return sum_flops(backward);
}

LayerOps transformer_layer_ops(const TransformerSpec& spec, const Shard& shard) {
  if (!spec.generic_layers.empty()) throw InputError("a generic model has no transformer layers");
  check_shard(spec, shard);
  const AttentionCost att = attention_cost(spec, shard);
  const double p = topo::bytes_per_element(shard.precision);
  const double t = shard.tp;
  const double h = as_double(spec.hidden);
  const double tokens = as_double(shard.micro_batch) * as_double(spec.seq_len) / shard.cp;
  const double norm_tokens = shard.sequence_parallel ? tokens / t : tokens;  // tokens of norms/dropouts
  const double qkv_width =
      h / t + 2.0 * std::max(1.0, as_double(spec.kv_heads_or_heads()) / t) * att.head_dim;
  const bool swiglu = spec.mlp == Mlp::swiglu;
  const double fc1_outputs = swiglu ? 2.0 : 1.0;  // gate and up projections
  const TpComm tp{shard.tp > 1, shard.sequence_parallel, p * tokens * h};
  const double norm_bytes = 2.0 * p * norm_tokens * h;
  const double dropout_residual_bytes = (3.0 * p + kMaskBytes) * norm_tokens * h;
  const bool flash = is_fused(spec.attention);
  const double s = as_double(spec.seq_len);
  const bool causal = spec.causal;
  const int cp = shard.cp;
  const bool moe = spec.is_moe();
  const double mlp_tokens = moe ? tokens * as_double(spec.top_k) * spec.capacity_factor : tokens;
  const double ffn =
      as_double(moe && spec.expert_ffn_hidden > 0 ? spec.expert_ffn_hidden : spec.ffn_hidden_or_default());
  const double act_bytes = (fc1_outputs + 1.0) * p * mlp_tokens * ffn / t;
  const double a2a_bytes = p * mlp_tokens * h;
  const bool all_to_all = moe && shard.ep > 1;
  const double score_bytes = att.score_elements;  // one byte per score element, times p below

  LayerOps ops;
  OpList fwd(ops.forward, p);
  std::vector<LayerOp> core_ops;  // the standard attention core, recomputed under selective recompute
  OpList core(core_ops, p);
  if (shard.cp > 1) {
    core.comm("cp_kv_exchange", Collective::ring_exchange, CommGroup::cp, att.kv_block_bytes, shard.cp - 1,
              true);
  }
  if (flash) {
    core.kernel("flash_attention",
                KernelCost{OpKind::fused_attention, att.forward_flops, att.forward_bytes, att.head_dim, s,
                           AttentionVariant{spec.attention, false, causal, cp}});
    if (shard.cp > 1) core.memory("cp_softmax_merge", att.ring_merge_bytes);
  } else {
    core.kernel("qk", KernelCost{OpKind::matmul, 0.5 * att.forward_flops,
                                 p * score_bytes + att.q_bytes + 0.5 * att.kv_bytes, 0, 0});
    core.memory("softmax", 2.0 * p * score_bytes);
    core.memory("attn_dropout", (2.0 * p + kMaskBytes) * score_bytes);
    core.kernel("av", KernelCost{OpKind::matmul, 0.5 * att.forward_flops,
                                 p * score_bytes + att.q_bytes + 0.5 * att.kv_bytes, 0, 0});
  }

  fwd.memory("ln1", norm_bytes);
  sp_gather(fwd, tp);
  fwd.matmul("qkv", tokens, qkv_width, h);
  ops.forward.insert(ops.forward.end(), core_ops.begin(), core_ops.end());
  fwd.matmul("out_proj", tokens, h, h / t);
  tp_reduce(fwd, tp);
  fwd.memory("dropout_residual", dropout_residual_bytes);
  fwd.memory("ln2", norm_bytes);
  sp_gather(fwd, tp);
  if (moe) {
    fwd.matmul("router", tokens, as_double(spec.experts), h);
    if (all_to_all) fwd.comm("ep_dispatch", Collective::all_to_all, CommGroup::ep, a2a_bytes);
  }
  fwd.matmul("fc1", mlp_tokens, fc1_outputs * ffn / t, h);
  fwd.memory(swiglu ? "swiglu" : "gelu", act_bytes);
  fwd.matmul("fc2", mlp_tokens, h, ffn / t);
  if (all_to_all) fwd.comm("ep_combine", Collective::all_to_all, CommGroup::ep, a2a_bytes);
  tp_reduce(fwd, tp);
  fwd.memory("dropout_residual", dropout_residual_bytes);

  OpList bwd(ops.backward, p);
  bwd.memory("dropout_residual.bwd", kBackwardTraffic * dropout_residual_bytes);
  sp_gather(bwd, tp);
  if (all_to_all) bwd.comm("ep_combine.bwd", Collective::all_to_all, CommGroup::ep, a2a_bytes);
  matmul_backward(bwd, "fc2", mlp_tokens, h, ffn / t);
  bwd.memory(swiglu ? "swiglu.bwd" : "gelu.bwd", kBackwardTraffic * act_bytes);
  matmul_backward(bwd, "fc1", mlp_tokens, fc1_outputs * ffn / t, h);
  if (moe) {
    if (all_to_all) bwd.comm("ep_dispatch.bwd", Collective::all_to_all, CommGroup::ep, a2a_bytes);
    matmul_backward(bwd, "router", tokens, as_double(spec.experts), h);
  }
  tp_reduce(bwd, tp);
  bwd.memory("ln2.bwd", kBackwardTraffic * norm_bytes);
  bwd.memory("dropout_residual.bwd", kBackwardTraffic * dropout_residual_bytes);
  sp_gather(bwd, tp);
  matmul_backward(bwd, "out_proj", tokens, h, h / t);
  if (shard.cp > 1) {
    // K/V blocks go round again and their gradients come back (Megatron-LM context parallelism).
    bwd.comm("cp_kv_exchange.bwd", Collective::ring_exchange, CommGroup::cp, 2.0 * att.kv_block_bytes,
             shard.cp - 1, true);
  }
  if (flash) {
    if (shard.cp > 1) bwd.memory("cp_grad_merge", att.ring_grad_merge_bytes);
    bwd.kernel("flash_attention.bwd",
               KernelCost{OpKind::fused_attention, att.backward_flops, att.backward_bytes, att.head_dim, s,
                          AttentionVariant{spec.attention, true, causal, cp}});
  } else {
    const double matmul_bytes = 2.0 * (p * score_bytes + att.q_bytes + 0.5 * att.kv_bytes);
    const double quarter = 0.25 * att.backward_flops;  // dgrad + wgrad of AV, then of QKᵀ
    bwd.kernel("av.dgrad", KernelCost{OpKind::matmul, quarter, 0.5 * matmul_bytes, 0, 0});
    bwd.kernel("av.wgrad", KernelCost{OpKind::matmul, quarter, 0.5 * matmul_bytes, 0, 0});
    bwd.memory("attn_dropout.bwd", kBackwardTraffic * (2.0 * p + kMaskBytes) * score_bytes);
    bwd.memory("softmax.bwd", kBackwardTraffic * 2.0 * p * score_bytes);
    bwd.kernel("qk.dgrad", KernelCost{OpKind::matmul, quarter, 0.5 * matmul_bytes, 0, 0});
    bwd.kernel("qk.wgrad", KernelCost{OpKind::matmul, quarter, 0.5 * matmul_bytes, 0, 0});
  }
  matmul_backward(bwd, "qkv", tokens, qkv_width, h);
  tp_reduce(bwd, tp);
  bwd.memory("ln1.bwd", kBackwardTraffic * norm_bytes);

  if (shard.recompute == Recompute::full) {
    prepend_recompute(ops, ops.forward);
  } else if (shard.recompute == Recompute::selective && !flash) {
    std::vector<LayerOp> kernels;
    for (const LayerOp& op : core_ops) {
      if (!op.communication) kernels.push_back(op);
    }
    prepend_recompute(ops, kernels);
  }
  return ops;
}

LayerOps embedding_ops(const TransformerSpec& spec, const Shard& shard) {
  if (!spec.generic_layers.empty()) throw InputError("a generic model has no embedding layer");
  check_shard(spec, shard);
  const double p = topo::bytes_per_element(shard.precision);
  const double t = shard.tp;
  const double h = as_double(spec.hidden);
  const double tokens = as_double(shard.micro_batch) * as_double(spec.seq_len) / shard.cp;
  const double norm_tokens = shard.sequence_parallel ? tokens / t : tokens;
  const TpComm tp{shard.tp > 1, shard.sequence_parallel, p * tokens * h};
  // Lookup: gather rows (read) and write the activations; learned positions read and add one more.
  const double positions = spec.position == Position::learned ? 2.0 : 0.0;
  const double dropout_bytes = (2.0 * p + kMaskBytes) * norm_tokens * h;

  LayerOps ops;
  OpList fwd(ops.forward, p);
  fwd.memory("embedding", (2.0 + positions) * p * tokens * h);
  tp_reduce(fwd, tp);
  fwd.memory("embedding_dropout", dropout_bytes);
  OpList bwd(ops.backward, p);
  bwd.memory("embedding_dropout.bwd", kBackwardTraffic * dropout_bytes);
  sp_gather(bwd, tp);
  bwd.memory("embedding.wgrad", (2.0 + positions) * p * tokens * h);
  return ops;
}

LayerOps head_ops(const TransformerSpec& spec, const Shard& shard) {
  if (!spec.generic_layers.empty()) throw InputError("a generic model has no LM head");
  check_shard(spec, shard);
  const double p = topo::bytes_per_element(shard.precision);
  const double t = shard.tp;
  const double h = as_double(spec.hidden);
  const double v = as_double(spec.vocab);
  const double tokens = as_double(shard.micro_batch) * as_double(spec.seq_len) / shard.cp;
  const double norm_tokens = shard.sequence_parallel ? tokens / t : tokens;
  const TpComm tp{shard.tp > 1, shard.sequence_parallel, p * tokens * h};
  const double norm_bytes = 2.0 * p * norm_tokens * h;
  const double loss_bytes = (p + kLogitBytes) * tokens * v / t;

  LayerOps ops;
  OpList fwd(ops.forward, p);
  fwd.memory("final_norm", norm_bytes);
  sp_gather(fwd, tp);
  fwd.matmul("lm_head", tokens, v / t, h);
  fwd.memory("cross_entropy", loss_bytes);
  if (tp.active) {
    // Vocab-parallel softmax: per-token max, sum of exponentials and target logit, fp32.
    fwd.comm("tp_loss_all_reduce", Collective::all_reduce, CommGroup::tp, 3.0 * kLogitBytes * tokens);
  }
  OpList bwd(ops.backward, p);
  bwd.memory("cross_entropy.bwd", loss_bytes);
  matmul_backward(bwd, "lm_head", tokens, v / t, h);
  tp_reduce(bwd, tp);
  bwd.memory("final_norm.bwd", kBackwardTraffic * norm_bytes);
  return ops;
}

LayerOps generic_layer_ops(const GenericLayer& layer, const Shard& shard) {
  if (shard.micro_batch < 1 || shard.tp < 1) throw InputError("micro_batch and tp must be at least 1");
  const double b = as_double(shard.micro_batch);
  const double t = shard.tp;
  const KernelCost forward{OpKind::matmul, layer.forward_flops_per_sample * b / t,
                           layer.activation_bytes_per_sample * b / t, 0, 0};
  LayerOps ops;
  LayerOp f;
  f.name = layer.name;
  f.kernel = forward;
  ops.forward.push_back(f);
  LayerOp g;
  g.name = layer.name + ".bwd";
  g.kernel = KernelCost{OpKind::matmul, 2.0 * forward.flops, 2.0 * forward.bytes, 0, 0};
  ops.backward.push_back(g);
  if (shard.recompute == Recompute::full) prepend_recompute(ops, ops.forward);
  return ops;
}

}  // namespace trainsim::model
