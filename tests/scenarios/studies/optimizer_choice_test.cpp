// What choosing an optimizer costs end to end: Muon's update at scale under ZeRO-1, where each matrix is
// orthogonalised once, by its owner (models/workload/distributed_update.hpp).
#include <doctest/doctest.h>

#include <string>

#include "models/workload/kernel_time.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/studies/simulation.hpp"

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
