// A model that alternates sliding-window and full attention layers (GPT-OSS): each stage is priced as the
// sum of its own layers, a windowed and a full layer each by its own kernels, never an average.
#include <doctest/doctest.h>

#include "models/step/step_costs.hpp"
#include "models/workload/layer_ops.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

// GPT of 4 layers, h 1024, 16 heads of 64, s 2048, a 256-token window on layers 0 and 2. On 8 A100s as
// pp 2 × dp 4: stage 0 holds layers 0 (windowed) and 1 (full), stage 1 layers 2 and 3.
StepInput alternating() {
  StepInput in;
  in.model = testing::gpt(4, 1024, 16);
  in.model.sliding_window = 256;
  in.model.window_layers = {true, false};
  in.cluster = testing::dgx_a100(1);
  in.plan.pp = 2;
  in.plan.dp = 4;
  in.training.global_batch = 16;
  return in;
}

double attention_flops(const std::vector<LayerOp>& ops) {
  double f = 0;
  for (const LayerOp& op : ops) {
    if (!op.communication && op.kernel.kind == OpKind::fused_attention) f += op.kernel.flops;
  }
  return f;
}

}  // namespace

TEST_CASE("a stage of windowed and full layers is the sum of its own layers") {
  const StepInput in = alternating();
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  const StepCosts costs = step_costs(in, plan);
  // Stage 0: the embedding, a windowed layer, a full layer; stage 1: windowed, full, the head.
  REQUIRE(costs.chunk_units[0].size() == 3);
  REQUIRE(costs.chunk_units[1].size() == 3);
  const UnitRun w0 = costs.chunk_units[0][1];
  const UnitRun f1 = costs.chunk_units[0][2];
  const UnitRun w2 = costs.chunk_units[1][0];
  const UnitRun f3 = costs.chunk_units[1][1];
  CHECK((w0.count == 1 && w0.first_layer == 0 && f1.count == 1 && f1.first_layer == 1));
  CHECK((w2.first_layer == 2 && f3.first_layer == 3));
  CHECK(w0.unit == w2.unit);
  CHECK(f1.unit == f3.unit);
  const UnitCost& windowed = costs.units[static_cast<std::size_t>(w0.unit)];
  const UnitCost& full = costs.units[static_cast<std::size_t>(f1.unit)];
  CHECK(windowed.name == "windowed_layer");
  CHECK(full.name == "layer");
  CHECK(windowed.total.forward_compute < full.total.forward_compute);
  const UnitCost& embedding = costs.units[static_cast<std::size_t>(costs.chunk_units[0][0].unit)];
  const UnitCost& head = costs.units[static_cast<std::size_t>(costs.chunk_units[1][2].unit)];
  CHECK(costs.passes[0].forward_compute ==
        doctest::Approx(embedding.total.forward_compute + windowed.total.forward_compute +
                        full.total.forward_compute));
  CHECK(costs.passes[1].forward_compute ==
        doctest::Approx(windowed.total.forward_compute + full.total.forward_compute +
                        head.total.forward_compute));

  // The fused kernels' FLOPs of one sequence, by hand (16 heads, d + dv = 128):
  //   windowed  2·16·128·(256·2048 − 256·255/2) = 4096·491,648 = 2,013,790,208
  //   full      2·16·128·2048²/2 (the causal half)            = 8,589,934,592
  const Shard shard = shard_of(in.plan, in.training.precision);
  CHECK(attention_flops(transformer_layer_ops(in.model.as_attention_layer(true), shard).forward) ==
        2'013'790'208.0);
  CHECK(attention_flops(transformer_layer_ops(in.model.as_attention_layer(false), shard).forward) ==
        8'589'934'592.0);
}

TEST_CASE("a model without a window keeps one layer unit per stage run") {
  StepInput in = alternating();
  in.model.sliding_window = 0;
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  const StepCosts costs = step_costs(in, plan);
  REQUIRE(costs.chunk_units[0].size() == 2);
  CHECK(costs.chunk_units[0][1].count == 2);
  CHECK(costs.units.size() == 3);
}
