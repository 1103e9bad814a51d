// What choosing an optimizer costs end to end: Muon's update at scale under ZeRO-1, where each matrix is
// orthogonalised once, by its owner (models/workload/distributed_update.hpp).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "models/run/convergence.hpp"
#include "models/workload/kernel_time.hpp"
#include "models/workload/parameters.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/studies/simulation.hpp"
#include "sim/error.hpp"

using namespace trainsim;
using namespace trainsim::scenario;

TEST_CASE("Muon under ZeRO-1 on 256 H100 for Llama-3 8B: the update is at most 5 % of the step") {
  const std::string text = R"(model: llama3-8b
cluster: {node: dgx-h100, nodes: 32}
parallelism: {tp: 1, pp: 1, dp: auto, micro_batch: 1, zero: 1, recompute: selective}
training: {global_batch: 512, precision: bf16, optimizer: muon, tokens: 1e12}
)";
  const ScenarioResult r = simulate_scenario(load_scenario_text(text, "t.yaml"), model::Fidelity::analytic);
  REQUIRE(r.step.feasible);
  // The busiest of the 256 owners orthogonalises one 4096 x 14336 matrix: 5,497,558,138,880 FLOPs
  // (distributed_update_test.cpp), a floor under the update; every rank running all 224 matrices
  // (665,891,729,571,840 FLOPs) would alone take far more than 5 % of the step.
  const auto& gpu = load_scenario_text(text, "t.yaml").cluster.node.gpu;
  const double owner = model::kernel_time(
      model::KernelCost{model::OpKind::matmul, 5'497'558'138'880.0, 0, 0, 0}, gpu, model::Precision::bf16);
  const double everyone = model::kernel_time(
      model::KernelCost{model::OpKind::matmul, 665'891'729'571'840.0, 0, 0, 0}, gpu, model::Precision::bf16);
  CHECK(r.step.time.optimizer > owner);
  CHECK(r.step.time.optimizer <= 0.05 * r.step.iteration_time);
  CHECK(everyone > 0.05 * r.step.iteration_time);
}

namespace {

// GPT-3 1.3B on 2 DGX A100, 64 sequences of 2048 tokens a step.
const std::string small = R"(model: gpt3-1.3b
cluster: {node: dgx-a100-80gb, nodes: 2}
parallelism: {tp: 1, pp: 1, dp: auto, micro_batch: 4, zero: 1}
pricing: {gpu_hour: "$2.00"}
)";

}  // namespace

TEST_CASE("rollbacks: each costs the work since the last checkpoint plus the restore, as a failure does") {
  // 25 rollbacks per 1e12 tokens (about PaLM 540B's "roughly 20" loss spikes over its 780B tokens), no
  // hardware failures. A rollback rate lambda = 25e-12 · tokens/s; each segment of w seconds takes
  // (1/lambda + R)(e^(lambda·w) − 1) in expectation, with e^(lambda·w) − 1 rollbacks, R the restore.
  const std::string text = small + "training: {global_batch: 64, steps: 200000, instability: 25}\n" +
                           "checkpoint: {every_steps: 20000, mode: sync, keep: 1}\n";
  const ScenarioResult r = simulate_scenario(load_scenario_text(text, "t.yaml"), model::Fidelity::analytic);
  REQUIRE(r.run.feasible);
  const model::RunReport& run = r.run;
  const double lambda = 25e-12 * run.tokens / run.training_time;
  const double recovery = run.checkpoint_restore_time;  // no failures block: no restart time
  const double w = run.checkpoint_interval + run.checkpoint_stall / static_cast<double>(run.checkpoints);
  const double tail = run.training_time - run.checkpoint_interval * static_cast<double>(run.checkpoints);
  const double n = static_cast<double>(run.checkpoints);
  auto segment = [&](double work) { return (1 / lambda + recovery) * std::expm1(lambda * work); };
  const double rollbacks = n * std::expm1(lambda * w) + (tail > 0 ? std::expm1(lambda * tail) : 0.0);
  CHECK(run.run_time == doctest::Approx(n * segment(w) + (tail > 0 ? segment(tail) : 0.0)).epsilon(1e-9));
  CHECK(run.rollbacks_expected == doctest::Approx(rollbacks).epsilon(1e-9));
  CHECK(run.rollbacks_expected == doctest::Approx(run.failures_expected));
  // Small lambda·w: about 25 · tokens/1e12 rollbacks, each losing half a segment and the restore.
  CHECK(run.rollbacks_expected == doctest::Approx(25 * run.tokens / 1e12).epsilon(0.05));
  const double lost = run.run_time - run.training_time - run.checkpoint_stall;
  CHECK(lost == doctest::Approx(run.rollbacks_expected * (w / 2 + recovery)).epsilon(0.05));
  // Young/Daly counts the rollbacks: sqrt(2 · checkpoint stall · 1/lambda).
  CHECK(run.recommended_checkpoint_interval ==
        doctest::Approx(std::sqrt(2 * run.checkpoint_stall / n / lambda)).epsilon(1e-9));
}

TEST_CASE("a target that moves: a cosine campaign trains twice, a WSD one redoes only its decay") {
  // Chinchilla's law at N = parameter_count(gpt3-1.3b), B = B_crit = 131,072: a run trains 2 · D(L) tokens.
  auto campaign = [&](const std::string& schedule) {
    const std::string text =
        small + "training: {global_batch: 64, schedule: " + schedule +
        "}\nconvergence: {target_loss: 2.6, next_target_loss: 2.5, batch: {critical: 131072}}\n";
    return simulate_scenario(load_scenario_text(text, "t.yaml"), model::Fidelity::analytic).run;
  };
  const Scenario s = load_scenario_text(small + "training: {global_batch: 64}\n", "t.yaml");
  const double n = model::parameter_count(s.model);
  auto tokens = [&](double loss) {
    const double floor = 1.69 + 406.4 / std::pow(n, 0.34);
    return 2 * std::pow(410.7 / (loss - floor), 1 / 0.28);
  };
  const double first = tokens(2.6), next = tokens(2.5);
  const model::RunReport cosine = campaign("cosine");
  const model::RunReport wsd = campaign("{kind: wsd, decay_fraction: 0.2}");
  // The run trains whole steps: up to one batch (131,072 tokens) above the campaign's tokens.
  constexpr double kBatch = 131'072;
  CHECK(cosine.tokens - (first + next) >= 0);
  CHECK(cosine.tokens - (first + next) <= kBatch);
  CHECK(cosine.schedule_extra_tokens == doctest::Approx(first).epsilon(1e-9));
  CHECK(wsd.tokens - (next + 0.2 * first) >= 0);
  CHECK(wsd.tokens - (next + 0.2 * first) <= kBatch);
  CHECK(wsd.schedule_extra_tokens == doctest::Approx(0.2 * first).epsilon(1e-9));
  CHECK(wsd.cost_total < cosine.cost_total);
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text(small + "training: {global_batch: 64}\n" +
                                   "convergence: {target_loss: 2.5, next_target_loss: 2.6}\n",
                               "t.yaml"),
      doctest::Contains("convergence.next_target_loss"), InputError);
}
