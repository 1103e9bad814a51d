// Multi-head latent attention (MLA), shared experts and dense first layers, counted by hand: a small MLA
// layer's parameters, FLOPs and per-rank shapes, and DeepSeek-V3's totals against the published 671B / 37B.
#include "models/workload/attention_projections.hpp"

#include <doctest/doctest.h>

#include <string>

#include "models/workload/flops.hpp"
#include "models/workload/layer_ops.hpp"
#include "models/workload/parameters.hpp"

using namespace trainsim::model;

namespace {

// h 64, 4 heads, q_lora 16, kv_lora 8, nope 8, rope 4, v 8; a dense SwiGLU MLP of 128; 32 tokens.
TransformerSpec small_mla() {
  TransformerSpec m;
  m.name = "small-mla";
  m.layers = 2;
  m.hidden = 64;
  m.heads = 4;
  m.ffn_hidden = 128;
  m.vocab = 100;
  m.seq_len = 32;
  m.mlp = Mlp::swiglu;
  m.norm = Norm::rmsnorm;
  m.position = Position::rope;
  m.bias = false;
  m.dropout = 0;
  m.q_lora_rank = 16;
  m.kv_lora_rank = 8;
  m.qk_nope_head_dim = 8;
  m.qk_rope_head_dim = 4;
  m.v_head_dim = 8;
  return m;
}

// DeepSeek-V3 (arXiv:2412.19437 Sec. 4.2 and its config.json).
TransformerSpec deepseek_v3() {
  TransformerSpec m = small_mla();
  m.name = "deepseek-v3";
  m.layers = 61;
  m.hidden = 7168;
  m.heads = 128;
  m.ffn_hidden = 18432;
  m.vocab = 129280;
  m.seq_len = 4096;
  m.experts = 256;
  m.top_k = 8;
  m.expert_ffn_hidden = 2048;
  m.shared_experts = 1;
  m.dense_layers = 3;
  m.q_lora_rank = 1536;
  m.kv_lora_rank = 512;
  m.qk_nope_head_dim = 128;
  m.qk_rope_head_dim = 64;
  m.v_head_dim = 128;
  return m;
}

double flops_of(const LayerOps& ops, const std::string& name) {
  for (const LayerOp& op : ops.forward) {
    if (op.name == name) return op.kernel.flops;
  }
  return -1;
}

}  // namespace

TEST_CASE("an MLA layer's parameters, by hand") {
  // q_down 64·16 = 1024, its norm 16, q_up 16·4·(8 + 4) = 768, kv_down 64·(8 + 4) = 768, its norm 8,
  // kv_up 8·4·(8 + 8) = 512, out_proj 4·8·64 = 2048: 5144. MLP 3·64·128 = 24576, norms 2·64 = 128.
  const TransformerSpec m = small_mla();
  const ParameterBreakdown p = parameter_breakdown(m);
  CHECK(p.layer_attention == 5144);
  CHECK(p.per_layer() == 5144 + 24576 + 128);
  // Without query compression q is one 64·4·12 = 3072 projection: 5144 - 1024 - 16 - 768 + 3072 = 6408.
  TransformerSpec plain_q = m;
  plain_q.q_lora_rank = 0;
  CHECK(parameter_breakdown(plain_q).layer_attention == 6408);
}

TEST_CASE("an MLA layer's forward FLOPs, by hand") {
  // Per sequence of s = 32: projections 2·s·(1024 + 768 + 768 + 512 + 2048) = 64·5120 = 327,680; MLP
  // 2·s·64·128·3 = 1,572,864; scores 2·s²·4·(8 + 4) = 98,304 and context 2·s²·4·8 = 65,536.
  const ForwardFlops f = forward_flops_per_sequence(small_mla());
  CHECK(f.layer_dense == 327'680.0 + 1'572'864.0);
  CHECK(f.layer_attention == 98'304.0 + 65'536.0);
  CHECK(f.total() == 2.0 * (327'680.0 + 1'572'864.0 + 163'840.0) + 2.0 * 32 * 64 * 100);
}

TEST_CASE("tensor parallelism splits MLA's up-projections and heads and keeps its down-projections whole") {
  const TransformerSpec m = small_mla();
  const AttentionProjections p = attention_projections(m, 2);
  REQUIRE(p.count == 5);
  // q_down and kv_down whole; q_up 2 heads·12, kv_up 2 heads·16, out_proj 2 heads·8 rows.
  CHECK(p.list[0].name == "q_down");
  CHECK((p.list[0].local_in == 64 && p.list[0].local_out == 16 && p.list[0].replicated));
  CHECK((p.list[1].local_in == 16 && p.list[1].local_out == 24));
  CHECK((p.list[2].local_in == 64 && p.list[2].local_out == 12 && p.list[2].norm == 8));
  CHECK((p.list[3].local_in == 8 && p.list[3].local_out == 32));
  CHECK((p.list[4].name == "out_proj" && p.list[4].local_in == 16 && p.list[4].local_out == 64));
  // The layer's kernels follow the same shapes: on 32 tokens q_down 2·32·64·16 = 65,536 FLOPs on every
  // rank, kv_up 2·32·8·32 = 16,384 and out_proj 2·32·16·64 = 65,536 on each of the two.
  Shard shard;
  shard.tp = 2;
  const LayerOps ops = transformer_layer_ops(m, shard);
  CHECK(flops_of(ops, "q_down") == 65'536.0);
  CHECK(flops_of(ops, "kv_up") == 16'384.0);
  CHECK(flops_of(ops, "out_proj") == 65'536.0);
  CHECK(flops_of(ops, "qkv") == -1);
}

TEST_CASE("standard attention keeps its single qkv projection") {
  TransformerSpec m = small_mla();
  m.kv_lora_rank = 0;
  m.q_lora_rank = 0;
  m.kv_heads = 2;
  const AttentionProjections p = attention_projections(m, 4);
  REQUIRE(p.count == 2);
  // 4 heads of 16 over tp 4: one query head and, 2 kv heads over 4 ranks, one copied kv head a rank.
  CHECK((p.list[0].name == "qkv" && p.list[0].out == 64 + 2 * 32 && p.list[0].local_out == 16 + 2 * 16));
  CHECK((p.list[1].local_in == 16 && p.list[1].local_out == 64));
}

TEST_CASE("DeepSeek-V3 has 671B parameters and about 37B activated, as DeepSeek-AI publish") {
  const TransformerSpec m = deepseek_v3();
  // Attention: 7168·1536 + 1536 + 1536·128·192 + 7168·576 + 512 + 512·128·256 + 128·128·7168
  //   = 11,010,048 + 1,536 + 37,748,736 + 4,128,768 + 512 + 16,777,216 + 117,440,512 = 187,107,328.
  // An expert: 3·7168·2048 = 44,040,192. A MoE layer: attention + 256 routed + 1 shared expert + router
  // 7168·256 + norms 2·7168 = 11,507,286,016. A dense layer: attention + 3·7168·18432 + 2·7168
  // = 583,483,392. Total: 58 MoE + 3 dense layers + embedding and LM head 2·129280·7168 + final norm 7168
  // = 671,026,404,352: the published 671B, which leave out the 14B multi-token-prediction module
  // (the hub's 685B).
  const double total = 58.0 * 11'507'286'016.0 + 3.0 * 583'483'392.0 + 2.0 * 129280.0 * 7168.0 + 7168.0;
  CHECK(total == 671'026'404'352.0);
  CHECK(parameter_count(m) == total);
  CHECK(parameter_count(m) / 671e9 == doctest::Approx(1.0).epsilon(0.005));
  // Activated: 248 of the 256 routed experts idle in each of the 58 MoE layers:
  //   671,026,404,352 - 58·248·44,040,192 = 37,552,282,624, 1.5 % over the published "37B". Leaving the
  //   input embedding out (a lookup, 926,679,040) gives 36.63B, 1.0 % under: the published figure is
  //   rounded, and neither count is within 0.5 % of it.
  const double active = total - 58.0 * 248.0 * 44'040'192.0;
  CHECK(active_parameter_count(m) == active);
  CHECK(active_parameter_count(m) / 37e9 == doctest::Approx(1.0).epsilon(0.015));
  // Layer by layer: the first three are dense.
  CHECK(layer_parameter_count(m, 2) == 583'483'392.0);
  CHECK(layer_parameter_count(m, 3) == 11'507'286'016.0);
  // A first stage of 4 layers holds the three dense ones, one MoE layer and the embedding.
  CHECK(stage_parameter_count(m, 4, true, false, 0) ==
        3.0 * 583'483'392.0 + 11'507'286'016.0 + 129280.0 * 7168.0);
}

TEST_CASE("DeepSeek-V3's forward FLOPs per token, by hand") {
  const TransformerSpec m = deepseek_v3();
  const ForwardFlops f = forward_flops_per_sequence(m);
  const double s = 4096;
  // Projections 2·(attention weights less the two norms 2048) per token; a MoE layer's MLP 2·9 experts·
  // 3·7168·2048 + router 2·7168·256; a dense layer's 2·3·7168·18432; scores and context 2·s·128·(192 + 128)
  // per token.
  const double projections = 2.0 * (187'107'328.0 - 2048.0);
  CHECK(f.layer_dense / s == doctest::Approx(projections + 2.0 * 9 * 44'040'192.0 + 2.0 * 7168 * 256));
  CHECK(f.dense_layer_dense / s == doctest::Approx(projections + 2.0 * 3 * 7168.0 * 18432));
  CHECK(f.layer_attention / s == doctest::Approx(2.0 * s * 128 * 320));
  CHECK(f.dense_layers == 3);
}
