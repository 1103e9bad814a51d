#pragma once
// What a unit of the result costs, and which part of the GPU bill was bought as it was used: figures read
// from a finished bill (RunReport), set in one place for the plain run (run_model) and for the campaign
// around it (scenarios/studies/simulation), after every category of cost_total is known.
//   cost_per_token      = cost_total / tokens                                 USD per token
//   cost_per_pflop      = cost_total / (steps · model_flops_per_step / 1e15)  USD per PFLOP of model FLOPs
//   cost_per_loss_point = cost_total / (initial_loss − target_loss)           USD per nat of loss
//   cost_elastic        = cost_compute + cost_tuning                          USD
// cost_total is the whole campaign's bill (trials, data, people, commitment); tokens, FLOPs and the loss
// are the final run's, the result the campaign pays for. Model FLOPs are the useful work (forward and
// backward matmuls, no recompute: SPEC's model_flops_per_step), so a layout that recomputes more costs
// more per PFLOP. cost_elastic is the GPU capacity bought on demand, the run's and the trials'; what a
// commitment covered left those categories for cost_fixed (models/run/campaign_cost.hpp), so the GPU-hours
// are paid as cost_fixed + cost_elastic.
#include "models/run/run_report.hpp"

namespace trainsim::model {

/// Sets `run`'s cost_per_token, cost_per_pflop, cost_elastic and, with `run.convergence`,
/// cost_per_loss_point from its categories, tokens, steps and losses. A figure whose denominator is zero
/// (an infeasible run trains nothing) is 0.
void set_cost_figures(RunReport& run, double model_flops_per_step);

}  // namespace trainsim::model
