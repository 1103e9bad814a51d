#include "models/analytic_step.hpp"

#include <doctest/doctest.h>

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
      CHECK(t.iteration_time == doctest::Approx((m + p - 1) * 3.0));
      CHECK(t.time.compute == doctest::Approx(m * 3.0));
      CHECK(t.bubble_fraction == doctest::Approx(double(p - 1) / (m + p - 1)));
    }
  }
}

TEST_CASE("interleaving v chunks divides the analytic bubble by v") {
  const int p = 4, m = 16;
  for (int v : {2, 4}) {
    const StepTiming t = uniform(Schedule::interleaved, p, v, m, 1.0 / v, 2.0 / v).run();
    const double bubble = (p - 1) * 3.0 / v;
    CHECK(t.time.bubble == doctest::Approx(bubble));
    CHECK(t.bubble_fraction == doctest::Approx(bubble / (m * 3.0 + bubble)));
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
}

TEST_CASE("overlapped gradient buckets are exposed only beyond the last backward") {
  // One rank, one micro-batch: F = 1 s, B = 2 s; 4 buckets become ready at 1.5, 2, 2.5 and 3 s.
  Case c = uniform(Schedule::one_f_one_b, 1, 1, 1, 1.0, 2.0);
  c.costs.stages[0].buckets = 4;
  c.costs.stages[0].bucket_s = 0.25;  // 1 s in all: the last bucket (3 → 3.25 s) is all that shows
  StepTiming t = c.run();
  CHECK(t.time.exposed_dp_comm == doctest::Approx(0.25));
  CHECK(t.iteration_time == doctest::Approx(3.25));

  c.costs.stages[0].bucket_s = 1.0;  // 4 s in all, from 1.5 s: done at 5.5 s, 2.5 s after the backward
  t = c.run();
  CHECK(t.time.exposed_dp_comm == doctest::Approx(2.5));

  c.input.plan.overlap_grad_reduce = false;  // all 4 s after the backward
  t = c.run();
  CHECK(t.time.exposed_dp_comm == doctest::Approx(4.0));
  CHECK(t.iteration_time == doctest::Approx(7.0));
}

TEST_CASE("ZeRO-3 gathers hide under compute up to its length, and the optimizer follows the reduction") {
  // Two micro-batches, F = 1, B = 2; gathers 1.5 s per pass, reduce-scatter 1 s per backward:
  // forward exposes 0.5, backward 2.5 − 2 = 0.5, and the first gather (1.5) cannot be prefetched.
  Case c = uniform(Schedule::one_f_one_b, 1, 1, 2, 1.0, 2.0);
  c.input.plan.zero = 3;
  c.input.plan.dp = 4;
  c.costs.stages[0].buckets = 0;
  c.costs.stages[0].zero3_gather_s = 1.5;
  c.costs.stages[0].zero3_reduce_s = 1.0;
  c.costs.stages[0].optimizer_s = 0.2;
  c.costs.stages[0].grad_norm_s = 0.05;
  const StepTiming t = c.run();
  CHECK(t.time.exposed_dp_comm == doctest::Approx(2 * 1.0 + 1.5));
  CHECK(t.time.optimizer == doctest::Approx(0.25));
  CHECK(t.iteration_time == doctest::Approx(2 * 3.0 + 3.5 + 0.25));
  CHECK(t.time.total() == doctest::Approx(t.iteration_time));
}
