// The attention core under the flash and standard kernels: hand arithmetic from tensor shapes.
#include "models/workload/attention.hpp"

#include <doctest/doctest.h>

#include "sim/error.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim::model;

namespace {

TransformerSpec gpt3(Attention kind) {
  return trainsim::testing::gpt3_175b(kind);
}

Shard tp8() {
  Shard sh;
  sh.tp = 8;
  return sh;
}

}  // namespace

TEST_CASE("only a causal flash kernel skips masked work, and it skips half") {
  CHECK(causal_work_fraction(Attention::flash, true) == 0.5);
  CHECK(causal_work_fraction(Attention::flash, false) == 1.0);
  CHECK(causal_work_fraction(Attention::standard, true) == 1.0);
}

TEST_CASE("standard attention keeps the 5·a·s²·b/t bytes of scores Korthikanti counts") {
  const AttentionCost c = attention_cost(gpt3(Attention::standard), tp8());
  // 5 · 96 · 2048² · 1 / 8 = 251,658,240 bytes.
  CHECK(c.stored_bytes == 251658240.0);
  // QKᵀ and AV over the full square, 4·b·s²·h/t, executed in full.
  CHECK(c.model_forward_flops == 4.0 * 2048 * 2048 * 12288 / 8);
  CHECK(c.forward_flops == c.model_forward_flops);
  CHECK(c.backward_flops == 2.0 * c.forward_flops);
  CHECK(c.recompute_flops == 0.0);
}

TEST_CASE("flash attention keeps no scores, executes half the causal square, and its backward is 2.5 times") {
  const AttentionCost c = attention_cost(gpt3(Attention::flash), tp8());
  CHECK(c.stored_bytes == 0.0);
  CHECK(c.forward_flops == 0.5 * c.model_forward_flops);
  CHECK(c.backward_flops == 2.5 * c.forward_flops);
  // The recomputed QKᵀ counts 2·b·s²·h/t.
  CHECK(c.recompute_flops == 2.0 * 2048 * 2048 * 12288 / 8);
  CHECK(c.head_dim == 128.0);
  CHECK(c.query_len == 2048.0);
  // Traffic: Q and O (2 · 2·2048·1536 bytes) plus K and V (2 · 2·2048·1536): 25,165,824 bytes.
  CHECK(c.forward_bytes == 25165824.0);
}

TEST_CASE("context parallelism splits the queries and sends one K/V block per ring step") {
  // Llama-3 8B at 8192 tokens, cp 2, tp 1: each rank holds 4096 queries; its K and V block is
  // 2 (K, V) · 2 bytes · 4096 tokens · 8 heads · 128 = 16,777,216 bytes.
  const TransformerSpec s = trainsim::testing::llama3_8b();
  Shard sh;
  sh.cp = 2;
  const AttentionCost c = attention_cost(s, sh);
  CHECK(c.query_len == 4096.0);
  CHECK(c.kv_block_bytes == 16777216.0);
  CHECK(c.model_forward_flops == 4.0 * 4096 * 8192 * 4096);
  sh.cp = 3;
  CHECK_THROWS_AS((void)attention_cost(s, sh), trainsim::InputError);  // 3 does not divide 8192
  sh.cp = 1;
  sh.tp = 5;
  CHECK_THROWS_AS((void)attention_cost(s, sh), trainsim::InputError);  // 5 does not divide 32 heads
}

TEST_CASE("key/value heads are replicated once tp exceeds them") {
  // 8 kv heads on tp 16: one kv head per rank, so K and V are 2 · 2 bytes · 2048 · 1 · 128 each rank.
  TransformerSpec s = gpt3(Attention::flash);
  s.heads = 128;
  s.hidden = 16384;
  s.kv_heads = 8;
  Shard sh;
  sh.tp = 16;
  CHECK(attention_cost(s, sh).kv_bytes == 2.0 * 2 * 2048 * 1 * 128);
}

TEST_CASE("a generic model has no attention core to cost") {
  TransformerSpec s;
  s.generic_layers = {{"conv", 1, 1, 1}};
  CHECK_THROWS_AS((void)attention_cost(s, Shard{}), trainsim::InputError);
}
