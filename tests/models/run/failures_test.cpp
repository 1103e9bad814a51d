#include "models/run/failures.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "sim/error.hpp"

using namespace trainsim;

TEST_CASE("the failure rate of an allocation adds up its nodes and GPUs") {
  topo::ClusterSpec c;
  c.nodes = 128;
  c.node.gpus_per_node = 8;
  model::FailureSpec f{.enabled = true, .node_mtbf_s = 5000 * 3600.0, .gpu_mtbf_s = 100000 * 3600.0};
  CHECK(model::failure_rate(f, c) ==
        doctest::Approx(128 / (5000 * 3600.0) + 1024 / (100000 * 3600.0)).scale(0));
  f.enabled = false;
  CHECK(model::failure_rate(f, c) == 0);
}

TEST_CASE("with no failures a segment takes exactly its work") {
  const auto o = model::expected_segment(7200, 0, 900);
  CHECK(o.run_time == 7200);
  CHECK(o.failures == 0);
}

TEST_CASE("expected lost work per failure is about half a segment plus the recovery when failures are rare") {
  // First order in λw: E[T] ≈ w + λ·w·(w/2 + R). MTBF 39 h, 2 h segments, 15 min recovery.
  const double rate = 1.0 / (39 * 3600.0), w = 7200, recovery = 900;
  const auto o = model::expected_segment(w, rate, recovery);
  const double first_order = w + rate * w * (w / 2 + recovery);
  CHECK(o.run_time == doctest::Approx(first_order).epsilon(0.002));
  CHECK(o.failures == doctest::Approx(std::expm1(rate * w)).scale(0));
}

TEST_CASE("a run whose segments outlast the failures many times over does not finish") {
  const auto o = model::expected_run({{.work = 1e9, .count = 1}}, 1.0 / 3600, 60);
  CHECK(std::isinf(o.run_time));
}

TEST_CASE("Young's interval is sqrt(2 C M)") {
  CHECK(model::young_interval(60, 39 * 3600.0) == doctest::Approx(std::sqrt(2 * 60 * 39 * 3600.0)).scale(0));
  CHECK(model::young_interval(60, 0) == 0);
}

TEST_CASE("the Monte-Carlo mean lies within its confidence interval of the expected value") {
  const std::vector<model::Segments> segments{{.work = 7200, .count = 200}, {.work = 1000, .count = 1}};
  const double rate = 1.0 / (20 * 3600.0), recovery = 1200;
  const auto expected = model::expected_run(segments, rate, recovery);
  const auto trials = model::monte_carlo_runs(segments, rate, recovery, 42, 400);
  double sum = 0, sum_sq = 0;
  for (const auto& t : trials) {
    sum += t.run_time;
    sum_sq += t.run_time * t.run_time;
  }
  const double n = static_cast<double>(trials.size());
  const double mean = sum / n;
  const double stddev = std::sqrt(sum_sq / n - mean * mean);
  CHECK(std::fabs(mean - expected.run_time) < 4 * stddev / std::sqrt(n));  // 4 standard errors
  CHECK(stddev > 0);
}

TEST_CASE("the same seed gives the same Monte-Carlo runs") {
  const std::vector<model::Segments> segments{{.work = 3600, .count = 50}};
  const auto a = model::monte_carlo_runs(segments, 1e-4, 300, 7, 20);
  const auto b = model::monte_carlo_runs(segments, 1e-4, 300, 7, 20);
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i].run_time == b[i].run_time);
}

TEST_CASE("a Monte-Carlo that would take too many draws is refused with a clear error") {
  CHECK_THROWS_WITH_AS(model::monte_carlo_runs({{.work = 1, .count = 1000000}}, 1e-3, 1, 1, 1000),
                       doctest::Contains("failures.trials"), InputError);
}

TEST_CASE("rollbacks per trillion tokens become a rate per second of training") {
  // 25 per 1e12 tokens at 1e6 tokens/s: 2.5e-5 per second, one every 40,000 s.
  CHECK(model::rollback_rate(25, 1e6) == doctest::Approx(2.5e-5));
  CHECK(model::rollback_rate(0, 1e6) == 0);
  CHECK(model::rollback_rate(25, 0) == 0);
}
