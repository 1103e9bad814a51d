#include "models/run/convergence.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "sim/error.hpp"

using namespace trainsim;

TEST_CASE("the Chinchilla law gives the tokens a 7B model needs to reach loss 2.05, in closed form") {
  // By hand, Hoffmann et al. approach 3 (E 1.69, A 406.4, B 410.7, alpha 0.34, beta 0.28), N = 7e9:
  //   ln N = ln 7 + 9 ln 10 = 1.9459101 + 20.7232658 = 22.6691760
  //   N^0.34 = e^(0.34 · 22.6691760) = e^7.7075198 = e^7 · e^0.7075198 = 1096.6332 · 2.0289532 = 2225.017
  //   A / N^0.34 = 406.4 / 2225.017 = 0.1826503, so the floor is 1.69 + 0.1826503 = 1.8726503
  //   data term = 2.05 − 1.8726503 = 0.1773497;  B / term = 410.7 / 0.1773497 = 2315.764
  //   D = 2315.764^(1/0.28) = e^(7.747495 / 0.28) = e^27.669624 = e^27 · e^0.669624
  //     = 5.3204824e11 · 1.9535029 = 1.039358e12 tokens (about 148 tokens per parameter).
  const auto law = model::chinchilla_law();
  const double d = model::tokens_for_loss(law, 7e9, 2.05);
  CHECK(d == doctest::Approx(1.039358e12).epsilon(0.001).scale(0));
  CHECK(model::loss_floor(law, 7e9) == doctest::Approx(1.8726503).epsilon(1e-6).scale(0));
  // And the law at that D gives the target back.
  CHECK(model::loss(law, 7e9, d) == doctest::Approx(2.05).epsilon(1e-12).scale(0));
}

TEST_CASE("a target at or below what the parameters reach with infinite data is refused, naming the floor") {
  const auto law = model::chinchilla_law();
  // The floor of 7e9 parameters is 1.8726503 (above); 1.80 is below it, and so is E itself.
  CHECK_THROWS_WITH_AS((void)model::tokens_for_loss(law, 7e9, 1.80), doctest::Contains("1.87265"),
                       InputError);
  CHECK_THROWS_WITH_AS((void)model::tokens_for_loss(law, 7e9, 1.69), doctest::Contains("infinite data"),
                       InputError);
  CHECK_THROWS_WITH_AS((void)model::tokens_for_loss(law, 0, 2.5), doctest::Contains("parameter count"),
                       InputError);
}

TEST_CASE("the compute-optimal split of Chinchilla's approach 3 follows its closed form, not Table 3") {
  // G = (alpha·A / (beta·B))^(1/(alpha+beta)) = (0.34·406.4 / (0.28·410.7))^(1/0.62)
  //   = (138.176 / 114.996)^1.6129032 = 1.2015722^1.6129032 = e^(0.1836309 · 1.6129032) = e^0.2961789
  //   = 1.3447106;  exponent of N: beta/(alpha+beta) = 0.28/0.62 = 0.4516129.
  // C = 5.76e23 (Chinchilla's budget, Hoffmann Table 3): C/6 = 9.6e22, ln = 2.2617631 + 50.6568716
  //   = 52.9186351; · 0.4516129 = 23.8987385; e^ = 2.3938131e10; N = 1.3447106 · 2.3938131e10 = 3.21899e10;
  //   D = 9.6e22 / 3.21899e10 = 2.98231e12; D/N = 92.6.
  // C = 1.92e19: C/6 = 3.2e18, ln = 42.6096825; · 0.4516129 = 19.2430824; e^ = 2.2759594e8;
  //   N = 3.06051e8; D = 3.2e18 / 3.06051e8 = 1.045578e10; D/N = 34.2.
  // Table 3 (approach 1) has 67B / 1.5T and 400M / 8.0B at these budgets: approach 3 as printed gives
  // 0.48x and 0.77x the parameters. This is the inconsistency Besiroglu et al. 2024 report (the rounded
  // alpha and beta move the optimum), so the table is checked against their refit below.
  const auto law = model::chinchilla_law();
  const auto big = model::compute_optimal(law, 5.76e23);
  CHECK(big.params == doctest::Approx(3.21899e10).epsilon(1e-4).scale(0));
  CHECK(big.tokens == doctest::Approx(2.98231e12).epsilon(1e-4).scale(0));
  CHECK(6 * big.params * big.tokens == doctest::Approx(5.76e23).epsilon(1e-12).scale(0));
  CHECK(big.tokens / big.params == doctest::Approx(92.6).epsilon(0.001).scale(0));
  const auto small = model::compute_optimal(law, 1.92e19);
  CHECK(small.params == doctest::Approx(3.06051e8).epsilon(1e-4).scale(0));
  CHECK(small.tokens == doctest::Approx(1.045578e10).epsilon(1e-4).scale(0));
  CHECK(big.params < 0.5 * 67e9);  // far from Table 3's 67B
}

TEST_CASE("Besiroglu et al.'s refit reproduces Hoffmann Table 3 and about 20 tokens per parameter") {
  // Hoffmann et al. 2022, Table 3 (approach 1), rows as recalled: 400M / 8.0B tokens at 1.92e19 FLOPs,
  // 1B / 20.2B at 1.21e20, 10B / 205.1B at 1.23e22, 67B / 1.5T at 5.76e23.
  // By hand for the refit (E 1.8172, A 482.01, B 2085.43, alpha 0.3478, beta 0.3658):
  //   alpha·A = 167.64308, beta·B = 762.85029, ratio 0.2197588, ln = −1.5152246
  //   G = e^(−1.5152246 / 0.7136) = e^−2.1233529 = 0.1196298;  beta/(alpha+beta) = 0.5126121
  //   1.23e22: C/6 = 2.05e21, ln = 0.7178398 + 48.3542870 = 49.0721268; · 0.5126121 = 25.1549663;
  //            e^ = 8.407426e10; N = 1.005781e10; D = 2.05e21 / N = 2.038217e11   (+0.6 %, −0.6 %)
  //   5.76e23: ln(9.6e22) · 0.5126121 = 27.1267331; e^ = 6.039354e11; N = 7.22487e10; D = 1.328743e12;
  //            D/N = 18.39                                                       (+7.8 %, −11.4 %)
  //   1.92e19: 42.6096825 · 0.5126121 = 21.8422391; e^ = 3.061709e9; N = 3.66272e8; D = 8.73668e9
  //                                                                              (−8.4 %, +9.2 %)
  //   1.21e20: C/6 = 2.0166667e19, · 0.5126121 → 22.7858967; e^ = 7.866638e9; N = 9.41085e8;
  //            D = 2.142917e10                                                   (−5.9 %, +6.1 %)
  // So only the 10B row is within 5 %; the others within 12 % (Table 3 itself rounds: 6 · 67e9 · 1.5e12
  // is 6.03e23, not 5.76e23).
  const auto law = model::besiroglu_law();
  const auto row10b = model::compute_optimal(law, 1.23e22);
  CHECK(row10b.params == doctest::Approx(1.005781e10).epsilon(1e-4).scale(0));
  CHECK(row10b.tokens == doctest::Approx(2.038217e11).epsilon(1e-4).scale(0));
  CHECK(row10b.params == doctest::Approx(10e9).epsilon(0.05).scale(0));
  CHECK(row10b.tokens == doctest::Approx(205.1e9).epsilon(0.05).scale(0));
  struct Row {
    double flops, params, tokens;
  };
  for (const Row& row : {Row{1.92e19, 400e6, 8.0e9}, Row{1.21e20, 1e9, 20.2e9}, Row{5.76e23, 67e9, 1.5e12}}) {
    CAPTURE(row.flops);
    const auto opt = model::compute_optimal(law, row.flops);
    CHECK(opt.params == doctest::Approx(row.params).epsilon(0.12).scale(0));
    CHECK(opt.tokens == doctest::Approx(row.tokens).epsilon(0.12).scale(0));
  }
  const auto chinchilla = model::compute_optimal(law, 5.76e23);
  CHECK(chinchilla.params == doctest::Approx(7.22487e10).epsilon(1e-4).scale(0));
  const double ratio = chinchilla.tokens / chinchilla.params;
  CHECK(ratio == doctest::Approx(18.39).epsilon(0.001).scale(0));
  CHECK(ratio > 15);  // the paper's headline: about 20 tokens per parameter
  CHECK(ratio < 25);
}

TEST_CASE("at the critical batch a run takes twice the minimum steps and twice the minimum tokens") {
  // B_crit = 1e6 tokens, E_min = 1e9 tokens, so S_min = 1000 steps: S = 2000, E = 2e9.
  const auto at = model::steps_and_tokens_at_batch(1e6, 1e6, 1e9);
  CHECK(at.steps == doctest::Approx(2000).epsilon(1e-12).scale(0));
  CHECK(at.tokens == doctest::Approx(2e9).epsilon(1e-12).scale(0));
  // B = 4·B_crit: S = 1000 · (1 + 1/4) = 1250, E = 1e9 · (1 + 4) = 5e9 = B · S;
  // (S/S_min − 1)(E/E_min − 1) = 0.25 · 4 = 1.
  const auto big = model::steps_and_tokens_at_batch(4e6, 1e6, 1e9);
  CHECK(big.steps == doctest::Approx(1250).epsilon(1e-12).scale(0));
  CHECK(big.tokens == doctest::Approx(5e9).epsilon(1e-12).scale(0));
  CHECK((big.steps / 1000 - 1) * (big.tokens / 1e9 - 1) == doctest::Approx(1).epsilon(1e-12).scale(0));
  CHECK(big.tokens == doctest::Approx(4e6 * big.steps).epsilon(1e-12).scale(0));
  CHECK_THROWS_WITH_AS((void)model::steps_and_tokens_at_batch(0, 1e6, 1e9), doctest::Contains("batch size"),
                       InputError);
}

TEST_CASE("Kaplan's critical batch grows as the loss falls") {
  // B_crit(1) = B* = 2e8 tokens. At L = 2.05: ln 2.05 = 0.7178398; / 0.21 = 3.4182847; e^ = 30.51703;
  // B_crit = 2e8 / 30.51703 = 6.553719e6 tokens.
  CHECK(model::critical_batch_tokens(1.0) == doctest::Approx(2e8).epsilon(1e-12).scale(0));
  CHECK(model::critical_batch_tokens(2.05) == doctest::Approx(6.553719e6).epsilon(1e-5).scale(0));
  CHECK(model::critical_batch_tokens(2.0) > model::critical_batch_tokens(2.05));
}

TEST_CASE("a target loss becomes a run: the law's tokens, the batch penalty and the steps") {
  const auto law = model::chinchilla_law();
  const double batch = 4194304;  // 2048 sequences of 2048 tokens
  // D = 1.039358e12 (first test case); B_crit(2.05) = 6.553719e6 (above); B / B_crit = 0.6399884;
  // tokens = 1.039358e12 · 1.6399884 = 1.704535e12; steps = ceil(1.704535e12 / 4194304) ≈ 406 393.
  const auto run = model::run_to_target(law, 7e9, 2.05, batch);
  CHECK(run.tokens_min == doctest::Approx(model::tokens_for_loss(law, 7e9, 2.05)).epsilon(1e-12).scale(0));
  CHECK(run.b_crit == doctest::Approx(6.553719e6).epsilon(1e-5).scale(0));
  CHECK(run.tokens == doctest::Approx(1.704535e12).epsilon(1e-3).scale(0));
  CHECK(run.steps == static_cast<std::int64_t>(std::ceil(run.tokens / batch)));
  CHECK(run.steps == doctest::Approx(406393).epsilon(1e-3).scale(0));
  // A batch equal to the critical batch doubles the tokens: 2 · 1.039358e12 / 4194304 = 495 604.4 → 495 605.
  const auto at_crit = model::run_to_target(law, 7e9, 2.05, batch, batch);
  CHECK(at_crit.b_crit == batch);
  CHECK(at_crit.tokens == doctest::Approx(2 * at_crit.tokens_min).epsilon(1e-12).scale(0));
  CHECK(at_crit.steps == doctest::Approx(495605).epsilon(1e-3).scale(0));
  CHECK_THROWS_WITH_AS((void)model::run_to_target(law, 7e9, 1.8, batch), doctest::Contains("infinite data"),
                       InputError);
  CHECK_THROWS_WITH_AS((void)model::run_to_target(law, 7e9, 2.05, -1), doctest::Contains("global batch"),
                       InputError);
}
