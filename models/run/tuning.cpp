#include "models/run/tuning.hpp"

#include <fmt/format.h>

#include <cmath>

#include "sim/error.hpp"

namespace trainsim::model {

namespace {

void require_fraction(double f, const char* what) {
  if (!(std::isfinite(f) && f > 0 && f <= 1)) {
    throw InputError(fmt::format("{} must be a fraction of the full budget in (0, 1] (got {})", what, f));
  }
}

void require_trials(std::int64_t n) {
  if (n < 1) throw InputError(fmt::format("tuning needs at least 1 trial (got {})", n));
}

}  // namespace

TuningPlan successive_halving(std::int64_t n, double eta, double min_fraction, double max_fraction,
                              bool resume) {
  require_trials(n);
  if (!(std::isfinite(eta) && eta > 1)) {
    throw InputError(fmt::format("successive halving needs a reduction factor eta > 1 (got {})", eta));
  }
  require_fraction(min_fraction, "min_fraction");
  require_fraction(max_fraction, "max_fraction");
  if (min_fraction > max_fraction) {
    throw InputError(
        fmt::format("min_fraction {} is above max_fraction {}: the first rung would train past the last",
                    min_fraction, max_fraction));
  }
  TuningPlan plan;
  double scale = 1;  // eta^i, by repeated multiplication
  double previous = 0;
  for (;;) {
    const double trials = std::floor(static_cast<double>(n) / scale);
    if (trials < 1) break;
    double fraction = min_fraction * scale;
    const bool last = fraction >= max_fraction * (1 - 1e-12);
    if (last) fraction = max_fraction;
    Rung rung{.trials = static_cast<std::int64_t>(trials), .fraction = fraction, .cost = 0};
    rung.cost = trials * (resume ? fraction - previous : fraction);
    plan.total += rung.cost;
    plan.rungs.push_back(rung);
    if (last) break;
    previous = fraction;
    scale *= eta;
  }
  return plan;
}

TuningPlan tuning_plan(EarlyStopping method, std::int64_t n, double eta, double min_fraction,
                       double max_fraction, bool resume) {
  switch (method) {
    case EarlyStopping::none: {
      require_trials(n);
      require_fraction(max_fraction, "max_fraction");
      const double cost = static_cast<double>(n) * max_fraction;
      return {.rungs = {{.trials = n, .fraction = max_fraction, .cost = cost}}, .total = cost};
    }
    case EarlyStopping::successive_halving:
    case EarlyStopping::asha:
      return successive_halving(n, eta, min_fraction, max_fraction, resume);
  }
  throw InputError("unknown tuning method");
}

std::vector<RungTime> rung_times(const TuningPlan& plan, double full_trial_seconds) {
  if (!(std::isfinite(full_trial_seconds) && full_trial_seconds >= 0)) {
    throw InputError(fmt::format("the time of one full trial must be >= 0 s (got {})", full_trial_seconds));
  }
  std::vector<RungTime> out;
  out.reserve(plan.rungs.size());
  for (const Rung& r : plan.rungs) {
    const double per_trial = r.trials > 0 ? r.cost / static_cast<double>(r.trials) : 0;
    out.push_back({.trials = r.trials, .seconds_per_trial = full_trial_seconds * per_trial});
  }
  return out;
}

double wall_clock_of_trials(const std::vector<RungTime>& rungs, std::int64_t concurrent) {
  if (concurrent < 1) {
    throw InputError(fmt::format("trials need at least 1 concurrent slot (got {})", concurrent));
  }
  double total = 0;
  for (const RungTime& r : rungs) {
    if (r.trials < 0) throw InputError(fmt::format("a rung cannot have {} trials", r.trials));
    if (!(std::isfinite(r.seconds_per_trial) && r.seconds_per_trial >= 0)) {
      throw InputError(fmt::format("a trial's time must be >= 0 s (got {})", r.seconds_per_trial));
    }
    const std::int64_t waves = r.trials / concurrent + (r.trials % concurrent != 0 ? 1 : 0);  // ceil(n_i / c)
    total += static_cast<double>(waves) * r.seconds_per_trial;
  }
  return total;
}

TuningPlan tuning_plan(const TuningSpec& tuning) {
  return tuning_plan(tuning.early_stopping, tuning.trials, tuning.eta, tuning.min_fraction);
}

}  // namespace trainsim::model
