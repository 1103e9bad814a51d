// Gradients are reduced over every rank that holds a copy of them: the data-parallel replicas and the
// context-parallel ranks of one sequence (Megatron-LM reduces over the dp×cp group).
#include <doctest/doctest.h>

#include "scenarios/loader.hpp"
#include "scenarios/studies/simulation.hpp"

using namespace trainsim;

TEST_CASE("context-parallel ranks reduce their gradients even without data parallelism") {
  // Llama-3 8B on 2 H100 nodes, tp 2, cp 8, dp 1, no overlap: 8 ranks each hold a copy of a tp shard's
  // gradients (4e9 B in bf16 over tp 2), which a ring all-reduce over 8 ranks must move.
  const auto s = scenario::load_scenario_text(R"(
model: {preset: llama3-8b, seq_len: 16384}
cluster: {node: dgx-h100, nodes: 2}
parallelism: {tp: 2, cp: 8, dp: 1, micro_batch: 1, overlap_grad_reduce: false}
training: {global_batch: 4, precision: bf16, optimizer: adamw, steps: 1}
)",
                                              "cp.yaml");
  const auto r = scenario::simulate_scenario(s, model::Fidelity::analytic);
  REQUIRE(r.step.feasible);
  CHECK(r.step.time.exposed_dp_comm > 0);
}
