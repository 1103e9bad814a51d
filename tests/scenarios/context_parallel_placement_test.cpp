// The K/V ring of context parallelism is priced on the links its ranks actually use: a cp group placed
// across nodes (after pp in the rank order) pays the NICs, one placed inside a node pays NVLink.
#include <doctest/doctest.h>

#include "scenarios/loader.hpp"
#include "scenarios/studies/simulation.hpp"

using namespace trainsim;

namespace {
constexpr const char* kScenario = R"(
model: {preset: llama3-8b, seq_len: 16384}
cluster: {node: dgx-h100, nodes: 2}
parallelism: {tp: 2, pp: 2, cp: 4, dp: 1, micro_batch: 1}
training: {global_batch: 8, precision: bf16, optimizer: adamw, steps: 1}
)";

double exposed_model_parallel_comm(const std::string& order) {
  const auto s = scenario::load_scenario_text(kScenario, "cp.yaml", {{"parallelism.order", order}});
  const auto r = scenario::simulate_scenario(s, model::Fidelity::analytic);
  REQUIRE(r.step.feasible);
  return r.step.time.exposed_tp_comm;
}
}  // namespace

TEST_CASE("a context-parallel ring across nodes costs more than the same ring inside a node") {
  const double inside = exposed_model_parallel_comm("[tp, cp, ep, pp, dp]");
  const double across = exposed_model_parallel_comm("[tp, pp, ep, cp, dp]");
  CHECK(across > inside);
}
