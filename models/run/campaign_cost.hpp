#pragma once
// What a model costs beyond GPU time: the data work before the run and the people on the project.
//   data   = raw TB · core_hours_per_tb · core_hour + raw GB · storage price · months + moved GB · price
//   people = Σ roles count · (24x7: every hour of the campaign | hours_per_week · weeks of the campaign)
// TB and GB are decimal (1e12, 1e9 bytes), as clouds bill them; a week is 7 · 24 h.
#include <vector>

#include "models/spec/campaign_spec.hpp"
#include "models/spec/run_spec.hpp"

namespace trainsim::model {

[[nodiscard]] double data_cost(const DataSpec& data);

/// GPU-hours a commitment covers and leaves idle when the campaign's trials (`trial_gpus` GPUs busy on
/// average for `trial_s`) run first from the term's start, then the run (`run_gpus` for `run_s`): each phase
/// is covered on min(its GPUs, the committed GPUs) for the part of it inside the term; the rest of the term's
/// GPU-hours are idle. Hours are GPU-hours.
struct CommitmentUse {
  double trial_covered = 0;
  double run_covered = 0;
  double idle = 0;
};
[[nodiscard]] CommitmentUse commitment_use(const Commitment& c, double trial_gpus, double trial_s,
                                           double run_gpus, double run_s);

/// The people's pay over a campaign of `wall_clock_s` seconds.
[[nodiscard]] double people_cost(const std::vector<PersonSpec>& people, double wall_clock_s);

}  // namespace trainsim::model
