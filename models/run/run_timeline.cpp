#include "models/run/run_timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace trainsim::model {

std::vector<TimelineRow> run_timeline(const RunReport& run, double recovery_s, std::size_t max_rows) {
  std::vector<TimelineRow> rows;
  if (!run.feasible || run.run_time <= 0) return rows;
  const double T = run.run_time;
  auto row_at = [&](double t, std::string event) {
    const double share = std::clamp(t / T, 0.0, 1.0);
    TimelineRow r;
    r.time = t;
    r.step =
        std::min(run.steps, static_cast<std::int64_t>(std::floor(share * static_cast<double>(run.steps))));
    r.event = std::move(event);
    r.cost_compute = run.cost_compute * share;
    r.cost_storage = run.cost_storage * share;
    r.cost_network = run.cost_network * share;
    r.cost_energy = run.cost_energy * share;
    r.cost_total = run.cost_total * share;
    return r;
  };
  const auto checkpoints = static_cast<std::size_t>(std::max<std::int64_t>(run.checkpoints, 0));
  const auto failures = static_cast<std::size_t>(std::floor(std::max(run.failures_expected, 0.0)));
  const std::size_t budget = std::max<std::size_t>(max_rows, 4) - 2;
  const std::size_t events = checkpoints + 2 * failures;
  const std::size_t stride = events <= budget ? 1 : (events + budget - 1) / budget;

  rows.push_back(row_at(0, "start"));
  for (std::size_t k = stride - 1; k < checkpoints; k += stride) {
    // Checkpoint k+1 follows (k+1) intervals of training; training maps pro rata onto the wall clock.
    const double trained = static_cast<double>(k + 1) * run.checkpoint_interval;
    rows.push_back(row_at(T * std::min(trained / run.training_time, 1.0), "checkpoint"));
  }
  for (std::size_t j = stride - 1; j < failures; j += stride) {
    const double t = T * (static_cast<double>(j) + 0.5) / static_cast<double>(failures);
    rows.push_back(row_at(t, "failure"));
    rows.push_back(row_at(std::min(t + recovery_s, T), "restart"));
  }
  rows.push_back(row_at(T, "end"));
  std::stable_sort(rows.begin(), rows.end(),
                   [](const TimelineRow& a, const TimelineRow& b) { return a.time < b.time; });
  return rows;
}

std::string timeline_csv(const std::vector<TimelineRow>& rows) {
  std::string out =
      "time_s,step,event,cost_compute_usd,cost_storage_usd,cost_network_usd,cost_energy_usd,cost_total_usd\n";
  for (const auto& r : rows) {
    out += fmt::format("{:.6f},{},{},{:.2f},{:.2f},{:.2f},{:.2f},{:.2f}\n", r.time, r.step, r.event,
                       r.cost_compute, r.cost_storage, r.cost_network, r.cost_energy, r.cost_total);
  }
  return out;
}

}  // namespace trainsim::model
