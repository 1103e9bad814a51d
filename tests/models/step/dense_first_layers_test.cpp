// A MoE model whose first layers are dense (DeepSeek-V3's first_k_dense_replace): the stage that holds
// them is priced with the dense layer's kernels, the others with the MoE layer's, each by its own count.
#include <doctest/doctest.h>

#include "models/step/memory.hpp"
#include "models/step/step_costs.hpp"
#include "models/workload/flops.hpp"
#include "models/workload/layer_ops.hpp"
#include "models/workload/parameters.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

// GPT of 4 layers, h 1024, 16 heads, s 2048 (GELU, biases), made MoE: 8 experts of 512, top 2, and its
// first 2 layers dense with the 4h = 4096 MLP. On 8 A100s as pp 2 × dp 4: stage 0 holds the two dense
// layers, stage 1 the two MoE layers.
StepInput dense_first_moe() {
  StepInput in;
  in.model = testing::gpt(4, 1024, 16);
  in.model.experts = 8;
  in.model.top_k = 2;
  in.model.expert_ffn_hidden = 512;
  in.model.dense_layers = 2;
  in.cluster = testing::dgx_a100(1);
  in.plan.pp = 2;
  in.plan.dp = 4;
  in.training.global_batch = 16;
  return in;
}

double matmul_flops(const std::vector<LayerOp>& ops) {
  double f = 0;
  for (const LayerOp& op : ops) {
    if (!op.communication && op.kernel.kind == OpKind::matmul) f += op.kernel.flops;
  }
  return f;
}

}  // namespace

TEST_CASE("dense first layers are priced as dense layers on the stage that holds them") {
  // The kernels alone: the host issues for free (the MoE layer's wait on the host is host_issue_test's),
  // the router is its GEMM (its other kernels are layer_ops_test's), and no biases (the experts' bias runs
  // a kernel pair per local expert, 8 here, layer_ops_test's too).
  StepInput in = dense_first_moe();
  in.model.bias = false;
  in.plan.framework.launch_overhead_s = 0;
  in.plan.framework.expert_launch_s = 0;
  in.plan.framework.router_kernels = 1;
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  const StepCosts costs = step_costs(in, plan);
  // Stage 0: the embedding and a run of the 2 dense layers; stage 1: a run of the 2 MoE layers and the head.
  REQUIRE(costs.chunk_units[0].size() == 2);
  REQUIRE(costs.chunk_units[1].size() == 2);
  const UnitRun dense_run = costs.chunk_units[0][1];
  const UnitRun moe_run = costs.chunk_units[1][0];
  CHECK((dense_run.count == 2 && dense_run.first_layer == 0));
  CHECK((moe_run.count == 2 && moe_run.first_layer == 2));
  const UnitCost& dense = costs.units[static_cast<std::size_t>(dense_run.unit)];
  const UnitCost& moe = costs.units[static_cast<std::size_t>(moe_run.unit)];
  CHECK(dense.name == "dense_layer");
  CHECK(moe.name == "layer");

  // Each stage's pass is its units, each by its own count.
  const UnitCost& embedding = costs.units[static_cast<std::size_t>(costs.chunk_units[0][0].unit)];
  const UnitCost& head = costs.units[static_cast<std::size_t>(costs.chunk_units[1][1].unit)];
  CHECK(costs.passes[0].forward_compute ==
        doctest::Approx(embedding.total.forward_compute + 2.0 * dense.total.forward_compute));
  CHECK(costs.passes[1].forward_compute ==
        doctest::Approx(2.0 * moe.total.forward_compute + head.total.forward_compute));

  // The parameter GEMMs of a micro-batch (T = 2048 tokens, h = 1024), forward, by hand:
  //   dense layer  qkv 2·T·h·3h + out 2·T·h·h + fc1, fc2 2·2·T·h·4h = 24·T·h²
  //   MoE layer    qkv and out 8·T·h², router 2·T·h·8, experts fc1 and fc2 on 2T slots of 512:
  //                2·2·(2T)·h·512 = 4096·T·h: 8·T·h² + 16·T·h + 4096·T·h
  const double T = 2048, h = 1024;
  const Shard shard = shard_of(in.plan, in.training.precision);
  const LayerOps dense_ops = transformer_layer_ops(in.model.as_dense_layer(), shard);
  const LayerOps moe_ops = transformer_layer_ops(in.model, shard);
  CHECK(matmul_flops(dense_ops.forward) == doctest::Approx(24.0 * T * h * h));
  CHECK(matmul_flops(moe_ops.forward) == doctest::Approx(8.0 * T * h * h + 16.0 * T * h + 4096.0 * T * h));
  // With the causal flash core (4·T²·h, half of it executed: 2·T·h·2048 = 4·T·h²) a dense layer executes
  // 28·T·h² against the MoE layer's 16.5·T·h²: the dense layers' stage is the slower, by less than the
  // FLOP ratio where the MoE layer's small grouped expert GEMMs run at a lower efficiency.
  CHECK(dense.total.forward_compute > moe.total.forward_compute);
  CHECK(dense.total.forward_compute < 28.0 / 16.5 * moe.total.forward_compute);

  // The step's model FLOPs count the layers by kind: 2 dense + 2 MoE layers of the same attention.
  const ForwardFlops f = forward_flops_per_sequence(in.model);
  CHECK(f.layers_total() ==
        doctest::Approx(2.0 * (24.0 * T * h * h) + 2.0 * (8.0 * T * h * h + 16.0 * T * h + 4096.0 * T * h) +
                        4.0 * (4.0 * T * T * h)));
}

TEST_CASE("the stages' weights hold the dense MLPs where the dense layers are") {
  const StepInput in = dense_first_moe();
  // Stage 0: 2 dense layers + the embedding; stage 1: 2 MoE layers + the final norm and the LM head (GELU
  // MLPs with biases: a dense MLP 2·h·4h + 4h + h, an expert 2·h·512 + 512 + h).
  const double h = 1024;
  const double attention = 4.0 * h * h + 4.0 * h;
  const double norms = 2.0 * 2.0 * h;
  const double dense_layer = attention + 8.0 * h * h + 5.0 * h + norms;
  const double moe_layer = attention + 8.0 * (1024.0 * h + 512.0 + h) + 8.0 * h + norms;
  const double v = static_cast<double>(in.model.vocab), s = 2048;
  double stage0 = 0, stage1 = 0;
  for (const auto& t : stage_parameter_tensors(in.model, in.plan, 0)) stage0 += t.elements();
  for (const auto& t : stage_parameter_tensors(in.model, in.plan, 1)) stage1 += t.elements();
  CHECK(stage0 == doctest::Approx(2.0 * dense_layer + v * h + s * h));
  CHECK(stage1 == doctest::Approx(2.0 * moe_layer + 2.0 * h + v * h));
  CHECK(stage0 == doctest::Approx(stage_parameter_count(in.model, 2, true, false, 0)));
  CHECK(stage1 == doctest::Approx(stage_parameter_count(in.model, 2, false, true, 2)));
}

TEST_CASE("under fp8 the dense first layers' stage keeps fp8 copies of the dense GEMMs") {
  StepInput in = dense_first_moe();
  in.training.precision = topo::Precision::fp8;
  const MemoryEstimate e = estimate_memory(in.model, in.plan, in.training, in.cluster.node.gpu);
  REQUIRE(e.stages.size() == 2);
  // GEMM weights per layer (tp 1, ep 1): attention qkv h·3h + out h·h = 4h²; a dense layer's MLP 2·h·4h =
  // 8h²; a MoE layer's 8 experts 8·2·h·512 = 8h² (h = 1024), so both stages hold 2·12h².
  const double h = 1024;
  CHECK(e.stages[0].fp8.gemm_weights == doctest::Approx(2.0 * 12.0 * h * h));
  CHECK(e.stages[1].fp8.gemm_weights == doctest::Approx(2.0 * 12.0 * h * h));
  // fp8 GEMMs: a dense layer's qkv, out_proj, fc1, fc2 = 4; a MoE layer's qkv, out_proj and the grouped
  // fc1, fc2 of its experts counted once per expert: 2 + 2·8 = 18.
  CHECK(e.stages[0].fp8.fp8_gemms == 2.0 * 4.0);
  CHECK(e.stages[1].fp8.fp8_gemms == 2.0 * 18.0);
}
