// Tensor parallelism wider than the K/V heads (GQA): Megatron-LM copies each K/V head on tp/kv ranks, so
// Llama-3 70B (8 K/V heads) runs at tp 16; tp 12 divides neither way and is refused.
#include <doctest/doctest.h>

#include "scenarios/loader.hpp"
#include "scenarios/studies/simulation.hpp"
#include "sim/error.hpp"

using namespace trainsim;

namespace {
constexpr const char* kScenario = R"(
model: llama3-70b
cluster: {node: dgx-h100, nodes: 2}
parallelism: {tp: 16, pp: 1, dp: auto, micro_batch: 1, sequence_parallel: true, recompute: full}
training: {global_batch: 8, precision: bf16, optimizer: adamw, steps: 1}
)";
}  // namespace

TEST_CASE("tp may be a multiple of the K/V heads: each rank keeps a copy of one K/V head") {
  const auto s = scenario::load_scenario_text(kScenario, "kv.yaml");
  const auto r = scenario::simulate_scenario(s, model::Fidelity::analytic);
  REQUIRE(r.step.feasible);
  // 80 layers x 2 (K and V) x 128 x 8192 weights per rank instead of 8/16 of a head: the copies add
  // 80 x 2 x 128 x 8192 x (1 - 8/16) x 2 B = 167.8 MB of bf16 weights over an even 1/16 split.
  const double even = 2.0 * 70.55e9 / 16;
  const double copies = 80.0 * 2 * 128 * 8192 * 0.5 * 2;
  CHECK(r.step.memory.weights == doctest::Approx(even + copies).epsilon(0.01));
}

TEST_CASE("tp that neither divides nor is divided by the K/V heads is refused, naming the key") {
  CHECK_THROWS_WITH_AS(scenario::load_scenario_text(kScenario, "kv.yaml", {{"parallelism.tp", "12"}}),
                       doctest::Contains("parallelism.tp"), InputError);
}
