#include "scenarios/studies/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "models/run/campaign.hpp"
#include "models/run/checkpoint_size.hpp"
#include "models/run/checkpoint_trace.hpp"
#include "models/run/convergence.hpp"
#include "models/run/cost_figures.hpp"
#include "models/run/lr_schedule.hpp"
#include "models/run/optimizer_efficiency.hpp"
#include "models/run/run_model.hpp"
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

// What the campaign around the run is given of the scenario.
model::CampaignSpec campaign_of(const Scenario& s) {
  return {.tuning = s.tuning,
          .data = s.data,
          .people = s.people,
          .pricing = s.pricing,
          .budget = s.budget,
          .nodes = s.cluster.nodes,
          .gpus_per_node = s.cluster.gpus_in_use_per_node()};
}

// A tuning trial: the scenario on `nodes` of its nodes, its data-parallel size cut to fit them, without the
// stragglers and degraded NICs of the whole cluster.
Scenario trial_scenario(const Scenario& s, std::int64_t nodes) {
  Scenario trial = s;
  trial.cluster.nodes = nodes;
  trial.cluster.stragglers.clear();
  trial.cluster.degraded.clear();
  model::ParallelPlan& plan = trial.parallelism;
  plan.dp = std::max<std::int64_t>(
      1, trial.cluster.total_gpus() / std::max<std::int64_t>(1, plan.model_parallel_size()));
  return trial;
}

// The run of `training` after `step`, with the campaign around it (tuning, data, people, commitment).
model::RunReport run_with_campaign(const Scenario& s, const model::StepReport& step,
                                   const model::TrialStep& trial_step, const model::TrainingSpec& training,
                                   const model::TargetRun* target) {
  model::RunReport run = simulate_run_of(s, step, training);
  if (target != nullptr) {
    run.convergence = true;
    run.target_loss = s.convergence->target_loss;
    run.initial_loss = target->initial_loss;
    run.law_tokens = target->law_tokens;
    run.tokens_min = target->tokens_min;
    run.critical_batch_tokens = target->b_crit;
  }
  model::add_campaign(campaign_of(s), step, trial_step, run);
  return run;
}

}  // namespace

ScenarioResult simulate_scenario(const Scenario& s, model::Fidelity fidelity,
                                 const model::StepOptions& options) {
  ScenarioResult result;
  result.step = model::simulate_step(step_input_of(s), fidelity, options);
  if (!result.step.fits && !options.time_unfit) return result;  // not timed: no run to simulate either
  // A tuning trial's step depends on its nodes alone: simulated once per node count however many
  // campaigns are priced (the optimizer range prices up to three).
  std::map<std::int64_t, model::StepReport> trials;
  const model::TrialStep trial_step = [&](std::int64_t nodes) {
    auto it = trials.find(nodes);
    if (it == trials.end())
      it = trials.emplace(nodes, model::simulate_step(step_input_of(trial_scenario(s, nodes)), fidelity))
               .first;
    return it->second;
  };
  if (!s.convergence) {
    result.run = run_with_campaign(s, result.step, trial_step, s.training, nullptr);
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
        return run_with_campaign(s, result.step, trial_step, training, &target);
      // The target moves on once the run reaches it: the schedule decides what the first run leaves.
      const double next_loss = *s.convergence->next_target_loss;
      const model::MovedTargetTokens moved =
          model::tokens_for_moved_target(s.training.schedule, s.training.wsd_decay_fraction, target.tokens,
                                         target_at(next_loss, speedup).tokens);
      training.tokens = moved.tokens;
      model::RunReport run = run_with_campaign(s, result.step, trial_step, training, &target);
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
