#pragma once
// How much training a model needs: the tokens (and steps) to reach a target loss, from a parametric
// scaling law and the critical batch size. The cost of getting a model is this many tokens times the cost
// of one token (models/step), not the cost of a run whose length the user guessed.
//
//  - The loss law L(N, D) = E + A / N^alpha + B / D^beta (Hoffmann et al. 2022, "Training Compute-Optimal
//    Large Language Models", arXiv:2203.15556, Eq. 2, approach 3), N parameters, D training tokens,
//    L in nats per token.
//  - The batch trade-off (S/S_min − 1)(E/E_min − 1) = 1 (McCandlish et al. 2018, "An Empirical Model of
//    Large-Batch Training", arXiv:1812.06162, Eq. 2.11), with the critical batch B_crit = E_min / S_min.
//  - The critical batch as a function of the loss, B_crit(L) = B* / L^(1/alpha_B) (Kaplan et al. 2020,
//    "Scaling Laws for Neural Language Models", arXiv:2001.08361, Eq. 5.3).
// Pure functions: no I/O. Invalid arguments throw InputError with a sentence naming the problem.
#include <cstdint>

#include "models/spec/campaign_spec.hpp"

namespace trainsim::model {

/// L(N, D) = E + A / N^alpha + B / D^beta. E is the irreducible loss (entropy of text), A / N^alpha the
/// loss of a finite model trained to convergence, B / D^beta that of finite data.
struct LossLaw {
  double E = 0;
  double A = 0;
  double B = 0;
  double alpha = 0;
  double beta = 0;
};

/// Hoffmann et al. 2022 (arXiv:2203.15556), approach 3 (§3.3, fit in Appendix D.2) as printed in the body:
/// E = 1.69, A = 406.4, B = 410.7, alpha = 0.34, beta = 0.28 (the unrounded TeX-source values are
/// E = 1.6934, alpha = 0.3392, beta = 0.2849; Besiroglu et al. show the rounding moves the optimum a lot).
/// MassiveText, SentencePiece tokeniser. Its compute-optimal optimum is NOT the paper's Table 3 (that table
/// is approach 1): at Chinchilla's 5.76e23 FLOPs it gives about 32 B parameters and 93 tokens per parameter.
[[nodiscard]] LossLaw chinchilla_law();

/// Besiroglu et al. 2024, "Chinchilla Scaling: A replication attempt" (arXiv:2404.10102), their refit of
/// approach 3 on data read from Hoffmann's Figure 4 (their table of estimates, standard errors in
/// brackets): E = 1.8172 (0.03), A = 482.01 (124.58), B = 2085.43 (1293.23), alpha = 0.3478 (0.02),
/// beta = 0.3658 (0.02). Values as recalled and cross-checked against secondary sources quoting the paper;
/// E is often quoted rounded to 1.82. Its optimum gives about 20 tokens per parameter at Chinchilla scale,
/// matching approaches 1 and 2.
[[nodiscard]] LossLaw besiroglu_law();

/// The law a scenario's convergence block names (its constants when `custom`).
[[nodiscard]] LossLaw loss_law_of(const ConvergenceSpec& spec);

/// L(N, D) for `params` N > 0 and `tokens` D > 0.
[[nodiscard]] double loss(const LossLaw& law, double params, double tokens);

/// The lowest loss `params` parameters can reach with infinite data: E + A / N^alpha.
[[nodiscard]] double loss_floor(const LossLaw& law, double params);

/// Training tokens D at which N = `params` parameters reach `target` loss, in closed form:
///   D = (B / (target − E − A / N^alpha))^(1/beta).
/// Throws InputError when `target` is at or below loss_floor(law, params): no amount of data gets there.
[[nodiscard]] double tokens_for_loss(const LossLaw& law, double params, double target);

struct ComputeOptimal {
  double params = 0;  ///< N_opt
  double tokens = 0;  ///< D_opt; 6 · N_opt · D_opt equals the budget
};

/// N and D minimising L(N, D) under the budget C = 6 · N · D FLOPs (Hoffmann et al. 2022, Eq. 4 and
/// Appendix D.2):
///   G = (alpha·A / (beta·B))^(1/(alpha+beta)),
///   N_opt = G · (C/6)^(beta/(alpha+beta)),   D_opt = G^-1 · (C/6)^(alpha/(alpha+beta)).
/// (Setting dL/dN = 0 along D = C/(6N) gives alpha·A/N^alpha = beta·B/D^beta.) E does not move the optimum.
[[nodiscard]] ComputeOptimal compute_optimal(const LossLaw& law, double flops);

/// Chinchilla's tokens per parameter: the model itself, 70 B parameters trained on 1.4 T tokens (Hoffmann
/// et al. 2022, Table 1).
inline constexpr double kChinchillaTokensPerParameter = 20.0;

/// N and D for a budget of C = 6 · N · D FLOPs at a fixed D/N = `tokens_per_parameter`:
///   N = sqrt(C / (6 · r)),   D = r · N.
/// Hoffmann et al.'s approaches 1 and 2 find N_opt ∝ C^0.50 and D_opt ∝ C^0.50 (approach 1; 0.49 and 0.51
/// for approach 2; their Table 2), so D/N does not move with the budget; with r = 20 (Chinchilla itself)
/// this is the rule their Table 3 (approach 1's projections) follows: all nine rows, 400 M to 10 T
/// parameters, within 4.1 %, except the 67 B row's "1.5 Trillion" tokens, which its own 5.76e23 FLOPs put
/// at 1.43 T (the rule gives 1.39 T). No parametric law does: approach 3 as printed gives 0.30–0.77x the
/// table's N, the Besiroglu et al. refit (N_opt ∝ C^0.513) 0.92–1.23x.
[[nodiscard]] ComputeOptimal compute_optimal_at_ratio(double flops, double tokens_per_parameter);

struct StepsAndTokens {
  double steps = 0;   ///< S: optimizer steps to reach the loss
  double tokens = 0;  ///< E: tokens processed to reach it (= batch · steps)
};

/// Steps and tokens to reach a fixed loss with a batch of `batch_tokens` tokens, on McCandlish et al.'s
/// trade-off (S/S_min − 1)(E/E_min − 1) = 1 with B_crit = E_min / S_min (arXiv:1812.06162, Eq. 2.11):
///   E = E_min · (1 + B / B_crit),   S = S_min · (1 + B_crit / B),   S_min = E_min / B_crit.
/// Derivation: with E = B · S, write S = S_min(1 + x); the trade-off gives E/E_min − 1 = 1/x, and
/// E = B·S = B·S_min(1 + x) = (B / B_crit) · E_min · (1 + x). Equating, 1 + 1/x = (B/B_crit)(1 + x), so
/// x = B_crit / B. Check: (S/S_min − 1)(E/E_min − 1) = (B_crit/B)(B/B_crit) = 1. At B = B_crit the run
/// takes 2·S_min steps and 2·E_min tokens; a small batch wastes steps, a large one wastes tokens.
[[nodiscard]] StepsAndTokens steps_and_tokens_at_batch(double batch_tokens, double b_crit, double tokens_min);

/// Kaplan et al. 2020 (arXiv:2001.08361), Eq. 5.3: B_crit(L) = B* / L^(1/alpha_B), B* = 2e8 tokens,
/// alpha_B = 0.21, L in nats per token. Fitted on their WebText2 data and tokeniser (BPE, 50257 tokens):
/// for other data and tokenisers the loss scale differs, so this is an approximation.
[[nodiscard]] double critical_batch_tokens(double loss_nats);

/// The loss a run starts from: the law's L(N, D) after its first step, D = `batch_tokens` (the first point
/// of a logged loss curve), but never above ln(`vocab`), the cross-entropy of a uniform guess over the
/// vocabulary, where a freshly initialised model starts. L(N, D) grows without bound as D → 0 (the law has
/// no value at D = 0), and below the 5e9 tokens of its smallest fitted runs it can pass ln V (GPT-3 1.3B's
/// law value after one 131,072-token batch is 17 nats, ln 50,257 is 10.8). The baseline of a cost-effect
/// figure (cost_per_loss_point = cost ÷ (initial − target)), comparable between runs priced on the same law,
/// batch and vocabulary; not a measured loss.
[[nodiscard]] double initial_loss(const LossLaw& law, double params, double batch_tokens, double vocab);

/// The run that trains N = `params` parameters (over a vocabulary of `vocab` tokens) to `target` loss with a
/// global batch of `batch_tokens`.
struct TargetRun {
  double initial_loss = 0;  ///< initial_loss(law, params, batch_tokens, vocab)
  double law_tokens = 0;    ///< D from the law (tokens_for_loss): AdamW's, the optimizer the fits used
  double tokens_min = 0;    ///< law_tokens / the optimizer's speedup, taken as E_min
  double b_crit = 0;        ///< critical batch, tokens
  double tokens = 0;        ///< tokens trained at this batch: E_min · (1 + B / B_crit)
  std::int64_t steps = 0;   ///< ceil(tokens / batch_tokens)
};

/// Assumption: the law's D is the data requirement in the small-batch limit (E_min of McCandlish et al.),
/// i.e. the fits were made at batches well under the critical batch. Hoffmann et al. trained at batches
/// near what they considered efficient, so this counts the batch penalty in full and may overstate it by
/// up to a factor (1 + B_fit/B_crit). `b_crit` > 0 overrides the critical batch; 0 takes
/// critical_batch_tokens(target) (Kaplan's fit, evaluated at the target loss, where it is largest and the
/// penalty smallest). `optimizer_speedup` > 0 divides the law's tokens (models/run/optimizer_efficiency.hpp:
/// an optimizer that needs fewer tokens than AdamW for the same loss). Throws InputError when the target is
/// not below initial_loss (the law reaches it within the first step: there is no run to plan).
[[nodiscard]] TargetRun run_to_target(const LossLaw& law, double params, double vocab, double target,
                                      double batch_tokens, double b_crit = 0, double optimizer_speedup = 1);

}  // namespace trainsim::model
