// Tokens to the target per optimizer: each speedup over AdamW is the number its source prints, or 1.0
// marked as having no source; the fair-tuned law for matrix optimizers is Wen et al.'s two end points.
#include "models/run/optimizer_efficiency.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "models/run/convergence.hpp"
#include "sim/error.hpp"

using namespace trainsim;
using namespace trainsim::model;

TEST_CASE("matrix optimizers' fair-tuned speedup: 1.4x at 0.1B, 1.1x at 1.2B, log-interpolated, clamped") {
  CHECK(matrix_preconditioner_fair_speedup(1e8) == doctest::Approx(1.4));
  CHECK(matrix_preconditioner_fair_speedup(5e7) == doctest::Approx(1.4));
  CHECK(matrix_preconditioner_fair_speedup(1.2e9) == doctest::Approx(1.1));
  CHECK(matrix_preconditioner_fair_speedup(7e9) == doctest::Approx(1.1));
  // Halfway in log N, sqrt(0.1B · 1.2B) = 0.3464B: halfway in speedup, 1.25.
  CHECK(matrix_preconditioner_fair_speedup(std::sqrt(1e8 * 1.2e9)) == doctest::Approx(1.25));
  CHECK_THROWS_AS((void)matrix_preconditioner_fair_speedup(0), InputError);
}

TEST_CASE(
    "each optimizer's sources: Moonlight's 2x for Muon, 1.0 marked unsourced where none gives a ratio") {
  const auto muon = efficiency_sources(OptimizerKind::muon, 8e9);
  REQUIRE(muon.size() == 2);
  CHECK(muon[0].basis == "optimistic");
  CHECK(muon[0].speedup == 2.0);
  CHECK(muon[0].citation.find("2502.16982") != std::string::npos);
  CHECK(muon[1].basis == "fair-tuned");
  CHECK(muon[1].speedup == doctest::Approx(1.1));
  CHECK(muon[1].citation.find("2509.02046") != std::string::npos);
  for (const OptimizerKind k : {OptimizerKind::sgd, OptimizerKind::sgd_momentum, OptimizerKind::adam}) {
    for (const EfficiencySource& s : efficiency_sources(k, 7e9)) {
      CHECK_FALSE(s.sourced);
      CHECK(s.speedup == 1.0);
      CHECK(s.citation.rfind("no source: 1.0", 0) == 0);
    }
  }
  for (const EfficiencySource& s : efficiency_sources(OptimizerKind::adam8bit, 7e9)) {
    CHECK(s.sourced);
    CHECK(s.citation.find("2110.02861") != std::string::npos);
  }
  const auto lion = efficiency_sources(OptimizerKind::lion, 7e9);
  CHECK_FALSE(lion[0].sourced);  // Chen et al. give "similar or better", no ratio
  CHECK(lion[1].citation.find("2407.07972") != std::string::npos);
}

TEST_CASE("SOAP and Shampoo: Vyas et al.'s iterations for the optimistic end, Wen et al.'s law for SOAP") {
  // SOAP needs at most 60 % of AdamW's iterations (1/0.6); Shampoo about 0.6/0.8 = 75 % (SOAP ~20 % fewer).
  const auto soap = efficiency_sources(OptimizerKind::soap, 0.3e9);
  REQUIRE(soap.size() == 2);
  CHECK(soap[0].speedup == doctest::Approx(1 / 0.6));
  CHECK(soap[0].citation.find("2409.11321") != std::string::npos);
  // Wen et al.'s law at 0.3B, from its end points (1.4x at 0.1B, 1.1x at 1.2B) in log N: ln 3 / ln 12 of
  // the way, 1.4 - 0.3 x 0.4421 = 1.2674.
  CHECK(soap[1].speedup == doctest::Approx(1.4 - 0.3 * std::log(3.0) / std::log(12.0)));
  CHECK(soap[1].citation.find("2509.02046") != std::string::npos);
  const auto shampoo = efficiency_sources(OptimizerKind::shampoo, 7e9);
  REQUIRE(shampoo.size() == 2);
  CHECK(shampoo[0].speedup == doctest::Approx(0.8 / 0.6));
  CHECK(shampoo[0].sourced);
  CHECK_FALSE(shampoo[1].sourced);
  CHECK(shampoo[1].citation.rfind("no source: 1.0", 0) == 0);
  const OptimizerEfficiency fair = optimizer_efficiency({}, OptimizerKind::shampoo, 7e9);
  CHECK(fair.speedup == 1.0);
  CHECK(fair.high == doctest::Approx(4.0 / 3));
}

TEST_CASE("the chosen speedup and the range across the sources") {
  const OptimizerEfficiency fair = optimizer_efficiency({}, OptimizerKind::muon, 8e9);
  CHECK(fair.speedup == doctest::Approx(1.1));
  CHECK(fair.low == doctest::Approx(1.1));
  CHECK(fair.high == 2.0);
  const OptimizerEfficiency optimistic =
      optimizer_efficiency({.basis = EfficiencyBasis::optimistic}, OptimizerKind::muon, 8e9);
  CHECK(optimistic.speedup == 2.0);
  const OptimizerEfficiency given =
      optimizer_efficiency({.basis = EfficiencyBasis::given, .speedup = 3.0}, OptimizerKind::muon, 8e9);
  CHECK(given.speedup == 3.0);
  CHECK(given.high == 3.0);
  CHECK(given.low == doctest::Approx(1.1));
  const OptimizerEfficiency adamw = optimizer_efficiency({}, OptimizerKind::adamw, 8e9);
  CHECK(adamw.low == 1.0);
  CHECK(adamw.high == 1.0);
  CHECK_THROWS_AS(
      (void)optimizer_efficiency({.basis = EfficiencyBasis::given, .speedup = 0}, OptimizerKind::adamw, 1e9),
      InputError);
}

TEST_CASE("a speedup divides the law's tokens before the batch penalty") {
  const LossLaw law = chinchilla_law();
  // N = 1e9, target 2.6: floor = 1.69 + 406.4 / 1e9^0.34; D = (410.7 / (2.6 − floor))^(1/0.28).
  const double floor = 1.69 + 406.4 / std::pow(1e9, 0.34);
  const double d = std::pow(410.7 / (2.6 - floor), 1 / 0.28);
  const TargetRun run = run_to_target(law, 1e9, 50257, 2.6, 524288, 524288, 2.0);
  CHECK(run.law_tokens == doctest::Approx(d));
  CHECK(run.tokens_min == doctest::Approx(d / 2));
  CHECK(run.tokens == doctest::Approx(d / 2 * 2));  // B = B_crit: E = 2·E_min
  CHECK_THROWS_AS((void)run_to_target(law, 1e9, 50257, 2.6, 524288, 524288, 0.0), InputError);
}
