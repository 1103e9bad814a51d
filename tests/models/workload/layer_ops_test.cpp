// Per-layer op lists: FLOP totals against the GPT layer formula, the collectives Megatron-LM issues
// (Shoeybi et al. 2019 Sec. 3; Korthikanti et al. 2022 Sec. 4.2.2), and recompute.
#include "models/workload/layer_ops.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "models/spec/framework.hpp"
#include "models/workload/activation_memory.hpp"
#include "models/workload/flops.hpp"
#include "models/workload/kernel_time.hpp"
#include "sim/error.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim::model;

namespace {

constexpr double kS = 2048, kH = 12288;

TransformerSpec gpt3(Attention kind) {
  return trainsim::testing::gpt3_175b(kind);
}

Shard tp8(bool sp = false, Recompute r = Recompute::none) {
  Shard sh;
  sh.tp = 8;
  sh.sequence_parallel = sp;
  sh.recompute = r;
  return sh;
}

long count(const std::vector<LayerOp>& ops, Collective c) {
  return std::count_if(ops.begin(), ops.end(),
                       [c](const LayerOp& op) { return op.communication && op.comm.collective == c; });
}

bool has(const std::vector<LayerOp>& ops, const std::string& name) {
  return std::any_of(ops.begin(), ops.end(), [&](const LayerOp& op) { return op.name == name; });
}

const LayerOp& op_named(const std::vector<LayerOp>& ops, const std::string& name) {
  const auto it = std::find_if(ops.begin(), ops.end(), [&](const LayerOp& op) { return op.name == name; });
  REQUIRE(it != ops.end());
  return *it;
}

}  // namespace

TEST_CASE("a standard GPT layer's forward FLOPs are (24·s·h² + 4·s²·h)/t and backward twice that") {
  const LayerOps ops = transformer_layer_ops(gpt3(Attention::standard), tp8());
  const double forward = (24 * kS * kH * kH + 4 * kS * kS * kH) / 8;
  CHECK(ops.forward_flops() == doctest::Approx(forward).epsilon(1e-12));
  CHECK(ops.backward_flops() == doctest::Approx(2 * forward).epsilon(1e-12));
  CHECK(has(ops.forward, "qk"));
  CHECK(has(ops.forward, "softmax"));
  CHECK(has(ops.forward, "attn_dropout"));
  CHECK(has(ops.forward, "av"));
}

TEST_CASE("a causal flash layer executes half the score work, one fused op, 2.5 times in backward") {
  const LayerOps ops = transformer_layer_ops(gpt3(Attention::flash), tp8());
  const double dense = 24 * kS * kH * kH / 8;
  const double scores = 0.5 * 4 * kS * kS * kH / 8;
  CHECK(ops.forward_flops() == doctest::Approx(dense + scores).epsilon(1e-12));
  CHECK(ops.backward_flops() == doctest::Approx(2 * dense + 2.5 * scores).epsilon(1e-12));
  const auto fused = std::find_if(ops.forward.begin(), ops.forward.end(), [](const LayerOp& op) {
    return op.kernel.kind == OpKind::fused_attention;
  });
  REQUIRE(fused != ops.forward.end());
  CHECK(fused->kernel.head_dim == 128.0);
  CHECK(fused->kernel.seq_len == kS);
  CHECK_FALSE(has(ops.forward, "softmax"));
}

TEST_CASE("tensor parallelism without SP all-reduces s·b·h activations twice forward and twice backward") {
  const LayerOps ops = transformer_layer_ops(gpt3(Attention::flash), tp8());
  CHECK(count(ops.forward, Collective::all_reduce) == 2);
  CHECK(count(ops.backward, Collective::all_reduce) == 2);
  for (const LayerOp& op : ops.forward) {
    if (op.communication) CHECK(op.comm.bytes == 2 * kS * kH);  // bf16
  }
}

TEST_CASE("sequence parallelism replaces each all-reduce by an all-gather and a reduce-scatter") {
  const LayerOps ops = transformer_layer_ops(gpt3(Attention::flash), tp8(true));
  CHECK(count(ops.forward, Collective::all_reduce) == 0);
  CHECK(count(ops.forward, Collective::all_gather) == 2);
  CHECK(count(ops.forward, Collective::reduce_scatter) == 2);
  CHECK(count(ops.backward, Collective::all_gather) == 2);
  CHECK(count(ops.backward, Collective::reduce_scatter) == 2);
  // Norms then touch s/t tokens: 2 (read + write) · 2 bytes · s·h/8.
  CHECK(ops.forward.front().name == "ln1");
  CHECK(ops.forward.front().kernel.bytes == 4 * kS * kH / 8);
}

namespace {

// The names of `n` ops of `list` from the one named `first` on.
std::vector<std::string> names_from(const std::vector<LayerOp>& list, const std::string& first,
                                    std::size_t n) {
  auto it = std::find_if(list.begin(), list.end(), [&](const LayerOp& op) { return op.name == first; });
  std::vector<std::string> out;
  for (; it != list.end() && out.size() < n; ++it) out.push_back(it->name);
  return out;
}

}  // namespace

TEST_CASE("under fp8, sequence parallelism gathers each GEMM input in fp8, cast on the rank's own shard") {
  // GPT-3's h = 12288, s = 2048 on tp 8: each gathered GEMM input is s·h elements, a rank's shard s·h/8.
  // Transformer Engine casts the shard (read 2 bytes, write 1), gathers one byte per element and transposes
  // the gathered tensor for the other pass's GEMM (read 1, write 1); a bf16 step gathers 2 bytes.
  Shard sh = tp8(true);
  sh.precision = Precision::fp8;
  const LayerOps ops = transformer_layer_ops(gpt3(Attention::flash), sh);
  const double shard_cast = 3 * kS * kH / 8, gathered = kS * kH, transpose = 2 * kS * kH;
  CHECK(names_from(ops.forward, "qkv.fp8_cast", 4) ==
        std::vector<std::string>{"qkv.fp8_cast", "tp_all_gather", "qkv", "qkv.fp8_transpose"});
  CHECK(names_from(ops.forward, "fc1.fp8_cast", 4) ==
        std::vector<std::string>{"fc1.fp8_cast", "tp_all_gather", "fc1", "fc1.fp8_transpose"});
  CHECK(names_from(ops.backward, "fc2.grad_fp8_cast", 5) ==
        std::vector<std::string>{"fc2.grad_fp8_cast", "tp_all_gather", "fc2.dgrad", "fc2.grad_fp8_transpose",
                                 "fc2.wgrad"});
  CHECK(names_from(ops.backward, "out_proj.grad_fp8_cast", 5) ==
        std::vector<std::string>{"out_proj.grad_fp8_cast", "tp_all_gather", "out_proj.dgrad",
                                 "out_proj.grad_fp8_transpose", "out_proj.wgrad"});
  for (const std::string name : {"qkv.fp8_cast", "fc1.fp8_cast"}) {
    CHECK(op_named(ops.forward, name).kernel.bytes == doctest::Approx(shard_cast).epsilon(1e-12));
  }
  for (const std::string name : {"fc2.grad_fp8_cast", "out_proj.grad_fp8_cast"}) {
    CHECK(op_named(ops.backward, name).kernel.bytes == doctest::Approx(shard_cast).epsilon(1e-12));
  }
  for (const std::string name : {"qkv.fp8_transpose", "fc1.fp8_transpose"}) {
    CHECK(op_named(ops.forward, name).kernel.bytes == doctest::Approx(transpose).epsilon(1e-12));
  }
  CHECK(op_named(ops.backward, "fc2.grad_fp8_transpose").kernel.bytes ==
        doctest::Approx(transpose).epsilon(1e-12));
  for (const auto* list : {&ops.forward, &ops.backward}) {
    for (const LayerOp& op : *list) {
      if (op.communication && op.comm.collective == Collective::all_gather) CHECK(op.comm.bytes == gathered);
    }
  }
  // The GEMMs after a gather take fp8 input as it is: 1 byte per input element, not cast again.
  CHECK_FALSE(has(ops.forward, "out_proj.fp8_transpose"));
  CHECK(has(ops.forward, "out_proj.fp8_cast"));  // its input is this rank's own, no gather
  CHECK(has(ops.backward, "fc1.grad_fp8_cast"));
  // bf16: the gathers move 2 bytes per element and nothing is cast.
  const LayerOps bf16 = transformer_layer_ops(gpt3(Attention::flash), tp8(true));
  for (const LayerOp& op : bf16.forward) {
    if (op.communication && op.comm.collective == Collective::all_gather)
      CHECK(op.comm.bytes == 2 * gathered);
  }
}

TEST_CASE("one tensor-parallel rank issues no collectives") {
  Shard sh;
  const LayerOps ops = transformer_layer_ops(gpt3(Attention::flash), sh);
  CHECK(std::none_of(ops.forward.begin(), ops.forward.end(),
                     [](const LayerOp& op) { return op.communication; }));
}

TEST_CASE("full recompute runs the whole forward again before the backward") {
  const LayerOps plain = transformer_layer_ops(gpt3(Attention::standard), tp8());
  const LayerOps full = transformer_layer_ops(gpt3(Attention::standard), tp8(false, Recompute::full));
  CHECK(full.backward_flops() ==
        doctest::Approx(plain.backward_flops() + plain.forward_flops()).epsilon(1e-12));
  CHECK(full.backward.front().name == "recompute.ln1");
  CHECK(count(full.backward, Collective::all_reduce) == 4);
}

TEST_CASE("selective recompute reruns the standard attention core, and nothing under flash") {
  const LayerOps standard = transformer_layer_ops(gpt3(Attention::standard), tp8(true, Recompute::selective));
  CHECK(has(standard.backward, "recompute.qk"));
  CHECK(has(standard.backward, "recompute.softmax"));
  CHECK(has(standard.backward, "recompute.av"));
  const LayerOps flash = transformer_layer_ops(gpt3(Attention::flash), tp8(true, Recompute::selective));
  const LayerOps none = transformer_layer_ops(gpt3(Attention::flash), tp8(true));
  CHECK(flash.backward.size() == none.backward.size());
}

TEST_CASE("context parallelism streams K/V blocks around a ring of cp - 1 steps, overlapped") {
  TransformerSpec s = gpt3(Attention::flash);
  s.seq_len = 8192;
  Shard sh = tp8();
  sh.cp = 4;
  const LayerOps ops = transformer_layer_ops(s, sh);
  REQUIRE(count(ops.forward, Collective::ring_exchange) == 1);
  const auto ring = std::find_if(ops.forward.begin(), ops.forward.end(), [](const LayerOp& op) {
    return op.communication && op.comm.collective == Collective::ring_exchange;
  });
  // One rank's K and V: 2 · 2 bytes · 2048 tokens · 12 heads · 128.
  CHECK(ring->comm.bytes == 2.0 * 2 * 2048 * 12 * 128);
  CHECK(ring->comm.steps == 3);
  CHECK(ring->comm.overlappable);
  CHECK(ring->comm.group == CommGroup::cp);
  CHECK(count(ops.backward, Collective::ring_exchange) == 1);
}

TEST_CASE("expert parallelism dispatches and combines tokens with all-to-alls") {
  TransformerSpec s = gpt3(Attention::flash);
  s.experts = 8;
  s.top_k = 2;
  Shard sh = tp8();
  sh.ep = 4;
  const LayerOps ops = transformer_layer_ops(s, sh);
  CHECK(count(ops.forward, Collective::all_to_all) == 2);
  CHECK(count(ops.backward, Collective::all_to_all) == 2);
  CHECK(has(ops.forward, "router"));
  sh.ep = 3;
  CHECK_THROWS_AS((void)transformer_layer_ops(s, sh), trainsim::InputError);
}

TEST_CASE("under sequence parallelism each rank sends its own tokens' slots and tp gathers what arrives") {
  // Megatron-Core's all-to-all dispatcher: GPT-3 175B made MoE (8 experts, top 2), tp 8 with sequence
  // parallelism, ep 4, one sequence of 2,048 tokens. A rank routes its 2048/8 tokens: it sends 2 bytes ·
  // 256 · 2 slots · 12288 over ep, the tp group all-gathers the 2 · 2048 · 2 · 12288 bytes of slots its
  // experts received and reduce-scatters them after; no gather of the block's input (no shared experts).
  TransformerSpec s = gpt3(Attention::flash);
  s.experts = 8;
  s.top_k = 2;
  Shard sh = tp8(true);
  sh.ep = 4;
  const LayerOps ops = transformer_layer_ops(s, sh);
  auto op = [&](const std::vector<LayerOp>& list, const std::string& name) {
    const auto it = std::find_if(list.begin(), list.end(), [&](const LayerOp& o) { return o.name == name; });
    REQUIRE_MESSAGE(it != list.end(), name);
    return *it;
  };
  const double slots = 2.0 * kS * 2 * kH;
  CHECK(op_named(ops.forward, "ep_dispatch").comm.bytes == slots / 8);
  CHECK(op_named(ops.forward, "ep_combine").comm.bytes == slots / 8);
  CHECK(op_named(ops.forward, "ep_dispatch.tp_all_gather").comm.bytes == slots);
  CHECK(op_named(ops.forward, "ep_combine.tp_reduce_scatter").comm.bytes == slots);
  CHECK(op_named(ops.backward, "ep_dispatch.bwd").comm.bytes == slots / 8);
  // The attention block's sequence-parallel gather and reduce-scatter stay; the MoE block adds none.
  CHECK(count(ops.forward, Collective::all_gather) == 2);
  CHECK(count(ops.forward, Collective::reduce_scatter) == 2);
  // Without sequence parallelism every tp rank holds all tokens and sends all their slots.
  const LayerOps replicated = transformer_layer_ops(s, [&] {
    Shard x = sh;
    x.sequence_parallel = false;
    return x;
  }());
  CHECK(op(replicated.forward, "ep_dispatch").comm.bytes == slots);
  CHECK_FALSE(has(replicated.forward, "ep_dispatch.tp_all_gather"));
}

TEST_CASE("the LM head computes 2·s·b·h·v/t forward and its dgrad and wgrad backward") {
  const LayerOps head = head_ops(gpt3(Attention::flash), tp8());
  CHECK(head.forward_flops() == 2 * kS * kH * 51200 / 8);
  CHECK(head.backward_flops() == 2 * head.forward_flops());
  CHECK(count(head.forward, Collective::all_reduce) == 1);  // vocab-parallel loss statistics
  CHECK(count(head.backward, Collective::all_reduce) == 1);
  const LayerOps embedding = embedding_ops(gpt3(Attention::flash), tp8(true));
  CHECK(embedding.forward_flops() == 0.0);
  CHECK(count(embedding.forward, Collective::reduce_scatter) == 1);
}

TEST_CASE("a generic layer is one kernel forward and one of twice its size backward") {
  const GenericLayer layer{"conv", 1e6, 4e9, 1e8};
  Shard sh;
  sh.micro_batch = 2;
  sh.recompute = Recompute::full;
  const LayerOps ops = generic_layer_ops(layer, sh);
  CHECK(ops.forward_flops() == 8e9);
  CHECK(ops.backward_flops() == 8e9 + 16e9);
}

namespace {

double bytes_of(const std::vector<LayerOp>& ops, const std::string& name) {
  const auto it = std::find_if(ops.begin(), ops.end(), [&](const LayerOp& op) { return op.name == name; });
  REQUIRE(it != ops.end());
  return it->kernel.bytes;
}

// One Llama-3 8B layer (RMSNorm, SwiGLU, rotary; 32 heads of 128, 8 K/V heads, ffn 14336), no dropout,
// 8,192 tokens.
TransformerSpec llama3_8b_layer() {
  TransformerSpec m = trainsim::testing::llama(1, 4096, 32, 8, 14336, 128256);
  m.dropout = 0;
  return m;
}

}  // namespace

TEST_CASE("eager element-wise ops move the bytes of their op lists; fused ones one pass in and out") {
  // A Llama layer (RMSNorm, SwiGLU, rotary positions) of hidden 4096, 32 heads, 8 K/V heads, ffn 14336,
  // one sequence of 8192 tokens on one rank, bf16 (p = 2). T·h = 8192·4096 elements per norm; q and k:
  // 8192·(4096 + 1024); the SwiGLU works on T·ffn elements; the head on T·vocab logits.
  const TransformerSpec m = llama3_8b_layer();
  const double th = 8192.0 * 4096, qk = 8192.0 * (4096 + 1024), tf = 8192.0 * 14336;
  const double logits = 8192.0 * static_cast<double>(m.vocab);
  Shard fused;
  const LayerOps f = transformer_layer_ops(m, fused);
  CHECK(bytes_of(f.forward, "ln1") == doctest::Approx(4 * th).scale(0));
  CHECK(bytes_of(f.forward, "rope") == doctest::Approx(4 * qk).scale(0));
  CHECK(bytes_of(f.forward, "swiglu") == doctest::Approx(6 * tf).scale(0));
  CHECK(bytes_of(f.backward, "swiglu.bwd") == doctest::Approx(9 * tf).scale(0));
  CHECK(bytes_of(head_ops(m, fused).forward, "cross_entropy") == doctest::Approx(6 * logits).scale(0));

  Shard eager;
  eager.fused_elementwise = false;
  const LayerOps e = transformer_layer_ops(m, eager);
  // RMSNorm: cast 6 + pow 8 + mean 4 + multiply 8 + cast back 6 + weight 4 = 36 B per element; its
  // backward 40 + 5·2 = 50.
  CHECK(bytes_of(e.forward, "ln1") == doctest::Approx(36 * th).scale(0));
  CHECK(bytes_of(e.backward, "ln1.bwd") == doctest::Approx(50 * th).scale(0));
  // Rotary on complex fp32: cast 6 + multiply 8 + cast back 6 = 20 B per element, each way.
  CHECK(bytes_of(e.forward, "rope") == doctest::Approx(20 * qk).scale(0));
  CHECK(bytes_of(e.backward, "rope.bwd") == doctest::Approx(20 * qk).scale(0));
  // SwiGLU: silu 4 + multiply 6 = 10 B per element; backward 16.
  CHECK(bytes_of(e.forward, "swiglu") == doctest::Approx(10 * tf).scale(0));
  CHECK(bytes_of(e.backward, "swiglu.bwd") == doctest::Approx(16 * tf).scale(0));
  // Cross-entropy on fp32 logits: cast 6 + log_softmax 8 = 14 forward, 4 + 12 + 6 = 22 backward.
  const LayerOps head = head_ops(m, eager);
  CHECK(bytes_of(head.forward, "cross_entropy") == doctest::Approx(14 * logits).scale(0));
  CHECK(bytes_of(head.backward, "cross_entropy.bwd") == doctest::Approx(22 * logits).scale(0));
  // The GEMMs are the same kernels either way.
  CHECK(e.forward_flops() == doctest::Approx(f.forward_flops()).scale(0));
}

TEST_CASE("clamped SwiGLU inputs add the clamps' passes over the fc1 output, as Megatron-Core runs them") {
  // The Llama layer above with swiglu_limit (GPT-OSS's 7.0): T·ffn = 8192·14336 elements, p = 2. Fused,
  // Megatron-Core clamps both halves (read and write 2·ffn: 4p) and concatenates them again (4p) before
  // its kernel: 6 + 16 = 22 B per element forward; backward the clamps' masks (6p) and the halves'
  // gradients joined (4p): 9 + 20 = 29. Eager code clamps without the cat: 10 + 8 = 18 forward, 16 + 20.
  TransformerSpec m = llama3_8b_layer();
  m.swiglu_limit = 7.0;
  const double tf = 8192.0 * 14336;
  const LayerOps f = transformer_layer_ops(m, Shard{});
  CHECK(bytes_of(f.forward, "swiglu") == doctest::Approx(22 * tf).scale(0));
  CHECK(bytes_of(f.backward, "swiglu.bwd") == doctest::Approx(29 * tf).scale(0));
  Shard eager;
  eager.fused_elementwise = false;
  const LayerOps e = transformer_layer_ops(m, eager);
  CHECK(bytes_of(e.forward, "swiglu") == doctest::Approx(18 * tf).scale(0));
  CHECK(bytes_of(e.backward, "swiglu.bwd") == doctest::Approx(36 * tf).scale(0));
  // No FLOPs: the GEMMs are those of the unclamped layer.
  CHECK(f.forward_flops() ==
        doctest::Approx(transformer_layer_ops(llama3_8b_layer(), Shard{}).forward_flops()));
}

TEST_CASE("experts with biases add fc2's probability-weighted bias in eager passes over the fc2 output") {
  // The four-expert MoE at ep 2: the rank's 2,048 slots of h = 512 at p = 2 make one pass over the fc2
  // output 2·2,048·512 = 2,097,152 bytes. Forward b·p written (1), t + b·p read and written (3), the cat
  // (2) = 6 passes; backward the split's gradients joined (2) and the two reductions (3 each) = 8.
  TransformerSpec m = trainsim::testing::four_expert_moe();
  Shard s;
  s.ep = 2;
  m.bias = true;
  const double pass = 2.0 * 2048 * 512;
  const LayerOps with = transformer_layer_ops(m, s);
  CHECK(bytes_of(with.forward, "expert_bias") == doctest::Approx(6 * pass).scale(0));
  CHECK(bytes_of(with.backward, "expert_bias.bwd") == doctest::Approx(8 * pass).scale(0));
  // Eager, expert by expert over the rank's 2 experts: a multiply and an add each, then the cat: 2·2 + 1 = 5
  // kernels; backward the multiply's two gradients (a multiply and a reduction each) and the bias's main_grad
  // add for each expert, then the two splits' cats: 5·2 + 2 = 12.
  CHECK(op_named(with.forward, "expert_bias").kernel.kernels == 5);
  CHECK(op_named(with.backward, "expert_bias.bwd").kernel.kernels == 12);
  // The fused grouped MLP takes the bias inside its op: one kernel each way, the same bytes.
  s.fused_grouped_mlp = true;
  s.precision = trainsim::topo::Precision::fp8;
  const LayerOps fused = transformer_layer_ops(m, s);
  CHECK(op_named(fused.forward, "expert_bias").kernel.kernels == 1);
  CHECK(op_named(fused.backward, "expert_bias.bwd").kernel.kernels == 1);
  CHECK(bytes_of(fused.forward, "expert_bias") == doctest::Approx(6 * pass).scale(0));  // 16-bit under fp8
  s = Shard{};
  s.ep = 2;
  m.bias = false;
  const LayerOps without = transformer_layer_ops(m, s);
  CHECK_FALSE(has(without.forward, "expert_bias"));
  CHECK_FALSE(has(without.backward, "expert_bias.bwd"));
}

TEST_CASE("unpadded attention copies q, k, v and the output around the kernel, as flash_attn_fn does") {
  // Llama 3 8B's layer, one sequence of 8192 tokens, bf16: q and the output are 8192·4096 elements, k and
  // v 8192·1024 each (8 K/V heads of 128). Forward: unpad gathers q, k, v (read + write: 2 passes), pad
  // zeroes, then scatters the output (3 passes). Backward: the output gradient gathered (2), dq, dk, dv
  // scattered into zeroed tensors (3) and concatenated into the Wqkv gradient (2).
  const TransformerSpec m = llama3_8b_layer();
  const double qkv = 2.0 * 8192 * (4096 + 2 * 1024), o = 2.0 * 8192 * 4096;
  Shard plain;
  const LayerOps without = transformer_layer_ops(m, plain);
  CHECK_FALSE(has(without.forward, "attn_unpad"));
  Shard wrapped;
  wrapped.unpadded_attention = true;
  const LayerOps with = transformer_layer_ops(m, wrapped);
  CHECK(bytes_of(with.forward, "attn_unpad") == doctest::Approx(2 * qkv).scale(0));
  CHECK(bytes_of(with.forward, "attn_pad") == doctest::Approx(3 * o).scale(0));
  CHECK(bytes_of(with.backward, "attn_pad.bwd") == doctest::Approx(2 * o).scale(0));
  CHECK(bytes_of(with.backward, "attn_unpad.bwd") == doctest::Approx(5 * qkv).scale(0));
  // Copies, not compute: the FLOPs are unchanged, and full recompute copies again.
  CHECK(with.forward_flops() == doctest::Approx(without.forward_flops()).scale(0));
  wrapped.recompute = Recompute::full;
  CHECK(has(transformer_layer_ops(m, wrapped).backward, "recompute.attn_unpad"));
  // Without a fused kernel there is no varlen call to wrap.
  TransformerSpec standard = m;
  standard.attention = Attention::standard;
  wrapped.recompute = Recompute::none;
  CHECK_FALSE(has(transformer_layer_ops(standard, wrapped).forward, "attn_unpad"));
}

TEST_CASE("context parallelism with all-gathered K/V: blocking collectives and one kernel over every key") {
  // Llama 3 8B's layer, one sequence of 8192 tokens over cp 2, bf16: K and V of the whole sequence are
  // 2 B · 8192 · 8 heads · (128 + 128) = 33,554,432 bytes, gathered before the forward's kernel and again
  // before the backward's, whose K/V gradients are reduce-scattered after it.
  const TransformerSpec m = llama3_8b_layer();
  const double kv = 2.0 * 8192 * 8 * 256;
  auto find = [](const std::vector<LayerOp>& ops, const std::string& name) {
    const auto it = std::find_if(ops.begin(), ops.end(), [&](const LayerOp& op) { return op.name == name; });
    REQUIRE(it != ops.end());
    return *it;
  };
  Shard ring;
  ring.cp = 2;
  const LayerOps r = transformer_layer_ops(m, ring);
  CHECK(find(r.forward, "cp_kv_exchange").comm.overlappable);
  CHECK(find(r.forward, "flash_attention").kernel.attention.ring_steps == 2);
  CHECK_FALSE(has(r.forward, "cp_kv_all_gather"));

  Shard gather = ring;
  gather.cp_kv_all_gather = true;
  const LayerOps g = transformer_layer_ops(m, gather);
  const LayerOp fwd = find(g.forward, "cp_kv_all_gather");
  CHECK(fwd.comm.collective == Collective::all_gather);
  CHECK(fwd.comm.group == CommGroup::cp);
  CHECK(fwd.comm.bytes == doctest::Approx(kv).scale(0));
  CHECK_FALSE(fwd.comm.overlappable);
  CHECK(find(g.backward, "cp_kv_all_gather.bwd").comm.bytes == doctest::Approx(kv).scale(0));
  const LayerOp grads = find(g.backward, "cp_kv_grad_reduce_scatter");
  CHECK(grads.comm.collective == Collective::reduce_scatter);
  CHECK(grads.comm.bytes == doctest::Approx(kv).scale(0));
  // One kernel over all keys: no ring steps, no merging of partial softmaxes.
  CHECK(find(g.forward, "flash_attention").kernel.attention.ring_steps == 1);
  CHECK(find(g.backward, "flash_attention.bwd").kernel.attention.ring_steps == 1);
  CHECK_FALSE(has(g.forward, "cp_kv_exchange"));
  CHECK_FALSE(has(g.forward, "cp_softmax_merge"));
  CHECK_FALSE(has(g.backward, "cp_grad_merge"));
  CHECK(g.forward_flops() == doctest::Approx(r.forward_flops()).scale(0));
}

TEST_CASE("op-level recompute runs k, o and the MLP's second matmul again, with the element-wise work") {
  // torchtitan's policy over q, k, v, o, w1, w3, w2: every other matmul is recomputed (k, o, w3), the
  // norms, rotary, SwiGLU and residuals with them; q, v, w1, w2 and the fused attention are kept.
  const TransformerSpec m = llama3_8b_layer();
  Shard op;
  op.recompute = Recompute::op;
  const LayerOps ops = transformer_layer_ops(m, op);
  for (const char* name : {"recompute.ln1", "recompute.k", "recompute.rope", "recompute.out_proj",
                           "recompute.ln2", "recompute.fc1_up", "recompute.swiglu"}) {
    CAPTURE(name);
    CHECK(has(ops.backward, name));
  }
  CHECK_FALSE(has(ops.backward, "recompute.flash_attention"));
  CHECK_FALSE(has(ops.backward, "recompute.qkv"));
  double recomputed = 0;
  for (const LayerOp& x : ops.backward) {
    if (x.name.starts_with("recompute.") && !x.communication) recomputed += x.kernel.flops;
  }
  // 2·T·(h·1024 + 4096·h + h·14336) for T = 8192 tokens, h = 4096.
  const double want = 2.0 * 8192 * 4096 * (1024.0 + 4096 + 14336);
  CHECK(recomputed == doctest::Approx(want).scale(0));
  // The model-level count agrees: one layer, one sequence.
  CHECK(op_recomputed_matmul_flops(m) == doctest::Approx(want).scale(0));
}

TEST_CASE("a MoE layer permutes its slots around the experts, as Megatron-Core's dispatcher does") {
  // 4 experts, top 2, capacity factor 1, ep 2 (2 experts on the rank), tp 1, bf16: T = 1,024 tokens of
  // h = 512, so the rank's slots are T·k = 2,048 rows of h, p·T·k·h = 2·2,048·512 = 2,097,152 bytes.
  const TransformerSpec m = trainsim::testing::four_expert_moe();
  Shard s;
  s.ep = 2;
  const LayerOps ops = transformer_layer_ops(m, s);
  const auto bytes = [](const std::vector<LayerOp>& list, const std::string& name) {
    return op_named(list, name).kernel.bytes;
  };
  const double slots = 2.0 * 1024 * 2 * 512;                           // p · T · k · h
  const double tokens = 2.0 * 1024 * 512;                              // p · T · h
  CHECK(bytes(ops.forward, "permute") == doctest::Approx(2 * slots));  // read and write each slot
  CHECK(bytes(ops.forward, "sort_chunks") == doctest::Approx(2 * slots));
  CHECK(bytes(ops.forward, "unsort_chunks") == doctest::Approx(2 * slots));
  CHECK(bytes(ops.forward, "unpermute") == doctest::Approx(slots + tokens));  // read slots, write tokens
  CHECK(bytes(ops.backward, "permute.bwd") == doctest::Approx(2 * slots));
  CHECK(bytes(ops.backward, "unpermute.bwd") == doctest::Approx(slots + tokens));
  // One rank holding every expert receives nothing to sort.
  s.ep = 1;
  const LayerOps alone = transformer_layer_ops(m, s);
  CHECK(std::none_of(alone.forward.begin(), alone.forward.end(),
                     [](const LayerOp& op) { return op.name == "sort_chunks"; }));
  CHECK(bytes(alone.forward, "permute") == doctest::Approx(2 * slots));
}

TEST_CASE("the flex dispatcher permutes only at the receiver, from one row per token and destination GPU") {
  // The layer above under DeepEP or HybridEP: no permute before the dispatch, no chunk sort, no unpermute
  // after the combine. A token's 2 slots land on experts of 2 GPUs; with each slot's expert drawn on its own
  // (expected_other_destinations' balanced formula) a GPU is missed with probability (1/2)^2, so a token
  // reaches 2·(1 − 1/4) = 1.5 GPUs and a rank receives 1,024 · 1.5 rows of p·h bytes.
  // The receiver reads each row once and writes its 2,048 slots, and the reverse before the combine.
  const TransformerSpec m = trainsim::testing::four_expert_moe();
  Shard s;
  s.ep = 2;
  s.moe_token_dispatch = true;
  const LayerOps ops = transformer_layer_ops(m, s);
  const double slots = 2.0 * 1024 * 2 * 512;       // p · T · k · h
  const double received = 2.0 * 1024 * 1.5 * 512;  // p · T · 1.5 · h
  const auto bytes = [](const std::vector<LayerOp>& list, const std::string& name) {
    return op_named(list, name).kernel.bytes;
  };
  CHECK(bytes(ops.forward, "permute") == doctest::Approx(received + slots));
  CHECK(bytes(ops.forward, "unpermute") == doctest::Approx(slots + received));
  CHECK(bytes(ops.backward, "unpermute.bwd") == doctest::Approx(received + slots));
  CHECK(bytes(ops.backward, "permute.bwd") == doctest::Approx(slots + received));
  for (const char* absent : {"sort_chunks", "unsort_chunks"}) CHECK_FALSE(has(ops.forward, absent));
  // The permute follows the dispatch and the unpermute precedes the combine.
  const auto at = [&](const std::string& name) {
    return std::find_if(ops.forward.begin(), ops.forward.end(),
                        [&](const LayerOp& op) { return op.name == name; });
  };
  CHECK(at("ep_dispatch") < at("permute"));
  CHECK(at("unpermute") < at("ep_combine"));
}

TEST_CASE("a MoE layer's router runs its other kernels as one op of their count, with one pass of scores") {
  // The layer above (T = 1,024 tokens, 4 experts) with Megatron-Core's 31 router kernels: the router GEMM
  // and 30 more, which read fp32 logits and write fp32 probabilities and a boolean map over T·E:
  // (4 + 4 + 1) · 1,024 · 4 bytes. Under a flex dispatcher 17, so 16 beside the GEMM; with 1, no op.
  const TransformerSpec m = trainsim::testing::four_expert_moe();
  Shard s;
  s.ep = 2;
  s.moe_router_kernels = moe_router_kernels(Framework{});
  REQUIRE(s.moe_router_kernels == 31);
  const LayerOps ops = transformer_layer_ops(m, s);
  const LayerOp& rest = op_named(ops.forward, "router_ops");
  CHECK(rest.kernel.kind == OpKind::memory_bound);
  CHECK(rest.kernel.kernels == 30);
  CHECK(rest.kernel.bytes == doctest::Approx(9.0 * 1024 * 4));
  Framework flex;
  flex.moe_dispatcher = MoeDispatcher::deepep;
  CHECK(moe_router_kernels(flex) == 17);
  flex.router_kernels = 72;  // no --moe-router-fusion
  CHECK(moe_router_kernels(flex) == 58);
  CHECK(moe_router_kernels(framework_preset(FrameworkPreset::torchtitan)) == 1);
  ParallelPlan hybridep;
  hybridep.framework.moe_dispatcher = MoeDispatcher::hybridep;
  CHECK(shard_of(hybridep, trainsim::topo::Precision::bf16).moe_router_kernels == 17);
  s.moe_router_kernels = 1;
  CHECK_FALSE(has(transformer_layer_ops(m, s).forward, "router_ops"));
  // Each of its kernels pays the GPU's kernel overhead once: 29 overheads more than one kernel of the same
  // bytes.
  const trainsim::topo::GpuSpec gpu = trainsim::testing::h100_sxm();
  KernelCost one = rest.kernel;
  one.kernels = 1;
  CHECK(kernel_time(rest.kernel, gpu, trainsim::topo::Precision::bf16) -
            kernel_time(one, gpu, trainsim::topo::Precision::bf16) ==
        doctest::Approx(29 * gpu.efficiency.kernel_overhead_s));
}

TEST_CASE("the fp8 recipe sets a cast's kernels: per expert but under delayed scaling, three under current") {
  // The four-expert MoE at ep 2 in fp8: 2 local experts; fc1's input is the rank's 2,048 slots × h = 512,
  // cast reading p = 2 bytes and writing two 1-byte copies: 4 · 2,048 · 512 bytes.
  const TransformerSpec m = trainsim::testing::four_expert_moe();
  Shard s;
  s.ep = 2;
  s.precision = trainsim::topo::Precision::fp8;
  const double cast = 4.0 * 2048 * 512;
  const auto fc1_cast = [&](Fp8Recipe recipe) {
    s.fp8_recipe = recipe;
    return op_named(transformer_layer_ops(m, s).forward, "fc1.fp8_cast").kernel;
  };
  // Delayed scaling: TransformerEngine's multi-tensor cast_transpose, one kernel for both experts.
  CHECK(fc1_cast(Fp8Recipe::delayed).groups == 1);
  CHECK(fc1_cast(Fp8Recipe::delayed).bytes == doctest::Approx(cast));
  // MXFP8 and blockwise: one quantize an expert, the same bytes.
  for (const Fp8Recipe r : {Fp8Recipe::mxfp8, Fp8Recipe::blockwise}) {
    CHECK(fc1_cast(r).groups == 2);
    CHECK(fc1_cast(r).bytes == doctest::Approx(cast));
  }
  // Current scaling: amax, scale and cast for each expert (6 kernels), the amax reading the input again:
  // (2p + 2) · 2,048 · 512.
  CHECK(fc1_cast(Fp8Recipe::tensorwise).groups == 6);
  CHECK(fc1_cast(Fp8Recipe::tensorwise).bytes == doctest::Approx(6.0 * 2048 * 512));
  // The backward's gradient casts follow the same rule.
  s.fp8_recipe = Fp8Recipe::mxfp8;
  CHECK(op_named(transformer_layer_ops(m, s).backward, "fc2.grad_fp8_cast").kernel.groups == 2);
  // A dense GEMM's cast is one tensor: one kernel, three under current scaling.
  CHECK(op_named(transformer_layer_ops(m, s).forward, "qkv.fp8_cast").kernel.groups == 1);
  s.fp8_recipe = Fp8Recipe::tensorwise;
  CHECK(op_named(transformer_layer_ops(m, s).forward, "qkv.fp8_cast").kernel.groups == 3);
  // The fused grouped MLP quantizes its grouped input as one tensor.
  s.fp8_recipe = Fp8Recipe::mxfp8;
  s.fused_grouped_mlp = true;
  CHECK(op_named(transformer_layer_ops(m, s).forward, "fc1.fp8_cast").kernel.groups == 1);
}

TEST_CASE("the fused grouped MLP drops the activation's passes and fc2's and fc1's gradient casts") {
  // The layer above in fp8 (ep 2: 2 local experts of 1,024 slots each, h = 512, ffn 1,024, GELU). The
  // unfused experts cast fc2's input (slots × ffn) and fc1's output gradient (slots × ffn) to fp8, each
  // reading p = 2 bytes and writing two 1-byte copies: 4 · 2,048 · 1,024 bytes; the fused kernels write
  // both in their epilogues, and run the activation and its backward there too.
  const TransformerSpec m = trainsim::testing::four_expert_moe();
  Shard s;
  s.ep = 2;
  s.precision = trainsim::topo::Precision::fp8;
  const LayerOps unfused = transformer_layer_ops(m, s);
  s.fused_grouped_mlp = true;
  const LayerOps fused = transformer_layer_ops(m, s);
  const double cast = 4.0 * 2048 * 1024;
  CHECK(op_named(unfused.forward, "fc2.fp8_cast").kernel.bytes == doctest::Approx(cast));
  CHECK(op_named(unfused.backward, "fc1.grad_fp8_cast").kernel.bytes == doctest::Approx(cast));
  for (const char* gone : {"gelu", "fc2.fp8_cast"}) CHECK_FALSE(has(fused.forward, gone));
  for (const char* gone : {"gelu.bwd", "fc1.grad_fp8_cast"}) CHECK_FALSE(has(fused.backward, gone));
  // fc1's input and fc2's output gradient still arrive in 16 bit and are cast as before.
  CHECK(has(fused.forward, "fc1.fp8_cast"));
  CHECK(has(fused.backward, "fc2.grad_fp8_cast"));
  // The same GEMMs, and nothing else removed.
  const auto totals = [](const std::vector<LayerOp>& ops, OpKind kind) {
    double flops = 0, bytes = 0;
    for (const LayerOp& op : ops) {
      if (op.communication || op.kernel.kind != kind) continue;
      flops += op.kernel.flops;
      bytes += op.kernel.bytes;
    }
    return std::pair{flops, bytes};
  };
  CHECK(totals(fused.forward, OpKind::matmul).first == totals(unfused.forward, OpKind::matmul).first);
  CHECK(totals(fused.backward, OpKind::matmul).first == totals(unfused.backward, OpKind::matmul).first);
  // The fused GELU reads the fc1 output and writes its activation, 2p per element of the 2,048 × 1,024 fc1
  // output; its backward moves 1.5 times that (the element-wise backward's traffic ratio).
  const double act = 2.0 * 2 * 2048 * 1024;
  const double act_bwd = 1.5 * act;
  CHECK(op_named(unfused.forward, "gelu").kernel.bytes == doctest::Approx(act));
  CHECK(op_named(unfused.backward, "gelu.bwd").kernel.bytes == doctest::Approx(act_bwd));
  CHECK(totals(unfused.forward, OpKind::memory_bound).second -
            totals(fused.forward, OpKind::memory_bound).second ==
        doctest::Approx(act + cast));
  CHECK(totals(unfused.backward, OpKind::memory_bound).second -
            totals(fused.backward, OpKind::memory_bound).second ==
        doctest::Approx(act_bwd + cast));
  // Op-level recompute runs fc2 again but no activation pass: the fused kernel has none to repeat.
  s.recompute = Recompute::op;
  const LayerOps op_fused = transformer_layer_ops(m, s);
  const std::string redo = std::string(kRecomputePrefix);
  CHECK(has(op_fused.backward, redo + "fc2"));
  CHECK_FALSE(has(op_fused.backward, redo + "gelu"));
  s.fused_grouped_mlp = false;
  CHECK(has(transformer_layer_ops(m, s).backward, redo + "gelu"));
}

TEST_CASE("per-module recompute runs each named module's forward again and keeps none of its insides") {
  // A dense GPT layer (gelu MLP of 4h), tp 1, T = 1,024 tokens of h = 512, bf16.
  const TransformerSpec m = trainsim::testing::gpt(2, 512, 8, 1024);
  const double T = 1024, h = 512, f = 4 * h, p = 2;
  Shard s;
  s.recompute = Recompute::selective;
  const auto recomputed = [](const LayerOps& ops) {
    double flops = 0;
    std::vector<std::string> names;
    for (const LayerOp& op : ops.backward) {
      if (!op.name.starts_with("recompute.")) continue;
      flops += op.communication ? 0.0 : op.kernel.flops;
      names.push_back(op.name);
    }
    return std::pair{flops, names};
  };
  // mlp: fc1 and fc2 again, 2·T·h·f each, and the activation between them.
  s.recompute_modules = static_cast<std::uint8_t>(RecomputeModule::mlp);
  const auto [mlp_flops, mlp_names] = recomputed(transformer_layer_ops(m, s));
  CHECK(mlp_flops == doctest::Approx(2 * (2 * T * h * f)));
  CHECK(mlp_names == std::vector<std::string>{"recompute.fc1", "recompute.gelu", "recompute.fc2"});
  // layernorm: both norms again, no FLOPs of matmuls.
  s.recompute_modules = static_cast<std::uint8_t>(RecomputeModule::layernorm);
  const auto [norm_flops, norm_names] = recomputed(transformer_layer_ops(m, s));
  CHECK(norm_names == std::vector<std::string>{"recompute.ln1", "recompute.ln2"});
  // The default module, the attention core, adds nothing under a fused kernel.
  s.recompute_modules = 0;
  CHECK(recomputed(transformer_layer_ops(m, s)).second.empty());

  // What stops being kept, against selective recompute of the core alone: mlp drops fc1's output and the
  // gelu's (2 · p · T · f); layernorm the two norms' outputs (qkv and fc1 inputs, 2 · p · T · h).
  s.recompute_modules = 0;
  const double core_only = layer_activation(m, s).total();
  s.recompute_modules = static_cast<std::uint8_t>(RecomputeModule::mlp);
  CHECK(core_only - layer_activation(m, s).total() == doctest::Approx(2 * p * T * f));
  s.recompute_modules = static_cast<std::uint8_t>(RecomputeModule::layernorm);
  CHECK(core_only - layer_activation(m, s).total() == doctest::Approx(2 * p * T * h));
}

TEST_CASE("mla_up_proj recomputes MLA's up-projections and rotary from the kept latents") {
  TransformerSpec m = trainsim::testing::gpt(2, 1024, 8, 1024);
  m.q_lora_rank = 256;
  m.kv_lora_rank = 128;
  m.qk_nope_head_dim = 64;
  m.qk_rope_head_dim = 32;
  m.v_head_dim = 64;
  m.position = Position::rope;
  Shard s;
  s.recompute = Recompute::selective;
  s.recompute_modules = static_cast<std::uint8_t>(RecomputeModule::mla_up_proj);
  std::vector<std::string> names;
  double flops = 0;
  for (const LayerOp& op : transformer_layer_ops(m, s).backward) {
    if (!op.name.starts_with("recompute.")) continue;
    names.push_back(op.name);
    flops += op.kernel.flops;
  }
  CHECK(names == std::vector<std::string>{"recompute.q_up", "recompute.kv_up", "recompute.rope"});
  // q_up: T × (8 heads · 96) × 256; kv_up: T × (8 · (64 + 64)) × 128; 2 FLOPs a multiply-add.
  const double T = 1024;
  CHECK(flops == doctest::Approx(2 * T * (8 * 96) * 256 + 2 * T * (8 * 128) * 128));  // rope moves bytes only
  // Q, K and V are not kept: 2 bytes × T × 8 heads × (96 + 96 + 64).
  Shard core_only = s;
  core_only.recompute_modules = 0;
  CHECK(layer_activation(m, core_only).total() - layer_activation(m, s).total() ==
        doctest::Approx(2.0 * T * 8 * (96 + 96 + 64)));
}

TEST_CASE("routing balance sizes the experts' GEMMs and the all-to-all by the busiest rank's load") {
  // 4 experts, top 2, ep 2, tp 1, bf16, gelu: T = 1,024 tokens of h = 512, experts 1,024 wide. Balanced,
  // the rank runs T·k = 2,048 slots: fc1 = 2·2,048·512·1,024 = 2,147,483,648 FLOPs, and its dispatch
  // sends p·T·k·h = 2·2,048·512 = 2,097,152 bytes. A capacity factor of 1.25 sizes both to the capacity
  // (× 1.25: 2,684,354,560 FLOPs, 2,621,440 bytes); dropless with imbalance 1.5 sizes both to the busiest
  // rank (× 1.5: 3,221,225,472 FLOPs, 3,145,728 bytes).
  const TransformerSpec m = trainsim::testing::four_expert_moe();
  Shard s;
  s.ep = 2;
  const auto check = [&](const TransformerSpec& spec, double flops, double bytes) {
    const LayerOps ops = transformer_layer_ops(spec, s);
    CHECK(op_named(ops.forward, "fc1").kernel.flops == doctest::Approx(flops));
    CHECK(op_named(ops.forward, "ep_dispatch").comm.bytes == doctest::Approx(bytes));
    CHECK(op_named(ops.backward, "ep_dispatch.bwd").comm.bytes == doctest::Approx(bytes));
  };
  check(m, 2147483648.0, 2097152.0);
  TransformerSpec capped = m;
  capped.routing = Routing::capacity;
  capped.capacity_factor = 1.25;
  check(capped, 2684354560.0, 2621440.0);
  TransformerSpec dropless = m;
  dropless.routing = Routing::dropless;
  dropless.imbalance = 1.5;
  check(dropless, 3221225472.0, 3145728.0);
  // Dropless ignores a capacity factor (it has none); force-balanced ignores the imbalance.
  dropless.capacity_factor = 3;
  check(dropless, 3221225472.0, 3145728.0);
  TransformerSpec balanced = m;
  balanced.imbalance = 4;
  check(balanced, 2147483648.0, 2097152.0);
  // The busiest rank keeps the activations of its slots: fc1 input p·h and gelu's two p·f per slot.
  const double kept_balanced = layer_activation(m, s).total();
  const double kept_dropless = layer_activation(dropless, s).total();
  CHECK(kept_dropless - kept_balanced == doctest::Approx(0.5 * 2048 * (2.0 * 512 + 2 * 2.0 * 1024)));
}

TEST_CASE("qk_norm: a norm kernel each for the queries and keys, forward and backward, over their elements") {
  // Qwen3-235B's attention at tp 4: 64 query heads and 4 KV heads of 128, 2,048 tokens; a rank holds 16
  // query heads and one KV head: 2,048 x (16 + 1) x 128 = 4,456,448 elements, at the fused norm's 2·p = 4
  // bytes an element forward and 1.5 times that backward.
  TransformerSpec m = trainsim::testing::llama(2, 4096, 64, 4, 12288, 151936);
  m.seq_len = 2048;
  m.head_dim = 128;
  Shard sh;
  sh.tp = 4;
  const LayerOps without = transformer_layer_ops(m, sh);
  CHECK_FALSE(has(without.forward, "qk_norm"));
  m.qk_norm = true;
  const LayerOps ops = transformer_layer_ops(m, sh);
  const double elements = 2048.0 * (16 + 1) * 128;
  const LayerOp& forward = op_named(ops.forward, "qk_norm");
  CHECK(forward.kernel.kind == OpKind::memory_bound);
  CHECK(forward.kernel.kernels == 2);
  CHECK(forward.kernel.bytes == doctest::Approx(4.0 * elements).epsilon(1e-12));
  CHECK(op_named(ops.backward, "qk_norm.bwd").kernel.bytes == doctest::Approx(6.0 * elements).epsilon(1e-12));
  // Before the rotary embedding, which then reads the normalised heads.
  const auto at = [&](const std::string& name) {
    return std::find_if(ops.forward.begin(), ops.forward.end(),
                        [&](const LayerOp& op) { return op.name == name; });
  };
  CHECK(at("qk_norm") < at("rope"));
  // The norm keeps its inputs, Q and K, for its backward: 2 B x 4,456,448 more per layer.
  TransformerSpec plain = m;
  plain.qk_norm = false;
  CHECK(layer_activation(m, sh).total() - layer_activation(plain, sh).total() ==
        doctest::Approx(2.0 * elements).epsilon(1e-12));
}
