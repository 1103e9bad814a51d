#include "scenarios/studies/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "models/run/campaign_cost.hpp"
#include "models/run/checkpoint_size.hpp"
#include "models/run/checkpoint_trace.hpp"
#include "models/run/convergence.hpp"
#include "models/run/cost_figures.hpp"
#include "models/run/lr_schedule.hpp"
#include "models/run/optimizer_efficiency.hpp"
#include "models/run/run_model.hpp"
#include "models/run/spend_schedule.hpp"
#include "models/run/tuning.hpp"
#include "models/step/analytic_trace.hpp"
#include "models/workload/parameters.hpp"
#include "scenarios/framework_choice.hpp"

namespace trainsim::scenario {

namespace {

model::RunReport simulate_run_of(const Scenario& s, const model::StepReport& step,
                                 const model::TrainingSpec& training) {
  model::CheckpointSize checkpoint;
  if (step.feasible) checkpoint = model::checkpoint_size(s.model, s.parallelism, s.training);
  const model::RunInputs run{.step = step,
                             .global_batch = s.training.global_batch,
                             .seq_len = s.model.seq_len,
                             .training = training,
                             .cluster = s.cluster,
                             .checkpoint = s.checkpoint,
                             .failures = s.failures,
                             .pricing = s.pricing,
                             .budget = s.budget,
                             .checkpoint_bytes = checkpoint.total(),
                             .checkpoint_writers = {.ranks = checkpoint.writing_ranks,
                                                    .bytes_per_rank_max = checkpoint.bytes_per_rank_max}};
  return model::simulate_run(run);
}

// The tuning trials: each trains tuning.fraction of the final run's steps (fewer when stopped early) with
// the scenario's model, batch and layout on 1/concurrent of its nodes, its step simulated there. Their
// GPU-hours are priced at the scenario's GPU-hour and added to the bill (no checkpoints or failures).
void add_tuning(const Scenario& s, model::Fidelity fidelity, model::RunReport& run) {
  const model::TuningSpec& t = *s.tuning;
  Scenario trial = s;
  trial.cluster.nodes = std::max<std::int64_t>(1, s.cluster.nodes / t.concurrent);
  trial.cluster.stragglers.clear();
  trial.cluster.degraded.clear();
  model::ParallelPlan& plan = trial.parallelism;
  plan.dp = std::max<std::int64_t>(
      1, trial.cluster.total_gpus() / std::max<std::int64_t>(1, plan.model_parallel_size()));
  const model::StepReport step = model::simulate_step(step_input_of(trial), fidelity);
  run.tuning = true;
  if (!step.feasible) {
    run.feasible = false;
    run.reason = "a tuning trial on " + std::to_string(trial.cluster.nodes) + " nodes (1/" +
                 std::to_string(t.concurrent) + " of the cluster) cannot run: " + step.reason;
    return;
  }
  const double full_trial_s = std::ceil(t.fraction * static_cast<double>(run.steps)) * step.iteration_time;
  const model::TuningPlan plan_of_trials = model::tuning_plan(t);
  run.tuning_trial_equivalents = plan_of_trials.total;
  run.tuning_time =
      model::wall_clock_of_trials(model::rung_times(plan_of_trials, full_trial_s), t.concurrent);
  run.tuning_gpu_hours =
      plan_of_trials.total * full_trial_s * static_cast<double>(trial.cluster.total_gpus()) / 3600.0;
  run.cost_tuning = run.tuning_gpu_hours * s.pricing.gpu_hour_usd;
  run.cost_total += run.cost_tuning;
}

// The data work, and the people paid over the campaign's wall clock: the trials, then the run.
void add_data_and_people(const Scenario& s, model::RunReport& run) {
  if (s.data) {
    run.data = true;
    run.cost_data = model::data_cost(*s.data);
    run.cost_total += run.cost_data;
  }
  if (!s.people.empty()) {
    run.people = true;
    run.cost_people = model::people_cost(s.people, run.tuning_time + run.run_time);
    run.cost_total += run.cost_people;
  }
}

// Committed capacity covers the trials, then the run, from the start of its term; what it covers is no
// longer bought on demand, and its whole term is paid.
void apply_commitment(const Scenario& s, model::RunReport& run) {
  const model::Commitment& c = s.pricing.commitment;
  // The trials keep, on average, their GPU-hours over their wall clock busy (a rung's last trials leave
  // slots idle).
  const double trial_gpus = run.tuning_time > 0 ? run.tuning_gpu_hours * 3600.0 / run.tuning_time : 0.0;
  const model::CommitmentUse use = model::commitment_use(
      c, trial_gpus, run.tuning_time, static_cast<double>(s.cluster.total_gpus()), run.run_time);
  const double on_demand = s.pricing.gpu_hour_usd;
  run.commitment = true;
  // What is left on demand; covered hours computed another way can pass the used ones by rounding, which
  // would leave a bill of -1e-12 dollars.
  const double compute_before = run.cost_compute;
  const double tuning_before = run.cost_tuning;
  run.cost_compute = std::max(0.0, run.gpu_hours - use.run_covered) * on_demand;
  run.cost_tuning = std::max(0.0, run.tuning_gpu_hours - use.trial_covered) * on_demand;
  run.cost_fixed = c.gpus * c.term_s / 3600.0 * c.gpu_hour_usd;
  run.committed_idle_gpu_hours = use.idle;
  run.cost_fixed_idle = use.idle * c.gpu_hour_usd;
  run.cost_total += run.cost_fixed - (compute_before - run.cost_compute) - (tuning_before - run.cost_tuning);
}

}  // namespace

model::StepInput step_input_of(const Scenario& s) {
  return model::StepInput{
      .model = s.model,
      .cluster = s.cluster,
      .plan = s.parallelism,
      .training = s.training,
      .memory_headroom = s.budget.headroom_fraction(s.cluster.node.gpu.hbm_bytes).value_or(0.0)};
}

namespace {

// The run of `training` after `step`, with the campaign around it (tuning, data, people, commitment).
model::RunReport run_with_campaign(const Scenario& s, model::Fidelity fidelity, const model::StepReport& step,
                                   const model::TrainingSpec& training, const model::TargetRun* target) {
  model::RunReport run = simulate_run_of(s, step, training);
  if (target != nullptr) {
    run.convergence = true;
    run.target_loss = s.convergence->target_loss;
    run.initial_loss = target->initial_loss;
    run.law_tokens = target->law_tokens;
    run.tokens_min = target->tokens_min;
    run.critical_batch_tokens = target->b_crit;
  }
  const bool campaign = s.tuning || s.data || !s.people.empty() || s.pricing.commitment.enabled;
  if (campaign && run.feasible) {
    if (s.tuning) add_tuning(s, fidelity, run);
    if (run.feasible) add_data_and_people(s, run);
    if (run.feasible && s.pricing.commitment.enabled) apply_commitment(s, run);
    run.budget_violations = model::budget_violations(run, step, s.budget);
    run.outlays = model::spend_schedule(run, s.pricing);
    run.budget_alerts = model::budget_alerts(run.outlays, s.budget);
  }
  return run;
}

}  // namespace

ScenarioResult simulate_scenario(const Scenario& s, model::Fidelity fidelity,
                                 const model::StepOptions& options) {
  ScenarioResult result;
  result.step = model::simulate_step(step_input_of(s), fidelity, options);
  if (!result.step.fits && !options.time_unfit) return result;  // not timed: no run to simulate either
  if (!s.convergence) {
    result.run = run_with_campaign(s, fidelity, result.step, s.training, nullptr);
  } else {
    const double batch_tokens =
        static_cast<double>(s.training.global_batch) * static_cast<double>(s.model.seq_len);
    const double params = model::parameter_count(s.model);
    const model::OptimizerEfficiency efficiency =
        model::optimizer_efficiency(s.convergence->optimizer_efficiency, s.training.optimizer.kind, params);
    // The run to `loss` when the optimizer needs the law's tokens / `speedup`.
    auto target_at = [&](double loss, double speedup) {
      return model::run_to_target(model::loss_law_of(*s.convergence), params,
                                  static_cast<double>(s.model.vocab), loss, batch_tokens,
                                  s.convergence->critical_batch_tokens.value_or(0.0), speedup);
    };
    // The campaign at `speedup`.
    auto run_at = [&](double speedup) {
      const model::TargetRun target = target_at(s.convergence->target_loss, speedup);
      model::TrainingSpec training = s.training;
      training.tokens = target.tokens;
      if (!s.convergence->next_target_loss)
        return run_with_campaign(s, fidelity, result.step, training, &target);
      // The target moves on once the run reaches it: the schedule decides what the first run leaves.
      const double next_loss = *s.convergence->next_target_loss;
      const model::MovedTargetTokens moved =
          model::tokens_for_moved_target(s.training.schedule, s.training.wsd_decay_fraction, target.tokens,
                                         target_at(next_loss, speedup).tokens);
      training.tokens = moved.tokens;
      model::RunReport run = run_with_campaign(s, fidelity, result.step, training, &target);
      run.next_target_loss = next_loss;
      run.schedule_extra_tokens = moved.extra_tokens;
      return run;
    };
    result.run = run_at(efficiency.speedup);
    model::RunReport& run = result.run;
    run.optimizer_speedup = efficiency.speedup;
    run.optimizer_speedup_low = efficiency.low;
    run.optimizer_speedup_high = efficiency.high;
    // The same campaign at the ends of the sources' range: fewest tokens at the highest speedup.
    const model::RunReport fast = efficiency.high == efficiency.speedup ? run : run_at(efficiency.high);
    const model::RunReport slow = efficiency.low == efficiency.speedup ? run : run_at(efficiency.low);
    run.tokens_range_low = fast.tokens;
    run.tokens_range_high = slow.tokens;
    run.cost_total_range_low = std::min(fast.cost_total, slow.cost_total);
    run.cost_total_range_high = std::max(fast.cost_total, slow.cost_total);
  }
  model::RunReport& run = result.run;
  model::set_cost_figures(run, result.step.model_flops_per_step);
  if (options.trace != nullptr && result.step.feasible) {
    // Marked as the analytic trace's own slices are, so that every slice of such a trace says so.
    const bool analytic = fidelity == model::Fidelity::analytic;
    model::trace_checkpoint(*options.trace, result.step.iteration_time, run,
                            analytic ? model::analytic_slice_args() : std::span<const sim::TraceArg>());
  }
  return result;
}

std::vector<std::string> run_notes(const Scenario& s) {
  std::vector<std::string> notes;
  if (std::string note = unnamed_framework_note(s); !note.empty()) notes.push_back(std::move(note));
  if (s.checkpoint.enabled && s.cluster.storage.write_bytes_per_s <= 0) {
    notes.emplace_back(
        "no cluster.storage.write bandwidth given: checkpoint writes are limited only by the nodes' links, "
        "which is optimistic for a shared file system");
  }
  return notes;
}

}  // namespace trainsim::scenario
