#include "models/run/run_model.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "models/run/pricing.hpp"
#include "models/run/run_timeline.hpp"
#include "sim/error.hpp"

using namespace trainsim;

namespace {
// 1,024 GPUs, 10 s iterations, 1,000 steps of 1536 x 2048 tokens: round numbers checkable by hand.
model::RunInputs base_inputs() {
  model::RunInputs in;
  in.step.feasible = true;
  in.step.iteration_time = 10;
  in.step.time.compute = 8;
  in.step.fleet_compute_fraction = 0.8;  // every pipeline rank busy 8 s of 10
  in.step.gpus = 1024;
  in.global_batch = 1536;
  in.seq_len = 2048;
  in.training.steps = 1000;
  in.cluster.nodes = 128;
  in.cluster.node.gpus_per_node = 8;
  in.cluster.node.nics_per_node = 8;
  in.cluster.node.nic_bytes_per_s = 25e9;
  in.cluster.node.pcie_bytes_per_s = 20e9;
  in.cluster.node.gpu.tdp_w = 400;
  in.cluster.node.gpu.idle_w = 100;
  in.cluster.storage.write_bytes_per_s = 100e9;
  in.cluster.storage.read_bytes_per_s = 100e9;
  in.cluster.storage.latency_s = 0;
  in.pricing.enabled = true;
  in.pricing.gpu_hour_usd = 2.5;
  return in;
}
}  // namespace

TEST_CASE("the run length comes from steps, tokens, or epochs of a dataset") {
  model::TrainingSpec t;
  t.steps = 5;
  CHECK(model::run_steps(t, 8, 1024) == 5);
  t.steps.reset();
  t.tokens = 300e9;
  CHECK(model::run_steps(t, 1536, 2048) == 95368);  // ceil(300e9 / 3,145,728)
  t.tokens.reset();
  t.epochs = 2;
  t.dataset_tokens = 1e9;
  CHECK(model::run_steps(t, 1000, 1000) == 2000);
  t.epochs.reset();
  CHECK_THROWS_AS(model::run_steps(t, 1, 1), InputError);
}

TEST_CASE("without checkpoints or failures the run is its steps and costs GPU-hours times the price") {
  const auto r = model::simulate_run(base_inputs());
  CHECK(r.steps == 1000);
  CHECK(r.run_time == doctest::Approx(10000).scale(0));
  CHECK(r.gpu_hours == doctest::Approx(1024 * 10000 / 3600.0).scale(0));
  CHECK(r.cost_compute == doctest::Approx(1024 * 10000 / 3600.0 * 2.5).scale(0));
  CHECK(r.cost_total == doctest::Approx(r.cost_compute).scale(0));
  CHECK(r.goodput == doctest::Approx(1.0).scale(0));
}

TEST_CASE("sync checkpoints add their write time to the run; async ones only the copy-out") {
  auto in = base_inputs();
  in.checkpoint.enabled = true;
  in.checkpoint.every_steps = 100;  // 10 checkpoints
  in.checkpoint_bytes = 1e12;       // 10 s at 100 GB/s
  in.checkpoint.mode = model::CheckpointMode::sync;
  const auto sync = model::simulate_run(in);
  const double copy_out = 1e12 / 1024 / 20e9;
  CHECK(sync.checkpoints == 10);
  CHECK(sync.checkpoint_write_time == doctest::Approx(10).scale(0));
  CHECK(sync.checkpoint_stall == doctest::Approx(10 * (10 + copy_out)).scale(0));
  CHECK(sync.run_time == doctest::Approx(10000 + 10 * (10 + copy_out)).scale(0));
  in.checkpoint.mode = model::CheckpointMode::async;
  const auto async = model::simulate_run(in);
  CHECK(async.checkpoint_stall == doctest::Approx(10 * copy_out).scale(0));
}

TEST_CASE("an async write longer than the interval makes the next checkpoint wait") {
  auto in = base_inputs();
  in.checkpoint.enabled = true;
  in.checkpoint.every_steps = 1;  // every 10 s
  in.checkpoint_bytes = 3e12;     // 30 s to write
  in.checkpoint.mode = model::CheckpointMode::async;
  const auto r = model::simulate_run(in);
  CHECK(r.checkpoint_stall_each == doctest::Approx(3e12 / 1024 / 20e9 + 20).scale(0));
}

TEST_CASE("failures add expected lost work, restarts and restores, and Young's interval is recommended") {
  auto in = base_inputs();
  in.training.steps = 100000;
  in.checkpoint.enabled = true;
  in.checkpoint.interval_s = 3600;
  in.checkpoint.mode = model::CheckpointMode::sync;
  in.checkpoint_bytes = 1e12;
  in.failures = {.enabled = true, .node_mtbf_s = 5000 * 3600.0, .restart_s = 900};
  const auto r = model::simulate_run(in);
  const double mtbf = 5000 * 3600.0 / 128;
  CHECK(r.cluster_mtbf == doctest::Approx(mtbf).scale(0));
  CHECK(r.failures_expected == doctest::Approx(r.run_time / mtbf).epsilon(0.02));
  // Each failure loses about half a segment plus restart and restore (first order).
  const double segment = 3600 + r.checkpoint_stall_each;
  const double per_failure = segment / 2 + 900 + r.checkpoint_restore_time;
  CHECK(r.lost_work == doctest::Approx(r.failures_expected * per_failure).epsilon(0.03));
  CHECK(r.recommended_checkpoint_interval ==
        doctest::Approx(std::sqrt(2 * r.checkpoint_stall_each * mtbf)).scale(0));
  CHECK(r.goodput < 1.0);
  CHECK(r.run_time == doctest::Approx(r.training_time + r.checkpoint_stall + r.lost_work).scale(0));
}

TEST_CASE("a Monte-Carlo run reports its mean and 5th/95th percentiles around the expected run time") {
  auto in = base_inputs();
  in.training.steps = 50000;
  in.checkpoint.enabled = true;
  in.checkpoint.interval_s = 3600;
  in.checkpoint_bytes = 1e12;
  in.failures = {.enabled = true, .node_mtbf_s = 2000 * 3600.0, .restart_s = 900};
  const auto expected = model::simulate_run(in);
  in.failures.trials = 300;
  const auto mc = model::simulate_run(in);
  CHECK(mc.run_time_spread.p5 <= mc.run_time_spread.mean);
  CHECK(mc.run_time_spread.mean <= mc.run_time_spread.p95);
  CHECK(mc.run_time == doctest::Approx(expected.run_time).epsilon(0.01));
}

TEST_CASE("energy follows GPU power between idle and TDP, PUE and carbon intensity") {
  auto in = base_inputs();
  in.pricing.energy = {.usd_per_kwh = 0.12, .pue = 1.2, .carbon_g_per_kwh = 350};
  const auto r = model::simulate_run(in);
  // 80 % busy: 100 + 300 x 0.8 = 340 W per GPU, 1,024 GPUs, 10,000 s, PUE 1.2.
  const double kwh = 340.0 * 1024 * 10000 * 1.2 / 3.6e6;
  CHECK(r.energy_kwh == doctest::Approx(kwh).scale(0));
  CHECK(r.cost_energy == doctest::Approx(kwh * 0.12).scale(0));
  CHECK(r.co2_kg == doctest::Approx(kwh * 0.35).scale(0));
  CHECK(r.cost_total == doctest::Approx(r.cost_compute + kwh * 0.12).scale(0));
}

TEST_CASE("checkpoint retention is charged per GB-month on the hot and cold tiers") {
  // 4 checkpoints of 1 TB every 10 days over a 45-day run, keep 2, cold after 5 days.
  const double day = 86400;
  model::StoragePricing p{
      .hot_usd_per_gb_month = 0.10, .cold_usd_per_gb_month = 0.01, .cold_after_s = 5 * day};
  const auto use = model::checkpoint_storage(1e12, 4, 10 * day, 45 * day, 2, p);
  // Checkpoints 1, 2 live 20 days; 3 lives 15 days (to day 45); 4 lives 5 days. Each is hot for <= 5 days.
  const double month = model::kSecondsPerBillingMonth;
  CHECK(use.hot_gb_months == doctest::Approx(1000 * 4 * 5 * day / month).scale(0));
  CHECK(use.cold_gb_months == doctest::Approx(1000 * (15 + 15 + 10 + 0) * day / month).scale(0));
  CHECK(use.cost_usd == doctest::Approx(use.hot_gb_months * 0.10 + use.cold_gb_months * 0.01).scale(0));
}

TEST_CASE("budget violations are reported as sentences") {
  auto in = base_inputs();
  in.budget.max_cost_usd = 1000;
  in.budget.deadline_s = 3600;
  in.step.memory_capacity = 80e9;
  in.step.memory_per_gpu = 76e9;
  in.budget.memory_headroom = 0.1;
  const auto r = model::simulate_run(in);
  REQUIRE(r.budget_violations.size() == 3);
  CHECK(r.budget_violations[0].find("exceeds budget.max_cost $1.0k") != std::string::npos);
  CHECK(r.budget_violations[1].find("exceeds budget.deadline") != std::string::npos);
  CHECK(r.budget_violations[2].find("budget.memory_headroom 10 %") != std::string::npos);
}

TEST_CASE("spot capacity is priced with its preemptions") {
  auto in = base_inputs();
  in.checkpoint.enabled = true;
  in.checkpoint.every_steps = 10;
  in.failures = {.enabled = true, .node_mtbf_s = 1e9, .restart_s = 600};
  in.pricing.spot = {.enabled = true, .gpu_hour_usd = 1.1, .preemptions_per_s = 0.02 / 3600};
  const auto r = model::simulate_run(in);
  CHECK(r.spot);
  CHECK(r.spot_run_time > r.run_time);
  CHECK(r.spot_cost_total < r.cost_total);  // 1.10 vs 2.50 per GPU-hour dominates here
}

TEST_CASE("the timeline starts at zero, ends at the run time, and its costs only grow") {
  auto in = base_inputs();
  in.training.steps = 20000;
  in.checkpoint.enabled = true;
  in.checkpoint.every_steps = 1000;
  in.failures = {.enabled = true, .node_mtbf_s = 1000 * 3600.0, .restart_s = 600};
  const auto r = model::simulate_run(in);
  const auto rows = model::run_timeline(r, 600);
  REQUIRE(rows.size() >= 2);
  CHECK(rows.front().event == "start");
  CHECK(rows.back().event == "end");
  CHECK(rows.back().time == doctest::Approx(r.run_time).scale(0));
  CHECK(rows.back().cost_total == doctest::Approx(r.cost_total).scale(0));
  for (std::size_t i = 1; i < rows.size(); ++i) CHECK(rows[i].cost_total >= rows[i - 1].cost_total);
  CHECK(model::timeline_csv(rows).rfind("time_s,step,event,", 0) == 0);
}

TEST_CASE("an infeasible iteration makes an infeasible run") {
  auto in = base_inputs();
  in.step.feasible = false;
  CHECK_FALSE(model::simulate_run(in).feasible);
}
