// The slowest of N GPUs: the expected maximum of normal draws for the closed form, seeded draws for the full
// cluster (see gpu_variability.hpp).
#include "models/step/gpu_variability.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <unordered_map>

#include "models/step/communicators.hpp"
#include "models/step/step_plan.hpp"
#include "sim/error.hpp"

namespace trainsim::model {

namespace {

// log Φ(x)ⁿ: above 0 as n · log(1 − Q(x)), Q the upper tail, so that Φⁿ near 1 keeps its digits.
double log_cdf_power(double x, double n) {
  if (x < 0) return n * std::log(0.5 * std::erfc(-x / std::sqrt(2.0)));
  return n * std::log1p(-0.5 * std::erfc(x / std::sqrt(2.0)));
}

// Simpson's rule for g on [a, b] in kSteps steps.
template <class F>
double simpson(F&& g, double a, double b) {
  constexpr int kSteps = 450;  // even
  const double h = (b - a) / kSteps;
  double sum = g(a) + g(b);
  for (int i = 1; i < kSteps; ++i) sum += (i % 2 == 1 ? 4.0 : 2.0) * g(a + i * h);
  return sum * h / 3;
}

// E = ∫₀^∞ (1 − Φⁿ) dx − ∫_{−∞}^0 Φⁿ dx, each half smooth on its own. Beyond ±9 both integrands are below
// 1e-12 for n ≤ 10⁷, and steps of 0.02 put at least 8 in the integrand's width (≈ 1/√(2 ln n) ≥ 0.17).
constexpr double kLimit = 9.0;

double integrate_expected_max(std::int64_t n) {
  const auto dn = static_cast<double>(n);
  const double above = simpson([&](double x) { return -std::expm1(log_cdf_power(x, dn)); }, 0, kLimit);
  const double below = simpson([&](double x) { return std::exp(log_cdf_power(x, dn)); }, -kLimit, 0);
  return above - below;
}

// E[max²] = ∫₀^∞ 2x (1 − Φⁿ) dx + ∫_{−∞}^0 2|x| Φⁿ dx (P(max² > y) split by the sign of the max).
double integrate_expected_max_squared(std::int64_t n) {
  const auto dn = static_cast<double>(n);
  const double above =
      simpson([&](double x) { return -2 * x * std::expm1(log_cdf_power(x, dn)); }, 0, kLimit);
  const double below = simpson([&](double x) { return -2 * x * std::exp(log_cdf_power(x, dn)); }, -kLimit, 0);
  return above + below;
}

// `compute(n)`, once per n and thread: search asks for a handful of GPU counts thousands of times.
template <class Compute>
double memoized(std::unordered_map<std::int64_t, double>& memo, std::int64_t n, Compute&& compute) {
  const auto it = memo.find(n);
  if (it != memo.end()) return it->second;
  return memo.emplace(n, compute(n)).first->second;
}

}  // namespace

double expected_max_standard_normal(std::int64_t n) {
  if (n < 1) throw InputError("the expected maximum needs at least one draw, not " + std::to_string(n));
  if (n == 1) return 0.0;
  thread_local std::unordered_map<std::int64_t, double> memo;
  return memoized(memo, n, integrate_expected_max);
}

double sd_max_standard_normal(std::int64_t n) {
  if (n < 1) throw InputError("the spread of the maximum needs at least one draw, not " + std::to_string(n));
  if (n == 1) return 1.0;
  thread_local std::unordered_map<std::int64_t, double> memo;
  return memoized(memo, n, [](std::int64_t k) {
    const double mean = expected_max_standard_normal(k);
    return std::sqrt(std::max(0.0, integrate_expected_max_squared(k) - mean * mean));
  });
}

double variability_spread(const topo::ClusterSpec& cluster) {
  return cluster.variability >= 0 ? cluster.variability : cluster.node.gpu.variability;
}

double fitted_slowest_gpu_slowdown(const topo::ClusterSpec& cluster) {
  const double spread = variability_spread(cluster);
  if (!(spread > 0)) return 1.0;
  return 1.0 + spread * expected_max_standard_normal(cluster.node.gpu.efficiency_fit_gpus);
}

PipelineDraws pipeline_draws(const ParallelPlan& plan, const StepPlan& step) {
  PipelineDraws d;
  d.stage_gpus = static_cast<std::int64_t>(plan.tp) * plan.cp * plan.ep_axis();
  d.replicas = plan.dp;
  d.stages = plan.pp;
  d.steady_passes = static_cast<double>(step.micro_batches) * step.virtual_stages;
  return d;
}

double expected_slowest_draw(const PipelineDraws& d) {
  const std::int64_t gpus = d.stage_gpus * d.replicas * d.stages;
  const double slowest_of_all = expected_max_standard_normal(gpus);
  const double fill_passes = d.stages - 1;
  if (fill_passes <= 0) return slowest_of_all;
  const double slowest_sum_of_stages = expected_max_standard_normal(d.stage_gpus) +
                                       sd_max_standard_normal(d.stage_gpus) *
                                           expected_max_standard_normal(d.replicas) / std::sqrt(fill_passes);
  return (fill_passes * slowest_sum_of_stages + d.steady_passes * slowest_of_all) /
         (fill_passes + d.steady_passes);
}

namespace {
// A slowdown of `draw` standard deviations, relative to the one the preset's constants were fitted with.
template <class Draw>
double relative_to_fit(const topo::ClusterSpec& cluster, Draw&& draw) {
  const double spread = variability_spread(cluster);
  if (!(spread > 0)) return 1.0;
  return (1.0 + spread * draw()) / fitted_slowest_gpu_slowdown(cluster);
}
}  // namespace

double expected_slowest_gpu_slowdown(const topo::ClusterSpec& cluster, const PipelineDraws& draws) {
  return relative_to_fit(cluster, [&] { return expected_slowest_draw(draws); });
}

double expected_own_stage_slowdown(const topo::ClusterSpec& cluster, const PipelineDraws& draws) {
  return relative_to_fit(cluster, [&] { return expected_max_standard_normal(draws.stage_gpus); });
}

std::map<std::int64_t, std::vector<double>> draw_gpu_variability(const ParallelPlan& plan,
                                                                 const topo::ClusterSpec& cluster) {
  const double spread = variability_spread(cluster);
  if (!(spread > 0)) return {};
  const PlanPlacement placed = plan_placement(plan, cluster);
  const topo::Placement& placement = placed.placement;
  const std::size_t dp = placed.axis(ParallelAxis::dp);
  const std::size_t pp = placed.axis(ParallelAxis::pp);
  const std::int64_t gpn = cluster.gpus_in_use_per_node();
  std::unordered_map<std::int64_t, double> straggling;  // node → its straggler slowdown
  for (const topo::Straggler& s : cluster.stragglers) straggling[s.node] = s.slowdown;
  const double fitted = fitted_slowest_gpu_slowdown(cluster);
  std::mt19937_64 generator(cluster.variability_seed);
  std::normal_distribution<double> z;
  std::map<std::int64_t, std::vector<double>> drawn;
  for (std::int64_t r = 0; r < placement.world_size(); ++r) {
    // A draw below −1/spread would be a GPU infinitely fast; 10σ never happens for a real spread.
    double f = std::max(0.1, 1.0 + spread * z(generator)) / fitted;
    const auto s = straggling.find(r / gpn);
    if (s != straggling.end()) f *= s->second;
    const std::vector<std::int64_t> c = placement.coordinates(r);
    std::vector<double>& stages = drawn[c[dp + 1] * plan.dp_shard() + c[dp]];
    if (stages.empty()) stages.assign(static_cast<std::size_t>(plan.pp), 0.0);
    double& stage = stages[static_cast<std::size_t>(c[pp])];
    stage = std::max(stage, f);
  }
  return drawn;
}

}  // namespace trainsim::model
