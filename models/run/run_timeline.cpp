#include "models/run/run_timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "models/run/spend_schedule.hpp"
#include "sim/csv_field.hpp"

namespace trainsim::model {

std::vector<TimelineRow> run_timeline(const RunReport& run, double recovery_s, std::size_t max_rows) {
  std::vector<TimelineRow> rows;
  if (!run.feasible || run.run_time <= 0) return rows;
  const double length = run.run_time;
  const double run_start = run.tuning ? run.tuning_time : 0.0;
  auto row_at = [&](double t, std::string event) {
    const double share = std::clamp((t - run_start) / length, 0.0, 1.0);
    TimelineRow r;
    r.time = t;
    r.step =
        std::min(run.steps, static_cast<std::int64_t>(std::floor(share * static_cast<double>(run.steps))));
    r.event = std::move(event);
    const CostByCategory spent = spent_by(run.outlays, t);
    auto of = [&](CostCategory c) { return spent[static_cast<std::size_t>(c)]; };
    r.cost_compute = of(CostCategory::compute);
    r.cost_storage = of(CostCategory::storage);
    r.cost_network = of(CostCategory::network);
    r.cost_energy = of(CostCategory::energy);
    r.cost_tuning = of(CostCategory::tuning);
    r.cost_data = of(CostCategory::data);
    r.cost_people = of(CostCategory::people);
    r.cost_fixed = of(CostCategory::fixed);
    r.cost_total = total_of(spent);
    return r;
  };
  const auto checkpoints = static_cast<std::size_t>(std::max<std::int64_t>(run.checkpoints, 0));
  const auto failures = static_cast<std::size_t>(std::floor(std::max(run.failures_expected, 0.0)));
  const std::size_t budget = std::max<std::size_t>(max_rows, 4) - 2;
  const std::size_t events = checkpoints + 2 * failures;
  const std::size_t stride = events <= budget ? 1 : (events + budget - 1) / budget;

  rows.push_back(row_at(0, "start"));
  if (run_start > 0) rows.push_back(row_at(run_start, "run_start"));
  for (std::size_t k = stride - 1; k < checkpoints; k += stride) {
    // Checkpoint k+1 follows (k+1) intervals of training; training maps pro rata onto the wall clock.
    const double trained = static_cast<double>(k + 1) * run.checkpoint_interval;
    rows.push_back(row_at(run_start + length * std::min(trained / run.training_time, 1.0), "checkpoint"));
  }
  for (std::size_t j = stride - 1; j < failures; j += stride) {
    const double t = length * (static_cast<double>(j) + 0.5) / static_cast<double>(failures);
    rows.push_back(row_at(run_start + t, "failure"));
    rows.push_back(row_at(run_start + std::min(t + recovery_s, length), "restart"));
  }
  rows.push_back(row_at(run_start + length, "end"));
  for (const Outlay& o : run.outlays) {
    if (o.category == CostCategory::fixed && o.end > 0 && o.end != run_start + length) {
      rows.push_back(row_at(o.end, "commitment_end"));
    }
  }
  for (const BudgetAlert& a : run.budget_alerts) {
    if (a.reached) rows.push_back(row_at(a.time, fmt::format("budget_alert_{:g}", a.fraction)));
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const TimelineRow& a, const TimelineRow& b) { return a.time < b.time; });
  return rows;
}

std::string timeline_csv(const std::vector<TimelineRow>& rows,
                         const std::vector<std::pair<std::string, std::string>>& tags) {
  std::string out =
      "time_s,step,event,cost_compute_usd,cost_storage_usd,cost_network_usd,cost_energy_usd,cost_tuning_usd,"
      "cost_data_usd,cost_people_usd,cost_fixed_usd,cost_total_usd";
  std::string tag_cells;
  for (const auto& [key, value] : tags) {
    out += "," + sim::csv_field("tags." + key);
    tag_cells += "," + sim::csv_field(value);
  }
  out += "\n";
  for (const auto& r : rows) {
    out += fmt::format("{:.6f},{},{},{:.2f},{:.2f},{:.2f},{:.2f},{:.2f},{:.2f},{:.2f},{:.2f},{:.2f}{}\n",
                       r.time, r.step, r.event, r.cost_compute, r.cost_storage, r.cost_network, r.cost_energy,
                       r.cost_tuning, r.cost_data, r.cost_people, r.cost_fixed, r.cost_total, tag_cells);
  }
  return out;
}

}  // namespace trainsim::model
