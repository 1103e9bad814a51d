// Megatron-Core's MoE parallel folding (ParallelPlan::expert_folding): the expert-parallel ranks are
// context- and data-parallel ranks of the attention, so the GPUs are tp·pp·cp·dp; where ep only takes data
// ranks it is the same layout as ep on an axis of its own, and across context ranks it makes layouts like
// NVIDIA's Mixtral 8x22B (tp 2, pp 4, cp 8, ep 8, dp 4 on 256 GPUs) expressible.
#include <doctest/doctest.h>

#include <algorithm>

#include "models/step/layout_rules.hpp"
#include "models/step/memory.hpp"
#include "models/step/step_costs.hpp"
#include "models/step/step_simulator.hpp"
#include "models/workload/layer_ops.hpp"
#include "models/workload/shard.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

// A MoE GPT (16 layers of hidden 2048, 8 experts of 4096, top 2) on `nodes` DGX H100.
StepInput moe_on_h100(std::int64_t nodes) {
  StepInput in;
  in.model = testing::gpt(16, 2048, 16, 4096);
  in.model.experts = 8;
  in.model.top_k = 2;
  in.model.expert_ffn_hidden = 4096;
  in.cluster = testing::dgx_h100(nodes);
  in.training.global_batch = 64;
  return in;
}

// The MoE GPT on 4 DGX H100 (32 GPUs), ep folded over tp·cp·dp as given, ZeRO-1.
StepInput folded_on_32(int tp, int cp, int ep, std::int64_t dp) {
  StepInput in = moe_on_h100(4);
  in.plan.tp = tp;
  in.plan.cp = cp;
  in.plan.ep = ep;
  in.plan.dp = dp;
  in.plan.expert_folding = true;
  in.plan.zero = ZeroStage::optimizer_states;
  return in;
}

}  // namespace

TEST_CASE("folded, ep does not multiply the GPUs, and the batch splits over dp alone") {
  StepInput in = moe_on_h100(4);  // 32 GPUs
  ParallelPlan& p = in.plan;
  p.tp = 2;
  p.cp = 4;
  p.ep = 8;
  p.dp = 4;
  p.expert_folding = true;
  CHECK(p.world_size() == 32);         // 2 · 4 · 4, ep folded
  CHECK(p.data_replicas() == 4);       // dp
  CHECK(p.dense_shard_ranks() == 16);  // dp · cp
  CHECK(p.expert_shard_ranks() == 2);  // dp · cp / ep
  CHECK(layout_rules(in.model, p, in.training, 32).empty());
  const StepPlan plan = make_step_plan(in.model, in.cluster, p, in.training);
  REQUIRE(plan.feasible);
  CHECK(plan.micro_batches == 64 / 4);

  // ep must be a part of cp, or all of cp and a part of dp: 8 = 4 · 2 is; 6 is neither.
  p.ep = 6;
  in.model.experts = 12;
  const auto problems = layout_rules(in.model, p, in.training, 32);
  REQUIRE_FALSE(problems.empty());
  CHECK(problems.front().key == LayoutKey::ep);
}

TEST_CASE("folded over data ranks only, the layout is ep on an axis of its own") {
  // 32 GPUs, tp 2, no pipeline or context parallelism: folded dp 16 with ep 8 holds the same ranks as
  // dp 2 × ep 8 — the same step, the same memory, in both fidelities.
  const StepInput folded = folded_on_32(2, 1, 8, 16);
  StepInput axis = folded;
  axis.plan.dp = 2;
  axis.plan.expert_folding = false;
  for (const Fidelity f : {Fidelity::analytic, Fidelity::event}) {
    CAPTURE(std::string(to_string(f)));
    const StepReport a = simulate_step(folded, f);
    const StepReport b = simulate_step(axis, f);
    REQUIRE(a.feasible);
    CHECK(a.iteration_time == doctest::Approx(b.iteration_time).scale(0).epsilon(1e-12));
    CHECK(a.memory_per_gpu == doctest::Approx(b.memory_per_gpu).scale(0).epsilon(1e-12));
  }
}

TEST_CASE("folded across context ranks, an expert's state is sharded over dp·cp/ep ranks") {
  // tp 2, cp 4, dp 4 on 32 GPUs, ZeRO-1, ep 4 (within the cp group) or 2. Each GPU holds 8/ep experts,
  // their optimizer state sharded over dp·cp/ep ranks: half the experts over half the ranks, so the
  // experts' state per GPU is the same at ep 4 and 2, and so is the dense part (over dp·cp = 16 ranks);
  // the GPU's parameters differ by two experts in each of the 16 layers.
  const StepInput in = folded_on_32(2, 4, 4, 4);
  StepInput two = in;
  two.plan.ep = 2;
  const MemoryEstimate m4 = estimate_memory(in.model, in.plan, in.training, in.cluster.node.gpu);
  const MemoryEstimate m2 = estimate_memory(two.model, two.plan, two.training, two.cluster.node.gpu);
  REQUIRE(m4.fits);
  REQUIRE(m2.fits);
  // One expert of one layer on a tp rank: fc1 2048 × 4096/2 with its bias 4096/2, fc2 4096/2 × 2048 with
  // its bias 2048 (replicated).
  const double expert = 2048.0 * 2048 + 2048 + 2048.0 * 2048 + 2048;
  CHECK(m2.stages[0].params - m4.stages[0].params ==
        doctest::Approx(2 * 16 * expert).scale(0).epsilon(1e-12));
  CHECK(m2.stages[0].memory.optimizer_state ==
        doctest::Approx(m4.stages[0].memory.optimizer_state).scale(0).epsilon(1e-12));
  const StepReport r = simulate_step(in, Fidelity::analytic);
  CHECK(r.feasible);
  CHECK(r.fits);
}

TEST_CASE(
    "experts split over fewer ranks than tp: whole expert matrices, the other tp ranks in the ep group") {
  // tp 2 with sequence parallelism, expert_tp 1, ep 4 folded over (tp/expert_tp = 2) × dp: each GPU holds
  // 8/4 = 2 whole experts (no tp split of their matrices), routes its own T/2 tokens, and needs no tp
  // gather of the slots (an expert lives on one rank).
  StepInput in = moe_on_h100(4);  // 32 GPUs
  in.plan.tp = 2;
  in.plan.dp = 16;
  in.plan.ep = 4;
  in.plan.sequence_parallel = true;
  in.plan.expert_folding = true;
  in.plan.expert_tp = 1;
  CHECK(in.plan.expert_shard_ranks() == 16.0 * 2 / 4);  // dp · tp/expert_tp / ep
  REQUIRE(layout_rules(in.model, in.plan, in.training, 32).empty());
  const Shard sh = shard_of(in.plan, in.training.precision);
  const LayerOps ops = transformer_layer_ops(in.model, sh);
  const auto fc1 =
      std::find_if(ops.forward.begin(), ops.forward.end(), [](const LayerOp& o) { return o.name == "fc1"; });
  REQUIRE(fc1 != ops.forward.end());
  // 4,096 tokens / tp 2 = 2,048 routed to 2 experts each over the 2 local experts: 2,048 rows an expert,
  // the whole width 4,096.
  CHECK(fc1->kernel.n == 4096.0);
  CHECK(fc1->kernel.m == 2048.0 * 2 / 2);
  CHECK(fc1->kernel.groups == 2.0);
  for (const LayerOp& o : ops.forward) CHECK(o.comm.group != CommGroup::expert_tp);
  const auto dispatch = std::find_if(ops.forward.begin(), ops.forward.end(),
                                     [](const LayerOp& o) { return o.name == "ep_dispatch"; });
  REQUIRE(dispatch != ops.forward.end());
  CHECK(dispatch->comm.bytes == 2.0 * 2048 * 2 * 2048);  // bf16 · T/tp · top_k · hidden
  // Memory: the 2 local experts of each of the 16 layers whole (fc1 2048 × 4096 + bias, fc2 4096 × 2048
  // + bias), against expert_tp 2 where each GPU holds half of each of them.
  const MemoryEstimate whole = estimate_memory(in.model, in.plan, in.training, in.cluster.node.gpu);
  StepInput halves = in;
  halves.plan.expert_tp = 2;
  halves.plan.ep = 8;  // the same 8 experts over 8 folded ranks of dp, split over tp as the attention
  const MemoryEstimate half =
      estimate_memory(halves.model, halves.plan, halves.training, halves.cluster.node.gpu);
  const double expert_whole = 2048.0 * 4096 + 4096 + 4096.0 * 2048 + 2048;
  const double expert_half = 2048.0 * 2048 + 2048 + 2048.0 * 2048 + 2048;
  CHECK(whole.stages[0].params - half.stages[0].params ==
        doctest::Approx(16 * (2 * expert_whole - 1 * expert_half)).scale(0).epsilon(1e-12));
  const StepReport r = simulate_step(in, Fidelity::analytic);
  CHECK(r.feasible);
}

TEST_CASE("expert_tp below tp needs folding and sequence parallelism, and ep a multiple of tp/expert_tp") {
  StepInput in = moe_on_h100(4);
  ParallelPlan& p = in.plan;
  p.tp = 4;
  p.dp = 2;  // ep an axis of its own: 4 · 4 · 2 = 32 GPUs
  p.ep = 4;
  p.expert_tp = 1;
  p.sequence_parallel = true;
  auto blamed = [&] {
    const auto problems = layout_rules(in.model, p, in.training, 32);
    return problems.empty() ? LayoutKey::parallelism : problems.front().key;
  };
  CHECK(blamed() == LayoutKey::expert_tp);  // not folded
  p.expert_folding = true;
  p.dp = 8;  // folded: 4 · 8 = 32 GPUs
  CHECK(layout_rules(in.model, p, in.training, 32).empty());
  p.sequence_parallel = false;
  CHECK(blamed() == LayoutKey::expert_tp);
  p.sequence_parallel = true;
  p.ep = 2;  // 2 is not a multiple of tp/expert_tp = 4
  CHECK(blamed() == LayoutKey::ep);
  p.ep = 8;
  p.expert_tp = 3;  // does not divide tp 4
  CHECK(blamed() == LayoutKey::expert_tp);
}
