#include "models/report/explain_campaign.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "models/run/convergence.hpp"
#include "models/run/optimizer_efficiency.hpp"
#include "models/run/tuning.hpp"
#include "models/workload/optimizer.hpp"
#include "models/workload/parameters.hpp"

namespace trainsim::model {

ExplainSection explain_convergence(const TransformerSpec& model, std::int64_t global_batch,
                                   OptimizerKind optimizer, const ConvergenceSpec& c) {
  ExplainSection out;
  out.title = "run length from the target loss";
  const LossLaw law = loss_law_of(c);
  const double n = parameter_count(model);
  const double batch = static_cast<double>(global_batch) * static_cast<double>(model.seq_len);
  const OptimizerEfficiency efficiency = optimizer_efficiency(c.optimizer_efficiency, optimizer, n);
  const TargetRun run = run_to_target(law, n, static_cast<double>(model.vocab), c.target_loss, batch,
                                      c.critical_batch_tokens.value_or(0.0), efficiency.speedup);
  const double floor = loss_floor(law, n);
  out.lines.push_back(
      {"law",
       fmt::format("L = E + A/N^alpha + B/D^beta, E {:.4g}, A {:.4g}, B {:.4g}, alpha {:.4g}, beta {:.4g}",
                   law.E, law.A, law.B, law.alpha, law.beta),
       c.target_loss, "nats"});
  out.lines.push_back(
      {"floor with endless data", fmt::format("E + A/N^alpha at N = {:.4g} parameters", n), floor, "nats"});
  out.lines.push_back(
      {"loss after the first step",
       fmt::format("min(L(N, D) at D = one batch of {:.4g} tokens, ln {} (a uniform guess)): the "
                   "baseline of cost_per_loss_point",
                   batch, model.vocab),
       run.initial_loss, "nats"});
  out.lines.push_back(
      {"tokens at a small batch with AdamW",
       fmt::format("(B / (L - floor))^(1/beta) = ({:.4g} / ({:.4g} - {:.4g}))^(1/{:.4g}); the "
                   "law's fits trained with AdamW",
                   law.B, c.target_loss, floor, law.beta),
       run.law_tokens, "tokens"});
  for (const EfficiencySource& s : efficiency_sources(optimizer, n)) {
    out.lines.push_back({fmt::format("{} speedup over AdamW ({})", optimizer_name(optimizer), s.basis),
                         s.citation, s.speedup, "x"});
  }
  out.lines.push_back({"speedup used",
                       fmt::format("{}; range across the sources {:.3g} to {:.3g}", efficiency.source,
                                   efficiency.low, efficiency.high),
                       efficiency.speedup, "x"});
  out.lines.push_back(
      {"tokens at a small batch",
       fmt::format("{:.4g} / {:.3g} (at the range's ends {:.4g} to {:.4g})", run.law_tokens,
                   efficiency.speedup, run.law_tokens / efficiency.high, run.law_tokens / efficiency.low),
       run.tokens_min, "tokens"});
  out.lines.push_back(
      {"critical batch",
       c.critical_batch_tokens
           ? std::string("given (convergence.batch.critical)")
           : fmt::format("2e8 / L^(1/0.21) at L = {:.4g} (Kaplan et al. 2020)", c.target_loss),
       run.b_crit, "tokens"});
  out.lines.push_back(
      {"tokens at this batch",
       fmt::format("{:.4g} x (1 + {:.4g} / {:.4g}) (McCandlish et al. 2018), batch {} x {} tokens",
                   run.tokens_min, batch, run.b_crit, global_batch, model.seq_len),
       run.tokens, "tokens"});
  out.lines.push_back(
      {"steps", fmt::format("ceil({:.4g} / {:.4g})", run.tokens, batch), static_cast<double>(run.steps), ""});
  // For scale: the model Hoffmann et al.'s approaches 1 and 2 would train with the same FLOPs.
  const double flops = 6 * n * run.tokens;
  const ComputeOptimal optimal = compute_optimal_at_ratio(flops, kChinchillaTokensPerParameter);
  out.lines.push_back(
      {"compute-optimal model for these FLOPs",
       fmt::format("sqrt(C / (6 x {:g})) at C = 6 N D = {:.4g} FLOPs, trained on {:g} tokens per "
                   "parameter (Hoffmann et al. 2022, approach 1)",
                   kChinchillaTokensPerParameter, flops, kChinchillaTokensPerParameter),
       optimal.params, "params"});
  return out;
}

ExplainSection explain_tuning(const TuningSpec& t) {
  ExplainSection out;
  out.title = "tuning trials";
  if (!t.trials_source.empty()) {
    out.notes.push_back(fmt::format(
        "{} trials, one coordinate-descent pass over the optimizer's search space (1 + the grid values "
        "beside the baseline, one hyper-parameter at a time): {}; tuning.trials overrides it",
        t.trials, t.trials_source));
  }
  const TuningPlan plan = tuning_plan(t);
  for (std::size_t i = 0; i < plan.rungs.size(); ++i) {
    const Rung& r = plan.rungs[i];
    out.lines.push_back(
        {fmt::format("rung {}", i),
         fmt::format("{} trials to {:.4g} of a trial ({} of the final run's steps each at most)", r.trials,
                     r.fraction, t.fraction),
         r.cost, "trials"});
  }
  out.lines.push_back(
      {"trials' training",
       fmt::format("sum of the rungs, {} at a time on 1/{} of the nodes each", t.concurrent, t.concurrent),
       plan.total, "trials"});
  return out;
}

}  // namespace trainsim::model
