#include "models/run/convergence.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/error.hpp"

namespace trainsim::model {

namespace {

// Throws unless `value` is finite and > 0; `what` names it in the message.
void require_positive(double value, const char* what) {
  if (!(std::isfinite(value) && value > 0)) {
    throw InputError(fmt::format("{} must be a positive finite number (got {})", what, value));
  }
}

void require_valid(const LossLaw& law) {
  if (!(std::isfinite(law.E) && law.E >= 0)) {
    throw InputError(fmt::format("loss law: E (irreducible loss) must be finite and >= 0 (got {})", law.E));
  }
  require_positive(law.A, "loss law: A");
  require_positive(law.B, "loss law: B");
  require_positive(law.alpha, "loss law: alpha");
  require_positive(law.beta, "loss law: beta");
}

}  // namespace

LossLaw chinchilla_law() {
  return {.E = 1.69, .A = 406.4, .B = 410.7, .alpha = 0.34, .beta = 0.28};
}

LossLaw besiroglu_law() {
  return {.E = 1.8172, .A = 482.01, .B = 2085.43, .alpha = 0.3478, .beta = 0.3658};
}

LossLaw loss_law_of(const ConvergenceSpec& spec) {
  switch (spec.law) {
    case LossLawName::chinchilla:
      return chinchilla_law();
    case LossLawName::besiroglu_2024:
      return besiroglu_law();
    case LossLawName::custom:
      break;
  }
  return LossLaw{spec.e, spec.a, spec.b, spec.alpha, spec.beta};
}

double loss(const LossLaw& law, double params, double tokens) {
  require_valid(law);
  require_positive(params, "parameter count N");
  require_positive(tokens, "training tokens D");
  return law.E + law.A / std::pow(params, law.alpha) + law.B / std::pow(tokens, law.beta);
}

double loss_floor(const LossLaw& law, double params) {
  require_valid(law);
  require_positive(params, "parameter count N");
  return law.E + law.A / std::pow(params, law.alpha);
}

double tokens_for_loss(const LossLaw& law, double params, double target) {
  const double reachable = loss_floor(law, params);
  if (!std::isfinite(target)) throw InputError(fmt::format("target loss must be finite (got {})", target));
  const double data_term = target - reachable;  // the B / D^beta the data must bring the loss down to
  if (!(data_term > 0)) {
    throw InputError(fmt::format(
        "target loss {} is at or below {:.6g}, the lowest loss {:.4g} parameters reach with infinite data "
        "(E + A/N^alpha); raise the target or the parameter count",
        target, reachable, params));
  }
  return std::pow(law.B / data_term, 1.0 / law.beta);
}

ComputeOptimal compute_optimal(const LossLaw& law, double flops) {
  require_valid(law);
  require_positive(flops, "compute budget (FLOPs)");
  const double sum = law.alpha + law.beta;
  const double g = std::pow(law.alpha * law.A / (law.beta * law.B), 1.0 / sum);
  const double c6 = flops / 6.0;
  return {.params = g * std::pow(c6, law.beta / sum), .tokens = std::pow(c6, law.alpha / sum) / g};
}

ComputeOptimal compute_optimal_at_ratio(double flops, double tokens_per_parameter) {
  require_positive(flops, "compute budget (FLOPs)");
  require_positive(tokens_per_parameter, "tokens per parameter");
  const double params = std::sqrt(flops / (6.0 * tokens_per_parameter));
  return {.params = params, .tokens = tokens_per_parameter * params};
}

StepsAndTokens steps_and_tokens_at_batch(double batch_tokens, double b_crit, double tokens_min) {
  require_positive(batch_tokens, "batch size (tokens)");
  require_positive(b_crit, "critical batch size (tokens)");
  require_positive(tokens_min, "minimum tokens E_min");
  const double steps_min = tokens_min / b_crit;
  return {.steps = steps_min * (1.0 + b_crit / batch_tokens),
          .tokens = tokens_min * (1.0 + batch_tokens / b_crit)};
}

double critical_batch_tokens(double loss_nats) {
  require_positive(loss_nats, "loss (nats per token)");
  constexpr double kBStar = 2e8;    // tokens (Kaplan et al. 2020, Eq. 5.3)
  constexpr double kAlphaB = 0.21;  // ibid.
  return kBStar / std::pow(loss_nats, 1.0 / kAlphaB);
}

double initial_loss(const LossLaw& law, double params, double batch_tokens, double vocab) {
  require_positive(vocab, "vocabulary size");
  return std::min(loss(law, params, batch_tokens), std::log(vocab));
}

TargetRun run_to_target(const LossLaw& law, double params, double vocab, double target, double batch_tokens,
                        double b_crit, double optimizer_speedup) {
  require_positive(batch_tokens, "global batch (tokens)");
  require_positive(optimizer_speedup, "optimizer speedup over AdamW");
  if (!(std::isfinite(b_crit) && b_crit >= 0)) {
    throw InputError(fmt::format("critical batch must be >= 0 tokens (0: from the loss) (got {})", b_crit));
  }
  TargetRun run;
  run.initial_loss = initial_loss(law, params, batch_tokens, vocab);
  run.law_tokens = tokens_for_loss(law, params, target);
  run.tokens_min = run.law_tokens / optimizer_speedup;
  if (!(target < run.initial_loss)) {
    throw InputError(fmt::format(
        "target loss {} is not below {:.4g}, the loss after the first step of {:.4g} tokens (the law's, at "
        "most ln {:.0f}, a uniform guess over the vocabulary): the run starts there; lower the target",
        target, run.initial_loss, batch_tokens, vocab));
  }
  run.b_crit = b_crit > 0 ? b_crit : critical_batch_tokens(target);
  run.tokens = steps_and_tokens_at_batch(batch_tokens, run.b_crit, run.tokens_min).tokens;
  const double steps = std::ceil(run.tokens / batch_tokens);
  if (!(steps < 9e18)) {
    throw InputError(fmt::format("reaching loss {} would take {:.3g} steps of {} tokens: too many to count",
                                 target, steps, batch_tokens));
  }
  run.steps = static_cast<std::int64_t>(steps);
  return run;
}

}  // namespace trainsim::model
