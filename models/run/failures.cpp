#include "models/run/failures.hpp"

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "sim/error.hpp"

namespace trainsim::model {

double failure_rate(const FailureSpec& failures, const topo::ClusterSpec& cluster) {
  if (!failures.enabled) return 0;
  double rate = 0;
  if (failures.node_mtbf_s > 0) rate += static_cast<double>(cluster.nodes) / failures.node_mtbf_s;
  if (failures.gpu_mtbf_s > 0) rate += static_cast<double>(cluster.total_gpus()) / failures.gpu_mtbf_s;
  return rate;
}

double rollback_rate(double per_trillion_tokens, double tokens_per_s) {
  if (!(per_trillion_tokens > 0) || !(tokens_per_s > 0)) return 0;
  return per_trillion_tokens * 1e-12 * tokens_per_s;
}

FailureOutcome expected_segment(double work, double rate, double recovery) {
  if (rate <= 0 || work <= 0) return {.run_time = std::max(work, 0.0), .failures = 0};
  const double growth = std::expm1(rate * work);  // e^(λw) − 1, exact for small λw
  return {.run_time = (1.0 / rate + recovery) * growth, .failures = growth};
}

FailureOutcome expected_run(const std::vector<Segments>& segments, double rate, double recovery) {
  FailureOutcome total;
  for (const auto& s : segments) {
    if (s.count <= 0) continue;
    const FailureOutcome one = expected_segment(s.work, rate, recovery);
    total.run_time += one.run_time * static_cast<double>(s.count);
    total.failures += one.failures * static_cast<double>(s.count);
  }
  if (!std::isfinite(total.run_time)) total.run_time = std::numeric_limits<double>::infinity();
  return total;
}

std::vector<FailureOutcome> monte_carlo_runs(const std::vector<Segments>& segments, double rate,
                                             double recovery, std::uint64_t seed, int trials,
                                             double max_events) {
  TRAINSIM_CHECK(trials > 0, "Monte-Carlo needs at least one trial");
  const FailureOutcome expected = expected_run(segments, rate, recovery);
  double segment_count = 0;
  for (const auto& s : segments) segment_count += static_cast<double>(std::max<std::int64_t>(s.count, 0));
  const double draws = static_cast<double>(trials) * (segment_count + expected.failures);
  if (!(draws <= max_events)) {
    throw InputError("failures.trials: " + std::to_string(trials) + " trials would need about " +
                     std::to_string(static_cast<long long>(std::min(draws, 9e18))) + " random draws (limit " +
                     std::to_string(static_cast<long long>(max_events)) +
                     "); use fewer trials, fewer checkpoints, or expected values (trials: 0)");
  }
  std::mt19937_64 rng(seed);
  // Inverse transform on 53 random bits: the same sequence on every standard library.
  auto exponential = [&rng, rate] {
    const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
    return -std::log1p(-u) / rate;
  };
  std::vector<FailureOutcome> out(static_cast<std::size_t>(trials));
  for (auto& trial : out) {
    for (const auto& s : segments) {
      for (std::int64_t i = 0; i < s.count; ++i) {
        if (rate <= 0) {
          trial.run_time += s.work;
          continue;
        }
        for (;;) {
          const double t = exponential();
          if (t >= s.work) {
            trial.run_time += s.work;
            break;
          }
          trial.run_time += t + recovery;
          trial.failures += 1;
        }
      }
    }
  }
  return out;
}

double young_interval(double checkpoint_cost, double mtbf) {
  if (mtbf <= 0 || !std::isfinite(mtbf) || checkpoint_cost <= 0) return 0;
  return std::sqrt(2.0 * checkpoint_cost * mtbf);
}

}  // namespace trainsim::model
