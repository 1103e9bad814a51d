// A model's campaign around its final run: the run's length from a target loss (convergence:) and the
// tuning trials before it (tuning:), each checked against arithmetic done by hand on the law and the rungs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "models/report/explain_campaign.hpp"
#include "models/run/convergence.hpp"
#include "models/workload/parameters.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/studies/simulation.hpp"
#include "scenarios/studies/sweep.hpp"
#include "sim/error.hpp"
#include "tests/support/temp_dir.hpp"

using namespace trainsim;
using namespace trainsim::scenario;

namespace {

// GPT-3 1.3B on 2 DGX A100, global batch 64 sequences of 2048 tokens = 131,072 tokens a step.
const std::string unpriced = R"(model: gpt3-1.3b
cluster: {node: dgx-a100-80gb, nodes: 2}
parallelism: {tp: 1, pp: 1, dp: auto, micro_batch: 4, zero: 1}
)";
const std::string layout = unpriced + "pricing: {gpu_hour: \"$2.00\"}\n";
const std::string base = layout + "training: {global_batch: 64}\n";

// 27 trials of 1 % of a 10,000-step run, successive halving at eta 3 from 1/27 of a trial, `concurrent`
// at a time.
std::string trials_at_a_time(int concurrent) {
  return layout +
         "training: {global_batch: 64, steps: 10000}\ntuning: {trials: 27, trial: {fraction: 0.01}, " +
         "concurrent: " + std::to_string(concurrent) +
         ", early_stopping: {policy: successive-halving, eta: 3, min_fraction: 0.037037037037037035}}\n";
}

// A 10,000-step run on the 16 GPUs, $2.00 a GPU-hour on demand, with `gpus` GPUs committed for 1,000 h at
// $1.90.
Scenario with_commitment(int gpus) {
  return load_scenario_text(unpriced + "training: {global_batch: 64, steps: 10000}\n" +
                                "pricing: {gpu_hour: \"$2.00\", commitment: {gpus: " + std::to_string(gpus) +
                                ", term: \"1000 h\", gpu_hour: \"$1.90\"}}\n",
                            "t.yaml");
}

}  // namespace

TEST_CASE("a target loss sets the run: the law's tokens, times 1 + B/B_crit, in whole steps") {
  // Chinchilla's law, a critical batch of 4 x 131,072 tokens: the batch penalty is 1 + 1/4.
  const Scenario s = load_scenario_text(
      base + "convergence: {target_loss: 2.6, law: chinchilla, batch: {critical: 524288}}\n", "t.yaml");
  const double n = model::parameter_count(s.model);
  // D = (B / (L − E − A/N^alpha))^(1/beta), the Chinchilla constants.
  const double d = std::pow(410.7 / (2.6 - 1.69 - 406.4 / std::pow(n, 0.34)), 1.0 / 0.28);
  const ScenarioResult r = simulate_scenario(s, model::Fidelity::analytic);
  REQUIRE(r.run.feasible);
  CHECK(r.run.convergence);
  CHECK(r.run.tokens_min == doctest::Approx(d).epsilon(1e-9));
  CHECK(r.run.critical_batch_tokens == 524288.0);
  const auto steps = static_cast<std::int64_t>(std::ceil(1.25 * d / 131072.0));
  CHECK(r.run.steps == steps);
  CHECK(r.run.tokens == doctest::Approx(static_cast<double>(steps) * 131072.0).scale(0));
}

TEST_CASE("tuning trials cost the sum of their rungs, priced on the step they run") {
  // 27 trials, eta 3, from 1/27 of a trial's budget: rungs 27@1/27, 9@1/9, 3@1/3, 1@1 = 4 trials' worth.
  // One at a time on the whole cluster, a trial is 1 % of the final run's steps of the same step.
  const Scenario s = load_scenario_text(trials_at_a_time(1), "t.yaml");
  const ScenarioResult r = simulate_scenario(s, model::Fidelity::analytic);
  REQUIRE(r.run.feasible);
  CHECK(r.run.tuning);
  CHECK(r.run.tuning_trial_equivalents == doctest::Approx(4.0).scale(0));
  const double trial_s = 100 * r.step.iteration_time;  // ceil(0.01 · 10,000) steps
  CHECK(r.run.tuning_gpu_hours == doctest::Approx(4 * trial_s * 16 / 3600).scale(0));
  CHECK(r.run.cost_tuning == doctest::Approx(r.run.tuning_gpu_hours * 2.0).scale(0));
  // Rungs wait for their trials, one at a time: (27/27 + 9/9 + 3/3 + 1) trials' time.
  CHECK(r.run.tuning_time == doctest::Approx(4 * trial_s).scale(0));
  // The bill is the sum of its categories.
  const auto& run = r.run;
  CHECK(run.cost_total == doctest::Approx(run.cost_compute + run.cost_energy + run.cost_storage +
                                          run.cost_network + run.cost_tuning)
                              .scale(0));

  // Two at a time, each on one of the two nodes: a trial's step is simulated there (dp 8), so it differs
  // from the full cluster's; the rungs of 27, 9 and 3 trials take ceil(n/2) trial lengths.
  const Scenario pairs = load_scenario_text(trials_at_a_time(2), "t.yaml");
  const ScenarioResult two = simulate_scenario(pairs, model::Fidelity::analytic);
  REQUIRE(two.run.feasible);
  const double per_trial_s = two.run.tuning_gpu_hours * 3600 / 8 / 4;  // 4 trials' worth on 8 GPUs
  CHECK(per_trial_s > trial_s);                                        // half the GPUs, the same batch
  CHECK(two.run.tuning_time == doctest::Approx(per_trial_s * (14.0 / 27 + 5.0 / 9 + 2.0 / 3 + 1.0)).scale(0));
}

TEST_CASE("the campaign blocks are checked where they are written and dump back") {
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(
          layout + "training: {global_batch: 64, tokens: 1e9}\nconvergence: {target_loss: 2.5}\n", "t.yaml"),
      doctest::Contains("remove training.tokens"), InputError);
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(base + "convergence: {target_loss: 2.5, law: kaplan}\n", "t.yaml"),
      doctest::Contains("convergence.law"), InputError);
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(base + "tuning: {trials: 8, early_stopping: {policy: hyperband}}\n", "t.yaml"),
      doctest::Contains("tuning.early_stopping.policy"), InputError);
  // A rate without its amount would price 0: each data mapping needs both, and preprocessing and storage
  // the raw corpus they price.
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(
          base + "data: {preprocessing: {core_hours_per_tb: 400, core_hour: \"$0.04/h\"}}\n", "t.yaml"),
      doctest::Contains("data.preprocessing: prices the raw corpus: give data.raw"), InputError);
  CHECK_THROWS_WITH_AS((void)load_scenario_text(
                           base + "data: {raw: \"1 GB\", storage: {price: \"$0.023/GB-month\"}}\n", "t.yaml"),
                       doctest::Contains("data.storage.months: missing key \"months\""), InputError);
  // A loss law's scale of 0 is refused at its key, not by the law with no place in the file.
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(
          base + "convergence: {target_loss: 2.5, law: {E: 1.8, A: 0, B: 2085, alpha: 0.35, beta: 0.37}}\n",
          "t.yaml"),
      doctest::Contains("convergence.law.A: must be above 0"), InputError);
  const Scenario s = load_scenario_text(
      base +
          "convergence: {target_loss: 2.5, law: {E: 1.8, A: 482, B: 2085, alpha: 0.35, beta: 0.37}}\n"
          "tuning: {trials: 16, concurrent: 2, early_stopping: {policy: asha, eta: 4, min_fraction: 0.1}}\n",
      "t.yaml");
  const Scenario back = load_scenario_text(dump_scenario(s), "t.yaml");
  REQUIRE(back.convergence);
  CHECK(back.convergence->law == model::LossLawName::custom);
  CHECK(back.convergence->b == 2085.0);
  REQUIRE(back.tuning);
  CHECK(back.tuning->trials == 16);
  CHECK(back.tuning->concurrent == 2);
  CHECK(back.tuning->early_stopping == model::EarlyStopping::asha);
  CHECK(back.tuning->min_fraction == doctest::Approx(0.1).scale(0));
}

TEST_CASE("without trials, tuning takes one coordinate-descent pass over the optimizer's published grid") {
  // Wen et al. 2025's Phase I grids (models/run/tuning_search_space.hpp), one pass: 1 + the values beside
  // the baseline. AdamW: lr 4, wd 3, warmup 4, beta1 3, beta2 3, eps 4, clip 3, batch 4 values:
  // 1 + 3+2+3+2+2+3+2+3 = 21. Lion: lr 5, wd 11, warmup 4, beta1 4, beta2 3, clip 3, batch 4:
  // 1 + 4+10+3+3+2+2+3 = 28. Muon: lr 5, wd 3, momentum 4, beta1 4, beta2 3, eps 4, muon eps 5, clip 3,
  // decay 5, muon-to-adam lr 3, batch 4: 1 + 4+2+3+3+2+3+4+2+4+2+3 = 33. 8-bit Adam keeps AdamW's.
  // SOAP ("soape"): lr 3, wd 3, warmup 3, beta1 3, beta2 4, shampoo beta 4, block 3, eps 3, batch 3, and
  // precondition frequency 1 and 5 beside the baseline 10: 1 + 2+2+2+2+3+3+2+2+2+2 = 23.
  const std::vector<std::pair<std::string, std::int64_t>> expected = {
      {"adamw", 21}, {"adam-8bit", 21}, {"lion", 28}, {"muon", 33}, {"soap", 23}};
  for (const auto& [optimizer, trials] : expected) {
    INFO(optimizer);
    const Scenario s = load_scenario_text(
        layout + "training: {global_batch: 64, steps: 10000, optimizer: " + optimizer + "}\ntuning: {}\n",
        "t.yaml");
    REQUIRE(s.tuning);
    CHECK(s.tuning->trials == trials);
    CHECK(s.tuning->trials_source.find("arXiv:2509.02046") != std::string::npos);
    const model::ExplainSection e = model::explain_tuning(*s.tuning);
    REQUIRE(!e.notes.empty());
    CHECK(e.notes[0].find(std::to_string(trials) + " trials, one coordinate-descent pass") == 0);
    // The bill follows: one rung of n trials, each 1 % of the run (no early stopping).
    const ScenarioResult r = simulate_scenario(s, model::Fidelity::analytic);
    const Scenario one =
        load_scenario_text(layout + "training: {global_batch: 64, steps: 10000, optimizer: " + optimizer +
                               "}\ntuning: {trials: 1}\n",
                           "t.yaml");
    const ScenarioResult r1 = simulate_scenario(one, model::Fidelity::analytic);
    CHECK(r.run.cost_tuning ==
          doctest::Approx(static_cast<double>(trials) * r1.run.cost_tuning).epsilon(1e-9));
  }
  // A given count wins, and dumps back as given.
  const Scenario given =
      load_scenario_text(layout +
                             "training: {global_batch: 64, steps: 10000, optimizer: muon}\n"
                             "tuning: {trials: 5}\n",
                         "t.yaml");
  CHECK(given.tuning->trials == 5);
  CHECK(given.tuning->trials_source.empty());
  // No published grid: the trial count must be given, at its key.
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(layout + "training: {global_batch: 64, steps: 10000, optimizer: sgd}\n"
                                        "tuning: {early_stopping: {policy: asha}}\n",
                               "t.yaml"),
      doctest::Contains("tuning.trials: no published search space for the optimizer sgd"), InputError);
}

TEST_CASE("a target the model cannot reach says so") {
  const Scenario s = load_scenario_text(base + "convergence: {target_loss: 1.7}\n", "t.yaml");
  CHECK_THROWS_WITH_AS((void)simulate_scenario(s, model::Fidelity::analytic), doctest::Contains("1.7"),
                       InputError);
}

TEST_CASE("explain shows the run the target sets, line for line the run's own numbers") {
  const Scenario s =
      load_scenario_text(base +
                             "convergence: {target_loss: 2.6, law: chinchilla, batch: {critical: 524288}}\n"
                             "tuning: {trials: 27, early_stopping: {policy: successive-halving, eta: 3, "
                             "min_fraction: 0.037037037037037035}}\n",
                         "t.yaml");
  const ScenarioResult r = simulate_scenario(s, model::Fidelity::analytic);
  const model::ExplainSection c =
      model::explain_convergence(s.model, s.training.global_batch, s.training.optimizer.kind, *s.convergence);
  auto line = [](const model::ExplainSection& sec, const std::string& label) {
    for (const auto& l : sec.lines)
      if (l.label == label) return l.value;
    FAIL("no line " << label);
    return 0.0;
  };
  CHECK(line(c, "tokens at a small batch") == doctest::Approx(r.run.tokens_min).scale(0));
  CHECK(line(c, "tokens at this batch") == doctest::Approx(1.25 * r.run.tokens_min).scale(0));
  CHECK(line(c, "steps") == static_cast<double>(r.run.steps));
  // The rungs of 27 trials at eta 3: 1 + 1 + 1 + 1.
  const model::ExplainSection t = model::explain_tuning(*s.tuning);
  CHECK(t.lines.size() == 5);
  CHECK(line(t, "trials' training") == doctest::Approx(4.0).scale(0));
}

TEST_CASE("the optimizer divides the law's tokens by its cited speedup; the range runs at both ends") {
  // GPT-3 1.3B is past Wen et al.'s 1.2B end point: fair-tuned Muon 1.1x; Moonlight's optimistic 2x.
  auto run = [](const std::string& optimizer, const std::string& efficiency) {
    const Scenario s = load_scenario_text(layout + "training: {global_batch: 64, optimizer: " + optimizer +
                                              "}\nconvergence: {target_loss: 2.6, batch: {critical: 131072}" +
                                              efficiency + "}\n",
                                          "t.yaml");
    return simulate_scenario(s, model::Fidelity::analytic).run;
  };
  const model::RunReport adamw = run("adamw", "");
  const model::RunReport fair = run("muon", "");
  const model::RunReport optimistic = run("muon", ", optimizer_efficiency: optimistic");
  const model::RunReport given = run("muon", ", optimizer_efficiency: 1.5");
  const model::RunReport sgd = run("sgd", ", optimizer_efficiency: optimistic");
  CHECK(adamw.optimizer_speedup == 1.0);
  CHECK(fair.law_tokens == doctest::Approx(adamw.law_tokens));
  CHECK(fair.tokens_min == doctest::Approx(adamw.tokens_min / 1.1));
  CHECK(optimistic.tokens_min == doctest::Approx(adamw.tokens_min / 2.0));
  CHECK(given.tokens_min == doctest::Approx(adamw.tokens_min / 1.5));
  CHECK(sgd.tokens_min == doctest::Approx(adamw.tokens_min));  // no source gives SGD a ratio
  // At B = B_crit the run trains 2·E_min tokens (McCandlish et al.).
  CHECK(optimistic.tokens == doctest::Approx(2 * adamw.law_tokens / 2.0));
  CHECK(fair.tokens_range_low == doctest::Approx(optimistic.tokens));
  CHECK(fair.tokens_range_high == doctest::Approx(fair.tokens));
  CHECK(fair.cost_total_range_low == doctest::Approx(optimistic.cost_total));
  CHECK(fair.cost_total_range_high == doctest::Approx(fair.cost_total));
  CHECK(fair.cost_total_range_low < fair.cost_total_range_high);
  CHECK(adamw.cost_total_range_low == doctest::Approx(adamw.cost_total));
}

TEST_CASE("optimizer_efficiency takes optimistic, fair-tuned or a number") {
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(base + "convergence: {target_loss: 2.6, optimizer_efficiency: fast}\n",
                               "t.yaml"),
      doctest::Contains("convergence.optimizer_efficiency: expected optimistic, fair-tuned or a number"),
      InputError);
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(base + "convergence: {target_loss: 2.6, optimizer_efficiency: 0}\n", "t.yaml"),
      doctest::Contains("convergence.optimizer_efficiency"), InputError);
}

TEST_CASE("data work and people join the bill: the corpus by the TB and GB, the people by the hour") {
  // 50 TB raw: preprocessing 50 · 400 core-hours · $0.04 = $800; storage 50,000 GB · $0.023 · 3 months =
  // $3,450; moving 50,000 GB at $0.02 = $1,000: $5,250. Four engineers at $110 for 40 h a week and one
  // person on call round the clock at $40, over the run's wall clock (no trials here).
  const Scenario s = load_scenario_text(layout + R"(training: {global_batch: 64, steps: 10000}
data: {raw: "50 TB", preprocessing: {core_hours_per_tb: 400, core_hour: "$0.04/h"},
       storage: {price: "$0.023/GB-month", months: 3}, transfer: {volume: "50 TB", price: "$0.02/GB"}}
people:
  - {role: research-engineer, count: 4, rate: "$110/h", hours_per_week: 40}
  - {role: on-call, count: 1, rate: "$40/h", coverage: "24x7"}
)",
                                        "t.yaml");
  const ScenarioResult r = simulate_scenario(s, model::Fidelity::analytic);
  REQUIRE(r.run.feasible);
  CHECK(r.run.cost_data == doctest::Approx(5250.0).scale(0));
  const double hours = r.run.run_time / 3600;
  CHECK(r.run.cost_people == doctest::Approx(4 * 110.0 * 40 * hours / 168 + 40.0 * hours).scale(0));
  const auto& run = r.run;
  CHECK(run.cost_total == doctest::Approx(run.cost_compute + run.cost_energy + run.cost_storage +
                                          run.cost_network + run.cost_data + run.cost_people)
                              .scale(0));
  CHECK(run.cost_per_token == doctest::Approx(run.cost_total / run.tokens).scale(0));

  const Scenario back = load_scenario_text(dump_scenario(s), "t.yaml");
  REQUIRE(back.data);
  CHECK(back.data->raw_bytes == 50e12);
  REQUIRE(back.people.size() == 2);
  CHECK(back.people[1].round_the_clock);
  CHECK(back.people[0].hours_per_week == 40.0);
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(base + "people: [{role: x, rate: \"$1/h\", coverage: 9to5}]\n", "t.yaml"),
      doctest::Contains("people[0].coverage"), InputError);
}

TEST_CASE("a commitment larger than the run's use leaves its idle GPU-hours in cost_fixed_idle") {
  // 32 GPUs committed for 1,000 h at $1.90; the run uses its 16 GPUs for run_time (well under the term):
  // covered 16 · run_time GPU-hours, idle 32,000 − that; the whole term, $60,800, is paid, and the covered
  // hours leave the on-demand compute ($2.00 an hour), which is then 0.
  const Scenario s = with_commitment(32);
  const ScenarioResult r = simulate_scenario(s, model::Fidelity::analytic);
  REQUIRE(r.run.feasible);
  const double hours = r.run.run_time / 3600;
  REQUIRE(hours < 1000);
  CHECK(r.run.commitment);
  CHECK(r.run.committed_idle_gpu_hours == doctest::Approx(32000 - 16 * hours).scale(0));
  CHECK(r.run.cost_fixed_idle == doctest::Approx((32000 - 16 * hours) * 1.90).scale(0));
  CHECK(r.run.cost_fixed == doctest::Approx(60800.0).scale(0));
  CHECK(std::abs(r.run.cost_compute) < 1e-6);
  CHECK(std::abs(r.run.cost_elastic) < 1e-6);  // nothing bought on demand
  const auto& run = r.run;
  CHECK(run.cost_total == doctest::Approx(run.cost_compute + run.cost_energy + run.cost_storage +
                                          run.cost_network + run.cost_fixed)
                              .scale(0));
  // The idle term is waste: cost_wasted is the plain run's (failures, stalls, bubbles) plus it.
  const ScenarioResult plain =
      simulate_scenario(load_scenario_text(layout + "training: {global_batch: 64, steps: 10000}\n", "t.yaml"),
                        model::Fidelity::analytic);
  CHECK(run.cost_wasted == doctest::Approx(plain.run.cost_wasted + (32000 - 16 * hours) * 1.90).scale(0));
  const Scenario back = load_scenario_text(dump_scenario(s), "t.yaml");
  CHECK(back.pricing.commitment.gpus == 32.0);
  CHECK(back.pricing.commitment.term_s == doctest::Approx(3.6e6).scale(0));
}

TEST_CASE("a commitment smaller than the run leaves the rest elastic, bought on demand") {
  // 8 of the run's 16 GPUs committed for 1,000 h (longer than the run): the other 8 GPUs' run_time hours
  // are bought on demand at $2.00, cost_elastic = 8 · hours · 2.00; the fee is 8 · 1,000 · $1.90 = $15,200.
  const ScenarioResult r = simulate_scenario(with_commitment(8), model::Fidelity::analytic);
  REQUIRE(r.run.feasible);
  const double hours = r.run.run_time / 3600;
  CHECK(r.run.cost_elastic == doctest::Approx(8 * hours * 2.00).epsilon(1e-12));
  CHECK(r.run.cost_fixed == doctest::Approx(15200.0).epsilon(1e-12));
  CHECK(r.run.cost_fixed_idle == doctest::Approx((8000 - 8 * hours) * 1.90).epsilon(1e-12));
  // Without the commitment every GPU-hour is elastic: 16 · hours · $2.00.
  const ScenarioResult plain =
      simulate_scenario(load_scenario_text(layout + "training: {global_batch: 64, steps: 10000}\n", "t.yaml"),
                        model::Fidelity::analytic);
  CHECK(plain.run.cost_elastic == doctest::Approx(16 * plain.run.run_time / 3600 * 2.00).epsilon(1e-12));
}

TEST_CASE("a target loss prices its loss points from the law's loss after the first step") {
  // Chinchilla's law at the scenario's N and one batch of 131,072 tokens says
  // 1.69 + 406.4 / N^0.34 + 410.7 / 131072^0.28 = about 17.2 nats, above ln 50,257 = 10.8249 (GPT-3's
  // vocabulary), so the run starts from ln 50,257; cost_per_loss_point = cost_total / (ln 50,257 − 2.6).
  const Scenario s = load_scenario_text(
      base + "convergence: {target_loss: 2.6, law: chinchilla, batch: {critical: 524288}}\n", "t.yaml");
  const double n = model::parameter_count(s.model);
  CHECK(1.69 + 406.4 / std::pow(n, 0.34) + 410.7 / std::pow(131072.0, 0.28) > 17);
  const double l0 = std::log(50257.0);
  const ScenarioResult r = simulate_scenario(s, model::Fidelity::analytic);
  REQUIRE(r.run.feasible);
  CHECK(r.run.initial_loss == doctest::Approx(l0).epsilon(1e-12));
  CHECK(r.run.cost_per_loss_point == doctest::Approx(r.run.cost_total / (l0 - 2.6)).epsilon(1e-12));
  // Per PFLOP: the bill over the run's steps of model FLOPs.
  const double pflops = static_cast<double>(r.run.steps) * r.step.model_flops_per_step / 1e15;
  CHECK(r.run.cost_per_pflop == doctest::Approx(r.run.cost_total / pflops).epsilon(1e-12));
  // A target at or above where the run starts is refused.
  const Scenario easy = load_scenario_text(base + "convergence: {target_loss: 11.0}\n", "t.yaml");
  CHECK_THROWS_WITH_AS((void)simulate_scenario(easy, model::Fidelity::analytic),
                       doctest::Contains("first step"), InputError);
}

TEST_CASE("a commitment that covers every trial leaves no negative dollars on demand") {
  // The Llama-2 7B campaign with 27 trials at eta 3 (analytic): the 256 committed GPUs cover the trials and
  // the run, and the covered hours, summed another way, passed the used ones by rounding (cost_tuning was
  // -1.8e-12 dollars). Nothing is bought on demand: exactly 0.
  const Scenario s =
      load_scenario_file(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/llama2-7b-to-loss.yaml",
                         {{"tuning.trials", "27"}});
  const ScenarioResult r = simulate_scenario(s, model::Fidelity::analytic);
  REQUIRE(r.run.feasible);
  CHECK(r.run.cost_tuning == 0.0);
  CHECK(r.run.cost_compute == 0.0);
  CHECK(r.run.cost_elastic == 0.0);
  const auto& run = r.run;
  CHECK(run.cost_total == doctest::Approx(run.cost_storage + run.cost_network + run.cost_energy +
                                          run.cost_data + run.cost_people + run.cost_fixed)
                              .epsilon(1e-12));
}

TEST_CASE("budget alerts: fractions of max_cost, sorted, each once, only beside max_cost; they dump back") {
  const std::string run = layout + "training: {global_batch: 64, steps: 1000}\n";
  const Scenario s =
      load_scenario_text(run + "budget: {max_cost: \"$1M\", alerts: [1.0, 0.5, 0.8]}\n", "t.yaml");
  CHECK(s.budget.alerts == std::vector<double>{0.5, 0.8, 1.0});
  const Scenario back = load_scenario_text(dump_scenario(s), "t.yaml");
  CHECK(back.budget.alerts == s.budget.alerts);
  CHECK_THROWS_WITH_AS((void)load_scenario_text(run + "budget: {alerts: [0.5]}\n", "t.yaml"),
                       doctest::Contains("t.yaml:6:18: budget.alerts: alerts are fractions of "
                                         "budget.max_cost: give max_cost beside them"),
                       InputError);
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(run + "budget: {max_cost: \"$1M\", alerts: [0.5, 0.5]}\n", "t.yaml"),
      doctest::Contains("budget.alerts[1]: fraction 0.5 is given twice"), InputError);
  CHECK_THROWS_WITH_AS((void)load_scenario_text(run + "budget: {max_cost: \"$1M\", alerts: [0]}\n", "t.yaml"),
                       doctest::Contains("budget.alerts[0]: must be greater than zero"), InputError);
  CHECK_THROWS_WITH_AS((void)load_scenario_text(run + "budget: {max_cost: \"$1M\", alerts: 0.5}\n", "t.yaml"),
                       doctest::Contains("budget.alerts: expected a list of 1 to 64 fractions of max_cost"),
                       InputError);
}

TEST_CASE("a run without campaign blocks burns at a constant rate: each alert at f x max_cost / rate") {
  // The run's costs accrue pro rata to its wall clock, so the spend reaches f x max_cost at
  // f x max_cost / cost_total x run_time; an alert beyond cost_total is never reached.
  const Scenario s = load_scenario_text(
      layout +
          "training: {global_batch: 64, steps: 2000}\nbudget: {max_cost: \"$4\", alerts: [0.1, 0.3, 1e4]}\n",
      "t.yaml");
  const ScenarioResult r = simulate_scenario(s, model::Fidelity::analytic);
  REQUIRE(r.run.feasible);
  REQUIRE(r.run.budget_alerts.size() == 3);
  for (std::size_t k = 0; k < 2; ++k) {
    const double usd = s.budget.alerts[k] * 4.0;
    CHECK(r.run.budget_alerts[k].reached);
    CHECK(r.run.budget_alerts[k].time ==
          doctest::Approx(usd / r.run.cost_total * r.run.run_time).epsilon(1e-9));
  }
  CHECK_FALSE(r.run.budget_alerts[2].reached);  // $40k against a bill of a few dollars
}

TEST_CASE(
    "with a region, a commitment and every campaign block, cost_total is still the sum of its categories") {
  const std::string campaign = R"(training: {global_batch: 64}
convergence: {target_loss: 2.6, law: chinchilla, batch: {critical: 524288}}
tuning: {trials: 9, early_stopping: {policy: successive-halving, eta: 3, min_fraction: 0.1111111111111111}}
data: {raw: "1 TB", preprocessing: {core_hours_per_tb: 400, core_hour: "$0.04/h"}}
people: [{role: engineer, count: 2, rate: "$100/h"}]
budget: {max_cost: "$50k", alerts: [0.5, 1.0]}
)";
  const std::string regional = unpriced + campaign +
                               "pricing: {region: us-east, egress_data: \"10 TB\", "
                               "commitment: {gpus: 8, term: \"2 d\", gpu_hour: \"$1.50\"}}\n";
  for (const std::string& text : {layout + campaign, regional}) {
    const Scenario s = load_scenario_text(text, "t.yaml");
    const ScenarioResult r = simulate_scenario(s, model::Fidelity::analytic);
    REQUIRE(r.run.feasible);
    const auto& run = r.run;
    CHECK(run.cost_total ==
          doctest::Approx(run.cost_compute + run.cost_storage + run.cost_network + run.cost_energy +
                          run.cost_tuning + run.cost_data + run.cost_people + run.cost_fixed)
              .epsilon(1e-12));
    double outlays = 0;
    for (const auto& o : run.outlays) outlays += o.usd;
    CHECK(outlays == doctest::Approx(run.cost_total).epsilon(1e-12));
  }
  // The region's energy price and egress reach the bill: 10 TB out at us-east.yaml's $0.09/GB = $900.
  const ScenarioResult r =
      simulate_scenario(load_scenario_text(regional, "t.yaml"), model::Fidelity::analytic);
  CHECK(r.run.cost_network == doctest::Approx(10'000 * 0.09).epsilon(1e-12));
  CHECK(r.run.cost_energy > 0);
}

TEST_CASE("a sweep over a campaign has the campaign's columns, each row its own point's figures") {
  // The base scenario's blocks decide the columns: a target loss swept over 2.6 and 2.5 with trials and a
  // commitment gives each row its initial_loss, cost_per_loss_point, cost_tuning and cost_fixed.
  const trainsim::testing::TempDir dir;
  const auto path = dir.path() / "campaign_sweep.yaml";
  std::ofstream(path) << unpriced << R"(training: {global_batch: 64}
convergence: {target_loss: 2.6, law: chinchilla, batch: {critical: 524288}}
tuning: {trials: 9, early_stopping: {policy: successive-halving, eta: 3, min_fraction: 0.1111111111111111}}
pricing: {gpu_hour: "$2.00", commitment: {gpus: 8, term: "2 d", gpu_hour: "$1.50"}}
sweep: {convergence.target_loss: [2.6, 2.5]}
)";
  const SweepTable table(path.string(), model::Fidelity::analytic, RowFormat::csv);
  std::vector<std::string> header;
  std::stringstream line(table.header());
  for (std::string cell; std::getline(line, cell, ',');) header.push_back(cell);
  const auto column = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    REQUIRE_MESSAGE(it != header.end(), name);
    return static_cast<std::size_t>(it - header.begin());
  };
  for (const char* name : {"initial_loss", "cost_per_loss_point_usd", "cost_per_pflop_usd",
                           "cost_elastic_usd", "cost_tuning_usd", "cost_fixed_usd", "tokens_min"})
    (void)column(name);
  // Row 1 (target 2.5) carries what simulating that point gives.
  std::vector<std::string> cells;
  std::stringstream row(table.row(1));
  for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
  const Scenario point = load_scenario_text(
      unpriced +
          "training: {global_batch: 64}\n"
          "convergence: {target_loss: 2.5, law: chinchilla, batch: {critical: 524288}}\n"
          "tuning: {trials: 9, early_stopping: {policy: successive-halving, eta: 3, "
          "min_fraction: 0.1111111111111111}}\n"
          "pricing: {gpu_hour: \"$2.00\", commitment: {gpus: 8, term: \"2 d\", gpu_hour: \"$1.50\"}}\n",
      "t.yaml");
  const ScenarioResult r = simulate_scenario(point, model::Fidelity::analytic);
  REQUIRE(cells.size() > column("cost_per_loss_point_usd"));
  CHECK(std::stod(cells[column("cost_per_loss_point_usd")]) ==
        doctest::Approx(r.run.cost_per_loss_point).epsilon(1e-6));
  CHECK(std::stod(cells[column("cost_fixed_usd")]) == doctest::Approx(r.run.cost_fixed).epsilon(1e-6));
  std::filesystem::remove(path);
}

TEST_CASE("on spot capacity the whole bill is the spot run's plus the data and the people over its time") {
  // The run alone on spot: its spot_cost_total. With $800 of data work (50 TB · 400 core-hours · $0.04)
  // and one person round the clock at $40 an hour, paid over the spot run's wall clock (no trials), the
  // whole bill on spot is that + 800 + 40 · spot_run_time / 3600.
  const std::string spot =
      layout.substr(0, layout.find("pricing:")) +
      "pricing: {gpu_hour: \"$2.00\", spot: {gpu_hour: \"$0.80\", preemptions: \"0.05 /h\"}}\n" +
      "training: {global_batch: 64, steps: 10000}\n";
  const ScenarioResult alone =
      simulate_scenario(load_scenario_text(spot, "t.yaml"), model::Fidelity::analytic);
  REQUIRE(alone.run.spot);
  const ScenarioResult campaign = simulate_scenario(
      load_scenario_text(spot + "data: {raw: \"50 TB\", preprocessing: {core_hours_per_tb: 400, core_hour: "
                                "\"$0.04/h\"}}\npeople: [{role: on-call, count: 1, rate: \"$40/h\", "
                                "coverage: \"24x7\"}]\n",
                         "t.yaml"),
      model::Fidelity::analytic);
  REQUIRE(campaign.run.spot);
  CHECK(campaign.run.spot_run_time == alone.run.spot_run_time);
  CHECK(campaign.run.spot_cost_total ==
        doctest::Approx(alone.run.spot_cost_total + 800 + 40 * alone.run.spot_run_time / 3600).scale(0));
  // and the on-demand bill pays the person over the on-demand run's shorter time.
  CHECK(campaign.run.cost_people == doctest::Approx(40 * campaign.run.run_time / 3600).scale(0));
}
