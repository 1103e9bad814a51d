#include "models/run/campaign.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "models/run/campaign_cost.hpp"
#include "models/run/run_model.hpp"
#include "models/run/spend_schedule.hpp"
#include "models/run/tuning.hpp"

namespace trainsim::model {

double run_bill(const RunReport& run) {
  return run.cost_compute + run.cost_energy + run.cost_storage + run.cost_network;
}

namespace {

void add_tuning(const CampaignSpec& c, const TrialStep& trial_step, RunReport& run) {
  const TuningSpec& t = *c.tuning;
  const std::int64_t trial_nodes = std::max<std::int64_t>(1, c.nodes / t.concurrent);
  const StepReport step = trial_step(trial_nodes);
  run.tuning = true;
  if (!step.feasible) {
    run.feasible = false;
    run.reason = "a tuning trial on " + std::to_string(trial_nodes) + " nodes (1/" +
                 std::to_string(t.concurrent) + " of the cluster) cannot run: " + step.reason;
    return;
  }
  const double full_trial_s = std::ceil(t.fraction * static_cast<double>(run.steps)) * step.iteration_time;
  const TuningPlan plan = tuning_plan(t);
  run.tuning_trial_equivalents = plan.total;
  run.tuning_time = wall_clock_of_trials(rung_times(plan, full_trial_s), t.concurrent);
  run.tuning_gpu_hours =
      plan.total * full_trial_s * static_cast<double>(trial_nodes * c.gpus_per_node) / 3600.0;
  run.cost_tuning = run.tuning_gpu_hours * c.pricing.gpu_hour_usd;
  run.cost_total += run.cost_tuning;
}

// The people are paid over the campaign's wall clock: the trials, then the run.
void add_data_and_people(const CampaignSpec& c, RunReport& run) {
  if (c.data) {
    run.data = true;
    run.cost_data = data_cost(*c.data);
    run.cost_total += run.cost_data;
  }
  if (!c.people.empty()) {
    run.people = true;
    run.cost_people = people_cost(c.people, run.tuning_time + run.run_time);
    run.cost_total += run.cost_people;
  }
}

void apply_commitment(const CampaignSpec& c, RunReport& run) {
  const Commitment& commitment = c.pricing.commitment;
  // The trials keep, on average, their GPU-hours over their wall clock busy (a rung's last trials leave
  // slots idle).
  const double trial_gpus = run.tuning_time > 0 ? run.tuning_gpu_hours * 3600.0 / run.tuning_time : 0.0;
  const CommitmentUse use = commitment_use(commitment, trial_gpus, run.tuning_time,
                                           static_cast<double>(c.nodes * c.gpus_per_node), run.run_time);
  const double on_demand = c.pricing.gpu_hour_usd;
  run.commitment = true;
  // What is left on demand; covered hours computed another way can pass the used ones by rounding, which
  // would leave a bill of -1e-12 dollars.
  const double compute_before = run.cost_compute;
  const double tuning_before = run.cost_tuning;
  run.cost_compute = std::max(0.0, run.gpu_hours - use.run_covered) * on_demand;
  run.cost_tuning = std::max(0.0, run.tuning_gpu_hours - use.trial_covered) * on_demand;
  run.cost_fixed = commitment.gpus * commitment.term_s / 3600.0 * commitment.gpu_hour_usd;
  run.committed_idle_gpu_hours = use.idle;
  run.cost_fixed_idle = use.idle * commitment.gpu_hour_usd;
  run.cost_total += run.cost_fixed - (compute_before - run.cost_compute) - (tuning_before - run.cost_tuning);
  // The term's unused GPU-hours are paid for nothing.
  run.cost_wasted += run.cost_fixed_idle;
}

// The spot run's bill (run_model.cpp) as the whole campaign's: the campaign's part of cost_total around it,
// the people paid over its longer wall clock. A commitment stays paid; the run on spot capacity leaves
// what it would have covered idle.
void spot_as_whole_bill(const CampaignSpec& c, RunReport& run) {
  const double people_on_spot =
      c.people.empty() ? 0.0 : people_cost(c.people, run.tuning_time + run.spot_run_time);
  run.spot_cost_total += (run.cost_total - run_bill(run)) + (people_on_spot - run.cost_people);
}

}  // namespace

void add_campaign(const CampaignSpec& c, const StepReport& step, const TrialStep& trial_step,
                  RunReport& run) {
  if (!c.any() || !run.feasible) return;
  if (c.tuning) add_tuning(c, trial_step, run);
  if (run.feasible) add_data_and_people(c, run);
  if (run.feasible && c.pricing.commitment.enabled) apply_commitment(c, run);
  if (run.feasible && run.spot) spot_as_whole_bill(c, run);
  run.budget_violations = budget_violations(run, step, c.budget);
  run.outlays = spend_schedule(run, c.pricing);
  run.budget_alerts = budget_alerts(run.outlays, c.budget);
}

}  // namespace trainsim::model
