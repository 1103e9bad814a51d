#pragma once
// What a model costs beyond GPU time: the data work before the run and the people on the project.
//   data   = raw TB · core_hours_per_tb · core_hour + raw GB · storage price · months + moved GB · price
//   people = Σ roles count · (24x7: every hour of the campaign | hours_per_week · weeks of the campaign)
// TB and GB are decimal (1e12, 1e9 bytes), as clouds bill them; a week is 7 · 24 h.
#include <vector>

#include "models/spec/campaign_spec.hpp"

namespace trainsim::model {

[[nodiscard]] double data_cost(const DataSpec& data);

/// The people's pay over a campaign of `wall_clock_s` seconds.
[[nodiscard]] double people_cost(const std::vector<PersonSpec>& people, double wall_clock_s);

}  // namespace trainsim::model
