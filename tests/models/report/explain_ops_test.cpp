// explain --ops: one layer's ops, each alone. Its element-wise lines are the roofline of their bytes by hand,
// its kernels add up to what the step charges the layer's kernels, and a MoE layer's dispatch is named with
// its group.
#include "models/report/explain_ops.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "models/step/step_costs.hpp"
#include "models/step/step_plan.hpp"
#include "models/step/unit_pricing.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

const ExplainLine* line(const ExplainSection& s, const std::string& label) {
  const auto it = std::ranges::find_if(s.lines, [&](const ExplainLine& l) { return l.label == label; });
  return it == s.lines.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("a layer norm's line is its bytes at the element-wise bandwidth plus one launch") {
  // tp 2 with sequence parallelism: the norm sees 1,024 / 2 = 512 tokens of h = 1,024 in bf16, read once and
  // written once (fused): 2 x 2 B x 512 x 1,024 = 2,097,152 B.
  const StepInput in = testing::small_gpt_on_a100(1, 2, 1, 4, 16);
  const ExplainSection s = explain_ops(in);
  const ExplainLine* ln1 = line(s, "forward ln1");
  REQUIRE(ln1 != nullptr);
  const topo::GpuSpec& gpu = in.cluster.node.gpu;
  const double bytes = 2.0 * 2.0 * 512 * 1024;
  const double expected = bytes / (gpu.hbm_bytes_per_s * gpu.efficiency.elementwise_fraction()) +
                          gpu.efficiency.kernel_overhead_s;
  CHECK(ln1->value == doctest::Approx(expected).epsilon(1e-12));
  CHECK(ln1->unit == "s");
  CHECK(ln1->formula.starts_with("1 kernel, 2.097 MB at "));
  CHECK(ln1->formula.ends_with("; host 20 us"));  // eager Megatron-Core: 20 us a launch
}

TEST_CASE("the listed kernels add up to the kernels the step charges the layer") {
  // No tensor-parallel overlap: every kernel runs alone, so the step's pieces carry exactly the kernel times,
  // beside the piece of the GPU waiting for the eager host (this small layer's launches outlast its kernels).
  StepInput in = testing::small_gpt_on_a100(1, 2, 1, 4, 16);
  in.plan.framework.tp_comm_overlap = false;
  const ExplainSection s = explain_ops(in);
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  const StepCosts costs = simulated_costs(in, plan, Fidelity::analytic);
  const UnitCost& layer = costs.units[0];
  double forward = 0, backward = 0;
  for (const CostPiece& p : layer.forward) forward += p.name == kHostWaitPiece ? 0.0 : p.compute;
  for (const CostPiece& p : layer.backward) backward += p.name == kHostWaitPiece ? 0.0 : p.compute;
  REQUIRE(line(s, "forward, kernels") != nullptr);
  REQUIRE(line(s, "backward, kernels") != nullptr);
  CHECK(line(s, "forward, kernels")->value == doctest::Approx(forward).epsilon(1e-9));
  CHECK(line(s, "backward, kernels")->value == doctest::Approx(backward).epsilon(1e-9));
  CHECK(line(s, "forward, collectives")->value > 0);  // the tensor-parallel all-gathers and reduce-scatters
}

TEST_CASE("a MoE layer's dispatch names its collective and expert group; CUDA graphs drop the host") {
  StepInput in = testing::small_gpt_on_a100(1, 1, 1, 8, 16);
  in.model = testing::four_expert_moe();
  in.plan.sequence_parallel = false;
  in.plan.ep = 4;
  in.plan.expert_folding = true;
  const ExplainSection s = explain_ops(in);
  CHECK(s.title.starts_with("ops of one layer per micro-batch"));
  const ExplainLine* dispatch = line(s, "forward ep_dispatch");
  REQUIRE(dispatch != nullptr);
  CHECK(dispatch->formula.starts_with("all-to-all over ep (4 GPUs), "));
  CHECK(dispatch->value > 0);
  CHECK(line(s, "forward, host issue") != nullptr);
  in.plan.framework.cuda_graphs = true;
  const ExplainSection graphed = explain_ops(in);
  CHECK(line(graphed, "forward, host issue") == nullptr);
  CHECK(line(graphed, "forward ep_dispatch")->formula.find("host") == std::string::npos);
}

TEST_CASE("a plan that is not a layout gets a note, not lines") {
  StepInput in = testing::small_gpt_on_a100(1, 2, 1, 4, 16);
  in.plan.pp = 32;  // 32 stages of a 16-layer model
  const ExplainSection s = explain_ops(in);
  CHECK(s.lines.empty());
  REQUIRE(s.notes.size() == 1);
  CHECK(s.notes[0].starts_with("not a layout: "));
}
