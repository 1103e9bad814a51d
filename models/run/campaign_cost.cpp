#include "models/run/campaign_cost.hpp"

#include <algorithm>

namespace trainsim::model {

double data_cost(const DataSpec& data) {
  const double raw_tb = data.raw_bytes / 1e12;
  const double raw_gb = data.raw_bytes / 1e9;
  return raw_tb * data.core_hours_per_tb * data.core_hour_usd +
         raw_gb * data.storage_usd_per_gb_month * data.storage_months +
         data.transfer_bytes / 1e9 * data.transfer_usd_per_gb;
}

CommitmentUse commitment_use(const Commitment& c, double trial_gpus, double trial_s, double run_gpus,
                             double run_s) {
  CommitmentUse u;
  const double trial_inside = std::min(trial_s, c.term_s);
  const double run_inside = std::min(run_s, std::max(0.0, c.term_s - trial_s));
  u.trial_covered = std::min(trial_gpus, c.gpus) * trial_inside / 3600.0;
  u.run_covered = std::min(run_gpus, c.gpus) * run_inside / 3600.0;
  u.idle = std::max(0.0, c.gpus * c.term_s / 3600.0 - u.trial_covered - u.run_covered);
  return u;
}

double people_cost(const std::vector<PersonSpec>& people, double wall_clock_s) {
  const double hours = wall_clock_s / 3600.0;
  const double weeks = hours / (7.0 * 24.0);
  double cost = 0;
  for (const PersonSpec& p : people) {
    const double paid_hours = p.round_the_clock ? hours : p.hours_per_week * weeks;
    cost += static_cast<double>(p.count) * paid_hours * p.rate_usd_per_hour;
  }
  return cost;
}

}  // namespace trainsim::model
