// When the campaign's money is spent (models/run/spend_schedule.hpp), and when it crosses the budget's
// alerts, against arithmetic done by hand on round numbers.
#include "models/run/spend_schedule.hpp"

#include <doctest/doctest.h>

#include <cstddef>

#include "models/run/run_timeline.hpp"

using namespace trainsim;
using model::CostCategory;

namespace {

// A run of 1,000 s that costs $600 of compute and $400 of energy: a constant burn of $1/s.
model::RunReport constant_burn() {
  model::RunReport r;
  r.steps = 1000;
  r.training_time = 1000;
  r.run_time = 1000;
  r.gpu_hours = 8 * 1000 / 3600.0;
  r.cost_compute = 600;
  r.cost_energy = 400;
  r.cost_total = 1000;
  return r;
}

double category(const model::CostByCategory& c, CostCategory k) {
  return c[static_cast<std::size_t>(k)];
}

}  // namespace

TEST_CASE("a constant burn crosses each alert at fraction x max_cost / burn rate") {
  const model::RunReport run = constant_burn();
  const auto outlays = model::spend_schedule(run, model::PricingSpec{});
  model::BudgetSpec budget;
  budget.max_cost_usd = 800;
  budget.alerts = {0.25, 0.5, 1.0, 1.5};
  const auto alerts = model::budget_alerts(outlays, budget);
  REQUIRE(alerts.size() == 4);
  // $1/s: 0.25 x $800 = $200 at 200 s, $400 at 400 s, $800 at 800 s; $1,200 is more than the run's $1,000.
  CHECK(alerts[0].usd == 200.0);
  CHECK(alerts[0].reached);
  CHECK(alerts[0].time == doctest::Approx(200.0).epsilon(1e-12));
  CHECK(alerts[1].time == doctest::Approx(400.0).epsilon(1e-12));
  CHECK(alerts[2].time == doctest::Approx(800.0).epsilon(1e-12));
  CHECK_FALSE(alerts[3].reached);
  // Without max_cost there is nothing to be a fraction of.
  budget.max_cost_usd.reset();
  CHECK(model::budget_alerts(outlays, budget).empty());
}

TEST_CASE("the campaign is laid out in time: data at once, the trials, then the run; people throughout") {
  // $100 of data at 0; $300 of trials over 100 s; the run's $1,000 over the next 1,000 s; $110 of people over
  // the 1,100 s (0.1 $/s).
  model::RunReport run = constant_burn();
  run.tuning = true;
  run.tuning_time = 100;
  run.tuning_gpu_hours = 8 * 100 / 3600.0;
  run.cost_tuning = 300;
  run.data = true;
  run.cost_data = 100;
  run.people = true;
  run.cost_people = 110;
  run.cost_total = 1000 + 300 + 100 + 110;
  const auto outlays = model::spend_schedule(run, model::PricingSpec{});
  double sum = 0;
  for (const auto& o : outlays) sum += o.usd;
  CHECK(sum == doctest::Approx(run.cost_total).epsilon(1e-12));

  const auto at_start = model::spent_by(outlays, 0);
  CHECK(model::total_of(at_start) == doctest::Approx(100.0).epsilon(1e-12));  // the data, paid at once
  const auto at_100 = model::spent_by(outlays, 100);
  CHECK(category(at_100, CostCategory::tuning) == doctest::Approx(300.0).epsilon(1e-12));
  CHECK(category(at_100, CostCategory::compute) == 0.0);
  CHECK(category(at_100, CostCategory::people) == doctest::Approx(10.0).epsilon(1e-12));
  // At 600 s: data 100 + trials 300 + half the run 500 + people 60 = 960.
  CHECK(model::total_of(model::spent_by(outlays, 600)) == doctest::Approx(960.0).epsilon(1e-12));

  // $100 is spent at 0; $150 when 100 + 3.1 t = 150 (trials $3/s and people $0.1/s): t = 50 / 3.1.
  CHECK(*model::time_spent(outlays, 100) == 0.0);
  CHECK(*model::time_spent(outlays, 150) == doctest::Approx(50 / 3.1).epsilon(1e-12));
  // $960 at 600 s, as above; $1,510 (all of it) at the end, 1,100 s; a cent more never.
  CHECK(*model::time_spent(outlays, 960) == doctest::Approx(600.0).epsilon(1e-12));
  CHECK(*model::time_spent(outlays, 1510) == doctest::Approx(1100.0).epsilon(1e-9));
  CHECK_FALSE(model::time_spent(outlays, 1510.01).has_value());
}

TEST_CASE(
    "under a commitment the on-demand rest falls where the term does not cover it, the fee over the term") {
  // 8 GPUs for 10 h at $2 on demand; 4 GPUs committed for 5 h at $1. On demand: 4 GPUs x 5 h x $2 = $40
  // inside the term, 8 x 5 h x $2 = $80 after it: $120. The fee: 4 x 5 h x $1 = $20 over the term.
  model::RunReport run;
  run.steps = 100;
  run.training_time = run.run_time = 36000;
  run.gpu_hours = 80;
  run.cost_compute = 120;
  run.commitment = true;
  run.cost_fixed = 20;
  run.cost_total = 140;
  model::PricingSpec pricing;
  pricing.gpu_hour_usd = 2;
  pricing.commitment = {.enabled = true, .gpus = 4, .term_s = 18000, .gpu_hour_usd = 1};
  const auto outlays = model::spend_schedule(run, pricing);
  const auto at_term = model::spent_by(outlays, 18000);
  CHECK(category(at_term, CostCategory::compute) == doctest::Approx(40.0).epsilon(1e-12));
  CHECK(category(at_term, CostCategory::fixed) == doctest::Approx(20.0).epsilon(1e-12));
  const auto at_end = model::spent_by(outlays, 36000);
  CHECK(category(at_end, CostCategory::compute) == doctest::Approx(120.0).epsilon(1e-12));
  CHECK(model::total_of(at_end) == doctest::Approx(140.0).epsilon(1e-12));
  // By the term's end $60 is spent; after it the burn is the $80 of on-demand compute over 18,000 s, so
  // $70 comes 10 / (80 / 18,000) = 2,250 s later: at 20,250 s.
  CHECK(*model::time_spent(outlays, 70) == doctest::Approx(20250.0).epsilon(1e-12));
}

TEST_CASE("run.csv has a row where each alert is crossed, its cost the alert's, its tags on every row") {
  model::RunReport run = constant_burn();
  run.outlays = model::spend_schedule(run, model::PricingSpec{});
  model::BudgetSpec budget;
  budget.max_cost_usd = 800;
  budget.alerts = {0.5, 1.0};
  run.budget_alerts = model::budget_alerts(run.outlays, budget);
  const auto rows = model::run_timeline(run, 0);
  // start, budget_alert_0.5 at 400 s ($400), budget_alert_1 at 800 s ($800), end at 1,000 s.
  REQUIRE(rows.size() == 4);
  CHECK(rows[1].event == "budget_alert_0.5");
  CHECK(rows[1].time == doctest::Approx(400.0).epsilon(1e-12));
  CHECK(rows[1].cost_total == doctest::Approx(400.0).epsilon(1e-12));
  CHECK(rows[1].step == 400);  // 400 of the 1,000 steps
  CHECK(rows[2].event == "budget_alert_1");
  CHECK(rows[2].cost_total == doctest::Approx(800.0).epsilon(1e-12));
  for (const auto& r : rows) {
    CHECK(r.cost_total == doctest::Approx(r.cost_compute + r.cost_storage + r.cost_network + r.cost_energy +
                                          r.cost_tuning + r.cost_data + r.cost_people + r.cost_fixed)
                              .epsilon(1e-12));
  }
  const std::string csv = model::timeline_csv(rows, {{"team", "llm"}, {"note", "a, b"}});
  CHECK(csv.rfind("time_s,step,event,cost_compute_usd,cost_storage_usd,cost_network_usd,cost_energy_usd,"
                  "cost_tuning_usd,cost_data_usd,cost_people_usd,cost_fixed_usd,cost_total_usd,tags.team,"
                  "tags.note\n",
                  0) == 0);
  CHECK(csv.find("400.000000,400,budget_alert_0.5,240.00,0.00,0.00,160.00,0.00,0.00,0.00,0.00,400.00,llm,"
                 "\"a, b\"\n") != std::string::npos);
}
