// Multi-token prediction (TransformerSpec::mtp_layers; DeepSeek-V3, arXiv:2412.19437 Sec. 2.2): each
// module's parameters, FLOPs, weights and activations on the last stage, and its units in the step, derived
// by hand for a small GPT (h 1024, 16 heads, s 2048, v 51200: gelu, layernorm, biases, learned positions).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "models/step/memory.hpp"
#include "models/step/step_costs.hpp"
#include "models/step/step_plan.hpp"
#include "models/workload/activation_memory.hpp"
#include "models/workload/flops.hpp"
#include "models/workload/layer_ops.hpp"
#include "models/workload/parameters.hpp"
#include "sim/error.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

constexpr double kH = 1024, kS = 2048, kV = 51200;

TransformerSpec small(std::int64_t mtp) {
  TransformerSpec m = testing::gpt(4, 1024, 16, 2048);
  m.mtp_layers = mtp;
  return m;
}

}  // namespace

TEST_CASE(
    "a module holds a layer, three norms and the 2h x h projection; the embedding and head are shared") {
  // A GPT layer: attention 4h² + 4h, MLP 8h² + 5h, two layernorms 4h: 12h² + 13h. A module adds two input
  // norms and a final norm (2h each) and the projection 2h·h with its bias h: 2h² + 7h. So 14h² + 20h.
  const double layer = 12 * kH * kH + 13 * kH;
  const double module = layer + 2 * kH * kH + 7 * kH;
  CHECK(module == 14'700'544.0);
  CHECK(parameter_count(small(1)) - parameter_count(small(0)) == module);
  CHECK(parameter_count(small(2)) - parameter_count(small(0)) == 2 * module);
  CHECK_THROWS_AS((void)parameter_count(small(-1)), InputError);
  // On the last of two stages, with the embedding copy it looks the tokens ahead up in.
  CHECK(stage_parameter_count(small(1), 2, false, true) - stage_parameter_count(small(0), 2, false, true) ==
        module + kV * kH);
  // On a single stage the embedding is already there.
  CHECK(stage_parameter_count(small(1), 4, true, true) - stage_parameter_count(small(0), 4, true, true) ==
        module);
  // The weights a rank holds follow the same count (tp 1, pp 2: the last stage).
  ParallelPlan plan;
  plan.pp = 2;
  double held = 0;
  for (const TensorShape& t : stage_parameter_tensors(small(1), plan, 1)) held += t.elements();
  CHECK(held == stage_parameter_count(small(1), 2, false, true));
}

TEST_CASE("a module's forward FLOPs: one layer, the projection and the head again") {
  // Per sequence: the layer 24·s·h² + 4·s²·h, the projection 2·s·2h·h, the head 2·s·h·v.
  const double module = 24 * kS * kH * kH + 4 * kS * kS * kH + 4 * kS * kH * kH + 2 * kS * kH * kV;
  CHECK(forward_flops_per_sequence(small(1)).total() - forward_flops_per_sequence(small(0)).total() ==
        doctest::Approx(module).epsilon(1e-12));
  // Full recompute runs the module's layer again (and a flash layer's backward its score half).
  const double recomputed = recompute_flops_per_sequence(small(1), Recompute::full) -
                            recompute_flops_per_sequence(small(0), Recompute::full);
  CHECK(recomputed ==
        doctest::Approx(24 * kS * kH * kH + 4 * kS * kS * kH + 0.5 * 4 * kS * kS * kH).epsilon(1e-12));
}

TEST_CASE("the module's own ops: lookup, norms, the projection and its tp gathers") {
  // tp 2 with sequence parallelism, one sequence: the 2h-wide input gathered (2·2·s·h bytes), the
  // projection 2·s·(h/2)·2h FLOPs, its h/2-wide outputs gathered (2·s·h bytes).
  Shard sh;
  sh.tp = 2;
  sh.sequence_parallel = true;
  const LayerOps ops = mtp_ops(small(1), sh);
  CHECK(ops.forward_flops() == 2 * kS * (kH / 2) * 2 * kH);
  CHECK(ops.backward_flops() == 2 * ops.forward_flops());
  double gathered = 0;
  for (const LayerOp& op : ops.forward) {
    if (op.communication && op.comm.collective == Collective::all_gather) gathered += op.comm.bytes;
  }
  CHECK(gathered == 2 * 2 * kS * kH + 2 * kS * kH);
}

TEST_CASE("the last stage keeps each module's layer, inputs and head activations; the step runs it there") {
  ParallelPlan plan;
  plan.pp = 2;
  const StageActivation without = stage_activation(small(0), plan, topo::Precision::bf16, 1, 2, 4);
  const StageActivation with = stage_activation(small(1), plan, topo::Precision::bf16, 1, 2, 4);
  Shard sh;
  const double layer = layer_activation(small(1), sh).total();
  // The two norms' inputs and the 2h-wide projection input (2 bytes each), and the head again: its two
  // 2-byte inputs and the fp32 logits.
  const double head = 2 * 2 * kS * kH + 4 * kS * kV;
  CHECK(with.mtp == layer + 4 * 2 * kS * kH + head);
  CHECK(with.per_micro_batch - without.per_micro_batch == with.mtp);
  CHECK(stage_activation(small(1), plan, topo::Precision::bf16, 0, 2, 4).mtp == 0);

  // The step: the last stage runs its layers, the head, then the module, a layer and the head again.
  StepInput in = testing::small_gpt_on_a100(1, 1, 2, 4, 4, 1024, 2048);
  in.model.mtp_layers = 1;
  const StepPlan sp = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(sp.feasible);
  const StepCosts costs = step_costs(in, sp);
  std::vector<std::string> last, first;
  for (const UnitRun& r : costs.chunk_units.back())
    last.push_back(costs.units.at(static_cast<std::size_t>(r.unit)).name);
  for (const UnitRun& r : costs.chunk_units.front())
    first.push_back(costs.units.at(static_cast<std::size_t>(r.unit)).name);
  CHECK(last == std::vector<std::string>{"layer", "head", "mtp", "layer", "head"});
  CHECK(first == std::vector<std::string>{"embedding", "layer"});
}
