#include "models/run/cost_figures.hpp"

#include <doctest/doctest.h>

using namespace trainsim;

TEST_CASE("the bill's figures: per token, per PFLOP of model FLOPs, per loss point, and its elastic part") {
  // $1,000 for 1e9 tokens in 100 steps of 1e16 model FLOPs each: 1e18 FLOPs = 1,000 PFLOP, so $1e-6 a token
  // and $1 a PFLOP. On demand: $600 of the run's GPU-hours and $150 of the trials', $750 in all. From the
  // law's 7.5 nats after the first step to the 2.5 of the target: 5 loss points, $200 each.
  model::RunReport run;
  run.cost_total = 1000;
  run.cost_compute = 600;
  run.cost_tuning = 150;
  run.tokens = 1e9;
  run.steps = 100;
  run.convergence = true;
  run.initial_loss = 7.5;
  run.target_loss = 2.5;
  model::set_cost_figures(run, 1e16);
  CHECK(run.cost_per_token == doctest::Approx(1e-6).epsilon(1e-12).scale(0));
  CHECK(run.cost_per_pflop == doctest::Approx(1.0).epsilon(1e-12).scale(0));
  CHECK(run.cost_elastic == doctest::Approx(750.0).epsilon(1e-12).scale(0));
  CHECK(run.cost_per_loss_point == doctest::Approx(200.0).epsilon(1e-12).scale(0));

  // Without a target there are no loss points to price; a run that trains nothing has no unit costs.
  model::RunReport nothing;
  nothing.cost_total = 5;
  model::set_cost_figures(nothing, 1e16);
  CHECK(nothing.cost_per_token == 0);
  CHECK(nothing.cost_per_pflop == 0);
  CHECK(nothing.cost_per_loss_point == 0);
}
