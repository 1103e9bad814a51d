#include "models/run/cost_figures.hpp"

namespace trainsim::model {

namespace {

double per(double cost, double amount) {
  return amount > 0 ? cost / amount : 0.0;
}

}  // namespace

void set_cost_figures(RunReport& run, double model_flops_per_step) {
  const double pflops = static_cast<double>(run.steps) * model_flops_per_step / 1e15;
  run.cost_per_token = per(run.cost_total, run.tokens);
  run.cost_per_pflop = per(run.cost_total, pflops);
  run.cost_elastic = run.cost_compute + run.cost_tuning;
  run.cost_per_loss_point = run.convergence ? per(run.cost_total, run.initial_loss - run.target_loss) : 0.0;
}

}  // namespace trainsim::model
