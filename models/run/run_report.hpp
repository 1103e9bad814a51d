#pragma once
// What simulating the whole run reports (SPEC "Outputs", per run). Units: seconds, bytes, US dollars,
// kWh, kg; fractions in [0, 1]. Produced by model::simulate_run (run_model.hpp).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace trainsim::model {

/// The categories of cost_total, as the summary and run.csv name them (cost_<name>).
enum class CostCategory : std::uint8_t { compute, storage, network, energy, tuning, data, people, fixed };
inline constexpr std::size_t kCostCategories = 8;

/// Money spent evenly over [start, end] of the campaign's clock (seconds since it began: the trials, then
/// the run); all of it at `start` when end == start. models/run/spend_schedule.hpp lays them out.
struct Outlay {
  CostCategory category = CostCategory::compute;
  double start = 0;
  double end = 0;
  double usd = 0;
};

/// A budget alert (scenario `budget.alerts`): the campaign's cumulative cost reaches `fraction` of
/// budget.max_cost (`usd`) at `time` on its clock, or never (`reached` false).
struct BudgetAlert {
  double fraction = 0;
  double usd = 0;
  bool reached = false;
  double time = 0;
};

/// Spread of a Monte-Carlo estimate; all zero when the run was computed as expected values.
struct Spread {
  double mean = 0;
  double p5 = 0;
  double p95 = 0;
};

struct RunReport {
  bool feasible = true;  ///< false: the run cannot complete (`reason` says why)
  std::string reason;
  std::int64_t steps = 0;    ///< optimizer steps to train the requested tokens/steps/epochs
  double tokens = 0;         ///< tokens trained
  double training_time = 0;  ///< steps x iteration time, s (no stalls, no failures)
  double run_time = 0;       ///< wall clock incl. checkpoints and failures, s
  double gpu_hours = 0;      ///< GPUs x run_time, h
  // Checkpoints
  double checkpoint_size = 0;           ///< bytes of one checkpoint
  double checkpoint_write_time = 0;     ///< s to write one checkpoint to storage
  double checkpoint_stall_each = 0;     ///< s training stops per checkpoint (sync: write; async: copy-out)
  double checkpoint_copy_out_time = 0;  ///< s to copy each GPU's shard to host memory; the write follows
  double checkpoint_stall = 0;          ///< total over the run, s
  double checkpoint_restore_time = 0;   ///< s to read one checkpoint back after a failure
  double recovery_time = 0;             ///< s from a failure to training again: restart + restore
  std::int64_t checkpoints = 0;         ///< checkpoints written over the run
  double checkpoint_interval = 0;       ///< training seconds between checkpoints (0: none)
  /// Young: sqrt(2 · stall · MTBF), s, the MTBF of failures and rollbacks together (0: neither)
  double recommended_checkpoint_interval = 0;
  // Failures
  double cluster_mtbf = 0;        ///< s between failures of any node/GPU of the allocation (0: none)
  double failures_expected = 0;   ///< failures (and preemptions) over the run, rollbacks included
  double rollbacks_expected = 0;  ///< of those, rollbacks from training.instability
  double lost_work = 0;           ///< s of recomputed training + restarts + restores, total
  double goodput = 1;             ///< training_time / run_time
  Spread run_time_spread;         ///< Monte-Carlo (failures.trials > 0)
  Spread cost_spread;
  // Money and energy
  std::string region;       ///< the region price table the prices came from (`pricing.region`); "" when none
  double cost_total = 0;    ///< compute + storage + network + energy, USD
  double cost_compute = 0;  ///< GPU-hours x price
  double cost_storage = 0;  ///< checkpoint retention, hot and cold tiers
  double cost_network = 0;  ///< egress
  double cost_energy = 0;   ///< electricity incl. PUE
  /// the part of compute + energy spent on failures, stalls and bubbles, and a commitment's idle GPU-hours
  double cost_wasted = 0;
  double energy_kwh = 0;
  double co2_kg = 0;
  // Spot capacity (when pricing.spot is given): the same run on preemptible GPUs.
  bool spot = false;
  double spot_run_time = 0;
  double spot_cost_total = 0;  ///< the whole bill with the run on spot: cost_total's other parts included
  // What a unit of the result costs, and the on-demand part of the GPU bill (models/run/cost_figures.hpp).
  double cost_per_token = 0;       ///< cost_total / tokens, USD
  double cost_per_pflop = 0;       ///< cost_total per 1e15 model FLOPs of the run, USD
  double cost_elastic = 0;         ///< GPU-hours bought on demand: cost_compute + cost_tuning, USD
  double cost_per_loss_point = 0;  ///< cost_total / (initial_loss − target_loss), USD per nat of loss
  // The run's length from a target loss (scenario `convergence:`; models/run/convergence.hpp).
  bool convergence = false;
  double target_loss = 0;   ///< nats per token
  double initial_loss = 0;  ///< min(the law's loss after one step, ln vocab), nats (convergence.hpp)
  double law_tokens = 0;    ///< tokens the loss law asks for at a small batch, with AdamW
  double tokens_min = 0;    ///< law_tokens / optimizer_speedup: E_min of the batch trade-off
  // The optimizer's tokens to the target relative to AdamW (models/run/optimizer_efficiency.hpp): the
  // speedup used, the range across its sources, and the campaign's tokens and cost_total at either end.
  double optimizer_speedup = 1;
  double optimizer_speedup_low = 1;
  double optimizer_speedup_high = 1;
  double tokens_range_low = 0;       ///< tokens at optimizer_speedup_high
  double tokens_range_high = 0;      ///< tokens at optimizer_speedup_low
  double cost_total_range_low = 0;   ///< USD, the lower of cost_total at either end of the speedups
  double cost_total_range_high = 0;  ///< USD, the higher
  // A target that moves (convergence.next_target_loss; models/run/lr_schedule.hpp): tokens trains the
  // campaign to both targets; schedule_extra_tokens is what it trains beyond a single run to the new one.
  double next_target_loss = 0;
  double schedule_extra_tokens = 0;
  double critical_batch_tokens = 0;  ///< B_crit; a global batch above it costs more tokens
  // Hyper-parameter trials before the run (scenario `tuning:`; models/run/tuning.hpp), each a run of the
  // step model on its share of the cluster. Their cost is part of cost_total.
  bool tuning = false;
  double tuning_trial_equivalents = 0;  ///< trials' training, in trials trained to their whole budget
  double tuning_gpu_hours = 0;
  double tuning_time = 0;  ///< wall clock of the trials, s
  double cost_tuning = 0;  ///< USD
  // The data work and the people (scenario `data:`, `people:`; models/run/campaign_cost.hpp), part of
  // cost_total; the people are paid over tuning_time + run_time.
  bool data = false;
  double cost_data = 0;
  bool people = false;
  double cost_people = 0;
  // Committed capacity (pricing.commitment): its whole term is paid (cost_fixed, in cost_total); the
  // GPU-hours it covers leave cost_compute and cost_tuning, which keep only the on-demand rest.
  bool commitment = false;
  double cost_fixed = 0;
  double committed_idle_gpu_hours = 0;  ///< the term's GPU-hours the campaign did not use
  double cost_fixed_idle = 0;           ///< what they cost: part of cost_fixed
  /// When the money of cost_total is spent (their sum is cost_total), and when it crosses the budget's
  /// alerts.
  std::vector<Outlay> outlays;
  std::vector<BudgetAlert> budget_alerts;
  /// Budget checks that failed, as sentences ("cost_total $5.10M exceeds budget.max_cost $4.50M").
  std::vector<std::string> budget_violations;
};

}  // namespace trainsim::model
