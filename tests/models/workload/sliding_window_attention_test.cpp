// Sliding-window attention layers: the executed band of a causal window, counted by hand from the queries'
// key ranges, and the model FLOPs of a model that alternates windowed and full layers.
#include <doctest/doctest.h>

#include "models/workload/attention.hpp"
#include "models/workload/attention_kernel.hpp"
#include "models/workload/flops.hpp"
#include "sim/error.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

// 2 heads of 4 (hidden 8), 8 tokens, a window of 3: query i sees keys max(0, i−2)..i.
TransformerSpec tiny(Attention kind = Attention::flash) {
  TransformerSpec m = testing::gpt(2, 8, 2, 8);
  m.attention = kind;
  m.sliding_window = 3;
  return m;
}

}  // namespace

TEST_CASE("a causal window of w keys over s queries executes w·s − w(w−1)/2 scores per head") {
  // Queries 0..7 see 1, 2, 3, 3, 3, 3, 3, 3 keys: 21 = 3·8 − 3.
  CHECK(window_score_elements(8, 3) == 21.0);
  // A window as long as the sequence or longer is the causal triangle: 1 + 2 + 3 + 4.
  CHECK(window_score_elements(4, 8) == 10.0);
  // GPT-OSS at its 4096-token pre-training context: 128·4096 − 128·127/2 = 524,288 − 8,128.
  CHECK(window_score_elements(4096, 128) == 516'160.0);
}

TEST_CASE("the fused kernel executes the band; model FLOPs count s·w; bytes and kept scores do not change") {
  const AttentionCost w = attention_cost(tiny(), Shard{});
  const AttentionCost full = attention_cost(tiny().as_attention_layer(false), Shard{});
  // QKᵀ + AV, 2 FLOPs per multiply-add over d + dv = 8: executed 2·2 heads·21·8, model 2·2·(8·3)·8.
  CHECK(w.forward_flops == 672.0);
  CHECK(w.model_forward_flops == 768.0);
  CHECK(w.backward_flops == 2.5 * 672.0);
  CHECK(w.recompute_flops == 2.0 * 2.0 * 24.0 * 4.0);  // QKᵀ over the model count, d = 4
  CHECK(w.window == 3.0);
  // The full causal layer: model 2·2·64·8, half executed.
  CHECK(full.model_forward_flops == 2048.0);
  CHECK(full.forward_flops == 1024.0);
  CHECK(full.window == 0.0);
  // Q, K, V, O cross HBM once either way: 2·8·2·4 bytes each of Q and O, K and V 2·8·2·8.
  CHECK(w.forward_bytes == 128.0 + 128.0 + 256.0);
  CHECK(w.forward_bytes == full.forward_bytes);
  CHECK(w.backward_bytes == full.backward_bytes);
  CHECK(w.stored_bytes == 0.0);
}

TEST_CASE("the standard kernels compute and keep the whole masked square under a window") {
  const AttentionCost w = attention_cost(tiny(Attention::standard), Shard{});
  CHECK(w.forward_flops == 2048.0);
  CHECK(w.model_forward_flops == 768.0);
  CHECK(w.stored_bytes == 5.0 * 128.0);  // (2·2 bytes + a 1-byte mask) · 2 heads · 64 scores
}

TEST_CASE("a window as long as the sequence is a full layer; a mixed model is priced per layer kind") {
  TransformerSpec long_window = tiny();
  long_window.sliding_window = 8;
  const AttentionCost a = attention_cost(long_window, Shard{});
  CHECK(a.window == 0.0);
  CHECK(a.forward_flops == 1024.0);
  TransformerSpec mixed = tiny();
  mixed.window_layers = {true, false};
  CHECK(mixed.is_windowed(0));
  CHECK_FALSE(mixed.is_windowed(1));
  CHECK(mixed.windowed_layer_count() == 1);
  CHECK_THROWS_AS((void)attention_cost(mixed, Shard{}), InternalError);
  CHECK(attention_cost(mixed.as_attention_layer(true), Shard{}).forward_flops == 672.0);
}

TEST_CASE("model FLOPs add each layer's own attention: full s², windowed s·w") {
  TransformerSpec m = tiny();
  m.window_layers = {true, false};
  // Per head and key, 2·s·heads·(d + dv) = 2·8·2·8 = 256: the full layer 256·8, the windowed one 256·3.
  const ForwardFlops f = forward_flops_per_sequence(m);
  CHECK(f.layer_attention == 2048.0);
  CHECK(f.windowed_layer_attention == 768.0);
  CHECK(f.windowed_layers == 1);
  CHECK(f.attention_total() == 2048.0 + 768.0);
  TransformerSpec full = m;
  full.sliding_window = 0;
  const ForwardFlops g = forward_flops_per_sequence(full);
  CHECK(f.layers_total() == doctest::Approx(g.layers_total() - (2048.0 - 768.0)));
}

TEST_CASE("a windowed kernel runs at the efficiency of its short key loop") {
  // FlashAttention-2 on an H100: the windowed loop is 516,160 / 4096 = 126.016 keys per query, the causal
  // one 2048 on average; at equal FLOPs the grid and base factors cancel: L/(L + 136) against 2048/2184.
  const topo::GpuSpec gpu = testing::h100_sxm();
  const double flops = 1e12;
  AttentionVariant causal{Attention::flash2, false, true, 1};
  AttentionVariant windowed = causal;
  windowed.window = 128;
  const double full = attention_kernel_efficiency(flops, 64, 4096, causal, gpu.efficiency, gpu.name);
  const double band = attention_kernel_efficiency(flops, 64, 4096, windowed, gpu.efficiency, gpu.name);
  const double loop = 516'160.0 / 4096.0;
  CHECK(band / full == doctest::Approx((loop / (loop + 136.0)) / (2048.0 / 2184.0)));
}
