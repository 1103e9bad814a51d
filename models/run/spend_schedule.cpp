#include "models/run/spend_schedule.hpp"

#include <algorithm>
#include <cstddef>

namespace trainsim::model {
namespace {

// The share of an outlay spent by `t`; `before`: strictly before t (a payment at t not yet made).
double share_by(const Outlay& o, double t, bool before) {
  if (o.end <= o.start) return (before ? t > o.start : t >= o.start) ? 1.0 : 0.0;
  return std::clamp((t - o.start) / (o.end - o.start), 0.0, 1.0);
}

double spent(const std::vector<Outlay>& outlays, double t, bool before) {
  double sum = 0;
  for (const Outlay& o : outlays) sum += o.usd * share_by(o, t, before);
  return sum;
}

class Schedule {
 public:
  void add(CostCategory c, double start, double end, double usd) {
    if (usd != 0) out_.push_back(Outlay{.category = c, .start = start, .end = end, .usd = usd});
  }
  // A phase of `gpus` GPUs from `start` for `duration` whose on-demand cost is `usd`: bought where the
  // commitment's term does not cover it (after the term: every GPU, at the on-demand price; inside it: the
  // rest, which is what is left of `usd`).
  void add_on_demand(CostCategory c, double start, double duration, double gpus, double usd,
                     const Commitment* commitment, double gpu_hour_usd) {
    if (commitment == nullptr) {
      add(c, start, start + duration, usd);
      return;
    }
    const double inside = std::clamp(commitment->term_s - start, 0.0, duration);
    const double after = std::min(usd, gpus * (duration - inside) / 3600.0 * gpu_hour_usd);
    add(c, start, start + inside, usd - after);
    add(c, start + inside, start + duration, after);
  }
  std::vector<Outlay> take() { return std::move(out_); }

 private:
  std::vector<Outlay> out_;
};

}  // namespace

std::vector<Outlay> spend_schedule(const RunReport& run, const PricingSpec& pricing) {
  if (!run.feasible || run.run_time <= 0) return {};
  using C = CostCategory;
  const Commitment* commitment = run.commitment ? &pricing.commitment : nullptr;
  const double trials = run.tuning ? run.tuning_time : 0.0;
  const double end = trials + run.run_time;
  Schedule s;
  s.add(C::data, 0, 0, run.cost_data);
  if (run.tuning && trials > 0) {
    s.add_on_demand(C::tuning, 0, trials, run.tuning_gpu_hours * 3600.0 / trials, run.cost_tuning, commitment,
                    pricing.gpu_hour_usd);
  } else {
    s.add(C::tuning, 0, 0, run.cost_tuning);
  }
  s.add_on_demand(C::compute, trials, run.run_time, run.gpu_hours * 3600.0 / run.run_time, run.cost_compute,
                  commitment, pricing.gpu_hour_usd);
  s.add(C::storage, trials, end, run.cost_storage);
  s.add(C::network, trials, end, run.cost_network);
  s.add(C::energy, trials, end, run.cost_energy);
  s.add(C::people, 0, end, run.cost_people);
  if (commitment != nullptr) s.add(C::fixed, 0, commitment->term_s, run.cost_fixed);
  return s.take();
}

CostByCategory spent_by(const std::vector<Outlay>& outlays, double t) {
  CostByCategory by{};
  for (const Outlay& o : outlays) by[static_cast<std::size_t>(o.category)] += o.usd * share_by(o, t, false);
  return by;
}

double total_of(const CostByCategory& costs) {
  double sum = 0;
  for (double c : costs) sum += c;
  return sum;
}

std::optional<double> time_spent(const std::vector<Outlay>& outlays, double usd) {
  std::vector<double> points{0.0};
  for (const Outlay& o : outlays) {
    points.push_back(o.start);
    points.push_back(o.end);
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  double previous_t = points.front();
  double previous = spent(outlays, previous_t, false);
  if (previous >= usd) return previous_t;
  for (std::size_t i = 1; i < points.size(); ++i) {
    // Between two points the spend is linear, from `previous` to its value just before the next point;
    // payments made at once at that point come on top.
    const double t = points[i];
    const double before = spent(outlays, t, true);
    if (before >= usd) return previous_t + (usd - previous) / (before - previous) * (t - previous_t);
    const double at = spent(outlays, t, false);
    if (at >= usd) return t;
    previous_t = t;
    previous = at;
  }
  return std::nullopt;
}

std::vector<BudgetAlert> budget_alerts(const std::vector<Outlay>& outlays, const BudgetSpec& budget) {
  std::vector<BudgetAlert> alerts;
  if (!budget.max_cost_usd) return alerts;
  for (double fraction : budget.alerts) {
    BudgetAlert a{.fraction = fraction, .usd = fraction * *budget.max_cost_usd};
    if (const auto t = time_spent(outlays, a.usd)) {
      a.reached = true;
      a.time = *t;
    }
    alerts.push_back(a);
  }
  return alerts;
}

}  // namespace trainsim::model
