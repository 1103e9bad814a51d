// fp8 memory terms (Transformer Engine): weight copies, amax histories and fp8-saved GEMM inputs, against
// the formulas of models/step/fp8_memory.hpp evaluated by hand for a small model.
#include "models/step/fp8_memory.hpp"

#include <doctest/doctest.h>

using namespace trainsim::model;

namespace {

// h 64, 4 heads of 16, 4 KV heads, SwiGLU ffn 256, sequence 128.
TransformerSpec small_model() {
  TransformerSpec m;
  m.layers = 4;
  m.hidden = 64;
  m.heads = 4;
  m.kv_heads = 4;
  m.ffn_hidden = 256;
  m.vocab = 1000;
  m.seq_len = 128;
  m.mlp = Mlp::swiglu;
  return m;
}

}  // namespace

TEST_CASE("fp8 weight copies, amax history and saved inputs of two layers") {
  ParallelPlan plan;
  const Fp8Memory f = fp8_stage_memory(small_model(), plan, 2, 3.0);
  // qkv 64·(64 + 2·4·16) + out_proj 64·64 + fc1 2·256·64 + fc2 256·64 = 65536 per layer.
  CHECK(f.gemm_weights == 2 * 65536.0);
  CHECK(f.weight_copies == 2.0 * 2 * 65536.0);  // fp8 W and Wᵀ
  CHECK(f.fp8_gemms == 8.0);
  CHECK(f.amax_history == 8.0 * 3 * (1024 + 2) * 4);
  // qkv and fc1 inputs 2·128·64, out_proj input 128·64, fc2 input 128·256; two layers, three in flight.
  CHECK(f.saved_inputs == (2.0 * 128 * 64 + 128 * 64 + 128 * 256) * 2 * 3);
}

TEST_CASE("under ZeRO-3 only the gathered layers keep fp8 copies; full recompute saves no inputs") {
  ParallelPlan plan;
  plan.zero = ZeroStage::parameters;
  plan.dp = 8;
  plan.recompute = Recompute::full;
  const Fp8Memory f = fp8_stage_memory(small_model(), plan, 4, 1.0);
  CHECK(f.gemm_weights == 4 * 65536.0);
  CHECK(f.weight_copies == 2.0 * 2 * 65536.0);  // the current layer and the prefetched one
  CHECK(f.saved_inputs == 0.0);
}

TEST_CASE("heads wider than hidden / heads size the fp8 copies of the q and out_proj weights") {
  // The same layer with 4 heads of 32 (head_dim 32, queries 128 wide, K and V 4·32 = 128):
  // qkv 64·(128 + 2·128) + out_proj 128·64 + fc1 2·256·64 + fc2 256·64 = 81920 per layer, and the
  // out_proj input saved in fp8 is 128 wide.
  TransformerSpec m = small_model();
  m.head_dim = 32;
  ParallelPlan plan;
  const Fp8Memory f = fp8_stage_memory(m, plan, 1, 1.0);
  CHECK(f.gemm_weights == 81920.0);
  CHECK(f.saved_inputs == 2.0 * 128 * 64 + 128 * 128 + 128 * 256);
}

TEST_CASE("an input offloaded to host memory leaves no fp8 saving on the GPU") {
  // As above, one layer: qkv and fc1 inputs 2·128·64, out_proj input 128·64, fc2 input 128·256. Offloaded,
  // qkv_linear's input (ln1's output, 128·64) and attn_proj's (the out_proj input, 128·64) are not on the
  // GPU at either width: the saving keeps the fc1 and fc2 inputs, 128·64 + 128·256.
  ParallelPlan plan;
  plan.offload_modules = static_cast<std::uint8_t>(OffloadModule::qkv_linear) |
                         static_cast<std::uint8_t>(OffloadModule::attn_proj);
  CHECK(fp8_stage_memory(small_model(), plan, 1, 1.0).saved_inputs == 128.0 * 64 + 128 * 256);
}
