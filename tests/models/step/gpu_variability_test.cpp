#include "models/step/gpu_variability.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "models/step/asymmetry.hpp"
#include "models/step/step_costs.hpp"
#include "models/step/step_plan.hpp"
#include "models/step/step_simulator.hpp"
#include "sim/error.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::model;

TEST_CASE("the expected maximum of N draws against its order-statistics formula") {
  // E[max of n standard normals] = ∫ x · n φ(x) Φ(x)^(n−1) dx has closed forms for small n:
  //   n = 1: 0 (the mean);
  //   n = 2: E[max(X1, X2)] = E|X1 − X2| / 2 = √2 · √(2/π) / 2 = 1/√π;
  //   n = 3: 3/(2√π), from the recurrence (n − r)·E[X(r:n)] + r·E[X(r+1:n)] = n·E[X(r:n−1)] at n = 3,
  //          r = 2, with the median's mean E[X(2:3)] = 0 by symmetry: E[X(3:3)] = (3/2)·E[X(2:2)];
  //   n = 4: (6/π^(3/2)) · arctan √2;
  //   n = 5: 5/(4√π) + (15/(2π^(3/2))) · arcsin(1/3) (both in David & Nagaraja, Order Statistics, 2003).
  const double pi = std::numbers::pi;
  CHECK(expected_max_standard_normal(1) == 0.0);
  CHECK(expected_max_standard_normal(2) == doctest::Approx(1 / std::sqrt(pi)).epsilon(1e-6));
  CHECK(expected_max_standard_normal(3) == doctest::Approx(3 / (2 * std::sqrt(pi))).epsilon(1e-6));
  CHECK(expected_max_standard_normal(4) ==
        doctest::Approx(6 / std::pow(pi, 1.5) * std::atan(std::sqrt(2.0))).epsilon(1e-6));
  CHECK(expected_max_standard_normal(5) ==
        doctest::Approx(5 / (4 * std::sqrt(pi)) + 15 / (2 * std::pow(pi, 1.5)) * std::asin(1.0 / 3))
            .epsilon(1e-6));
  // Harter (1961), "Expected values of normal order statistics", Biometrika 48: 1.53875 (10), 2.50759
  // (100), 3.24144 (1,000).
  CHECK(expected_max_standard_normal(10) == doctest::Approx(1.53875).epsilon(1e-5));
  CHECK(expected_max_standard_normal(100) == doctest::Approx(2.50759).epsilon(1e-5));
  CHECK(expected_max_standard_normal(1000) == doctest::Approx(3.24144).epsilon(1e-5));
  // It grows with log N: at 16,384 GPUs within 10 % of √(2 ln N) (the leading term of its asymptote).
  const double n = 16384;
  const double e = expected_max_standard_normal(16384);
  CHECK(e > expected_max_standard_normal(1000));
  CHECK(e / std::sqrt(2 * std::log(n)) > 0.9);
  CHECK(e / std::sqrt(2 * std::log(n)) < 1.0);
  CHECK_THROWS_AS((void)expected_max_standard_normal(0), InputError);
}

TEST_CASE("the spread of the slowest of N draws against its order-statistics formula") {
  // Var[max] = E[max²] − E[max]²: n = 1, the draw itself: 1; n = 2, max² + min² = X1² + X2² and both have
  // the same law up to sign, so E[max²] = 1 and Var = 1 − 1/π; n = 3, E[max²] = 1 + √3/(2π) (David &
  // Nagaraja, Order Statistics, 2003), Var = 1 + √3/(2π) − 9/(4π) = 0.5595.
  const double pi = std::numbers::pi;
  CHECK(sd_max_standard_normal(1) == 1.0);
  CHECK(sd_max_standard_normal(2) == doctest::Approx(std::sqrt(1 - 1 / pi)).epsilon(1e-6));
  CHECK(sd_max_standard_normal(3) ==
        doctest::Approx(std::sqrt(1 + std::sqrt(3.0) / (2 * pi) - 9 / (4 * pi))).epsilon(1e-6));
  // The slowest of many is a narrower law than one draw: the spread falls with n.
  CHECK(sd_max_standard_normal(1000) < sd_max_standard_normal(10));
  CHECK_THROWS_AS((void)sd_max_standard_normal(0), InputError);
}

TEST_CASE("the closed form's expected slowest draw: fill and drain per replica, steady state of all") {
  const double pi = std::numbers::pi;
  // No pipeline: every pass waits for the slowest of all G·R GPUs, E[max of 100] = 2.50759 (Harter 1961).
  CHECK(expected_slowest_draw({.stage_gpus = 10, .replicas = 10, .stages = 1, .steady_passes = 8}) ==
        doctest::Approx(2.50759).epsilon(1e-5));
  // G = 2, R = 10, p = 5, m·v = 3: the fill and drain's 4 passes at E[max of 2] + sd[max of 2]·E[max of
  // 10]/√4 = 1/√π + √(1 − 1/π)·1.53875/2, the steady state's 3 at E[max of 100] = 2.50759.
  const double fill = 1 / std::sqrt(pi) + std::sqrt(1 - 1 / pi) * 1.53875 / 2;
  const double x = (4 * fill + 3 * 2.50759) / 7;
  const PipelineDraws d{.stage_gpus = 2, .replicas = 10, .stages = 5, .steady_passes = 3};
  CHECK(expected_slowest_draw(d) == doctest::Approx(x).epsilon(1e-5));
  CHECK(expected_slowest_draw(d) < 2.50759);          // below the slowest of all: the fill sums the draws
  topo::ClusterSpec c = testing::dgx_a100(13);        // 104 GPUs: the cluster's size does not enter
  CHECK(expected_slowest_gpu_slowdown(c, d) == 1.0);  // the fixture's GPU has no spread
  CHECK(expected_own_stage_slowdown(c, d) == 1.0);
  c.node.gpu.variability = 0.02;
  CHECK(variability_spread(c) == 0.02);
  CHECK(expected_slowest_gpu_slowdown(c, d) == doctest::Approx(1 + 0.02 * x).epsilon(1e-6));
  CHECK(expected_own_stage_slowdown(c, d) == doctest::Approx(1 + 0.02 / std::sqrt(pi)).epsilon(1e-6));
  c.variability = 0.0;  // cluster.variability.spread overrides the preset: 0 switches it off
  CHECK(expected_slowest_gpu_slowdown(c, d) == 1.0);
  c.variability = 0.05;
  CHECK(expected_slowest_gpu_slowdown(c, d) == doctest::Approx(1 + 0.05 * x).epsilon(1e-6));
}

TEST_CASE("the closed form compares a straggler's replica with the slowest replica, not on top of it") {
  // 64 GPUs, tp 2 × pp 4 × dp 8, the preset's constants fitted on 2 GPUs (one replica's stage): a
  // straggler's replica runs at its slowdown times (1 + spread·E[max of 2]) / (1 + spread·E[max of 2]),
  // the slowdown alone, and the step is the slower of it and the slowest replica of the draws.
  StepInput in = testing::small_gpt_on_a100(8, 2, 4, 8, 64);
  in.cluster.node.gpu.efficiency_fit_gpus = 2;
  const StepReport even = simulate_step(in, Fidelity::analytic);
  in.cluster.stragglers = {{.node = 1, .slowdown = 1.5}};
  const StepReport straggling = simulate_step(in, Fidelity::analytic);
  in.cluster.variability = 0.05;
  const StepReport both = simulate_step(in, Fidelity::analytic);
  in.cluster.stragglers.clear();
  const StepReport varied = simulate_step(in, Fidelity::analytic);
  CHECK(varied.iteration_time > even.iteration_time);
  CHECK(straggling.iteration_time > even.iteration_time);
  CHECK(both.iteration_time ==
        doctest::Approx(std::max(straggling.iteration_time, varied.iteration_time)).epsilon(1e-9));
  // Twice as slow, its replica is the slowest: the step is the straggler's alone, the draws' slowest GPU
  // not multiplied on top.
  in.cluster.stragglers = {{.node = 1, .slowdown = 2.0}};
  const StepReport slow = simulate_step(in, Fidelity::analytic);
  in.cluster.variability = 0.0;
  CHECK(slow.iteration_time ==
        doctest::Approx(simulate_step(in, Fidelity::analytic).iteration_time).epsilon(1e-9));
  CHECK(slow.iteration_time > varied.iteration_time);
  in.cluster.variability = 0.05;
  // A straggler slower than its own draws but not than the slowest replica's changes nothing.
  in.cluster.stragglers = {{.node = 1, .slowdown = 1.001}};
  CHECK(simulate_step(in, Fidelity::analytic).iteration_time ==
        doctest::Approx(varied.iteration_time).epsilon(1e-12));
}

TEST_CASE("the slowdown is relative to the GPUs the preset's constants were fitted on") {
  // Constants fitted to steps on N_fit GPUs hold 1 + spread·E[max of N_fit] already: the step prices
  // (1 + spread·E[max of N]) / (1 + spread·E[max of N_fit]).
  const double pi = std::numbers::pi;
  topo::ClusterSpec c = testing::dgx_a100(2);  // 16 GPUs
  c.node.gpu.variability = 0.02;
  c.node.gpu.efficiency_fit_gpus = 16;  // fitted at this very scale: nothing to add
  const PipelineDraws d{.stage_gpus = 8, .replicas = 2, .stages = 1};  // all 16 GPUs: E[max of 16]
  CHECK(fitted_slowest_gpu_slowdown(c) == doctest::Approx(1 + 0.02 * 1.76599).epsilon(1e-6));
  CHECK(expected_slowest_gpu_slowdown(c, d) == doctest::Approx(1.0).epsilon(1e-12));
  c.node.gpu.efficiency_fit_gpus = 2;  // E[max of 2] = 1/√π
  CHECK(expected_slowest_gpu_slowdown(c, d) ==
        doctest::Approx((1 + 0.02 * 1.76599) / (1 + 0.02 / std::sqrt(pi))).epsilon(1e-6));
  // Fitted on 1,000 GPUs (E[max] = 3.24144, Harter 1961): 16 GPUs wait for a less slow GPU, a speed-up.
  c.node.gpu.efficiency_fit_gpus = 1000;
  const double faster = (1 + 0.02 * 1.76599) / (1 + 0.02 * 3.24144);
  CHECK(faster < 1);
  CHECK(expected_slowest_gpu_slowdown(c, d) == doctest::Approx(faster).epsilon(1e-6));
  c.variability = 0.0;  // no spread: the constants as the preset states them
  CHECK(fitted_slowest_gpu_slowdown(c) == 1.0);
  CHECK(expected_slowest_gpu_slowdown(c, d) == 1.0);
}

namespace {

// Two DGX A100 nodes, one data-parallel replica of tp 8 on each, no pipeline; nothing runs under the kernels
// (the gradients are all-reduced after the backward, no ZeRO; tensor-parallel collectives between the
// matmuls), so every kernel is on the step's critical path and the collectives are the same with and
// without variability.
StepInput synchronous_dp() {
  StepInput in = testing::small_gpt_on_a100(2, 8, 1, 2, 16);
  in.plan.zero = ZeroStage::none;
  in.plan.framework.tp_comm_overlap = false;
  in.plan.overlap_grad_reduce = false;
  return in;
}

}  // namespace

TEST_CASE("variability lengthens a synchronous step by its kernels' time x spread x E[max of N]") {
  for (const Fidelity fidelity : {Fidelity::analytic, Fidelity::event}) {
    CAPTURE(std::string(to_string(fidelity)));
    StepInput in = synchronous_dp();
    const StepReport even = simulate_step(in, fidelity);
    const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
    const double optimizer_kernels = step_costs(in, plan).stages[0].optimizer_s;
    in.cluster.variability = 0.03;
    const StepReport varied = simulate_step(in, fidelity);
    CHECK(varied.step_mode == even.step_mode);  // priced in closed form: no switch to the full cluster
    const double factor = 0.03 * 1.76599;       // spread x E[max of 16]
    CHECK(varied.iteration_time - even.iteration_time ==
          doctest::Approx((even.time.compute + optimizer_kernels) * factor).epsilon(1e-5).scale(0));
    CHECK(varied.time.exposed_dp_comm == doctest::Approx(even.time.exposed_dp_comm).epsilon(1e-6).scale(0));
  }
}

TEST_CASE("the full cluster draws each GPU's speed from the seed; a replica runs at its slowest GPU") {
  // tp 8 fills a node, so replica d is node d: its stage runs at max over its 8 GPUs of 1 + spread·z, the
  // z drawn in rank order from mt19937_64(seed). The same step with those two maxima as stragglers (no
  // spread) is the same step.
  StepInput in = synchronous_dp();
  in.cluster.variability = 0.05;
  in.cluster.variability_seed = 7;
  std::mt19937_64 generator(7);
  std::normal_distribution<double> z;
  double node_max[2] = {0, 0};
  for (int r = 0; r < 16; ++r) node_max[r / 8] = std::max(node_max[r / 8], 1 + 0.05 * z(generator));
  std::map<std::int64_t, std::vector<double>> replicas = draw_gpu_variability(in.plan, in.cluster);
  REQUIRE(replicas.size() == 2);
  CHECK(replicas[0] == std::vector<double>{node_max[0]});
  CHECK(replicas[1] == std::vector<double>{node_max[1]});

  StepOptions full;
  full.mode = StepMode::full_cluster;
  const StepReport drawn = simulate_step(in, Fidelity::event, full);
  CHECK(drawn.step_mode == "full-cluster");
  REQUIRE(node_max[0] >= 1);
  REQUIRE(node_max[1] >= 1);
  StepInput as_stragglers = synchronous_dp();
  as_stragglers.cluster.stragglers = {{.node = 0, .slowdown = node_max[0]},
                                      {.node = 1, .slowdown = node_max[1]}};
  CHECK(drawn.iteration_time ==
        doctest::Approx(simulate_step(as_stragglers, Fidelity::event, full).iteration_time).epsilon(1e-9));
  // Another seed, other draws.
  in.cluster.variability_seed = 8;
  CHECK(draw_gpu_variability(in.plan, in.cluster) != replicas);
}

TEST_CASE("the full cluster's draws are relative to the GPUs the preset's constants were fitted on") {
  // Fitted on 2 GPUs: every draw 1 + spread·z is divided by 1 + spread·E[max of 2] = 1 + spread/√π.
  StepInput in = synchronous_dp();
  in.cluster.variability = 0.05;
  in.cluster.variability_seed = 7;
  in.cluster.node.gpu.efficiency_fit_gpus = 2;
  const double fitted = 1 + 0.05 / std::sqrt(std::numbers::pi);
  std::mt19937_64 generator(7);
  std::normal_distribution<double> z;
  double node_max[2] = {0, 0};
  for (int r = 0; r < 16; ++r)
    node_max[r / 8] = std::max(node_max[r / 8], (1 + 0.05 * z(generator)) / fitted);
  const std::map<std::int64_t, std::vector<double>> replicas = draw_gpu_variability(in.plan, in.cluster);
  REQUIRE(replicas.size() == 2);
  CHECK(replicas.at(0)[0] == doctest::Approx(node_max[0]).epsilon(1e-12));
  CHECK(replicas.at(1)[0] == doctest::Approx(node_max[1]).epsilon(1e-12));
}

TEST_CASE("the drawn slowdowns fold each straggler into its own GPUs' draws and are empty without spread") {
  // Node 1 straggles at 1.5: its GPUs' draws are each 1.5 times (1 + spread·z), z drawn in rank order from
  // mt19937_64(seed); node 0's are the plain draws. The result depends on the plan and the cluster
  // only: the stragglers come from cluster.stragglers.
  StepInput in = synchronous_dp();
  in.cluster.variability = 0.05;
  in.cluster.variability_seed = 11;
  in.cluster.stragglers = {{.node = 1, .slowdown = 1.5}};
  std::mt19937_64 generator(11);
  std::normal_distribution<double> z;
  double node_max[2] = {0, 0};
  for (int r = 0; r < 16; ++r) {
    const double straggler = r / 8 == 1 ? 1.5 : 1.0;
    node_max[r / 8] = std::max(node_max[r / 8], (1 + 0.05 * z(generator)) * straggler);
  }
  const std::map<std::int64_t, std::vector<double>> replicas = draw_gpu_variability(in.plan, in.cluster);
  REQUIRE(replicas.size() == 2);
  CHECK(replicas.at(0) == std::vector<double>{node_max[0]});
  CHECK(replicas.at(1) == std::vector<double>{node_max[1]});
  CHECK(replicas.at(1)[0] > 1.5 * 0.9);  // the straggler's 1.5 is in it: the slowest of 8 draws is above 0.9

  in.cluster.variability = 0.0;
  CHECK(draw_gpu_variability(in.plan, in.cluster).empty());
}
