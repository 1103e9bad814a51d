#pragma once
// The campaign around the final run and its whole bill, composed here and nowhere else: the tuning trials
// before the run, the data work, the people paid over the campaign's wall clock, committed capacity, and
// cost_total.
//   cost_total = compute + energy + storage + network        the run (models/run/run_model.cpp prices them)
//              + tuning + data + people                     the campaign (formulas: campaign_cost.hpp)
//              + fixed − what the commitment took off compute and tuning
// A tuning trial trains tuning.fraction of the final run's steps (fewer when stopped early) with the run's
// model, batch and layout on 1/concurrent of its nodes; its step is the caller's to simulate (a trial's
// layout and fidelity are the scenario's business), given here as a callback. The trials' GPU-hours are
// priced at the on-demand GPU-hour, without checkpoints or failures. Committed capacity covers the trials,
// then the run, from the start of its term; what it covers is no longer bought on demand, and its whole
// term is paid; what it leaves idle is part of cost_wasted. With spot capacity, spot_cost_total becomes the
// whole campaign's bill with the run on spot: the spot run's own bill (run_model.cpp) plus the trials, the
// data, the people over the trials and the spot run, and the commitment's term.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "models/run/run_report.hpp"
#include "models/spec/campaign_spec.hpp"
#include "models/spec/run_spec.hpp"
#include "models/step/step_report.hpp"

namespace trainsim::model {

/// What the campaign adds to the run.
struct CampaignSpec {
  std::optional<TuningSpec> tuning;
  std::optional<DataSpec> data;
  std::vector<PersonSpec> people;
  PricingSpec pricing;             ///< the on-demand GPU-hour and the commitment
  BudgetSpec budget;               ///< checked against the whole bill
  std::int64_t nodes = 1;          ///< the run's nodes
  std::int64_t gpus_per_node = 1;  ///< in use on each

  /// Whether there is anything beyond the run to price.
  [[nodiscard]] bool any() const { return tuning || data || !people.empty() || pricing.commitment.enabled; }
};

/// The step of one tuning trial on `nodes` nodes of the run's kind.
using TrialStep = std::function<StepReport(std::int64_t nodes)>;

/// The run's own part of cost_total: compute + energy + storage + network (run_model.cpp).
[[nodiscard]] double run_bill(const RunReport& run);

/// Adds the campaign to a priced, feasible run of the iteration `step`: the trials (their step from
/// `trial_step`, called once at most), the data, the people, the commitment, cost_total, and then the
/// budget's checks and the spend schedule over the whole bill. A trial whose step is infeasible makes the run
/// infeasible, with the reason. Does nothing when `campaign.any()` is false or the run is infeasible.
void add_campaign(const CampaignSpec& campaign, const StepReport& step, const TrialStep& trial_step,
                  RunReport& run);

}  // namespace trainsim::model
