// Activation memory against Korthikanti et al. 2022 (arXiv:2205.05198), Sec. 4 and Table 2, evaluated by
// hand for GPT-3 175B: s 2048, b 1, h 12288, a 96, t 8, 16-bit activations. s·b·h = 25,165,824 and
// 5·a·s/h = 80.
#include "models/workload/activation_memory.hpp"

#include <doctest/doctest.h>

#include "sim/error.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim::model;

namespace {

constexpr double kSbh = 2048.0 * 12288.0;

TransformerSpec gpt3(Attention kind) {
  return trainsim::testing::gpt3_175b(kind);
}

Shard shard(int tp, bool sp, Recompute r) {
  Shard sh;
  sh.tp = tp;
  sh.sequence_parallel = sp;
  sh.recompute = r;
  return sh;
}

double layer(Attention kind, int tp, bool sp, Recompute r) {
  return layer_activation(gpt3(kind), shard(tp, sp, r)).total();
}

}  // namespace

TEST_CASE("Korthikanti Table 2, no parallelism: s·b·h·(34 + 5·a·s/h)") {
  CHECK(layer(Attention::standard, 1, false, Recompute::none) == kSbh * 114);  // 2,868,903,936 B
}

TEST_CASE("Korthikanti Table 2, tensor parallel: s·b·h·(10 + 24/t + 5·a·s/(h·t))") {
  CHECK(layer(Attention::standard, 8, false, Recompute::none) == kSbh * (10 + 3 + 10));  // 578,813,952 B
}

TEST_CASE("Korthikanti Table 2, tensor + sequence parallel: s·b·h/t·(34 + 5·a·s/h)") {
  CHECK(layer(Attention::standard, 8, true, Recompute::none) == kSbh / 8 * 114);  // 358,612,992 B
}

TEST_CASE("Korthikanti Table 2, tensor parallel + selective recompute: s·b·h·(10 + 24/t)") {
  CHECK(layer(Attention::standard, 8, false, Recompute::selective) == kSbh * 13);  // 327,155,712 B
}

TEST_CASE("Korthikanti Table 2, tensor + sequence parallel + selective recompute: s·b·h/t·34") {
  CHECK(layer(Attention::standard, 8, true, Recompute::selective) == kSbh / 8 * 34);  // 106,954,752 B
}

TEST_CASE("Korthikanti Table 2, full recompute: 2·s·b·h, divided by t with sequence parallelism") {
  CHECK(layer(Attention::standard, 8, false, Recompute::full) == kSbh * 2);  // 50,331,648 B
  CHECK(layer(Attention::standard, 8, true, Recompute::full) == kSbh * 2 / 8);
}

TEST_CASE("flash attention removes exactly the 5·a·s/h term, the standard kernel keeps it") {
  CHECK(layer(Attention::flash, 1, false, Recompute::none) == kSbh * 34);
  CHECK(layer(Attention::flash, 8, false, Recompute::none) == kSbh * 13);
  CHECK(layer(Attention::flash, 8, true, Recompute::none) == kSbh / 8 * 34);
  const LayerActivation standard =
      layer_activation(gpt3(Attention::standard), shard(8, true, Recompute::none));
  CHECK(standard.scores == kSbh / 8 * 80);
  CHECK(standard.replicated == kSbh / 8 * 10);
  CHECK(standard.split == kSbh / 8 * 24);
}

TEST_CASE("the derivation from tensor sizes gives 36 for Llama-3 8B (GQA 8 of 32 heads, swiglu 14336)") {
  // Per token in units of h, 16-bit: 10 replicated + Q 2 + K 0.5 + V 0.5 + out 2 + swiglu 3·2·14336/4096
  // = 21.
  const TransformerSpec s = trainsim::testing::llama3_8b();
  CHECK(layer_activation(s, shard(1, false, Recompute::none)).total() == 8192.0 * 4096 * 36);
  // Context parallel 2 halves the tokens of every term.
  Shard cp2 = shard(1, false, Recompute::none);
  cp2.cp = 2;
  CHECK(layer_activation(s, cp2).total() == 4096.0 * 4096 * 36);
}

TEST_CASE("1F1B holds pp - i micro-batches on stage i, GPipe all, interleaving adds (1 + (p-1)/(p·v))") {
  CHECK(micro_batches_in_flight(Schedule::one_f_one_b, 16, 0, 1, 64) == 16);
  CHECK(micro_batches_in_flight(Schedule::one_f_one_b, 16, 15, 1, 64) == 1);
  CHECK(micro_batches_in_flight(Schedule::one_f_one_b, 16, 0, 1, 4) == 4);
  CHECK(micro_batches_in_flight(Schedule::gpipe, 16, 3, 1, 64) == 64);
  CHECK(micro_batches_in_flight(Schedule::interleaved, 8, 0, 3, 64) ==
        doctest::Approx(8 * (1 + 7.0 / 24)).scale(0));
  // Last stage of the interleaved schedule: (v - 1)·p + 1 = 17 chunks of a third of the stage each.
  CHECK(micro_batches_in_flight(Schedule::interleaved, 8, 7, 3, 64) == doctest::Approx(17.0 / 3).scale(0));
  CHECK(micro_batches_in_flight(Schedule::interleaved, 8, 0, 3, 2) == doctest::Approx(2.0).scale(0));
  CHECK_THROWS_AS((void)micro_batches_in_flight(Schedule::gpipe, 4, 4, 1, 8), trainsim::InputError);
}

TEST_CASE("the first 1F1B stage holds a whole model's worth of layers: s·b·h·L/t·34 (Korthikanti 4.2.3)") {
  ParallelPlan plan;
  plan.tp = 8;
  plan.pp = 8;
  plan.sequence_parallel = true;
  plan.recompute = Recompute::selective;
  const StageActivation first =
      stage_activation(gpt3(Attention::standard), plan, trainsim::topo::Precision::bf16, 0, 12, 64);
  // Layers: 8 in flight · 12 layers · sbh/8·34 = sbh·L/t·34. Embedding: a 1-byte dropout mask, sbh/t.
  CHECK(first.embedding == kSbh / 8);
  CHECK(first.head == 0.0);
  CHECK(first.micro_batches_in_flight == 8);
  CHECK(first.total() - 8 * first.embedding - first.working == doctest::Approx(kSbh * 96 / 8 * 34).scale(0));
  // Selective recompute of the standard kernel rematerialises one layer's scores at a time.
  CHECK(first.working == kSbh / 8 * 80);
  const StageActivation last =
      stage_activation(gpt3(Attention::standard), plan, trainsim::topo::Precision::bf16, 7, 12, 64);
  // Final norm input and LM-head input 2·2·s·b·h/t, fp32 logits 4·s·b·v/t.
  CHECK(last.head == 4.0 * kSbh / 8 + 4.0 * 2048 * 51200 / 8);
  CHECK(last.micro_batches_in_flight == 1);
}

TEST_CASE("full recompute keeps layer inputs and rematerialises one full layer while it runs backward") {
  ParallelPlan plan;
  plan.tp = 8;
  plan.pp = 1;
  plan.recompute = Recompute::full;
  const StageActivation s =
      stage_activation(gpt3(Attention::standard), plan, trainsim::topo::Precision::bf16, 0, 96, 1);
  CHECK(s.working == kSbh * 23);
  CHECK(s.per_micro_batch == 96 * kSbh * 2 + kSbh + 4.0 * kSbh + 4.0 * 2048 * 51200 / 8);
}

TEST_CASE("Llama-3 405B at 8K on tp 8, pp 16 keeps ~0.7 TB of scores per first-stage GPU unless flash") {
  // Llama-3 405B at 8K: 126 layers over 16 stages (8 on the first), 16 micro-batches in flight. The
  // standard kernel adds 5·a·s²·b/t = 5·128·8192²/8 = 5,368,709,120 bytes per layer and micro-batch.
  TransformerSpec s = trainsim::testing::llama3_405b();
  ParallelPlan plan;
  plan.tp = 8;
  plan.pp = 16;
  plan.sequence_parallel = true;
  s.attention = Attention::flash;
  const StageActivation flash = stage_activation(s, plan, trainsim::topo::Precision::bf16, 0, 8, 128);
  s.attention = Attention::standard;
  const StageActivation standard = stage_activation(s, plan, trainsim::topo::Precision::bf16, 0, 8, 128);
  CHECK(standard.total() - flash.total() == 16.0 * 8 * 5368709120.0);
  // Flash, per token and layer: 10·h/8 replicated + (2h + 2h)/8 for Q and out + 2·2·128 for one K/V head
  // + 3·2·53248/8 for swiglu = 69,120 bytes; · 8192 tokens · 8 layers · 16 micro-batches + embedding mask.
  CHECK(flash.total() == 69120.0 * 8192 * 8 * 16 + 16 * 8192.0 * 16384 / 8);
}

TEST_CASE("op-level recompute keeps the layer input, q, v, the attention output and w1's and w2's outputs") {
  // A Llama layer (SwiGLU, 32 heads of 128, 8 K/V heads, ffn 14336) on one rank, one sequence of 8192
  // tokens, bf16: p·T·(h + h) replicated (the input and w2's output) and p·T·(4096 + 1024 + 4096 + 14336)
  // split (q, v, the attention output, w1's output).
  TransformerSpec m = trainsim::testing::llama(1, 4096, 32, 8, 14336, 128256);
  m.dropout = 0;
  const LayerActivation a = layer_activation(m, shard(1, false, Recompute::op));
  const double T = 8192;
  CHECK(a.replicated == doctest::Approx(2 * T * 2 * 4096).scale(0));
  CHECK(a.split == doctest::Approx(2 * T * (4096.0 + 1024 + 4096 + 14336)).scale(0));
  CHECK(a.scores == 0.0);
  // Between selective (which keeps everything but the attention core) and full (the input alone).
  CHECK(a.total() < layer_activation(m, shard(1, false, Recompute::selective)).total());
  CHECK(a.total() > layer_activation(m, shard(1, false, Recompute::full)).total());
}

TEST_CASE("offloaded module inputs leave the GPU: GPT-3 at tp 8 keeps 8 of its 13 s·b·h") {
  // Flash, tp 8, no sequence parallelism, no recompute: 10 replicated + 24/8 split = 13 s·b·h. Offloading
  // attn_norm (ln1's input, 2) and mlp_norm (ln2's input, 2), core_attn (Q, K, V: 3·2/t) and attn_proj
  // (the out_proj input, 2/t) moves 2 + 2 + 8/8 = 5 s·b·h to the host: 8 stay.
  Shard sh = shard(8, false, Recompute::none);
  sh.offload_modules = static_cast<std::uint8_t>(OffloadModule::attn_norm) |
                       static_cast<std::uint8_t>(OffloadModule::mlp_norm) |
                       static_cast<std::uint8_t>(OffloadModule::core_attn) |
                       static_cast<std::uint8_t>(OffloadModule::attn_proj);
  const LayerActivation a = layer_activation(gpt3(Attention::flash), sh);
  CHECK(a.total() == doctest::Approx(kSbh * 8));
  CHECK(a.offloaded == doctest::Approx(kSbh * 5));
  // qkv_linear's input is ln1's output: 2 s·b·h, none when the norms are recomputed (nothing kept to move).
  sh.offload_modules = static_cast<std::uint8_t>(OffloadModule::qkv_linear);
  CHECK(layer_activation(gpt3(Attention::flash), sh).offloaded == doctest::Approx(kSbh * 2));
  sh.recompute = Recompute::selective;
  sh.recompute_modules = static_cast<std::uint8_t>(RecomputeModule::layernorm);
  CHECK(layer_activation(gpt3(Attention::flash), sh).offloaded == 0);
}

TEST_CASE("a MoE layer offloads its experts' fc1 and activation inputs, and reloads two layers' worth") {
  // 4 experts, top 2, ep 2, tp 1, bf16, gelu experts of 1,024 on h = 512, T = 1,024 tokens: the rank's
  // 2,048 slots keep their fc1 input, p·h = 1,024 B each (2,097,152 B), and the gelu's input, fc1's output,
  // p·f = 2,048 B each (4,194,304 B).
  const TransformerSpec m = trainsim::testing::four_expert_moe();
  Shard sh;
  sh.ep = 2;
  sh.offload_modules = static_cast<std::uint8_t>(OffloadModule::expert_fc1);
  CHECK(layer_activation(m, sh).offloaded == doctest::Approx(2097152.0));
  sh.offload_modules = static_cast<std::uint8_t>(OffloadModule::moe_act);
  CHECK(layer_activation(m, sh).offloaded == doctest::Approx(4194304.0));
  // Recomputing the whole MoE layer keeps neither: nothing is left to offload.
  sh.recompute = Recompute::selective;
  sh.recompute_modules = static_cast<std::uint8_t>(RecomputeModule::moe);
  CHECK(layer_activation(m, sh).offloaded == 0);
  // The stage keeps the rest, and two layers' offloaded inputs while the backward reloads them.
  ParallelPlan p;
  p.ep = 2;
  p.dp = 2;
  p.offload_modules = static_cast<std::uint8_t>(OffloadModule::moe_act);
  const StageActivation with = stage_activation(m, p, trainsim::topo::Precision::bf16, 0, 2, 1);
  p.offload_modules = 0;
  const StageActivation without = stage_activation(m, p, trainsim::topo::Precision::bf16, 0, 2, 1);
  CHECK(without.per_micro_batch - with.per_micro_batch == doctest::Approx(2 * 4194304.0));
  CHECK(with.working - without.working == doctest::Approx(2 * 4194304.0));
}
