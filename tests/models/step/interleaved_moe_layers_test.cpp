// A MoE model whose MoE layers alternate with dense ones (Llama 4 Maverick's interleave_moe_layer_step 2):
// which layers are dense, what a pipeline stage holds of each, and the step priced layer by layer so.
#include <doctest/doctest.h>

#include "models/step/step_costs.hpp"
#include "models/workload/parameters.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

// GPT of 8 layers, h 1024, 16 heads, made MoE every other layer: 8 experts of 512, top 2. Layers 1, 3, 5, 7
// are MoE, 0, 2, 4, 6 dense with the 4h MLP.
TransformerSpec alternating() {
  TransformerSpec m = testing::gpt(8, 1024, 16);
  m.experts = 8;
  m.top_k = 2;
  m.expert_ffn_hidden = 512;
  m.moe_layer_step = 2;
  return m;
}

}  // namespace

TEST_CASE("every moe_layer_step-th layer after the dense first ones is MoE") {
  TransformerSpec m = alternating();
  CHECK(m.is_dense_layer(0));
  CHECK_FALSE(m.is_dense_layer(1));
  CHECK(m.is_dense_layer(6));
  CHECK_FALSE(m.is_dense_layer(7));
  CHECK(m.first_moe_layer() == 1);
  CHECK(m.dense_layer_count() == 4);
  CHECK(m.moe_layer_count() == 4);
  CHECK(m.dense_layers_in(2, 4) == 2);  // layers 2..5: 2 and 4
  CHECK(m.dense_layers_in(3, 1) == 0);
  CHECK(m.dense_layers_in(6, 10) == 1);  // clamped to layers 6, 7
  // With a dense first layer: layer 0 dense, then every other from layer 1 on: 2, 4, 6 MoE.
  m.dense_layers = 1;
  CHECK(m.first_moe_layer() == 2);
  CHECK(m.dense_layers_in(0, 8) == 5);  // 0, 1, 3, 5, 7
  // A step of 3 on 8 layers: 2 and 5 MoE.
  m.dense_layers = 0;
  m.moe_layer_step = 3;
  CHECK(m.moe_layer_count() == 2);
  CHECK_FALSE(m.is_dense_layer(2));
  CHECK_FALSE(m.is_dense_layer(5));
}

TEST_CASE("a pipeline stage holds the dense and MoE layers as they alternate, and is priced so") {
  // pp 2: stage 0 layers 0..3, stage 1 layers 4..7; each holds 2 dense and 2 MoE layers, where the same
  // counts with the dense layers first (dense_layers 4) put all 4 dense on stage 0.
  StepInput in;
  in.model = alternating();
  in.cluster = testing::dgx_a100(1);
  in.plan.pp = 2;
  in.plan.dp = 4;
  in.training.global_batch = 16;
  const ParameterBreakdown p = parameter_breakdown(in.model);
  CHECK(stage_parameter_count(in.model, 4, false, false, 0) ==
        doctest::Approx(2 * p.per_layer() + 2 * p.dense_per_layer()).epsilon(1e-12));
  CHECK(stage_parameter_count(in.model, 4, false, false, 4) ==
        stage_parameter_count(in.model, 4, false, false, 0));
  CHECK(layer_parameter_count(in.model, 2) == p.dense_per_layer());
  CHECK(layer_parameter_count(in.model, 3) == p.per_layer());

  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  const StepCosts costs = step_costs(in, plan);
  // Stage 0: the embedding, then dense, MoE, dense, MoE runs of one layer each.
  REQUIRE(costs.chunk_units[0].size() == 5);
  const UnitCost& dense = costs.units[static_cast<std::size_t>(costs.chunk_units[0][1].unit)];
  const UnitCost& moe = costs.units[static_cast<std::size_t>(costs.chunk_units[0][2].unit)];
  CHECK(dense.name == "dense_layer");
  CHECK(moe.name == "layer");
  CHECK(costs.chunk_units[0][1].first_layer == 0);
  CHECK(costs.chunk_units[0][4].first_layer == 3);
  const UnitCost& embedding = costs.units[static_cast<std::size_t>(costs.chunk_units[0][0].unit)];
  CHECK(costs.passes[0].forward_compute ==
        doctest::Approx(embedding.total.forward_compute + 2.0 * dense.total.forward_compute +
                        2.0 * moe.total.forward_compute));
}
