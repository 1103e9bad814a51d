#pragma once
// What hyperparameter tuning costs before the final run: how many trials are trained, how far, and how
// long they take on a share of the cluster. Costs are in "full-trial equivalents": 1 is one trial trained
// to the full budget (for an LLM, typically a small proxy model trained to its full token count).
//
//  - Successive halving (Jamieson & Talwalkar 2016, "Non-stochastic Best Arm Identification and
//    Hyperparameter Optimization", arXiv:1502.07943; as the inner loop of Hyperband, Li et al. 2018,
//    arXiv:1603.06560, Algorithm 1): train n trials a little, keep the best 1/eta, train those eta times
//    longer, and so on.
//  - ASHA (Li et al. 2020, "A System for Massively Parallel Hyperparameter Tuning", arXiv:1810.05934)
//    promotes the top 1/eta of each rung asynchronously; with the same rungs it trains the same trials as
//    far, so its cost here is successive halving's (its wall clock is lower: no rung waits for stragglers).
// Pure functions: no I/O. Invalid arguments throw InputError with a sentence naming the problem.
#include <cstdint>
#include <vector>

#include "models/spec/campaign_spec.hpp"

namespace trainsim::model {

/// One rung of successive halving.
struct Rung {
  std::int64_t trials = 0;  ///< n_i
  double fraction = 0;      ///< r_i: each trial is trained up to this fraction of the full budget
  double cost = 0;  ///< full-trial equivalents spent in this rung (n_i·r_i, or n_i·(r_i − r_{i−1}))
};

struct TuningPlan {
  std::vector<Rung> rungs;
  double total = 0;  ///< full-trial equivalents, the sum of the rungs' costs
};

/// Successive halving of `n` trials with reduction factor `eta`:
///   rung i = 0, 1, …: n_i = floor(n / eta^i) trials, each trained to r_i = min(min_fraction · eta^i,
///   max_fraction) of the full budget.
/// Rungs stop when fewer than 1 trial would remain, or after the first rung that reaches max_fraction
/// (training further to the same fraction teaches nothing). When trials run out first, the last survivor
/// has been trained only to the last rung's fraction; a final full run is the caller's to add.
/// Without `resume` (standard SH without warm-starting, as in Hyperband's Algorithm 1) each rung trains
/// from scratch: cost n_i · r_i. With `resume`, survivors continue from their checkpoints: cost
/// n_i · (r_i − r_{i−1}), r_{−1} = 0.
/// Example: n = 27, eta = 3, min_fraction = 1/27: rungs 27@1/27, 9@1/9, 3@1/3, 1@1; cost 4 from scratch,
/// 1 + 3·(2/3) = 3 with resume.
/// Throws InputError for n < 1, eta <= 1, or fractions outside (0, 1] or min_fraction > max_fraction.
/// A rung's fraction within 1e-12 (relative) of max_fraction counts as reaching it (eta^i by repeated
/// multiplication is not always exact).
[[nodiscard]] TuningPlan successive_halving(std::int64_t n, double eta, double min_fraction,
                                            double max_fraction = 1, bool resume = false);

/// The plan of `method` (the scenario's tuning.early_stopping.policy; ASHA counted as its synchronous
/// equivalent: the same rungs and promotions): none is one rung of n trials at max_fraction (eta and
/// min_fraction unused); successive_halving and asha call successive_halving().
[[nodiscard]] TuningPlan tuning_plan(EarlyStopping method, std::int64_t n, double eta, double min_fraction,
                                     double max_fraction = 1, bool resume = false);

/// The plan a scenario's tuning block asks for (its early_stopping policy, trials, eta and min_fraction; a
/// trial's whole budget is 1).
[[nodiscard]] TuningPlan tuning_plan(const TuningSpec& tuning);

/// The trials of one rung and the time one of them takes, s.
struct RungTime {
  std::int64_t trials = 0;
  double seconds_per_trial = 0;
};

/// Per-rung times of `plan` when one full trial takes `full_trial_seconds`: a trial of rung i takes
/// full_trial_seconds · cost_i / n_i (its r_i from scratch, or r_i − r_{i−1} resumed).
[[nodiscard]] std::vector<RungTime> rung_times(const TuningPlan& plan, double full_trial_seconds);

/// Wall clock of the trials when `concurrent` of them run at a time (the cluster holds that many trials)
/// and each rung waits for all its trials before promoting (synchronous):
///   rung time = ceil(n_i / concurrent) · seconds_per_trial_i;  total = sum over the rungs.
/// Trials of a rung are taken as equally long; ASHA, which promotes without waiting, typically finishes
/// sooner (this is its synchronous bound).
/// Throws InputError for concurrent < 1, negative trials or times.
[[nodiscard]] double wall_clock_of_trials(const std::vector<RungTime>& rungs, std::int64_t concurrent);

}  // namespace trainsim::model
