#include "models/step/analytic_step.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "models/workload/layer_ops.hpp"
#include "models/workload/shard.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

// A plan of p ranks × v chunks, one layer per chunk, m micro-batches, and the layout it came from.
struct Case {
  StepInput input;
  StepPlan plan;
  StepCosts costs;
  [[nodiscard]] StepTiming run() const { return analytic_step(input, plan, costs); }
};

Case uniform(Schedule schedule, int p, int v, int m, double forward_s, double backward_s) {
  Case c;
  c.input.plan.schedule = schedule;
  c.input.plan.pp = p;
  c.input.plan.virtual_stages = v;
  c.plan.schedule = schedule;  // the schedule the step replays
  c.plan.pp = p;
  c.plan.virtual_stages = v;
  c.plan.micro_batches = m;
  c.plan.chunk_layers.assign(static_cast<std::size_t>(p * v), 1);
  c.plan.stage_layers.assign(static_cast<std::size_t>(p), v);
  PassCost pass;
  pass.forward_compute = forward_s;
  pass.backward_compute = backward_s;
  c.costs.passes.assign(static_cast<std::size_t>(p * v), pass);
  c.costs.stages.assign(static_cast<std::size_t>(p), StageCost{});
  return c;
}

}  // namespace

TEST_CASE("with zero communication the analytic 1F1B bubble fraction is (p-1)/(m+p-1)") {
  for (int p : {2, 4, 8}) {
    for (int m : {8, 32}) {
      const StepTiming t = uniform(Schedule::one_f_one_b, p, 1, m, 1.0, 2.0).run();
      CHECK(t.iteration_time == doctest::Approx((m + p - 1) * 3.0).scale(0));
      CHECK(t.time.compute == doctest::Approx(m * 3.0).scale(0));
      CHECK(t.bubble_fraction == doctest::Approx(double(p - 1) / (m + p - 1)).scale(0));
    }
  }
}

TEST_CASE("interleaving v chunks divides the analytic bubble by v") {
  const int p = 4, m = 16;
  for (int v : {2, 4}) {
    const StepTiming t = uniform(Schedule::interleaved, p, v, m, 1.0 / v, 2.0 / v).run();
    const double bubble = (p - 1) * 3.0 / v;
    CHECK(t.time.bubble == doctest::Approx(bubble).scale(0));
    CHECK(t.bubble_fraction == doctest::Approx(bubble / (m * 3.0 + bubble)).scale(0));
  }
}

TEST_CASE("the heaviest pipeline stage sets the pace") {
  // Three ranks of 1, 2 and 1 units (F = u, B = 2u): in steady state every rank waits for the middle one,
  // so the step takes at least m·6, and at most what a pipeline of three heavy stages would take.
  Case c = uniform(Schedule::one_f_one_b, 3, 1, 16, 1.0, 2.0);
  c.costs.passes[1].forward_compute = 2.0;
  c.costs.passes[1].backward_compute = 4.0;
  const StepTiming t = c.run();
  CHECK(t.iteration_time >= 16 * 6.0);
  CHECK(t.iteration_time <= (16 + 2) * 6.0);
  // The breakdown is the middle rank's: its 16 × (2 + 4) s of kernels, not the 16 × 3 s of stage 0 (the
  // rank that ends last, whose waits for the middle one would otherwise read as bubble).
  CHECK(t.critical_stage == 1);
  CHECK(t.time.compute == doctest::Approx(16 * 6.0).scale(0));
  CHECK(t.time.bubble == doctest::Approx(t.iteration_time - 16 * 6.0).scale(0));
  // The fleet: ranks busy 48, 96 and 48 s of the step; the outer two also wait 48 s each for the middle.
  CHECK(t.fleet_compute_fraction == doctest::Approx((48.0 + 96.0 + 48.0) / 3.0 / t.iteration_time).scale(0));
  CHECK(t.fleet_idle_fraction == doctest::Approx(t.bubble_fraction + (48.0 + 48.0) / 3.0 / t.iteration_time));
}

TEST_CASE("overlapped gradient buckets are exposed only beyond the last backward") {
  // One rank, one micro-batch: F = 1 s, B = 2 s; 4 buckets become ready at 1.5, 2, 2.5 and 3 s.
  Case c = uniform(Schedule::one_f_one_b, 1, 1, 1, 1.0, 2.0);
  c.costs.stages[0].buckets = 4;
  c.costs.stages[0].bucket_s = 0.25;  // 1 s in all: the last bucket (3 → 3.25 s) is all that shows
  StepTiming t = c.run();
  CHECK(t.time.exposed_dp_comm == doctest::Approx(0.25).scale(0));
  CHECK(t.iteration_time == doctest::Approx(3.25).scale(0));

  c.costs.stages[0].bucket_s = 1.0;  // 4 s in all, from 1.5 s: done at 5.5 s, 2.5 s after the backward
  t = c.run();
  CHECK(t.time.exposed_dp_comm == doctest::Approx(2.5).scale(0));

  c.input.plan.overlap_grad_reduce = false;  // all 4 s after the backward
  t = c.run();
  CHECK(t.time.exposed_dp_comm == doctest::Approx(4.0).scale(0));
  CHECK(t.iteration_time == doctest::Approx(7.0).scale(0));
}

TEST_CASE("ZeRO-3 gathers hide under compute up to its length, and the optimizer follows the reduction") {
  // Two micro-batches through one unit of F = 1, B = 2 that gathers in 1.5 s and reduces in 1 s: nothing
  // precedes the unit to hide its gather under, so each forward takes 1.5 + 1 and each backward
  // 1.5 + 2, and the last reduction runs 1 s past the last backward.
  Case c = uniform(Schedule::one_f_one_b, 1, 1, 2, 1.0, 2.0);
  c.input.plan.zero = ZeroStage::parameters;
  c.input.plan.dp = 4;
  UnitCost u;
  u.total = c.costs.passes[0];
  u.gather_s = 1.5;
  u.reduce_s = 1.0;
  c.costs.units = {u};
  c.costs.chunk_units = {{UnitRun{0, 1, 0}}};
  c.costs.gathers_weights = true;
  c.costs.stages[0].buckets = 0;
  c.costs.stages[0].optimizer_s = 0.2;
  c.costs.stages[0].grad_norm_s = 0.05;
  const StepTiming t = c.run();
  CHECK(t.time.exposed_dp_comm == doctest::Approx(2 * (1.5 + 1.5) + 1.0).scale(0));
  CHECK(t.time.optimizer == doctest::Approx(0.25).scale(0));
  CHECK(t.iteration_time == doctest::Approx(2 * (2.5 + 3.5) + 1.0 + 0.25).scale(0));
  CHECK(t.time.total() == doctest::Approx(t.iteration_time).scale(0));
}

namespace {

// Sums a piece list in order: kernels, and the communication each piece exposes (a blocking collective
// all of it; an overlappable one what it exceeds the kernel it runs under).
struct Sums {
  double compute = 0, comm = 0, weight = 0;
};
Sums sum(const std::vector<CostPiece>& pieces) {
  Sums s;
  for (const CostPiece& x : pieces) {
    s.compute += x.compute;
    s.weight += x.weight;
    s.comm += x.kind == CostPiece::Kind::overlapped ? std::max(0.0, x.comm - x.compute) : x.comm;
  }
  return s;
}

void check_pieces_sum_to_passes(const StepInput& in) {
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  const StepCosts costs = step_costs(in, plan);
  REQUIRE(costs.chunk_units.size() == costs.passes.size());
  int layers = 0;
  for (std::size_t vs = 0; vs < costs.passes.size(); ++vs) {
    CAPTURE(vs);
    PassCost want;
    int layers_here = 0;
    for (const UnitRun& r : costs.chunk_units[vs]) {
      const UnitCost& u = costs.units[static_cast<std::size_t>(r.unit)];
      const double n = r.count;
      const Sums f = sum(u.forward);
      const Sums b = sum(u.backward);
      want.forward_compute += n * f.compute;
      want.forward_comm += n * f.comm;
      want.backward_compute += n * b.compute;
      want.backward_comm += n * b.comm;
      want.weight_compute += n * b.weight;
      if (r.first_layer >= 0) {  // runs of layers follow each other in model order
        CHECK(r.first_layer == plan.first_layer_of(static_cast<int>(vs)) + layers_here);
        layers_here += r.count;
      }
    }
    const PassCost& got = costs.passes[vs];
    CHECK(got.forward_compute == want.forward_compute);
    CHECK(got.forward_comm == want.forward_comm);
    CHECK(got.backward_compute == want.backward_compute);
    CHECK(got.backward_comm == want.backward_comm);
    CHECK(got.weight_compute == want.weight_compute);
    CHECK(got.forward_compute > 0);
    layers += layers_here;
  }
  CHECK(layers == in.model.layers);
}

}  // namespace

TEST_CASE("a pass's costs are exactly the sum of its units' pieces") {
  StepInput in;
  in.model = testing::gpt(16, 1024, 16);
  in.cluster = testing::dgx_a100(2);
  in.plan.tp = 2;
  in.plan.pp = 2;
  in.plan.cp = 2;
  in.plan.dp = 2;
  in.plan.schedule = Schedule::interleaved;
  in.plan.virtual_stages = 2;
  in.plan.sequence_parallel = true;
  in.training.global_batch = 16;
  SUBCASE("tp, cp (overlapped ring exchange), interleaved, selective recompute") {
    in.plan.recompute = Recompute::selective;
    check_pieces_sum_to_passes(in);
  }
  SUBCASE("standard attention, full recompute") {
    in.model.attention = Attention::standard;
    in.plan.recompute = Recompute::full;
    check_pieces_sum_to_passes(in);
  }
  SUBCASE("generic layers: one run per layer") {
    in.model = TransformerSpec{};
    in.model.seq_len = 1;
    for (int l = 0; l < 6; ++l)
      in.model.generic_layers.push_back(GenericLayer{"conv" + std::to_string(l), 1e6, 1e9, 1e6});
    in.model.layers = 6;
    in.plan.cp = 1;
    in.plan.dp = 4;
    in.plan.virtual_stages = 1;
    in.plan.schedule = Schedule::one_f_one_b;
    in.plan.sequence_parallel = false;
    check_pieces_sum_to_passes(in);
  }
}

TEST_CASE("a transformer layer's pieces alternate kernels and its blocking collectives, in op order") {
  StepInput in;
  in.model = testing::gpt(4, 1024, 16);
  in.cluster = testing::dgx_a100(1);
  in.plan.tp = 4;
  in.plan.dp = 2;
  in.plan.sequence_parallel = true;
  in.plan.framework.tp_comm_overlap = false;  // every tp collective blocks
  in.training.global_batch = 16;
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  const StepCosts costs = step_costs(in, plan);
  const LayerOps ops = transformer_layer_ops(in.model, shard_of(in.plan, in.training.precision));
  const auto& runs = costs.chunk_units[0];
  REQUIRE(runs.size() == 3);  // embedding, the layers, the head
  CHECK(runs[1].count == 4);
  CHECK(runs[1].first_layer == 0);
  const UnitCost& layer = costs.units[static_cast<std::size_t>(runs[1].unit)];
  // One collective piece per collective op, in the same order, and never two kernel pieces in a row.
  for (const auto* list : {&layer.forward, &layer.backward}) {
    const auto& op_list = list == &layer.forward ? ops.forward : ops.backward;
    std::vector<std::string> want, got;
    for (const LayerOp& op : op_list) {
      if (op.communication) want.push_back(op.name);
    }
    for (std::size_t k = 0; k < list->size(); ++k) {
      const CostPiece& x = (*list)[k];
      if (x.kind == CostPiece::Kind::collective) {
        got.push_back(x.name);
        CHECK(x.comm > 0);
      } else if (k > 0) {
        CHECK((*list)[k - 1].kind != CostPiece::Kind::compute);
      }
    }
    CHECK(got == want);
  }
}
