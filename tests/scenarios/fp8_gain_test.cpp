// FP8 over bf16 as Transformer Engine runs it comes out of the kernel model (fp8 GEMMs with their casts,
// 16-bit attention and element-wise work), not from a constant: for Llama-3 8B on 8 and 70B on 64 H100
// the gain lies in the band of published FP8 gains (about 1.2-1.5x; issue range 1.15-1.6x), well below
// the 2x of the peaks.
#include <doctest/doctest.h>

#include <string>

#include "scenarios/loader.hpp"
#include "scenarios/studies/simulation.hpp"

using namespace trainsim;

namespace {

double tokens_per_s(const std::string& layout, const std::string& precision) {
  const std::string yaml =
      layout + "training: {global_batch: 128, precision: " + precision + ", optimizer: adamw, steps: 1}\n";
  const scenario::Scenario s = scenario::load_scenario_text(yaml, "fp8-gain");
  const scenario::ScenarioResult r = scenario::simulate_scenario(s, model::Fidelity::analytic);
  REQUIRE(r.step.feasible);
  return r.step.tokens_per_s;
}

// The fp8 / bf16 throughput ratio of one layout lies in the published band.
void check_fp8_gain(const std::string& layout) {
  const double gain = tokens_per_s(layout, "fp8") / tokens_per_s(layout, "bf16");
  CAPTURE(gain);
  CHECK(gain >= 1.15);
  CHECK(gain <= 1.6);
}

}  // namespace

TEST_CASE("FP8 over bf16: Llama-3 8B on 8 H100 (NeMo 24.07 layout)") {
  check_fp8_gain(
      "model: {preset: llama3-8b, seq_len: 8192}\n"
      "cluster: {node: dgx-h100, nodes: 1}\n"
      "parallelism: {tp: 1, pp: 1, dp: auto, cp: 2, micro_batch: 1, zero: 1, recompute: none}\n");
}

TEST_CASE("FP8 over bf16: Llama-3 70B on 64 H100 (NeMo 24.07 layout)") {
  check_fp8_gain(
      "model: {preset: llama3-70b, seq_len: 8192}\n"
      "cluster: {node: dgx-h100, nodes: 8}\n"
      "parallelism: {tp: 4, pp: 4, dp: auto, cp: 2, schedule: interleaved, virtual_stages: 5,\n"
      "              micro_batch: 1, sequence_parallel: true, zero: 1, recompute: none}\n");
}
