#include "models/step/memory.hpp"

#include <doctest/doctest.h>

#include <string>

#include "models/workload/activation_memory.hpp"
#include "models/workload/parameters.hpp"
#include "sim/error.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim::model;
using trainsim::topo::GpuSpec;
using trainsim::topo::Precision;

namespace {

using trainsim::testing::gpt3_175b;
GpuSpec a100_80gb() {
  return trainsim::testing::a100_sxm4_80gb();
}

OptimizerSpec adam() {
  OptimizerSpec s;
  s.kind = OptimizerKind::adam;
  return s;
}

double sum_elements(const std::vector<TensorShape>& t) {
  double n = 0;
  for (const auto& x : t) n += x.elements();
  return n;
}

}  // namespace

TEST_CASE("mixed-precision Adam holds 16 bytes of model states per parameter without ZeRO") {
  // ZeRO paper §3.1: 2Ψ fp16 weights + 2Ψ fp16 grads + KΨ, K = 12.
  const MemoryBreakdown m = model_state_bytes(1.0, 1, ZeroStage::none, adam(), Precision::fp16);
  CHECK(m.weights == doctest::Approx(2.0).scale(0));
  CHECK(m.grads == doctest::Approx(2.0).scale(0));
  CHECK(m.optimizer_state == doctest::Approx(12.0).scale(0));
}

TEST_CASE("AdamW with bf16 moments holds 12 bytes per parameter, 5 under ZeRO-1 over 8 ranks") {
  // Megatron-Core's precision-aware optimizer (--use-precision-aware-optimizer --exp-avg-dtype bf16
  // --exp-avg-sq-dtype bf16, main params fp32), as DeepSeek-V3 trained (arXiv:2412.19437 Sec. 3.3.1):
  // bf16 weights 2 + bf16 grads 2 + fp32 master 4 + two bf16 moments 2 + 2 = 12 bytes (16 with fp32
  // moments). ZeRO-1 over 8 ranks shards the last 8: 2 + 2 + 8/8 = 5 bytes.
  OptimizerSpec o;
  o.kind = OptimizerKind::adamw;
  o.state_precision = Precision::bf16;
  const MemoryBreakdown m = model_state_bytes(1.0, 1, ZeroStage::none, o, Precision::bf16);
  CHECK(m.weights == doctest::Approx(2.0).scale(0));
  CHECK(m.grads == doctest::Approx(2.0).scale(0));
  CHECK(m.optimizer_state == doctest::Approx(8.0).scale(0));
  CHECK(model_state_bytes(1.0, 8, ZeroStage::optimizer_states, o, Precision::bf16).total() ==
        doctest::Approx(5.0).scale(0));
  o.state_precision = Precision::fp32;
  CHECK(model_state_bytes(1.0, 1, ZeroStage::none, o, Precision::bf16).total() ==
        doctest::Approx(16.0).scale(0));
}

TEST_CASE(
    "Nemotron-4 340B's last stage as NeMo 24.07 ran it: 6 bytes of model states per parameter, not 10") {
  // The NeMo 24.07 row (128 H100, tp 8, pp 8, dp 2, fp8, ZeRO-1). The last pipeline stage holds 12 of the
  // 96 layers and the LM head, split over tp 8: per layer q and o 18,432² each, k and v 18,432 × 8 × 192
  // each, the MLP 2 × 18,432 × 73,728: 3,454,009,344 weights; the head 256,000 × 18,432 = 4,718,592,000.
  // (12 × 3,454,009,344 + 4,718,592,000) / 8 = 5,770,838,016 parameters per GPU (norms left out).
  const double params = 5770838016.0;
  // Megatron-Core's distributed optimizer: bf16 weights 2 + bf16 grads 2 + (fp32 master 4 + fp32 moments
  // 8) / dp 2 = 10 bytes, 57.71 GB: with the fp8 weight copies and the activations the stage does not fit
  // in 80 GB.
  OptimizerSpec o;
  o.kind = OptimizerKind::adamw;
  CHECK(model_state_bytes(params, 2, ZeroStage::optimizer_states, o, Precision::fp8).total() ==
        doctest::Approx(10.0 * 5770838016.0).epsilon(1e-12));
  // The run's optimizer was NeMo's distributed_fused_adam (Apex DistributedFusedAdam) with `dtype: bf16`
  // (NeMo-Framework-Launcher conf/training/nemotron/nemotron_340b.yaml @ 7c842fcd, 2024-06-17): moments in
  // bf16, and no master copy, since NeMo stores none when the optimizer's dtype is the model's
  // (megatron_base_model.py setup_optimization @ 6e5c87c2: store_params False). 2 + 2 + (2 + 2) / 2 = 6
  // bytes, 34.63 GB: 23.08 GB (21.5 GiB) less.
  o.state_precision = Precision::bf16;
  o.master_weights = false;
  const MemoryBreakdown m = model_state_bytes(params, 2, ZeroStage::optimizer_states, o, Precision::fp8);
  CHECK(m.weights == doctest::Approx(2.0 * 5770838016.0).epsilon(1e-12));
  CHECK(m.grads == doctest::Approx(2.0 * 5770838016.0).epsilon(1e-12));
  CHECK(m.optimizer_state == doctest::Approx(2.0 * 5770838016.0).epsilon(1e-12));
  CHECK(m.total() == doctest::Approx(6.0 * 5770838016.0).epsilon(1e-12));
}

TEST_CASE("7.5B parameters on 64 GPUs need 120, 31.4, 16.6 and 1.9 GB of model states under ZeRO 0 to 3") {
  // ZeRO paper Fig. 1 (Ψ = 7.5B, N_d = 64, K = 12): 120 GB, 31.4 GB, 16.6 GB, 1.875 GB.
  const double psi = 7.5e9;
  CHECK(model_state_bytes(psi, 64, ZeroStage::none, adam(), Precision::fp16).total() ==
        doctest::Approx(120e9).scale(0));
  CHECK(model_state_bytes(psi, 64, ZeroStage::optimizer_states, adam(), Precision::fp16).total() ==
        doctest::Approx(31.4e9).epsilon(0.002));
  CHECK(model_state_bytes(psi, 64, ZeroStage::gradients, adam(), Precision::fp16).total() ==
        doctest::Approx(16.6e9).epsilon(0.005));
  CHECK(model_state_bytes(psi, 64, ZeroStage::parameters, adam(), Precision::fp16).total() ==
        doctest::Approx(1.875e9).scale(0));
}

TEST_CASE("the ZeRO paper's theoretical model sizes fill a 32 GB V100 exactly") {
  // ZeRO paper Table 2 (shared CSV rows ZERO-T2-1a/1b): with N_d = 64 and 32 GB per GPU the baseline
  // trains at most 2B parameters (16 bytes each) and P_os 7.6B ((2 + 2 + 12/64) bytes each).
  CHECK(model_state_bytes(2e9, 64, ZeroStage::none, adam(), Precision::fp16).total() ==
        doctest::Approx(32e9).scale(0));
  CHECK(model_state_bytes(7.6e9, 64, ZeroStage::optimizer_states, adam(), Precision::fp16).total() ==
        doctest::Approx(32e9).epsilon(0.01));
}

TEST_CASE("layers spread evenly over pipeline stages with the remainder on the middle stages") {
  TransformerSpec m = gpt3_175b();
  m.layers = 30;
  ParallelPlan p;
  p.pp = 4;
  CHECK(stage_layer_counts(m, p) == std::vector<int>{7, 8, 8, 7});
  p.stage_layers = {6, 8, 8, 8};
  CHECK(stage_layer_counts(m, p) == std::vector<int>{6, 8, 8, 8});
  p.stage_layers = {6, 8, 8, 9};
  CHECK_THROWS_WITH_AS(static_cast<void>(stage_layer_counts(m, p)), doctest::Contains("adds up to 31 layers"),
                       trainsim::InputError);
}

TEST_CASE("a stage's tensors hold exactly the parameters the parameter count gives that stage") {
  const TransformerSpec m = gpt3_175b();
  ParallelPlan p;
  p.pp = 4;
  for (int s = 0; s < 4; ++s) {
    CHECK(sum_elements(stage_parameter_tensors(m, p, s)) ==
          doctest::Approx(stage_parameter_count(m, 24, s == 0, s == 3)).scale(0));
  }
  TransformerSpec llama = m;
  llama.mlp = Mlp::swiglu;
  llama.norm = Norm::rmsnorm;
  llama.position = Position::rope;
  llama.bias = false;
  llama.kv_heads = 8;
  llama.ffn_hidden = 28672;
  llama.tied_embeddings = false;
  p.pp = 1;
  CHECK(sum_elements(stage_parameter_tensors(llama, p, 0)) ==
        doctest::Approx(parameter_count(llama)).scale(0));
}

TEST_CASE("tensor parallelism splits the matrices and replicates norms and row-parallel biases") {
  TransformerSpec m = gpt3_175b();
  m.layers = 1;
  m.hidden = 64;
  m.heads = 4;
  m.vocab = 128;
  m.seq_len = 16;
  ParallelPlan p;
  p.tp = 2;
  // Per layer: matrices 12h² / 2; column biases (3h + 4h) / 2; replicated: 2 row biases h and 4 norm
  // vectors h. Ends: embedding 128·64 / 2, positions 16·64, final norm 2h (tied head on one stage).
  const double h = 64;
  const double expected = 12 * h * h / 2 + 7 * h / 2 + 6 * h + 128 * h / 2 + 16 * h + 2 * h;
  CHECK(sum_elements(stage_parameter_tensors(m, p, 0)) == doctest::Approx(expected).scale(0));
}

TEST_CASE("GPT-3 175B on 1,024 A100s: model states of the worst stage follow the ZeRO-1 arithmetic") {
  const TransformerSpec m = gpt3_175b();
  ParallelPlan p{.tp = 8,
                 .pp = 16,
                 .dp = 8,
                 .micro_batch = 1,
                 .sequence_parallel = true,
                 .zero = ZeroStage::optimizer_states,
                 .recompute = Recompute::selective};
  TrainingSpec t;
  t.global_batch = 1536;
  t.optimizer = adam();
  const MemoryEstimate e = estimate_memory(m, p, t, a100_80gb());
  REQUIRE(e.stages.size() == 16);
  const StageMemory& s0 = e.stages[0];
  CHECK(s0.layers == 6);
  CHECK(s0.embedding);
  // bf16 weights and grads, (8 state + 4 master) bytes sharded over dp = 8.
  CHECK(s0.memory.weights == doctest::Approx(2 * s0.params).scale(0));
  CHECK(s0.memory.grads == doctest::Approx(2 * s0.params).scale(0));
  CHECK(s0.memory.optimizer_state == doctest::Approx(12 * s0.params / 8).scale(0));
  CHECK(s0.master_bytes == doctest::Approx(4 * s0.params / 8).scale(0));
  // One tp rank holds an eighth of the stage except the learned positions (2048 x 12288), which every tp
  // rank keeps whole, and the replicated norms and row-parallel biases (< 0.1%).
  const double positions = 2048.0 * 12288;
  CHECK(
      s0.params ==
      doctest::Approx((stage_parameter_count(m, 6, true, false) - positions) / 8 + positions).epsilon(0.001));
  // Activations are the workload model's: the first stage holds pp micro-batches under 1F1B.
  CHECK(s0.in_flight_micro_batches == doctest::Approx(16).scale(0));
  CHECK(s0.memory.activations ==
        doctest::Approx(stage_activation(m, p, Precision::bf16, 0, 6, 1536 / 8, 0).total()).scale(0));
  CHECK(e.worst_stage == 0);
  CHECK(e.fits);
  CHECK(e.reason.empty());
}

TEST_CASE("buffers hold the runtime reserve and a documented allocator fraction of everything else") {
  const TransformerSpec m = gpt3_175b();
  ParallelPlan p{.tp = 8, .pp = 16, .dp = 8, .zero = ZeroStage::optimizer_states};
  TrainingSpec t;
  const MemoryEstimate e =
      estimate_memory(m, p, t, a100_80gb(), {.allocator_fraction = 0.05, .runtime_bytes = 1e9});
  const StageMemory& s = e.stages[0];
  CHECK(s.bucket_bytes == 0.0);  // ZeRO-1: buckets are views of the gradient buffer
  CHECK(s.gathered_bytes == 0.0);
  const double rest =
      s.memory.weights + s.memory.grads + s.memory.optimizer_state + s.memory.activations + 1e9;
  CHECK(s.allocator_bytes == doctest::Approx(0.05 * rest).scale(0));
  CHECK(s.memory.buffers == doctest::Approx(1e9 + 0.05 * rest).scale(0));
}

TEST_CASE("ZeRO-3 shards the weights and keeps two gathered units plus one unit of gradients") {
  TransformerSpec m = gpt3_175b();
  ParallelPlan p{.tp = 1, .pp = 1, .dp = 64, .zero = ZeroStage::parameters};
  TrainingSpec t;
  t.optimizer = adam();
  const MemoryEstimate e =
      estimate_memory(m, p, t, a100_80gb(), {.allocator_fraction = 0, .runtime_bytes = 0});
  const StageMemory& s = e.stages[0];
  CHECK(s.memory.weights == doctest::Approx(2 * s.params / 64).scale(0));
  CHECK(s.memory.grads == doctest::Approx(2 * s.params / 64).scale(0));
  // The largest unit is a layer (1.81B parameters), larger than the 51200 x 12288 embedding (0.63B).
  const double layer = layer_parameter_count(m);
  CHECK(s.gathered_bytes == doctest::Approx(layer * (2 * 2 + 2)).scale(0));
  CHECK(s.bucket_bytes == 0.0);  // each unit's own gradients are its reduce-scatter's buffer

  // FSDP with two units prefetched holds one more gathered layer.
  p.framework.prefetch = 2;
  CHECK(estimate_memory(m, p, t, a100_80gb(), {.runtime_bytes = 0}).stages[0].gathered_bytes ==
        doctest::Approx(layer * (3 * 2 + 2)).scale(0));
  // DeepSpeed fetches one linear module at a time (a quarter of a layer) and prefetches only what fits in
  // stage3_prefetch_bucket_size (5e7 parameters, less than one 0.45B module): (1 + 0) x 2 B + 2 B of
  // gradients per parameter of the largest unit.
  p.framework = framework_preset(FrameworkPreset::deepspeed);
  // The largest unit is then the embedding (51200 x 12288 + 2048 x 12288 learned positions, 0.65B).
  const StageMemory ds = estimate_memory(m, p, t, a100_80gb(), {.runtime_bytes = 0}).stages[0];
  const double embedding = (51200.0 + 2048.0) * 12288.0;
  CHECK(ds.prefetched_units == 0);
  CHECK(ds.gathered_bytes == doctest::Approx(std::max(layer / 4, embedding) * (2 + 2)).scale(0));
}

TEST_CASE("without dropout (Llama) no masks are kept: two bytes per token per layer fewer") {
  TransformerSpec m = trainsim::testing::llama3_8b();
  const ParallelPlan p{.tp = 1, .pp = 1, .dp = 1};
  m.dropout = 0.1;
  const StageActivation with = stage_activation(m, p, Precision::bf16, 0, m.layers, 1);
  m.dropout = 0;
  const StageActivation without = stage_activation(m, p, Precision::bf16, 0, m.layers, 1);
  const double tokens = static_cast<double>(m.seq_len);
  const double h = static_cast<double>(m.hidden);
  // Two 1-byte masks per token and hidden element per layer, and the embedding's one.
  CHECK(with.per_micro_batch - without.per_micro_batch ==
        doctest::Approx(static_cast<double>(m.layers) * 2 * tokens * h + tokens * h).scale(0));
}

TEST_CASE("Llama-3 405B at 8K on 8,192 and 16,384 H100 fits in 80 GB as Meta laid it out") {
  // Llama Team 2024 (arXiv:2407.21783) Sec. 3.3.2 and Table 4: tp 8, pp 16, dp 64 / 128, 2,048 sequences of
  // 8,192 tokens, no activation checkpointing, FSDP sharding optimizer state and gradients (ZeRO-2), one
  // layer fewer on the first and the last stage (7 + 14 x 8 + 7 = 126). The paper leaves the interleaving
  // depth open; what decides the fit is how many micro-batches a stage holds: a 1F1B depth of pp (16) fits;
  // Megatron's interleaved warm-up with two chunks (pp·(1 + (pp-1)/(pp·v)) = 23.5 on the first stage)
  // does not at 8,192 GPUs (32 micro-batches per step), and at 16,384 (16 per step) it is capped at the 16
  // there are and fits too.
  for (const std::int64_t dp : {64, 128}) {
    CAPTURE(dp);
    TransformerSpec m = trainsim::testing::llama3_405b();
    m.dropout = 0;  // the released config has none
    m.seq_len = 8192;
    ParallelPlan p{.tp = 8, .pp = 16, .dp = dp, .sequence_parallel = true, .zero = ZeroStage::gradients};
    p.stage_layers = {7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7};
    TrainingSpec t;
    t.global_batch = 2048;
    const MemoryEstimate e = estimate_memory(m, p, t, trainsim::testing::h100_sxm());
    CHECK(e.fits);
    CHECK(e.per_gpu < 80.0 * 1024 * 1024 * 1024);
    p.schedule = Schedule::interleaved;
    p.virtual_stages = 2;
    p.stage_layers.clear();
    CHECK(estimate_memory(m, p, t, trainsim::testing::h100_sxm()).fits == (dp == 128));
  }
}

// GPT-3 175B on tp 8, pp 16, dp 8 under ZeRO-1 with the given optimizer, on A100 80GB.
namespace {
MemoryEstimate gpt3_zero1_with(OptimizerKind optimizer) {
  const ParallelPlan p{.tp = 8, .pp = 16, .dp = 8, .zero = ZeroStage::optimizer_states};
  TrainingSpec t;
  t.optimizer.kind = optimizer;
  return estimate_memory(gpt3_175b(), p, t, a100_80gb());
}
}  // namespace

TEST_CASE("Muon under ZeRO-1 gathers its largest matrix and the orthogonalised update") {
  const MemoryEstimate e = gpt3_zero1_with(OptimizerKind::muon);
  // Largest local matrix: fc1 12288 x 49152/8 (= fc2's size), fp32 momentum + fp32 result.
  CHECK(e.stages[1].gathered_bytes == doctest::Approx(2.0 * 12288 * 6144 * 4).scale(0));
}

TEST_CASE("Shampoo under ZeRO-1 holds every all-gathered direction in fp32 and its blocks' gradients") {
  const MemoryEstimate e = gpt3_zero1_with(OptimizerKind::shampoo);
  // Every direction of the stage in fp32 (4 B per parameter), padded to the busiest of 8 owners, plus that
  // owner's eighth of the gradients (bf16: 2/8 B per parameter): between 4 and 4.25 B per parameter, with
  // 5 % for the padding of blocks that do not split evenly.
  const double params = e.stages[1].params;
  CHECK(e.stages[1].gathered_bytes >= 4 * params);
  CHECK(e.stages[1].gathered_bytes <= 1.05 * 4.25 * params);
}

TEST_CASE("a plan that does not fit is a value whose reason lists the parts largest first") {
  const TransformerSpec m = gpt3_175b();
  ParallelPlan p{.tp = 8, .pp = 1, .dp = 1, .zero = ZeroStage::none};
  TrainingSpec t;
  t.optimizer = adam();
  const MemoryEstimate e = estimate_memory(m, p, t, a100_80gb());
  CHECK_FALSE(e.fits);
  CHECK(e.reason.rfind("stage 0 needs ", 0) == 0);
  CHECK(e.reason.find(" GiB of 80 GiB: optimizer state ") != std::string::npos);
  CHECK(e.reason.find("activations") != std::string::npos);
}

TEST_CASE("memory headroom lowers the usable capacity") {
  const TransformerSpec m = gpt3_175b();
  ParallelPlan p{.tp = 8, .pp = 16, .dp = 8, .zero = ZeroStage::optimizer_states};
  const MemoryEstimate e = estimate_memory(m, p, TrainingSpec{}, a100_80gb(), {.headroom_fraction = 0.1});
  CHECK(e.capacity == doctest::Approx(72.0 * 1024 * 1024 * 1024).scale(0));
}

TEST_CASE("a tensor-parallel degree that does not divide the heads is infeasible, not an exception") {
  const TransformerSpec m = gpt3_175b();
  ParallelPlan p{.tp = 7};
  const MemoryEstimate e = estimate_memory(m, p, TrainingSpec{}, a100_80gb());
  CHECK_FALSE(e.fits);
  CHECK_FALSE(e.reason.empty());
}

TEST_CASE("a degree below one is bad input") {
  ParallelPlan p{.pp = 0};
  CHECK_THROWS_AS(static_cast<void>(estimate_memory(gpt3_175b(), p, TrainingSpec{}, a100_80gb())),
                  trainsim::InputError);
}

TEST_CASE("expert weights are split over ep and sharded over dp·cp only") {
  TransformerSpec m;
  m.layers = 2;
  m.hidden = 256;
  m.heads = 4;
  m.vocab = 1000;
  m.seq_len = 128;
  m.experts = 8;
  m.top_k = 2;
  m.bias = false;
  m.position = Position::rope;
  ParallelPlan p{.tp = 1, .pp = 1, .dp = 2, .ep = 4, .zero = ZeroStage::optimizer_states};
  TrainingSpec t;
  t.optimizer = adam();
  const MemoryEstimate e =
      estimate_memory(m, p, t, a100_80gb(), {.allocator_fraction = 0, .runtime_bytes = 0});
  const double expert = 2 * layer_expert_parameter_count(m) / 4;  // two layers, 2 of 8 experts per rank
  const double dense = parameter_count(m) - 2 * layer_expert_parameter_count(m);
  CHECK(e.stages[0].params == doctest::Approx(dense + expert).scale(0));
  CHECK(e.memory.optimizer_state == doctest::Approx(12 * dense / 8 + 12 * expert / 2).scale(0));
}
