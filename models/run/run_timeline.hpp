#pragma once
// The run as a timeline for run.csv: one row per event (start, checkpoint, failure, restart, end) with the
// step reached and cumulative cost by category. It is the expected-value picture: steps and costs accrue
// pro rata to wall-clock time, and the expected number of failures (rounded down) is spread evenly over
// the run, each followed by its restart once the recovery time has passed.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "models/run/run_report.hpp"

namespace trainsim::model {

struct TimelineRow {
  double time = 0;          ///< wall clock since the start of the run, s
  std::int64_t step = 0;    ///< optimizer steps completed
  std::string event;        ///< start | checkpoint | failure | restart | end
  double cost_compute = 0;  ///< cumulative, USD
  double cost_storage = 0;
  double cost_network = 0;
  double cost_energy = 0;
  double cost_total = 0;
};

/// Rows in time order. When there are more than `max_rows` checkpoints and failures, every k-th of each is
/// kept so the file stays plottable; start and end are always present.
std::vector<TimelineRow> run_timeline(const RunReport& run, double recovery_s, std::size_t max_rows = 100000);

/// CSV with header
/// `time_s,step,event,cost_compute_usd,cost_storage_usd,cost_network_usd,cost_energy_usd,cost_total_usd`.
std::string timeline_csv(const std::vector<TimelineRow>& rows);

}  // namespace trainsim::model
