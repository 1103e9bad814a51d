#pragma once
// Failures and restarts over a run. Failures of the allocation arrive as a Poisson process (rate = nodes /
// node MTBF + GPUs / GPU MTBF [+ spot preemptions]). Training is a sequence of segments, each a stretch of
// work that ends in a checkpoint; a failure loses the segment's work done so far and costs `recovery`
// seconds (restart + restore) before the segment starts again.
#include <cstdint>
#include <vector>

#include "models/spec/run_spec.hpp"
#include "topologies/cluster_spec.hpp"

namespace trainsim::model {

/// Failures per second of the whole allocation (0 when failures are not modelled).
double failure_rate(const FailureSpec& failures, const topo::ClusterSpec& cluster);

/// Rollbacks per second of training from `per_trillion_tokens` expected rollbacks per 1e12 tokens
/// (training.instability) at `tokens_per_s`: a loss spike or divergence sends the run back to its last
/// checkpoint as a failure does, so the two rates add. 0 when either is 0.
double rollback_rate(double per_trillion_tokens, double tokens_per_s);

/// `count` consecutive segments of `work` seconds each (training time plus checkpoint stall).
struct Segments {
  double work = 0;
  std::int64_t count = 0;
};

struct FailureOutcome {
  double run_time = 0;  ///< s to finish every segment, failures included
  double failures = 0;  ///< failures suffered (expected, or counted in one trial)
};

/// Expected time to finish one segment of `work` s: (1/rate + recovery) · (e^(rate·work) − 1), the classic
/// result for restart-from-checkpoint under Poisson failures (no failures during recovery). Expected
/// failures in it: e^(rate·work) − 1. rate 0 gives exactly `work` and 0 failures.
FailureOutcome expected_segment(double work, double rate, double recovery);

/// Expected outcome of a whole run. Returns run_time = +inf when the expectation overflows (failures
/// arrive much faster than segments complete); callers report that as infeasible.
FailureOutcome expected_run(const std::vector<Segments>& segments, double rate, double recovery);

/// Seeded Monte-Carlo: `trials` independent runs (std::mt19937_64, inverse-transform exponentials, so the
/// numbers are the same on every platform). Throws InputError if the trials would need more than
/// `max_events` random draws in total.
std::vector<FailureOutcome> monte_carlo_runs(const std::vector<Segments>& segments, double rate,
                                             double recovery, std::uint64_t seed, int trials,
                                             double max_events = 2e8);

/// Young's optimal checkpoint interval sqrt(2 · cost · MTBF), s; 0 when there are no failures.
double young_interval(double checkpoint_cost, double mtbf);

}  // namespace trainsim::model
