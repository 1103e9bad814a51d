#include "models/step/step_plan.hpp"

#include <doctest/doctest.h>

#include <numeric>

#include "models/step/memory.hpp"
#include "sim/error.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

struct Layout {
  TransformerSpec model;
  topo::ClusterSpec cluster;
  ParallelPlan plan;
  TrainingSpec training;
  [[nodiscard]] StepPlan make() const { return make_step_plan(model, cluster, plan, training); }
};

Layout layout(std::int64_t layers, int tp, int pp, std::int64_t dp, std::int64_t global_batch) {
  Layout l;
  l.model.layers = layers;
  l.model.hidden = 4096;
  l.model.heads = 32;
  l.model.kv_heads = 8;
  l.model.vocab = 32000;
  l.model.seq_len = 4096;
  l.cluster.node.gpus_per_node = 8;
  const std::int64_t world = static_cast<std::int64_t>(tp) * pp * dp;
  l.cluster.nodes = (world + 7) / 8;
  if (world < 8) l.cluster.gpus_per_node = static_cast<int>(world);
  l.plan.tp = tp;
  l.plan.pp = pp;
  l.plan.dp = dp;
  l.training.global_batch = global_batch;
  return l;
}

}  // namespace

TEST_CASE(
    "layers that do not divide go to the middle stages, leaving the embedding and LM-head ends lighter") {
  // Llama-3 405B: 126 layers on 16 stages, 7 on the first and last (Llama 3 paper, Sec. 3.3.2).
  std::vector<int> llama(16, 8);
  llama.front() = 7;
  llama.back() = 7;
  CHECK(split_layers(126, 16) == llama);
  // BLOOM-176B: 70 layers on 12 stages, 5 on the ends.
  std::vector<int> bloom(12, 6);
  bloom.front() = 5;
  bloom.back() = 5;
  CHECK(split_layers(70, 12) == bloom);
  CHECK(split_layers(96, 32) == std::vector<int>(32, 3));
  CHECK(split_layers(17, 4) == std::vector<int>{4, 5, 4, 4});
  // More remainder than middle stages: the first stage takes the next one, then the last.
  CHECK(split_layers(11, 4) == std::vector<int>{3, 3, 3, 2});
  CHECK(split_layers(7, 2) == std::vector<int>{4, 3});
}

TEST_CASE("a multi-token-prediction depth takes two layer slots off the last virtual stage") {
  // Megatron-Bridge's DeepSeek-V3 layout for 16 virtual stages (pp 16, pp 8 x 2 or pp 4 x 4): embedding +
  // 4 layers, 4 x 14, then 1 layer with the MTP module and the loss. 61 layers + 2 slots = 63 over 16:
  // 3 each, the remainder 15 to the 14 middle stages and the first, so the last holds 3 - 2 = 1.
  std::vector<int> bridge(16, 4);
  bridge.back() = 1;
  CHECK(split_layers_with_tail(61, 16, 2) == bridge);
  // Over 32 virtual stages (pp 8 x 4): 63 slots = 1 each, 31 over, to the 30 middle stages and the
  // first: 2, 2 x 30, 1. The last gives its 1 and falls to 0; the other slot comes off the stage before.
  std::vector<int> deep(32, 2);
  deep[30] = 1;
  deep[31] = 0;
  CHECK(split_layers_with_tail(61, 32, 2) == deep);
  CHECK(std::accumulate(deep.begin(), deep.end(), 0) == 61);
  // No module, no slots: the plain rule, Llama-3 405B's 7, 8 x 14, 7 (Llama 3 paper, Sec. 3.3.2).
  std::vector<int> llama(16, 8);
  llama.front() = 7;
  llama.back() = 7;
  CHECK(split_layers_with_tail(126, 16, 0) == llama);

  TransformerSpec model;
  model.mtp_layers = 1;
  CHECK(pipeline_tail_slots(model) == 2);
  model.mtp_layers = 0;
  CHECK(pipeline_tail_slots(model) == 0);
}

TEST_CASE("the step plan lays an MTP model out with the module's slots on the last stage") {
  Layout l = layout(61, 1, 16, 1, 64);
  l.model.mtp_layers = 1;
  const StepPlan p = l.make();
  REQUIRE(p.feasible);
  std::vector<int> expected(16, 4);
  expected.back() = 1;
  CHECK(p.stage_layers == expected);
  // Given stage_layers are taken as given.
  l.plan.stage_layers = std::vector<int>(16, 4);
  l.plan.stage_layers.front() = 1;
  const StepPlan given = l.make();
  REQUIRE(given.feasible);
  CHECK(given.stage_layers == l.plan.stage_layers);
}

TEST_CASE("a feasible plan counts micro-batches and maps virtual stages chunk-major onto the ranks") {
  Layout l = layout(32, 2, 4, 2, 64);
  l.plan.schedule = Schedule::interleaved;
  l.plan.virtual_stages = 2;
  const StepPlan p = l.make();
  REQUIRE(p.feasible);
  CHECK(p.micro_batches == 32);  // 64 / (dp 2 · micro-batch 1)
  CHECK(p.chunk_layers == std::vector<int>(8, 4));
  CHECK(p.stage_layers == std::vector<int>(4, 8));
  CHECK(p.layers_of(3, 1) == 4);
  CHECK(p.first_layer_of(5) == 20);
}

TEST_CASE("an explicit stage_layers list is used as given") {
  Layout l = layout(30, 1, 4, 2, 16);
  l.plan.stage_layers = {6, 9, 9, 6};
  const StepPlan p = l.make();
  REQUIRE(p.feasible);
  CHECK(p.stage_layers == std::vector<int>{6, 9, 9, 6});
  l.plan.stage_layers = {6, 9, 9, 5};
  CHECK_FALSE(l.make().feasible);
}

TEST_CASE("a list per virtual stage may leave the first and the last empty, as Llama 3 405B's pipeline") {
  // Llama Team 2024 Sec. 3.3.2: one layer a chunk, the first chunk the embedding alone and the last the LM
  // head alone. Here 6 layers on pp 2 with 4 virtual stages: [0, 1, 1, 1, 1, 1, 1, 0] by virtual stage
  // (vs = chunk·pp + rank): rank 0 holds virtual stages 0, 2, 4, 6 = 0 + 1 + 1 + 1 = 3 layers, rank 1 the
  // rest = 3.
  Layout l = layout(6, 1, 2, 1, 8);
  l.plan.schedule = Schedule::interleaved;
  l.plan.virtual_stages = 4;
  l.plan.stage_layers = {0, 1, 1, 1, 1, 1, 1, 0};
  const StepPlan p = l.make();
  REQUIRE_MESSAGE(p.feasible, p.reason);
  CHECK(p.chunk_layers == std::vector<int>{0, 1, 1, 1, 1, 1, 1, 0});
  CHECK(p.stage_layers == std::vector<int>{3, 3});
  // Only the ends: an empty virtual stage inside the pipeline has nothing to compute.
  l.plan.stage_layers = {1, 0, 1, 1, 1, 1, 1, 0};
  const StepPlan inner = l.make();
  CHECK_FALSE(inner.feasible);
  CHECK(inner.reason.find("the first and the last") != std::string::npos);
  // A list per rank still needs a layer in every virtual stage.
  l.plan.stage_layers = {3, 3};
  CHECK_FALSE(l.make().feasible);
}

TEST_CASE("each layout check gives a reason that names what does not divide") {
  Layout l = layout(32, 2, 4, 2, 64);
  l.cluster.nodes = 4;  // 32 GPUs for a 16-GPU layout
  StepPlan p = l.make();
  CHECK_FALSE(p.feasible);
  CHECK(p.reason.find("32") != std::string::npos);

  l = layout(32, 16, 1, 1, 64);  // 8 kv heads over tp 16: each copied on 2 ranks, as Megatron does
  CHECK(l.make().feasible);
  l.model.heads = 24;  // 24 heads, 6 kv heads over tp 4: neither divides the other
  l.model.kv_heads = 6;
  l.model.hidden = 3072;
  l.plan.tp = 4;
  l.plan.dp = 4;
  p = l.make();
  CHECK_FALSE(p.feasible);
  CHECK(p.reason ==
        "parallelism.tp: the model's kv_heads (6) must be divisible by tp (4), or tp by kv_heads");

  l = layout(32, 2, 4, 2, 63);
  p = l.make();
  CHECK_FALSE(p.feasible);
  CHECK(p.reason.find("global_batch (63)") != std::string::npos);

  l = layout(6, 1, 4, 1, 8);
  l.plan.schedule = Schedule::interleaved;
  l.plan.virtual_stages = 2;
  p = l.make();
  CHECK_FALSE(p.feasible);
  CHECK(p.reason.find("the model has 6") != std::string::npos);

  l = layout(32, 1, 4, 1, 6);  // 6 micro-batches: not a multiple of pp for interleaving
  l.plan.schedule = Schedule::interleaved;
  l.plan.virtual_stages = 2;
  p = l.make();
  CHECK_FALSE(p.feasible);
  CHECK(p.reason.find("multiple of pp") != std::string::npos);

  l = layout(32, 1, 4, 1, 8);
  l.plan.virtual_stages = 2;  // 1F1B has no virtual stages
  CHECK_FALSE(l.make().feasible);
}

TEST_CASE("a step with more micro-batches than are simulated is refused with the limit in the reason") {
  Layout l = layout(32, 1, 1, 1, kMaxMicroBatches + 1);
  l.cluster.gpus_per_node = 1;
  const StepPlan p = l.make();
  CHECK_FALSE(p.feasible);
  CHECK(p.reason.find("65536") != std::string::npos);
}

TEST_CASE("expert-parallel ranks are data replicas: the batch is split over dp·ep") {
  // 8 GPUs: tp 1, pp 1, dp 1, ep 8 (SPEC: dp = GPUs / (tp·pp·cp·ep)). 64 sequences over 8 replicas of
  // micro-batch 1 is 8 micro-batches each, not 64.
  Layout l = layout(4, 1, 1, 1, 64);
  l.model.experts = 8;
  l.model.top_k = 2;
  l.cluster.nodes = 1;
  l.cluster.gpus_per_node = 8;
  l.plan.ep = 8;
  const StepPlan p = l.make();
  REQUIRE(p.feasible);
  CHECK(p.micro_batches == 8);
  l.training.global_batch = 60;  // not a multiple of dp·ep·micro_batch = 8
  CHECK(l.make().reason ==
        "training.global_batch: global_batch (60) must be divisible by dp·ep·micro_batch = 1·8·1 = 8");
}

TEST_CASE("memory (what explain shows) and the step (what run simulates) split the layers alike") {
  // Every (layers, pp, v) up to 128 × 32 × 4: the stage layer counts estimate_memory reports per stage
  // must be the ones the step plan lays out, and both refuse the same layouts.
  int compared = 0;
  for (int pp = 1; pp <= 32; ++pp) {
    const std::int64_t dp = pp < 8 ? 1 : 8 / std::gcd(pp, 8);
    for (int v = 1; v <= 4; ++v) {
      if (pp == 1 && v > 1) continue;  // interleaving needs a pipeline (a layout rule of its own)
      for (std::int64_t layers = 1; layers <= 128; ++layers) {
        Layout l = layout(layers, 1, pp, dp, dp * pp * 2);
        if (v > 1) {
          l.plan.schedule = Schedule::interleaved;
          l.plan.virtual_stages = v;
        }
        const StepPlan step = l.make();
        if (layers < static_cast<std::int64_t>(pp) * v) {
          CHECK_FALSE(step.feasible);
          CHECK_THROWS_AS(static_cast<void>(stage_layer_counts(l.model, l.plan)), InputError);
          continue;
        }
        REQUIRE_MESSAGE(step.feasible, step.reason);
        const std::vector<int> memory = stage_layer_counts(l.model, l.plan);
        if (memory != step.stage_layers) FAIL_CHECK("layers " << layers << " pp " << pp << " v " << v);
        CHECK(std::accumulate(memory.begin(), memory.end(), std::int64_t{0}) == layers);
        ++compared;
      }
    }
  }
  CHECK(compared > 10000);
}

TEST_CASE("micro-batches per step: the global batch over dp·ep·micro_batch, a full pipeline without one") {
  ParallelPlan p;
  p.pp = 4;
  p.dp = 8;
  p.micro_batch = 2;
  TrainingSpec t;
  t.global_batch = 1024;
  CHECK(micro_batches_per_step(p, t) == 64);  // 1024 / (8·2)
  p.ep = 2;                                   // ep beside dp takes its own sequences: 1024 / (8·2·2)
  CHECK(micro_batches_per_step(p, t) == 32);
  p.expert_folding = true;  // ep folded over dp: no sequences of its own
  CHECK(micro_batches_per_step(p, t) == 64);
  t.global_batch = 8;  // less than one micro-batch per replica: still one
  CHECK(micro_batches_per_step(p, t) == 1);
  t.global_batch = 0;  // no batch (memory of a layout alone): the pipeline full, pp of them
  CHECK(micro_batches_per_step(p, t) == 4);
}
