#include "models/workload/layer_ops.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "models/workload/attention.hpp"
#include "models/workload/attention_projections.hpp"
#include "sim/error.hpp"

namespace trainsim::model {

namespace {

double as_double(std::int64_t v) {
  return static_cast<double>(v);
}

constexpr double kMaskBytes = 1.0;        // dropout masks are uint8
constexpr double kRoutingMapBytes = 1.0;  // a MoE routing map is one bool per token and expert
constexpr double kLogitBytes = 4.0;       // the cross-entropy works on fp32 logits
// An element-wise backward reads the saved input and the output gradient and writes the input gradient:
// three tensor passes against the forward's two.
constexpr double kBackwardTraffic = 1.5;

// Per-GEMM fp8 work of Transformer Engine: before an fp8 GEMM its 16-bit input is cast to fp8 and
// transposed (cast_transpose reads p bytes and writes two 1-byte copies, the transposed one for the
// other pass's GEMM; MXFP8's row- and column-wise copies alike); under delayed scaling the amax of each
// tensor is taken in the same kernel (current scaling: below). Weights are cast once per
// step and cached over the micro-batches (under 0.5 % of a step; their memory is in models/memory.hpp).
constexpr double kFp8CastWrites = 2.0;
// Current scaling (Fp8Recipe::tensorwise) quantizes in three kernels, amax, scale and cast
// (Float8CurrentScalingQuantizer::quantize in TransformerEngine's csrc/quantizer.cpp); the amax reads the
// input once more.
constexpr int kCurrentScalingKernels = 3;

// Tensor passes of llm-foundry's flash_attn_fn around flash-attn's variable-length kernel
// (llmfoundry/models/layers/attention.py with flash_attn/bert_padding.py), made even when nothing is padded:
//  - forward: unpad_input gathers q, k and v into new tensors (read + write each, 2 passes), and pad_input
//    writes a zeroed padded output and scatters the kernel's output into it (3 passes);
//  - backward: the output gradient is gathered (2 passes); each of dq, dk, dv is scattered into a zeroed
//    tensor (3 passes), and the split of the fused Wqkv output concatenates the three (2 passes).
constexpr double kUnpadForwardPasses = 2.0;
constexpr double kPadForwardPasses = 3.0;
constexpr double kPadBackwardPasses = 2.0;
constexpr double kUnpadBackwardPasses = 3.0 + 2.0;

// Passes over the rank's fc2 output that the experts' probability-weighted fc2 bias costs (expert_bias_bytes
// in TransformerLayerBuilder): 6 forward, 8 backward.
constexpr double kExpertBiasForwardPasses = 6.0;
constexpr double kExpertBiasBackwardPasses = 8.0;
// The kernels that bias runs as, expert by expert (TEGroupedMLP._apply_bias, core_v0.15.0 to core_v0.17.x:
// a list comprehension over torch.split of the output and of the probabilities by the host's token counts;
// Megatron-LM 883533e049, 2026-08-14, added a packed path for CUDA graphs). Forward: per local expert a
// multiply (b·p) and an add (t + b·p), then one cat. Backward, by PyTorch's autograd formulas: per expert the
// multiply's gradient to b (grad·p, then a sum over the broadcast rows) and to p (grad·b, then a sum over h),
// and the bias gradient added into its main_grad by Megatron-Core's DDP hook (one add a parameter); then the
// two splits' gradients each joined by one cat. TransformerEngine's fused grouped MLP (fused_grouped_mlp)
// takes the bias inside its own op: one kernel.
constexpr double kExpertBiasForwardKernelsPerExpert = 2.0;
constexpr double kExpertBiasForwardKernelsJoin = 1.0;
constexpr double kExpertBiasBackwardKernelsPerExpert = 5.0;
constexpr double kExpertBiasBackwardKernelsJoin = 2.0;

// HBM bytes per element of the element-wise work, read plus written, as the framework runs it. Fused
// (TransformerEngine, apex and Megatron kernels, or torch.compile): one pass in and one out, backward
// reading the saved input and the output gradient (kBackwardTraffic). Eager PyTorch runs each op of the
// reference code as its own kernel, in fp32 where that code upcasts; the counts follow those op lists:
//  - RMSNorm, x·rsqrt(mean(x²) + eps) on x.float(), cast back, times the weight: cast (p + 4), pow (8),
//    mean (4), multiply (8), cast (4 + p), weight (2p) = 28 + 4p forward; the backward of each of those
//    = 40 + 5p. (LayerNorm is one native kernel either way.)
//  - SwiGLU, silu(a)·b: silu (2p) and multiply (3p) = 5p per ffn element forward; the multiply's two
//    gradients (5p) and silu's (3p) = 8p backward. Fused: 3p and 1.5·3p.
//  - SwiGLU with clamped inputs (swiglu_limit, GPT-OSS): Megatron-Core's fused path still clamps outside its
//    kernel (weighted_bias_quick_geglu_impl in megatron/core/fusions/fused_bias_geglu.py, core_v0.15.0 on):
//    chunk, clamp the gate half and the up half (read and write both: 4p per ffn element), torch.cat them
//    back (4p) = 8p more forward; eager code clamps the two halves alone (4p). Backward, each clamp masks its
//    gradient by its saved input (read the gradient and the input, write: 6p) and the halves' gradients are
//    joined into one tensor (read and write: 4p) = 10p more either way.
//  - rotary embedding of q and k, on x.float() as complex numbers: cast (p + 4), complex multiply (8),
//    cast back (4 + p) = 16 + 2p each way. Fused: 2p each way.
//  - cross-entropy on fp32 logits: cast (p + 4), log_softmax (8), then the loss = p + 12 forward;
//    the loss gradient (4), log_softmax's (12) and the cast back (4 + p) = 20 + p backward. Fused: p + 4.
struct ElementwiseTraffic {
  double norm = 0, norm_backward = 0;  // per element of the normalised activations
  double act = 0, act_backward = 0;    // per ffn element (gelu: per fc1 output element)
  double rope = 0, rope_backward = 0;  // per element of q and k
  double loss = 0, loss_backward = 0;  // per logit
};

ElementwiseTraffic elementwise_traffic(const TransformerSpec& spec, double p, bool fused) {
  ElementwiseTraffic e;
  const bool eager_rms = !fused && spec.norm == Norm::rmsnorm;
  e.norm = eager_rms ? 28.0 + 4.0 * p : 2.0 * p;
  e.norm_backward = eager_rms ? 40.0 + 5.0 * p : kBackwardTraffic * 2.0 * p;
  const bool swiglu = spec.mlp == Mlp::swiglu;
  const double act = (swiglu ? 3.0 : 2.0) * p;  // gelu: read the fc1 output, write its activation
  e.act = swiglu && !fused ? 5.0 * p : act;
  e.act_backward = swiglu && !fused ? 8.0 * p : kBackwardTraffic * act;
  if (swiglu && spec.swiglu_limit > 0) {
    e.act += fused ? 8.0 * p : 4.0 * p;
    e.act_backward += 10.0 * p;
  }
  if (spec.position == Position::rope) {
    e.rope = fused ? 2.0 * p : 16.0 + 2.0 * p;
    e.rope_backward = e.rope;
  }
  e.loss = fused ? p + kLogitBytes : p + 12.0;
  e.loss_backward = fused ? p + kLogitBytes : 20.0 + p;
  return e;
}

// Appends ops to one list; every kernel and collective of this file is made here. `p` is the byte
// width of activations (16 bit under fp8 training), `fp8` whether parameter GEMMs run in fp8.
class OpList {
 public:
  /// `recipe`: how its fp8 casts scale (Shard::fp8_recipe); `grouped_quantize`: a grouped GEMM's casts run
  /// as one kernel for every recipe (the fused grouped MLP's), else as one only under delayed scaling.
  OpList(std::vector<LayerOp>& ops, double p, bool fp8, Fp8Recipe recipe = Fp8Recipe::delayed,
         bool grouped_quantize = false)
      : ops_(ops), p_(p), fp8_(fp8), recipe_(recipe), grouped_quantize_(grouped_quantize) {}

  /// A parameter GEMM (m×k)·(k×n): 2·m·n·k FLOPs, reads both inputs (1 byte each under fp8) and writes
  /// the output in 16 bit. Under fp8 a cast_transpose of its activation input (m×k) runs first.
  void matmul(std::string name, double m, double n, double k, double groups = 1) {
    if (fp8_ && casts_) fp8_cast(name + ".fp8_cast", groups * m * k, groups);
    const double in = fp8_ ? 1.0 : p_;
    KernelCost c{OpKind::matmul, 2.0 * groups * m * n * k, groups * (in * (m * k + k * n) + p_ * m * n), 0,
                 0};
    c.m = m;
    c.n = n;
    c.k = k;
    c.groups = groups;
    kernel(std::move(name), c);
  }
  /// A GEMM kept in 16 bit under fp8 training (LM head, router): no cast.
  void matmul_16bit(std::string name, double m, double n, double k) {
    KernelCost c{OpKind::matmul, 2.0 * m * n * k, p_ * (m * k + k * n + m * n), 0, 0};
    c.m = m;
    c.n = n;
    c.k = k;
    c.keeps_16bit = true;
    kernel(std::move(name), c);
  }
  [[nodiscard]] bool fp8() const { return fp8_; }
  /// Whether its fp8 GEMMs cast their inputs first (false: without_casts()).
  [[nodiscard]] bool casts() const { return casts_; }
  /// The same list, whose fp8 GEMMs take inputs already cast (the backward's dgrad and wgrad).
  [[nodiscard]] OpList without_casts() const {
    OpList o(ops_, p_, fp8_, recipe_, grouped_quantize_);
    o.casts_ = false;
    return o;
  }
  [[nodiscard]] double p() const { return p_; }
  void memory(std::string name, double bytes) {
    kernel(std::move(name), KernelCost{OpKind::memory_bound, 0.0, bytes, 0, 0});
  }
  /// The fp8 cast of `elements` 16-bit elements split over `groups` GEMMs: read p and write `writes` bytes
  /// each, in one kernel, three under current scaling (whose amax reads p more); once per group unless
  /// the groups are quantized together (TransformerEngine's split_quantize fuses delayed scaling's alone).
  void fp8_cast(std::string name, double elements, double groups = 1, double writes = kFp8CastWrites) {
    const bool current = recipe_ == Fp8Recipe::tensorwise;
    KernelCost c{OpKind::memory_bound, 0.0, ((current ? 2.0 : 1.0) * p_ + writes) * elements, 0, 0};
    // One call from Python; its kernels are launched from C++ (KernelCost::groups).
    c.groups = (current ? kCurrentScalingKernels : 1) *
               (recipe_ != Fp8Recipe::delayed && !grouped_quantize_ ? groups : 1.0);
    kernel(std::move(name), c);
  }
  void kernel(std::string name, KernelCost cost) {
    LayerOp op;
    op.name = std::move(name);
    op.kernel = cost;
    ops_.push_back(std::move(op));
  }
  void comm(std::string name, Collective collective, CommGroup group, double bytes, int steps = 1,
            bool overlappable = false, const topo::TokenRouting& routing = {}) {
    LayerOp op;
    op.name = std::move(name);
    op.communication = true;
    op.comm = CommCost{collective, group, bytes, steps, overlappable, routing};
    ops_.push_back(std::move(op));
  }

 private:
  std::vector<LayerOp>& ops_;
  double p_;
  bool fp8_;
  Fp8Recipe recipe_;
  bool grouped_quantize_;
  bool casts_ = true;
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

// Transformer Engine gathers a sequence-parallel input of an fp8 GEMM in fp8: it casts the rank's own
// sequence shard (m/tp of the GEMM's m rows) before the tensor-parallel all-gather, so the gather moves one
// byte per element and is the last op before the GEMM, which hides it under userbuffers' ring exchange
// (models/step/unit_pricing.cpp). The gathered fp8 tensor is then transposed once for the other pass's
// GEMM (Hopper's fp8 GEMMs take both operands K-major). Sources, transformer_engine/pytorch/module/: the
// forward's LayerNormLinear writes the norm's output in fp8 straight into the gather's buffer
// (layernorm_linear.py, `_apply_normalization` with fp8 output into `ub_obj_lnout`); the backward's
// grad_output_preprocess (base.py) "FP8 case with gather: unfused bgrad, cast, transpose for efficient
// gather" casts the local gradient, then gathers it.
struct Fp8Gather {
  bool on = false;  // the GEMM's input arrives gathered in fp8: no cast before it, a transpose after it
  [[nodiscard]] explicit operator bool() const { return on; }
};

/// Appends the cast of this rank's shard (`cast_name`: read p, write one byte per element of its m/tp rows
/// of k) and the one-byte gather of all m×k, when `c` gathers an fp8 GEMM's input; otherwise nothing.
Fp8Gather gather_in_fp8(OpList& ops, const TpComm& c, const std::string& cast_name, double m, double k,
                        double tp) {
  if (!(c.active && c.sp && ops.fp8())) return {};
  ops.fp8_cast(cast_name, (m / tp) * k, 1, 1.0);
  ops.comm("tp_all_gather", Collective::all_gather, CommGroup::tp, c.bytes / ops.p());
  return {true};
}

/// The sequence-parallel gather of an m×k GEMM input: in fp8 (gather_in_fp8) or as it is (sp_gather).
Fp8Gather gather_input(OpList& ops, const TpComm& c, const std::string& cast_name, double m, double k,
                       double tp) {
  const Fp8Gather g = gather_in_fp8(ops, c, cast_name, m, k, tp);
  if (!g) sp_gather(ops, c);
  return g;
}

/// A forward GEMM (m×k)·(k×n) after its input's gather: as OpList::matmul, or, with the input gathered in
/// fp8, without the cast and followed by the transpose of the gathered input (read and write one byte).
void matmul_after_gather(OpList& ops, const Fp8Gather& g, const std::string& name, double m, double n,
                         double k) {
  if (!g) {
    ops.matmul(name, m, n, k);
    return;
  }
  ops.without_casts().matmul(name, m, n, k);
  ops.memory(name + ".fp8_transpose", 2.0 * m * k);
}

// A matmul's backward: dgrad (input gradient) and wgrad (weight gradient), each its forward's size. Under
// fp8 the output gradient (m×n) is cast and transposed once for both; dgrad's other operand is the cached
// fp8 weight and wgrad's the input saved in fp8 by the forward, so neither casts again. With the gradient
// gathered in fp8 (`gathered`: gather_in_fp8 cast it before the gather), only its transpose runs, between
// dgrad and wgrad; a list without casts takes the gradient already cast by the kernel before.
void matmul_backward(OpList& ops, const std::string& name, double m, double n, double k, double groups = 1,
                     Fp8Gather gathered = {}) {
  if (ops.fp8() && ops.casts() && !gathered) ops.fp8_cast(name + ".grad_fp8_cast", groups * m * n, groups);
  OpList uncast = ops.without_casts();
  uncast.matmul(name + ".dgrad", m, k, n, groups);
  if (gathered) ops.memory(name + ".grad_fp8_transpose", 2.0 * groups * m * n);
  uncast.matmul(name + ".wgrad", k, n, m, groups);
}

// A 16-bit matmul's backward (no fp8 casts).
void matmul_16bit_backward(OpList& ops, const std::string& name, double m, double n, double k) {
  ops.matmul_16bit(name + ".dgrad", m, k, n);
  ops.matmul_16bit(name + ".wgrad", k, n, m);
}

void prepend_recompute(LayerOps& ops, const std::vector<LayerOp>& recomputed) {
  std::vector<LayerOp> backward;
  backward.reserve(recomputed.size() + ops.backward.size());
  for (LayerOp op : recomputed) {
    op.name = std::string(kRecomputePrefix) + op.name;
    backward.push_back(std::move(op));
  }
  backward.insert(backward.end(), ops.backward.begin(), ops.backward.end());
  ops.backward = std::move(backward);
}

// Where the modules Megatron-Core recomputes by name lie in a transformer layer's forward list: index ranges
// [begin, end) of the attention core, the MLP's kernels (a MoE layer's experts) and the whole MoE block
// (router to unpermute), the activation's name, and what the layer is.
struct ForwardModules {
  std::size_t core_begin = 0, core_end = 0, mlp_begin = 0, mlp_end = 0, moe_begin = 0, moe_end = 0;
  std::string act_name;
  bool flash = false, moe = false, mla = false;
};

// Megatron-Core's selective recompute of named modules (--recompute-modules): each recomputed module's
// forward ops again, in forward order. The attention core only when it is not a fused kernel (which keeps
// no scores and recomputes them in its own backward); a dense MLP's and the attention's tensor-parallel
// collectives are not issued again; a MoE layer recomputed whole dispatches and combines its tokens again.
std::vector<LayerOp> modules_recomputed(const std::vector<LayerOp>& forward, const ForwardModules& m,
                                        const Shard& shard) {
  const auto in = [](std::size_t i, std::size_t begin, std::size_t end) { return i >= begin && i < end; };
  const auto named = [](const std::string& name, std::string_view base) {
    return name == base || (name.starts_with(base) && name.size() > base.size() && name[base.size()] == '.');
  };
  std::vector<LayerOp> again;
  for (std::size_t i = 0; i < forward.size(); ++i) {
    const LayerOp& op = forward[i];
    const std::string& n = op.name;
    const bool kernel = !op.communication;
    const bool recomputed =
        (shard.recomputes(RecomputeModule::core_attn) && !m.flash && kernel &&
         in(i, m.core_begin, m.core_end)) ||
        (shard.recomputes(RecomputeModule::layernorm) && (n == "ln1" || n == "ln2")) ||
        (shard.recomputes(RecomputeModule::mla_up_proj) && m.mla &&
         (named(n, "q_up") || named(n, "kv_up") || n == "rope")) ||
        (shard.recomputes(RecomputeModule::mlp) && !m.moe && kernel && in(i, m.mlp_begin, m.mlp_end)) ||
        (shard.recomputes(RecomputeModule::moe) && m.moe && in(i, m.moe_begin, m.moe_end)) ||
        (shard.recomputes(RecomputeModule::moe_act) && m.moe && n == m.act_name &&
         in(i, m.mlp_begin, m.mlp_end)) ||
        (shard.recomputes(RecomputeModule::shared_experts) && m.moe && n.starts_with("shared_"));
    if (recomputed) again.push_back(op);
  }
  return again;
}

double sum_flops(const std::vector<LayerOp>& ops) {
  double f = 0;
  for (const LayerOp& op : ops) {
    if (!op.communication) f += op.kernel.flops;
  }
  return f;
}

// The shard as its activations see it: 16 bit under fp8 training, where only parameter GEMMs run in fp8.
Shard with_activation_precision(const Shard& shard) {
  Shard activations = shard;
  activations.precision = topo::activation_precision(shard.precision);
  return activations;
}

// One transformer layer's ops on one rank. The members are the layer's quantities, named as in the
// formulas and computed once, in declaration order, from the spec and the shard; each method appends one
// block's ops in the order the framework runs them. Precondition: check_shard(spec, shard) passed.
struct TransformerLayerBuilder {
  TransformerLayerBuilder(const TransformerSpec& layer_spec, const Shard& layer_shard)
      : spec(layer_spec), shard(layer_shard) {}

  const TransformerSpec& spec;
  const Shard& shard;
  const AttentionCost att = attention_cost(spec, with_activation_precision(shard));
  const double p = topo::bytes_per_element(topo::activation_precision(shard.precision));
  const bool fp8 = shard.precision == topo::Precision::fp8;
  const bool dropout = spec.dropout > 0;
  const double t = shard.tp;
  const double h = as_double(spec.hidden);
  const double tokens = shard.tokens(spec.seq_len);
  const double norm_tokens = shard.norm_tokens(spec.seq_len);
  const AttentionProjections projections = attention_projections(spec, shard.tp);
  const double out_width = as_double(spec.attention_out_width());  // out_proj's input, all ranks
  // K width on this rank: the kv heads split by tp, one head copied once tp exceeds them.
  const double kv_width = std::max(1.0, as_double(spec.kv_heads_or_heads()) / t) * att.head_dim;
  const bool swiglu = spec.mlp == Mlp::swiglu;
  const double fc1_outputs = swiglu ? 2.0 : 1.0;  // gate and up projections
  const TpComm tp{shard.tp > 1, shard.sequence_parallel, p* tokens* h};
  const ElementwiseTraffic e = elementwise_traffic(spec, p, shard.fused_elementwise);
  const double norm_bytes = e.norm * norm_tokens * h;
  const double norm_backward_bytes = e.norm_backward * norm_tokens * h;
  // This rank's queries and keys, whole heads (what qk_norm normalises).
  const double qk_norm_elements = tokens * (as_double(spec.query_width()) / t + kv_width);
  // Rotary embedding of this rank's queries and keys (MLA: their rope parts, one key shared by the heads).
  const double qk_elements =
      spec.is_mla() ? tokens * as_double(spec.qk_rope_head_dim) * (as_double(spec.heads) / t + 1.0)
                    : qk_norm_elements;
  // Residual add (read two, write one), with dropout also writing and reading back its mask.
  const double dropout_residual_bytes = (3.0 * p + (dropout ? kMaskBytes : 0.0)) * norm_tokens * h;
  const std::string residual = dropout ? "dropout_residual" : "residual";
  const bool flash = is_fused(spec.attention);
  const double s = as_double(spec.seq_len);
  const bool causal = spec.causal;
  const int cp = shard.cp;
  const bool moe = spec.is_moe();
  // Token slots of this tp group's tokens: each routed to top_k experts, as the busiest rank receives
  // them (padded to the capacity, or the dropless imbalance).
  const double routed_slots = moe ? tokens * as_double(spec.top_k) * spec.expert_load() : tokens;
  const double ffn = as_double(spec.mlp_width());
  const double a2a_bytes = p * routed_slots * h;
  const double slot_copies = moe ? as_double(spec.top_k) * spec.expert_load() : 1.0;
  const topo::TokenRouting slot_routing{slot_copies, spec.routing_groups, spec.routing_group_top_k};
  // Shared experts run on every token as one MLP of shared_experts · the expert width, split over tp.
  const double shared_ffn = moe ? as_double(spec.shared_experts) * ffn : 0.0;
  const double shared_act_elements = tokens * shared_ffn / t;
  // Megatron-Core's all-gather token dispatcher (token_dispatcher.py, MoEAllGatherTokenDispatcher): each
  // rank holds its own tokens (T/tp under sequence parallelism, T at tp 1; layout_rules refuses tp > 1
  // without it), and every rank of the expert_tp × ep group gathers all the group's tokens, own·et·ep of
  // them, with their routing map (a bool per expert, no gradient) and probabilities (p bytes per expert:
  // the router's dtype, as Megatron-Core's default moe_router_dtype leaves it). It runs its experts/ep
  // experts on the slots routed to them: own·et·top_k·expert_load of them, the all-to-all dispatcher's
  // count. The outputs, partial over the expert's et ranks and over the experts, are reduce-scattered back
  // to the tokens' ranks. Backward: the output gradient is all-gathered before the experts and the input's
  // and probabilities' gradients reduce-scattered after them. Every collective blocks the layer.
  const bool gather_dispatch = moe && shard.moe_all_gather;
  const bool all_to_all = moe && shard.ep > 1 && !gather_dispatch;
  // Megatron-Core's all-to-all token dispatcher under sequence parallelism (token_dispatcher.py,
  // MoEAlltoAllTokenDispatcher): each rank routes its own T/tp tokens, sends their slots over the ep group,
  // then all-gathers the slots it received over the tp group (every tp rank holds 1/tp of each local
  // expert), and after the experts reduce-scatters them over tp before sending them back. The MoE block then
  // needs no gather of its input (the shared experts, a tensor-parallel MLP, still do) and its output is
  // already in the sequence-parallel layout.
  // With expert_tp below tp an expert is split over et ranks only, so a rank computes et/tp of the group's
  // slots on 1/et of each of its experts' width.
  const bool slot_gather = all_to_all && shard.tp > 1 && shard.sequence_parallel;
  const double et = moe ? shard.expert_tp() : t;  // ranks that split one MLP's width
  const double own_tokens = norm_tokens;          // the all-gather dispatcher's tokens of this rank
  const double gathered_tokens = gather_dispatch ? own_tokens * et * shard.ep : 0.0;
  const bool gather_comm = gather_dispatch && et * shard.ep > 1;
  const double gathered_bytes = p * gathered_tokens * h;
  const double routing_elements = gathered_tokens * (moe ? as_double(spec.experts) : 0.0);
  // Slots this rank computes.
  const double mlp_tokens = gather_dispatch ? routed_slots * own_tokens / tokens * et
                            : slot_gather   ? routed_slots / t * et
                                            : routed_slots;
  const double act_elements = mlp_tokens * ffn / et;
  const double slot_bytes = p * mlp_tokens * h;  // gathered over the expert's own et ranks
  const bool slot_comm = slot_gather && et > 1;
  const double a2a_bytes_local = slot_gather ? a2a_bytes / t : a2a_bytes;  // what one rank sends
  const TpComm shared_tp{tp.active && shared_ffn > 0, tp.sp, tp.bytes};
  // MoE: the rank's experts run as one grouped GEMM, each expert on its share of the token slots.
  const double expert_groups = moe ? as_double(spec.experts) / shard.ep : 1.0;
  const double expert_tokens = mlp_tokens / expert_groups;
  // Megatron-Core's token permutation around the experts (moe_utils.py, permute/unpermute and
  // sort_chunks_by_idxs, run by the all-to-all dispatcher): the rank's slots gathered into
  // expert order before they are sent (each slot's row read and written), the received chunks sorted
  // from source-rank order into local-expert order when the rank holds several experts and ep > 1 (read
  // and written), the same two moves undone after the experts, and the returned slots summed into their
  // tokens weighted by the routing probabilities (read the slots, write the tokens). The backward moves
  // the gradients the same ways.
  // The flex dispatcher (DeepEP, HybridEP) sends tokens, not slots: nothing is permuted or sorted around its
  // communication. The receiver expands the rows it received into its experts' slots after the dispatch
  // (_DeepepManager.get_permuted_hidden_states_by_experts; HybridEP's dispatch_with_permute) and sums them
  // back to one row per received token before the combine (read each received row once and write its
  // slots; read the slots and write the rows: TE's fused permute and unpermute kernels, which load a token's
  // row once for all its slots). A rank receives each token once per distinct destination GPU of the group,
  // expected_destination_gpus of them (topologies/expert_dispatch.hpp), for the slots it computes.
  const bool token_dispatch = moe && shard.moe_token_dispatch;
  const bool permutes = moe && !gather_dispatch && !token_dispatch;
  const double receiver_permute_bytes =
      token_dispatch
          ? slot_bytes * (1.0 + topo::expected_destination_gpus(slot_routing, shard.ep) / slot_copies)
          : 0.0;
  const double permute_bytes = permutes ? 2.0 * a2a_bytes_local : 0.0;
  const double sort_bytes = permutes && shard.ep > 1 && expert_groups > 1 ? 2.0 * a2a_bytes_local : 0.0;
  const double unpermute_bytes =
      permutes ? a2a_bytes_local + p * (slot_gather ? tokens / t : tokens) * h : 0.0;
  // Experts with biases (GPT-OSS): Megatron-Core's grouped experts add fc1's bias inside the GEMM but return
  // fc2's (skip_bias_add) and add it weighted by each slot's routing probability in eager PyTorch, expert by
  // expert (TEGroupedMLP._apply_bias in megatron/core/transformer/moe/experts.py, core_v0.15.0 to
  // core_v0.17.x: torch.split, t + b·p, torch.cat). Per element of the rank's fc2 output, at the activations'
  // width p (probabilities as wide): b·p written (p), t + b·p read (2p) and written (p), the cat read and
  // written (2p) = 6p forward. Backward: the split's gradients joined (2p), b's gradient as the sum over the
  // slots of grad·p (grad·p written and read back: 3p) and p's as the sum over h of grad·b (3p) = 8p.
  const double expert_bias_bytes = moe && spec.bias ? p * mlp_tokens * h : 0.0;
  // TransformerEngine's fused grouped MLP (Framework::fused_grouped_mlp): fc1's epilogue applies the
  // activation and writes fc2's input in fp8, fc2's dgrad epilogue the activation's backward and fc1's
  // output gradient in fp8 (the cast matmul_backward would add before fc1's dgrad and wgrad). An
  // approximation: the epilogues' own writes (fc1's pre-activation kept for the backward, the fp8 copies) are
  // taken as inside the GEMMs' priced traffic, which counts a 16-bit output.
  const bool fused_mlp = moe && fp8 && shard.fused_grouped_mlp;
  const double score_bytes = att.score_elements;  // one byte per score element, times p below
  // Context parallelism: K/V blocks passed round the cp ring under the attention's ring steps, or all of
  // K/V gathered first (att.kv_bytes: the whole sequence's) and attended to in one kernel.
  const bool kv_gather = shard.cp > 1 && shard.cp_kv_all_gather;
  const int ring_steps = shard.attention_ring_steps();
  // This rank's q, k and v of its own tokens, and the attention output (bytes).
  const double qkv_bytes = att.q_bytes + att.kv_bytes / cp;
  const bool unpadded = flash && shard.unpadded_attention;
  // The MoE block's tensor-parallel input gather and output reduction: only for its shared experts when the
  // dispatcher gathers the slots (or the tokens) itself.
  const bool dispatcher_gathers = slot_gather || gather_dispatch;
  const TpComm block_tp = dispatcher_gathers ? shared_tp : tp;
  const std::string act_name = swiglu ? "swiglu" : "gelu";

  /// An op list appending to `ops` at this layer's activation width and GEMM precision.
  [[nodiscard]] OpList op_list(std::vector<LayerOp>& ops) const {
    return OpList(ops, p, fp8, shard.fp8_recipe, fused_mlp);
  }

  /// The attention core's forward: the cp exchange of K/V, then the fused kernel or the standard
  /// QKᵀ, softmax, dropout and AV. Kept apart because selective and op recompute run it again.
  void attention_core_forward(OpList& core) const {
    if (kv_gather) {
      core.comm("cp_kv_all_gather", Collective::all_gather, CommGroup::cp, att.kv_bytes);
    } else if (shard.cp > 1) {
      core.comm("cp_kv_exchange", Collective::ring_exchange, CommGroup::cp, att.kv_block_bytes, shard.cp - 1,
                true);
    }
    if (flash) {
      if (unpadded) core.memory("attn_unpad", kUnpadForwardPasses * qkv_bytes);
      core.kernel("flash_attention",
                  KernelCost{OpKind::fused_attention, att.forward_flops, att.forward_bytes, att.head_dim, s,
                             AttentionVariant{spec.attention, false, causal, ring_steps, att.window}});
      if (ring_steps > 1) core.memory("cp_softmax_merge", att.ring_merge_bytes);
      if (unpadded) core.memory("attn_pad", kPadForwardPasses * att.o_bytes);
    } else {
      // Batched per-head GEMMs of the attention core: 16 bit under every recipe.
      KernelCost half_core{OpKind::matmul, 0.5 * att.forward_flops,
                           p * score_bytes + att.q_bytes + 0.5 * att.kv_bytes, 0, 0};
      half_core.keeps_16bit = true;
      core.kernel("qk", half_core);
      core.memory("softmax", 2.0 * p * score_bytes);
      if (dropout) core.memory("attn_dropout", (2.0 * p + kMaskBytes) * score_bytes);
      core.kernel("av", half_core);
    }
  }

  /// MLA's latent RMSNorms (after q_down and kv_down), each over its own width.
  void latent_norm(OpList& list, const Projection& x, bool backward) const {
    if (x.norm > 0) {
      const double bytes = (backward ? e.norm_backward : e.norm) * tokens * as_double(x.norm);
      list.memory(std::string(x.name) + (backward ? ".norm.bwd" : ".norm"), bytes);
    }
  }

  /// qk_norm: the query heads' norm and the key heads' (two kernels, as Megatron-Core's q_layernorm and
  /// k_layernorm run) over this rank's queries and keys, the norm's traffic per element.
  void qk_norms(OpList& list, bool backward) const {
    if (!spec.qk_norm) return;
    KernelCost norms{OpKind::memory_bound, 0, (backward ? e.norm_backward : e.norm) * qk_norm_elements, 0, 0};
    norms.kernels = 2;
    list.kernel(backward ? "qk_norm.bwd" : "qk_norm", norms);
  }

  /// The attention block's forward, ln1 to ln2, with `core_ops` (attention_core_forward's) in its place;
  /// records the core's index range in `m`.
  void attention_forward(std::vector<LayerOp>& forward, const std::vector<LayerOp>& core_ops,
                         ForwardModules& m) const {
    OpList fwd = op_list(forward);
    fwd.memory("ln1", norm_bytes);
    // One projection of the norm's output (qkv) takes it gathered in fp8; MLA's several projections are
    // gathered as they are, each casting its own input.
    const Projection& first = projections.list[0];
    const bool one_projection = std::count_if(projections.begin(), projections.end(),
                                              [](const Projection& x) { return x.before_core; }) == 1;
    const Fp8Gather gathered = one_projection ? gather_input(fwd, tp, std::string(first.name) + ".fp8_cast",
                                                             tokens, as_double(first.local_in), t)
                                              : Fp8Gather{};
    if (!one_projection) sp_gather(fwd, tp);
    for (const Projection& x : projections) {
      if (!x.before_core) continue;
      matmul_after_gather(fwd, gathered, std::string(x.name), tokens, as_double(x.local_out),
                          as_double(x.local_in));
      latent_norm(fwd, x, false);
    }
    qk_norms(fwd, false);
    if (e.rope > 0) fwd.memory("rope", e.rope * qk_elements);
    m.core_begin = forward.size();
    forward.insert(forward.end(), core_ops.begin(), core_ops.end());
    m.core_end = forward.size();
    fwd.matmul("out_proj", tokens, h, out_width / t);
    tp_reduce(fwd, tp);
    fwd.memory(residual, dropout_residual_bytes);
    fwd.memory("ln2", norm_bytes);
  }

  /// A MoE block's forward before its experts: the router, the shared experts, then the tokens'
  /// permutation and dispatch to the experts' ranks.
  void moe_dispatch_forward(OpList& fwd) const {
    const double router_tokens = dispatcher_gathers ? norm_tokens : tokens;
    fwd.matmul_16bit("router", router_tokens, as_double(spec.experts), h);
    if (shard.moe_router_kernels > 1) {
      // The router's other kernels and the dispatch's preprocessing: their launches, and the fused score
      // and top-k kernel's pass over the [tokens, experts] scores (fp32 logits in, fp32 probabilities and
      // a boolean routing map out; TransformerEngine's fused_topk_with_score_function); the rest move
      // little against their launch.
      KernelCost rest{OpKind::memory_bound, 0, (4.0 + 4.0 + 1.0) * router_tokens * as_double(spec.experts)};
      rest.kernels = shard.moe_router_kernels - 1;
      fwd.kernel("router_ops", rest);
    }
    if (shared_ffn > 0) {
      fwd.matmul("shared_fc1", tokens, fc1_outputs * shared_ffn / t, h);
      fwd.memory(swiglu ? "shared_swiglu" : "shared_gelu", e.act * shared_act_elements);
      fwd.matmul("shared_fc2", tokens, h, shared_ffn / t);
    }
    if (permutes) fwd.memory("permute", permute_bytes);
    if (all_to_all)
      fwd.comm("ep_dispatch", Collective::all_to_all, CommGroup::ep, a2a_bytes_local, 1, false, slot_routing);
    if (gather_comm) {
      fwd.comm("ep_dispatch.map_all_gather", Collective::all_gather, CommGroup::expert_tp_ep,
               kRoutingMapBytes * routing_elements);
      fwd.comm("ep_dispatch.probs_all_gather", Collective::all_gather, CommGroup::expert_tp_ep,
               p * routing_elements);
      fwd.comm("ep_dispatch.all_gather", Collective::all_gather, CommGroup::expert_tp_ep, gathered_bytes);
    }
    if (slot_comm)
      fwd.comm("ep_dispatch.tp_all_gather", Collective::all_gather, CommGroup::expert_tp, slot_bytes);
    if (sort_bytes > 0) fwd.memory("sort_chunks", sort_bytes);
    if (token_dispatch) fwd.memory("permute", receiver_permute_bytes);
  }

  /// The MLP's forward (a MoE layer's: its experts, one grouped GEMM per projection).
  void mlp_forward(OpList& fwd) const {
    // A dense MLP's fc1 takes the block's input gathered in fp8 (gather_in_fp8); a MoE block's gather
    // feeds the router and dispatch instead (mlp_block_forward).
    if (!moe) {
      const Fp8Gather gathered = gather_input(fwd, block_tp, "fc1.fp8_cast", expert_tokens, h, t);
      matmul_after_gather(fwd, gathered, "fc1", expert_tokens, fc1_outputs * ffn / et, h);
    } else {
      fwd.matmul("fc1", expert_tokens, fc1_outputs * ffn / et, h, expert_groups);
    }
    if (!fused_mlp) fwd.memory(act_name, e.act * act_elements);
    (fused_mlp ? fwd.without_casts() : fwd).matmul("fc2", expert_tokens, h, ffn / et, expert_groups);
    if (expert_bias_bytes > 0)
      fwd.kernel("expert_bias", expert_bias_cost(kExpertBiasForwardPasses, kExpertBiasForwardKernelsPerExpert,
                                                 kExpertBiasForwardKernelsJoin));
  }

  /// The experts' probability-weighted fc2 bias: `passes` over the rank's fc2 output, as one kernel or, run
  /// expert by expert, `per_expert` kernels for each local expert and `join` more.
  [[nodiscard]] KernelCost expert_bias_cost(double passes, double per_expert, double join) const {
    KernelCost c{OpKind::memory_bound, 0, passes * expert_bias_bytes, 0, 0};
    if (!fused_mlp) c.kernels = static_cast<int>(per_expert * expert_groups + join);
    return c;
  }

  /// A MoE block's forward after its experts, up to the tokens back in their order: the slots' return
  /// from the experts' ranks and their unpermutation (the all-gather dispatcher's reduce-scatter is not
  /// part of it: see mlp_block_forward).
  void moe_combine_forward(OpList& fwd) const {
    if (token_dispatch) fwd.memory("unpermute", receiver_permute_bytes);
    if (sort_bytes > 0) fwd.memory("unsort_chunks", sort_bytes);
    if (slot_comm)
      fwd.comm("ep_combine.tp_reduce_scatter", Collective::reduce_scatter, CommGroup::expert_tp, slot_bytes);
    if (all_to_all)
      fwd.comm("ep_combine", Collective::all_to_all, CommGroup::ep, a2a_bytes_local, 1, false, slot_routing);
    if (permutes) fwd.memory("unpermute", unpermute_bytes);
  }

  /// The MLP block's forward after ln2, to its residual add; records the index ranges of the MoE block
  /// and of the MLP's kernels in `m`.
  void mlp_block_forward(std::vector<LayerOp>& forward, ForwardModules& m) const {
    OpList fwd = op_list(forward);
    if (moe) sp_gather(fwd, block_tp);  // a dense MLP gathers fc1's input in mlp_forward
    m.moe_begin = forward.size();
    if (moe) moe_dispatch_forward(fwd);
    m.mlp_begin = forward.size();
    mlp_forward(fwd);
    m.mlp_end = forward.size();
    moe_combine_forward(fwd);
    m.moe_end = forward.size();
    if (gather_comm)
      fwd.comm("ep_combine.reduce_scatter", Collective::reduce_scatter, CommGroup::expert_tp_ep,
               gathered_bytes);
    tp_reduce(fwd, block_tp);
    fwd.memory(residual, dropout_residual_bytes);
  }

  /// The backward of moe_combine_forward and of the all-gather dispatcher's reduce-scatter.
  void moe_combine_backward(OpList& bwd) const {
    if (permutes) bwd.memory("unpermute.bwd", unpermute_bytes);
    if (all_to_all)
      bwd.comm("ep_combine.bwd", Collective::all_to_all, CommGroup::ep, a2a_bytes_local, 1, false,
               slot_routing);
    if (slot_comm)
      bwd.comm("ep_combine.bwd.tp_all_gather", Collective::all_gather, CommGroup::expert_tp, slot_bytes);
    if (gather_comm)
      bwd.comm("ep_combine.bwd.all_gather", Collective::all_gather, CommGroup::expert_tp_ep, gathered_bytes);
    if (sort_bytes > 0) bwd.memory("unsort_chunks.bwd", sort_bytes);
    if (token_dispatch) bwd.memory("unpermute.bwd", receiver_permute_bytes);
  }

  /// The backward of mlp_forward.
  void mlp_backward(OpList& bwd, Fp8Gather fc2_grad_gathered = {}) const {
    if (expert_bias_bytes > 0)
      bwd.kernel("expert_bias.bwd",
                 expert_bias_cost(kExpertBiasBackwardPasses, kExpertBiasBackwardKernelsPerExpert,
                                  kExpertBiasBackwardKernelsJoin));
    matmul_backward(bwd, "fc2", expert_tokens, h, ffn / et, expert_groups, fc2_grad_gathered);
    if (!fused_mlp) bwd.memory(swiglu ? "swiglu.bwd" : "gelu.bwd", e.act_backward * act_elements);
    OpList fc1_grads = fused_mlp ? bwd.without_casts() : bwd;  // fused: cast by fc2's dgrad epilogue
    matmul_backward(fc1_grads, "fc1", expert_tokens, fc1_outputs * ffn / et, h, expert_groups);
  }

  /// The backward of moe_dispatch_forward: the gradients' return to the tokens' ranks, then the shared
  /// experts' and the router's backward.
  void moe_dispatch_backward(OpList& bwd) const {
    if (token_dispatch) bwd.memory("permute.bwd", receiver_permute_bytes);
    if (sort_bytes > 0) bwd.memory("sort_chunks.bwd", sort_bytes);
    if (slot_comm)
      bwd.comm("ep_dispatch.bwd.tp_reduce_scatter", Collective::reduce_scatter, CommGroup::expert_tp,
               slot_bytes);
    if (all_to_all)
      bwd.comm(std::string(kExpertDispatchBackward), Collective::all_to_all, CommGroup::ep, a2a_bytes_local,
               1, false, slot_routing);
    if (permutes) bwd.memory("permute.bwd", permute_bytes);
    if (gather_comm) {
      bwd.comm("ep_dispatch.bwd.reduce_scatter", Collective::reduce_scatter, CommGroup::expert_tp_ep,
               gathered_bytes);
      bwd.comm("ep_dispatch.bwd.probs_reduce_scatter", Collective::reduce_scatter, CommGroup::expert_tp_ep,
               p * routing_elements);
    }
    if (shared_ffn > 0) {
      matmul_backward(bwd, "shared_fc2", tokens, h, shared_ffn / t);
      bwd.memory(swiglu ? "shared_swiglu.bwd" : "shared_gelu.bwd", e.act_backward * shared_act_elements);
      matmul_backward(bwd, "shared_fc1", tokens, fc1_outputs * shared_ffn / t, h);
    }
    matmul_16bit_backward(bwd, "router", dispatcher_gathers ? norm_tokens : tokens, as_double(spec.experts),
                          h);
  }

  /// The MLP block's backward, its residual to ln2.
  void mlp_block_backward(OpList& bwd) const {
    bwd.memory(residual + ".bwd", kBackwardTraffic * dropout_residual_bytes);
    // A dense MLP gathers fc2's output gradient in fp8 (gather_in_fp8); a MoE block's gather feeds the
    // combine's backward.
    const Fp8Gather gathered =
        moe ? Fp8Gather{} : gather_in_fp8(bwd, block_tp, "fc2.grad_fp8_cast", expert_tokens, h, t);
    if (!gathered) sp_gather(bwd, block_tp);
    moe_combine_backward(bwd);
    mlp_backward(bwd, gathered);
    if (moe) moe_dispatch_backward(bwd);
    tp_reduce(bwd, block_tp);
    bwd.memory("ln2.bwd", norm_backward_bytes);
  }

  /// The attention core's backward, with the cp exchange of K/V and of their gradients.
  void attention_core_backward(OpList& bwd) const {
    if (kv_gather) {
      bwd.comm("cp_kv_all_gather.bwd", Collective::all_gather, CommGroup::cp, att.kv_bytes);
    } else if (shard.cp > 1) {
      // K/V blocks go round again and their gradients come back (Megatron-LM context parallelism).
      bwd.comm("cp_kv_exchange.bwd", Collective::ring_exchange, CommGroup::cp, 2.0 * att.kv_block_bytes,
               shard.cp - 1, true);
    }
    if (flash) {
      if (unpadded) bwd.memory("attn_pad.bwd", kPadBackwardPasses * att.o_bytes);
      if (ring_steps > 1) bwd.memory("cp_grad_merge", att.ring_grad_merge_bytes);
      bwd.kernel("flash_attention.bwd",
                 KernelCost{OpKind::fused_attention, att.backward_flops, att.backward_bytes, att.head_dim, s,
                            AttentionVariant{spec.attention, true, causal, ring_steps, att.window}});
      if (unpadded) bwd.memory("attn_unpad.bwd", kUnpadBackwardPasses * qkv_bytes);
    } else {
      const double matmul_bytes = 2.0 * (p * score_bytes + att.q_bytes + 0.5 * att.kv_bytes);
      const double quarter = 0.25 * att.backward_flops;  // dgrad + wgrad of AV, then of QKᵀ
      KernelCost core_grad{OpKind::matmul, quarter, 0.5 * matmul_bytes, 0, 0};
      core_grad.keeps_16bit = true;
      bwd.kernel("av.dgrad", core_grad);
      bwd.kernel("av.wgrad", core_grad);
      if (dropout) bwd.memory("attn_dropout.bwd", kBackwardTraffic * (2.0 * p + kMaskBytes) * score_bytes);
      bwd.memory("softmax.bwd", kBackwardTraffic * 2.0 * p * score_bytes);
      bwd.kernel("qk.dgrad", core_grad);
      bwd.kernel("qk.wgrad", core_grad);
    }
    if (kv_gather)
      bwd.comm("cp_kv_grad_reduce_scatter", Collective::reduce_scatter, CommGroup::cp, att.kv_bytes);
  }

  /// The attention block's backward, its residual to ln1.
  void attention_backward(OpList& bwd) const {
    bwd.memory(residual + ".bwd", kBackwardTraffic * dropout_residual_bytes);
    const Fp8Gather gathered = gather_input(bwd, tp, "out_proj.grad_fp8_cast", tokens, h, t);
    matmul_backward(bwd, "out_proj", tokens, h, out_width / t, 1, gathered);
    attention_core_backward(bwd);
    if (e.rope_backward > 0) bwd.memory("rope.bwd", e.rope_backward * qk_elements);
    qk_norms(bwd, true);
    for (int i = projections.count - 1; i >= 0; --i) {
      const Projection& x = projections.list[static_cast<std::size_t>(i)];
      if (!x.before_core) continue;
      latent_norm(bwd, x, true);
      matmul_backward(bwd, std::string(x.name), tokens, as_double(x.local_out), as_double(x.local_in));
    }
    tp_reduce(bwd, tp);
    bwd.memory("ln1.bwd", norm_backward_bytes);
  }

  /// torchtitan's op recompute: its policy keeps q, v, w1 (and w2 of a SwiGLU) and the fused attention's
  /// output, and runs the other matmuls and every element-wise op again from the layer's saved input.
  [[nodiscard]] std::vector<LayerOp> op_recomputed(const std::vector<LayerOp>& core_ops) const {
    std::vector<LayerOp> again;
    OpList redo = op_list(again);
    redo.memory("ln1", norm_bytes);
    if (spec.is_mla()) {  // k comes out of the kv up-projection, keys and values together
      const Projection& kv_up = projections.list[static_cast<std::size_t>(projections.count - 2)];
      redo.matmul("kv_up", tokens, as_double(kv_up.local_out), as_double(kv_up.local_in));
    } else {
      redo.matmul("k", tokens, kv_width, h);
    }
    qk_norms(redo, false);
    if (e.rope > 0) redo.memory("rope", e.rope * qk_elements);
    if (!flash) {
      for (const LayerOp& op : core_ops) {
        if (!op.communication) again.push_back(op);
      }
    }
    redo.matmul("out_proj", tokens, h, out_width / t);
    redo.memory(residual, dropout_residual_bytes);
    redo.memory("ln2", norm_bytes);
    // Under the fused MLP the activation runs in fc1's epilogue: recomputing it means fc1 again.
    if (swiglu) {
      redo.matmul("fc1_up", expert_tokens, ffn / et, h, expert_groups);
      if (!fused_mlp) redo.memory("swiglu", e.act * act_elements);
    } else {
      if (!fused_mlp) redo.memory("gelu", e.act * act_elements);
      redo.matmul("fc2", expert_tokens, h, ffn / et, expert_groups);
    }
    redo.memory(residual, dropout_residual_bytes);
    return again;
  }

  /// The layer's forward and backward, the backward led by what shard.recompute runs again.
  [[nodiscard]] LayerOps build() const {
    LayerOps ops;
    std::vector<LayerOp> core_ops;  // the standard attention core, recomputed under selective recompute
    OpList core = op_list(core_ops);
    attention_core_forward(core);
    ForwardModules modules;
    modules.act_name = act_name;
    modules.flash = flash;
    modules.moe = moe;
    modules.mla = spec.is_mla();
    attention_forward(ops.forward, core_ops, modules);
    mlp_block_forward(ops.forward, modules);

    OpList bwd = op_list(ops.backward);
    mlp_block_backward(bwd);
    attention_backward(bwd);

    if (shard.recompute == Recompute::full) {
      prepend_recompute(ops, ops.forward);
    } else if (shard.recompute == Recompute::op) {
      prepend_recompute(ops, op_recomputed(core_ops));
    } else if (shard.recompute == Recompute::selective) {
      std::vector<LayerOp> again = modules_recomputed(ops.forward, modules, shard);
      if (!again.empty()) prepend_recompute(ops, again);
    }
    return ops;
  }
};

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
  return TransformerLayerBuilder(spec, shard).build();
}

LayerOps embedding_ops(const TransformerSpec& spec, const Shard& shard) {
  if (!spec.generic_layers.empty()) throw InputError("a generic model has no embedding layer");
  check_shard(spec, shard);
  const double p = topo::bytes_per_element(topo::activation_precision(shard.precision));
  const double h = as_double(spec.hidden);
  const double tokens = shard.tokens(spec.seq_len);
  const double norm_tokens = shard.norm_tokens(spec.seq_len);
  const TpComm tp{shard.tp > 1, shard.sequence_parallel, p * tokens * h};
  // Lookup: gather rows (read) and write the activations; learned positions read and add one more.
  const double positions = spec.position == Position::learned ? 2.0 : 0.0;
  const double dropout_bytes = spec.dropout > 0 ? (2.0 * p + kMaskBytes) * norm_tokens * h : 0.0;

  LayerOps ops;
  OpList fwd(ops.forward, p, false);
  fwd.memory("embedding", (2.0 + positions) * p * tokens * h);
  tp_reduce(fwd, tp);
  fwd.memory("embedding_dropout", dropout_bytes);
  OpList bwd(ops.backward, p, false);
  bwd.memory("embedding_dropout.bwd", kBackwardTraffic * dropout_bytes);
  sp_gather(bwd, tp);
  bwd.memory("embedding.wgrad", (2.0 + positions) * p * tokens * h);
  return ops;
}

LayerOps head_ops(const TransformerSpec& spec, const Shard& shard) {
  if (!spec.generic_layers.empty()) throw InputError("a generic model has no LM head");
  check_shard(spec, shard);
  const double p = topo::bytes_per_element(topo::activation_precision(shard.precision));
  const double t = shard.tp;
  const double h = as_double(spec.hidden);
  const double v = as_double(spec.vocab);
  const double tokens = shard.tokens(spec.seq_len);
  const double norm_tokens = shard.norm_tokens(spec.seq_len);
  const TpComm tp{shard.tp > 1, shard.sequence_parallel, p * tokens * h};
  const ElementwiseTraffic e = elementwise_traffic(spec, p, shard.fused_elementwise);
  const double norm_bytes = e.norm * norm_tokens * h;
  const double logits = tokens * v / t;
  // Vocab-parallel cross-entropy as one memory-bound pass each way over the logits: forward reads the
  // p-byte logits and writes the fp32 softmax; backward reads it and writes the p-byte gradient. Counting
  // every element-wise step of Megatron-LM's unfused implementation (cast, max, subtract, exp, sum,
  // normalise: ~9 fp32 passes) moved held-out vTrain single-node from 14.9 % to 16.6 % MAPE, so one pass
  // is kept for the frameworks that fuse (eager PyTorch: see elementwise_traffic).
  const double loss_bytes = e.loss * logits;
  const double loss_grad_bytes = e.loss_backward * logits;

  LayerOps ops;
  OpList fwd(ops.forward, p, false);  // the LM head stays 16 bit under fp8 (not a Transformer Engine layer)
  fwd.memory("final_norm", norm_bytes);
  sp_gather(fwd, tp);
  fwd.matmul_16bit("lm_head", tokens, v / t, h);
  fwd.memory("cross_entropy", loss_bytes);
  if (tp.active) {
    // Vocab-parallel softmax: per-token max, sum of exponentials and target logit, fp32.
    fwd.comm("tp_loss_all_reduce", Collective::all_reduce, CommGroup::tp, 3.0 * kLogitBytes * tokens);
  }
  OpList bwd(ops.backward, p, false);
  bwd.memory("cross_entropy.bwd", loss_grad_bytes);
  matmul_16bit_backward(bwd, "lm_head", tokens, v / t, h);
  tp_reduce(bwd, tp);
  bwd.memory("final_norm.bwd", e.norm_backward * norm_tokens * h);
  return ops;
}

LayerOps mtp_ops(const TransformerSpec& spec, const Shard& shard) {
  if (!spec.generic_layers.empty()) throw InputError("a generic model has no multi-token prediction");
  check_shard(spec, shard);
  const double p = topo::bytes_per_element(topo::activation_precision(shard.precision));
  const bool fp8 = shard.precision == topo::Precision::fp8;
  const double t = shard.tp;
  const double h = as_double(spec.hidden);
  const double tokens = shard.tokens(spec.seq_len);
  const double norm_tokens = shard.norm_tokens(spec.seq_len);
  const TpComm tp{shard.tp > 1, shard.sequence_parallel, p * tokens * h};
  const ElementwiseTraffic e = elementwise_traffic(spec, p, shard.fused_elementwise);
  const double lookup_bytes = 2.0 * p * tokens * h;             // gather the rows, write the activations
  const double concat_bytes = 2.0 * 2.0 * p * norm_tokens * h;  // read both halves, write the 2h-wide input

  LayerOps ops;
  OpList fwd(ops.forward, p, fp8);
  fwd.memory("mtp_embedding", lookup_bytes);
  tp_reduce(fwd, tp);
  fwd.memory("mtp_norms", 2.0 * e.norm * norm_tokens * h);
  fwd.memory("mtp_concat", concat_bytes);
  if (tp.active && tp.sp)
    fwd.comm("mtp_proj.tp_all_gather", Collective::all_gather, CommGroup::tp, 2.0 * tp.bytes);
  fwd.matmul("mtp_proj", tokens, h / t, 2.0 * h);
  // The projection's output slices, gathered whole on every tp rank (the layer after it takes its own
  // sequence slice of them without communication).
  if (tp.active) fwd.comm("mtp_proj.out_all_gather", Collective::all_gather, CommGroup::tp, tp.bytes);
  OpList bwd(ops.backward, p, fp8);
  matmul_backward(bwd, "mtp_proj", tokens, h / t, 2.0 * h);
  if (tp.active && tp.sp)
    bwd.comm("mtp_proj.bwd.tp_reduce_scatter", Collective::reduce_scatter, CommGroup::tp, 2.0 * tp.bytes);
  bwd.memory("mtp_concat.bwd", concat_bytes);
  bwd.memory("mtp_norms.bwd", 2.0 * e.norm_backward * norm_tokens * h);
  sp_gather(bwd, tp);
  bwd.memory("mtp_embedding.wgrad", lookup_bytes);
  if (shard.recompute == Recompute::full) prepend_recompute(ops, ops.forward);
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
