#pragma once
// The campaign as a timeline for run.csv: one row per event with the step reached and the cumulative cost
// by category, on the campaign's clock (seconds since it began; the run's own start when there are no
// tuning trials). Events: start (0), run_start (the trials' end, with tuning:), checkpoint, failure,
// restart, end (the run's end), commitment_end (the commitment's term, when it ends elsewhere), and
// budget_alert_<fraction> where the spend reaches that fraction of budget.max_cost. It is the
// expected-value picture: steps accrue pro rata to the run's wall clock, costs as the outlays of
// models/run/spend_schedule.hpp lay them, and the expected number of failures (rounded down) is spread
// evenly over the run, each followed by its restart once the recovery time has passed.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/run/run_report.hpp"

namespace trainsim::model {

struct TimelineRow {
  double time = 0;        ///< campaign clock, s
  std::int64_t step = 0;  ///< optimizer steps of the run completed
  std::string event;
  double cost_compute = 0;  ///< cumulative, USD
  double cost_storage = 0;
  double cost_network = 0;
  double cost_energy = 0;
  double cost_tuning = 0;
  double cost_data = 0;
  double cost_people = 0;
  double cost_fixed = 0;
  double cost_total = 0;  ///< the sum of the categories
};

/// Rows in time order. When there are more than `max_rows` checkpoints and failures, every k-th of each is
/// kept so the file stays plottable; start, end and the campaign's own rows are always present.
std::vector<TimelineRow> run_timeline(const RunReport& run, double recovery_s, std::size_t max_rows = 100000);

/// CSV with header `time_s,step,event,cost_compute_usd,cost_storage_usd,cost_network_usd,cost_energy_usd,
/// cost_tuning_usd,cost_data_usd,cost_people_usd,cost_fixed_usd,cost_total_usd`, then one column per tag
/// (`tags.<key>`, the scenario's tags in file order) repeated on every row.
std::string timeline_csv(const std::vector<TimelineRow>& rows,
                         const std::vector<std::pair<std::string, std::string>>& tags = {});

}  // namespace trainsim::model
