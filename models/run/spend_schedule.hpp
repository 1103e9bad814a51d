#pragma once
// When the campaign's money is spent: cost_total as outlays on the campaign's clock (seconds since it
// began: the tuning trials from 0 to tuning_time, then the run for run_time), the cumulative spend at a
// time, and the time the spend reaches an amount. The layout (each outlay even over its span):
//   data                          all at 0: the corpus is prepared before the first trial
//   tuning                        over the trials, [0, tuning_time]
//   compute, storage, network,    over the run, [tuning_time, tuning_time + run_time] (run.csv's pro-rata
//   energy                        rule for the run itself)
//   people                        over the campaign, [0, tuning_time + run_time]
//   fixed (pricing.commitment)    over the term, [0, term]: paid whether used or not, after the campaign
//                                 ends too
// Under a commitment the on-demand rest of tuning and compute is bought where the term does not cover it:
// GPUs beyond the committed ones inside the term, every GPU after it. The outlays of one report add up to
// its cost_total. Units: seconds, US dollars.
#include <array>
#include <optional>
#include <vector>

#include "models/run/run_report.hpp"
#include "models/spec/run_spec.hpp"

namespace trainsim::model {

using CostByCategory = std::array<double, kCostCategories>;

/// The outlays of `run` (its costs final: the campaign's blocks and the commitment applied, `run.commitment`
/// set when they were). None for an infeasible run.
[[nodiscard]] std::vector<Outlay> spend_schedule(const RunReport& run, const PricingSpec& pricing);

/// Spent by time `t` (inclusive: an outlay paid at once at t counts), by category.
[[nodiscard]] CostByCategory spent_by(const std::vector<Outlay>& outlays, double t);
[[nodiscard]] double total_of(const CostByCategory& costs);

/// The earliest time the cumulative spend reaches `usd`; nullopt when it never does. Exact: the spend is
/// linear between the outlays' starts and ends.
[[nodiscard]] std::optional<double> time_spent(const std::vector<Outlay>& outlays, double usd);

/// The alerts of `budget` (its fractions of max_cost, in order) against the outlays; none without
/// max_cost.
[[nodiscard]] std::vector<BudgetAlert> budget_alerts(const std::vector<Outlay>& outlays,
                                                     const BudgetSpec& budget);

}  // namespace trainsim::model
