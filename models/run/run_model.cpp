#include "models/run/run_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "models/run/campaign.hpp"
#include "models/run/checkpoint_io.hpp"
#include "models/run/cost_figures.hpp"
#include "models/run/failures.hpp"
#include "models/run/pricing.hpp"
#include "models/run/spend_schedule.hpp"
#include "models/spec/human_units.hpp"
#include "sim/error.hpp"

namespace trainsim::model {

std::int64_t run_steps(const TrainingSpec& training, std::int64_t global_batch, std::int64_t seq_len) {
  if (training.steps) return *training.steps;
  const double tokens_per_step = static_cast<double>(global_batch) * static_cast<double>(seq_len);
  TRAINSIM_CHECK(tokens_per_step > 0, "a step must train at least one token");
  double tokens = 0;
  if (training.tokens) {
    tokens = *training.tokens;
  } else if (training.epochs && training.dataset_tokens) {
    tokens = *training.epochs * *training.dataset_tokens;
  } else {
    throw InputError(
        "training: the run length is missing: give tokens, steps, or epochs with dataset_tokens");
  }
  const double steps = std::ceil(tokens / tokens_per_step);
  if (!(steps < 9e15)) throw InputError("training: the run is longer than 9e15 steps");
  return static_cast<std::int64_t>(steps);
}

namespace {

struct CheckpointPlan {
  std::int64_t steps_per_checkpoint = 0;  // 0: no checkpoints
  std::int64_t count = 0;
  double interval = 0;  // training seconds between checkpoints
};

CheckpointPlan plan_checkpoints(const CheckpointSpec& spec, std::int64_t steps, double iteration_time) {
  CheckpointPlan plan;
  if (!spec.enabled || steps <= 0) return plan;
  if (spec.every_steps) {
    plan.steps_per_checkpoint = *spec.every_steps;
  } else if (spec.interval_s) {
    plan.steps_per_checkpoint = std::max<std::int64_t>(1, std::llround(*spec.interval_s / iteration_time));
  }
  if (plan.steps_per_checkpoint <= 0) return plan;
  plan.count = steps / plan.steps_per_checkpoint;
  plan.interval = static_cast<double>(plan.steps_per_checkpoint) * iteration_time;
  return plan;
}

// Percentile of sorted values by linear interpolation between closest ranks.
double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

// The run's checkpoints: their plan, and their size and write, restore and stall times in `r`. An async
// write that outlasts the next segment makes the next checkpoint wait for it.
struct Checkpoints {
  CheckpointPlan plan;
  CheckpointIo io;
};

Checkpoints set_checkpoints(const RunInputs& in, RunReport& r) {
  const CheckpointPlan ckpt = plan_checkpoints(in.checkpoint, r.steps, in.step.iteration_time);
  r.checkpoints = ckpt.count;
  r.checkpoint_interval = ckpt.interval;
  if (in.checkpoint.enabled || in.checkpoint_bytes > 0) r.checkpoint_size = in.checkpoint_bytes;
  const CheckpointIo io =
      checkpoint_io(r.checkpoint_size, in.cluster, in.checkpoint.mode, in.checkpoint_writers);
  r.checkpoint_write_time = io.write_time;
  r.checkpoint_restore_time = io.restore_time;
  r.checkpoint_stall_each = io.stall;
  r.checkpoint_copy_out_time = io.copy_out_time;
  if (in.checkpoint.mode == CheckpointMode::async && ckpt.count > 0) {
    r.checkpoint_stall_each += std::max(0.0, io.write_time - ckpt.interval);
  }
  r.checkpoint_stall = r.checkpoint_stall_each * static_cast<double>(ckpt.count);
  return {ckpt, io};
}

// The training as segments of work: each checkpoint ends one (its stall included), the tail after the last
// checkpoint is one more.
std::vector<Segments> work_segments(const CheckpointPlan& ckpt, const RunReport& r) {
  std::vector<Segments> segments;
  if (ckpt.count > 0)
    segments.push_back({.work = ckpt.interval + r.checkpoint_stall_each, .count = ckpt.count});
  const double tail = r.training_time - ckpt.interval * static_cast<double>(ckpt.count);
  if (tail > 0) segments.push_back({.work = tail, .count = 1});
  return segments;
}

// What sends the run back to its last checkpoint and restarts it: hardware failures and rollbacks after
// loss spikes (training.instability), so their rates (per second) add; and what one restart costs.
struct Restarts {
  double hardware_rate = 0;
  double rollback_rate = 0;
  double rate = 0;      // both
  double recovery = 0;  // s per restart: the restart, and the restore when anything restarts
};

Restarts restarts(const RunInputs& in, const RunReport& r, const CheckpointIo& io) {
  Restarts out;
  out.hardware_rate = failure_rate(in.failures, in.cluster);
  out.rollback_rate = rollback_rate(in.training.instability, r.tokens / r.training_time);
  out.rate = out.hardware_rate + out.rollback_rate;
  out.recovery = in.failures.restart_s + (out.rate > 0 ? io.restore_time : 0.0);
  return out;
}

// Why a run whose expected time is not finite (or beyond a million years) does not finish.
std::string unfinished_reason(const Restarts& restart, const std::vector<Segments>& segments,
                              const CheckpointPlan& ckpt) {
  return fmt::format(
      "the run does not finish: failures{} every {} on average restart segments of {} of work{}",
      restart.rollback_rate > 0 ? " and rollbacks (training.instability)" : "",
      format_human(FieldUnit::seconds, 1.0 / restart.rate),
      format_human(FieldUnit::seconds, segments.empty() ? 0.0 : segments.front().work),
      ckpt.count > 0 ? "" : " (no checkpoints: add a checkpoint block)");
}

// Young's interval for the checkpoint's cost to the run (its stall when sync, its copy-out when async); an
// async checkpoint no sooner than its write ends.
double recommended_checkpoint_interval(const RunInputs& in, const CheckpointIo& io, double rate) {
  const double checkpoint_cost = in.checkpoint.mode == CheckpointMode::sync ? io.stall : io.copy_out_time;
  double interval = young_interval(checkpoint_cost, rate > 0 ? 1.0 / rate : 0.0);
  if (in.checkpoint.mode == CheckpointMode::async && interval > 0)
    interval = std::max(interval, io.write_time);
  return interval;
}

// Money as a function of the wall clock, so that Monte-Carlo trials and spot are priced the same way: the
// GPUs at `gpu_hour_usd`, the energy (busy for the training, idle the rest), storage and egress.
struct RunPrice {
  const RunInputs& in;
  double gpus = 0;
  double training_time = 0;
  double storage_usd = 0;
  double network_usd = 0;

  /// The GPUs busy for the training and idle the rest of `run_time`.
  [[nodiscard]] EnergyUse energy(double run_time) const {
    return energy_use(in.cluster, in.step.fleet_compute_fraction, training_time,
                      std::max(run_time - training_time, 0.0), in.pricing.energy);
  }
  [[nodiscard]] double cost(double run_time, double gpu_hour_usd) const {
    return gpus * run_time / 3600.0 * gpu_hour_usd + energy(run_time).cost_usd + storage_usd + network_usd;
  }
};

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// failures.trials seeded runs: the spread of run time and cost; their means become the run's time and
// failures.
void set_spreads(RunReport& r, const RunInputs& in, const std::vector<Segments>& segments,
                 const Restarts& restart, const RunPrice& price) {
  const auto trials =
      monte_carlo_runs(segments, restart.rate, restart.recovery, in.failures.seed, in.failures.trials);
  std::vector<double> times;
  std::vector<double> costs;
  double failures = 0;
  for (const auto& t : trials) {
    times.push_back(t.run_time);
    costs.push_back(price.cost(t.run_time, in.pricing.gpu_hour_usd));
    failures += t.failures;
  }
  r.run_time_spread.mean = mean(times);
  r.cost_spread.mean = mean(costs);
  std::sort(times.begin(), times.end());
  std::sort(costs.begin(), costs.end());
  r.run_time_spread.p5 = percentile(times, 0.05);
  r.run_time_spread.p95 = percentile(times, 0.95);
  r.cost_spread.p5 = percentile(costs, 0.05);
  r.cost_spread.p95 = percentile(costs, 0.95);
  r.run_time = r.run_time_spread.mean;
  r.failures_expected = failures / static_cast<double>(trials.size());
}

// The bill of the run's wall clock: compute, energy, storage and network, their total and the figures
// derived from it, and the part of compute and energy spent on lost work, stalls and idle GPUs.
void set_bill(RunReport& r, const RunInputs& in, const RunPrice& price) {
  r.lost_work = std::max(0.0, r.run_time - r.training_time - r.checkpoint_stall);
  r.goodput = r.training_time / r.run_time;
  r.gpu_hours = price.gpus * r.run_time / 3600.0;
  r.region = in.pricing.region;
  r.cost_compute = r.gpu_hours * in.pricing.gpu_hour_usd;
  const EnergyUse energy = price.energy(r.run_time);
  r.energy_kwh = energy.kwh;
  r.co2_kg = energy.co2_kg;
  r.cost_energy = energy.cost_usd;
  r.cost_storage = price.storage_usd;
  r.cost_network = price.network_usd;
  r.cost_total = run_bill(r);
  set_cost_figures(r, in.step.model_flops_per_step);
  const double wasted_time = r.lost_work + r.checkpoint_stall + in.step.fleet_idle_fraction * r.training_time;
  r.cost_wasted = (r.cost_compute + r.cost_energy) * std::clamp(wasted_time / r.run_time, 0.0, 1.0);
}

// The same run on spot capacity: preemptions add to the restart rate, and the GPUs cost the spot price.
void set_spot(RunReport& r, const RunInputs& in, const std::vector<Segments>& segments,
              const Restarts& restart, const RunPrice& price) {
  r.spot = true;
  const FailureOutcome spot =
      expected_run(segments, restart.rate + in.pricing.spot.preemptions_per_s, restart.recovery);
  if (std::isfinite(spot.run_time)) {
    r.spot_run_time = spot.run_time;
    r.spot_cost_total = price.cost(spot.run_time, in.pricing.spot.gpu_hour_usd);
  } else {
    r.spot = false;
    r.budget_violations.push_back(
        "spot: preemptions arrive faster than segments finish; the run never completes");
  }
}

}  // namespace

RunReport simulate_run(const RunInputs& in) {
  RunReport r;
  if (!in.step.feasible) {
    r.feasible = false;
    r.reason = "the iteration is infeasible";
    return r;
  }
  TRAINSIM_CHECK(in.step.iteration_time > 0, "a feasible iteration takes time");
  const double it = in.step.iteration_time;
  r.steps = run_steps(in.training, in.global_batch, in.seq_len);
  r.tokens =
      static_cast<double>(r.steps) * static_cast<double>(in.global_batch) * static_cast<double>(in.seq_len);
  r.training_time = static_cast<double>(r.steps) * it;
  const auto [ckpt, io] = set_checkpoints(in, r);
  const std::vector<Segments> segments = work_segments(ckpt, r);

  const Restarts restart = restarts(in, r, io);
  r.recovery_time = restart.recovery;
  r.cluster_mtbf = restart.hardware_rate > 0 ? 1.0 / restart.hardware_rate : 0.0;
  const FailureOutcome expected = expected_run(segments, restart.rate, restart.recovery);
  if (!std::isfinite(expected.run_time) || expected.run_time > 1e6 * 365 * 86400) {
    r.feasible = false;
    r.reason = unfinished_reason(restart, segments, ckpt);
    return r;
  }
  r.run_time = expected.run_time;
  r.failures_expected = expected.failures;
  r.recommended_checkpoint_interval = recommended_checkpoint_interval(in, io, restart.rate);

  const StorageUse storage =
      checkpoint_storage(r.checkpoint_size, ckpt.count, ckpt.interval + r.checkpoint_stall_each, r.run_time,
                         std::max(in.checkpoint.keep, 1), in.pricing.storage);
  const RunPrice price{in, static_cast<double>(in.cluster.total_gpus()), r.training_time, storage.cost_usd,
                       in.pricing.egress_bytes / 1e9 * in.pricing.egress_usd_per_gb};
  if (in.failures.trials > 0) set_spreads(r, in, segments, restart, price);
  r.rollbacks_expected = restart.rate > 0 ? r.failures_expected * restart.rollback_rate / restart.rate : 0.0;
  set_bill(r, in, price);
  if (in.pricing.spot.enabled) set_spot(r, in, segments, restart, price);
  for (auto& v : budget_violations(r, in.step, in.budget)) r.budget_violations.push_back(std::move(v));
  r.outlays = spend_schedule(r, in.pricing);
  r.budget_alerts = budget_alerts(r.outlays, in.budget);
  return r;
}

std::vector<std::string> budget_violations(const RunReport& run, const StepReport& step,
                                           const BudgetSpec& budget) {
  std::vector<std::string> out;
  if (budget.max_cost_usd && run.cost_total > *budget.max_cost_usd) {
    out.push_back(fmt::format("cost_total {} exceeds budget.max_cost {}",
                              format_human(FieldUnit::usd, run.cost_total),
                              format_human(FieldUnit::usd, *budget.max_cost_usd)));
  }
  if (budget.deadline_s && run.run_time > *budget.deadline_s) {
    out.push_back(fmt::format("run_time {} exceeds budget.deadline {}",
                              format_human(FieldUnit::seconds, run.run_time),
                              format_human(FieldUnit::seconds, *budget.deadline_s)));
  }
  const std::optional<double> headroom = budget.headroom_fraction(step.memory_capacity);
  if (headroom && step.memory_capacity > 0) {
    const double allowed = step.memory_capacity * (1.0 - *headroom);
    if (step.memory_per_gpu > allowed) {
      out.push_back(
          fmt::format("memory_per_gpu {} leaves less than budget.memory_headroom {:.0f} % of {} free",
                      format_human(FieldUnit::bytes, step.memory_per_gpu), *headroom * 100,
                      format_human(FieldUnit::bytes, step.memory_capacity)));
    }
  }
  return out;
}

}  // namespace trainsim::model
