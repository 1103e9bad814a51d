#include "models/step/host_issue.hpp"

#include <doctest/doctest.h>

#include <array>

#include "models/step/step_costs.hpp"
#include "models/step/step_plan.hpp"
#include "models/workload/shard.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

doctest::Approx seconds(double value) {
  return doctest::Approx(value).scale(0);
}

// A MoE GPT (32 experts of width 512, top 2) with ep 16 over 2 DGX A100 nodes: two experts per rank.
StepInput moe_gpt() {
  StepInput in;
  in.model = testing::gpt(4, 1024, 16);
  in.model.experts = 32;
  in.model.top_k = 2;
  in.model.expert_ffn_hidden = 512;
  in.cluster = testing::dgx_a100(2);
  in.plan.ep = 16;
  in.plan.dp = 1;
  in.training.global_batch = 32;
  return in;
}

StepCosts costs_of(const StepInput& in) {
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  return step_costs(in, plan);
}

std::size_t index_of(const std::vector<LayerOp>& ops, const std::string& name) {
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i].name == name) return i;
  FAIL("no op " << name);
  return 0;
}

}  // namespace

TEST_CASE("a stretch issued from a drained queue: each block max(host, gpu), blocks in a row") {
  // One block is the floor, max(host, gpu).
  CHECK(drained_issue_s(std::array<IssuedBlock, 1>{{{2, 3}}}) == 3);
  CHECK(drained_issue_s(std::array<IssuedBlock, 1>{{{3, 2}}}) == 3);
  // Host-bound experts (4 s to issue, 1 s to run), then device-bound attention (1 s, 5 s): the attention
  // cannot start before its first op is issued at 4 s, so 4 + 5 = 9 s, not max(4 + 1, 1 + 5) = 6 s.
  CHECK(drained_issue_s(std::array<IssuedBlock, 2>{{{4, 1}, {1, 5}}}) == 9);
  // The other order overlaps: the device runs 5 s while the host issues 1 + 4 s, then 1 s: 6 s.
  CHECK(drained_issue_s(std::array<IssuedBlock, 2>{{{1, 5}, {4, 1}}}) == 6);
  CHECK(drained_issue_s(std::span<const IssuedBlock>{}) == 0);
}

TEST_CASE("an op's issue: the launch overhead, plus one launch per local expert of a grouped GEMM") {
  Framework fw;
  fw.launch_overhead_s = 20e-6;
  fw.expert_launch_s = 5e-6;
  LayerOp gemm;
  gemm.kernel.kind = OpKind::matmul;
  gemm.kernel.groups = 16;
  CHECK(op_issue_s(gemm, fw) == seconds(20e-6 + 16 * 5e-6));  // 100 us
  gemm.kernel.groups = 1;
  CHECK(op_issue_s(gemm, fw) == seconds(20e-6));
  LayerOp all_to_all;
  all_to_all.communication = true;
  CHECK(op_issue_s(all_to_all, fw) == seconds(20e-6));
  // A memory-bound op whose one call launches 24 kernels from C++ (current scaling's three for each of 8
  // experts): one launch overhead and 24 native launches.
  LayerOp quantize;
  quantize.kernel.kind = OpKind::memory_bound;
  quantize.kernel.groups = 24;
  CHECK(op_issue_s(quantize, fw) == seconds(20e-6 + 24 * 5e-6));
  // A memory-bound op that stands for 30 kernels (a router's) is 30 launches.
  LayerOp router;
  router.kernel.kind = OpKind::memory_bound;
  router.kernel.kernels = 30;
  CHECK(op_issue_s(router, fw) == seconds(30 * 20e-6));
}

TEST_CASE("a dropless MoE layer's forward waits on the host before its token all-to-all") {
  const StepInput in = moe_gpt();
  const LayerOps ops = transformer_layer_ops(in.model, shard_of(in.plan, in.training.precision));
  Framework fw;
  const auto sync = host_sync_index(ops.forward, fw);
  REQUIRE(sync.has_value());
  CHECK(ops.forward[*sync].name == "ep_dispatch");
  CHECK_FALSE(host_sync_index(ops.backward, fw).has_value());  // the counts are on the host already
  fw.moe_host_sync = false;
  CHECK_FALSE(host_sync_index(ops.forward, fw).has_value());
  StepInput dense = in;
  dense.model.experts = 0;
  dense.plan.ep = 1;
  const LayerOps dense_ops =
      transformer_layer_ops(dense.model, shard_of(dense.plan, dense.training.precision));
  CHECK_FALSE(host_sync_index(dense_ops.forward, Framework{}).has_value());
}

TEST_CASE("a MoE layer's forward: from the wait, the ops after it, then the next layer's before it") {
  // 1 ms per launch, far above any kernel of this small layer, and no per-expert launches: the host binds.
  // After the wait the device idles for the first op's issue, then the host issues the n_after − 1 other
  // ops after the wait and the n_before ops before it: n_after + n_before ms in all, as without the wait,
  // the router's other kernels (one op of 30) 30 launches, and the experts' bias (GPT's linear layers have
  // biases) run expert by expert over the 32 / 16 = 2 local experts, 2·2 + 1 = 5 launches in one op.
  StepInput in = moe_gpt();
  in.plan.framework.launch_overhead_s = 1e-3;
  in.plan.framework.expert_launch_s = 0;
  const LayerOps ops = transformer_layer_ops(in.model, shard_of(in.plan, in.training.precision));
  double n = 0;
  for (const LayerOp& op : ops.forward) n += op.communication ? 1 : op.kernel.kernels;
  CHECK(n == static_cast<double>(ops.forward.size()) + 29 + 4);
  const UnitCost host_bound = costs_of(in).units[0];
  CHECK(host_bound.total.forward() == seconds(n * 1e-3));
  REQUIRE(host_bound.forward_issue.sync_piece.has_value());

  // No launch cost at all: the GPU's own time, and the wait costs nothing.
  in.plan.framework.launch_overhead_s = 0;
  const UnitCost free_issue = costs_of(in).units[0];
  double gpu_before = 0, gpu = 0;
  for (std::size_t i = 0; i < free_issue.forward.size(); ++i) {
    REQUIRE(free_issue.forward[i].name != "host_launches");  // nothing waits for the host
    const double t = free_issue.forward[i].compute + free_issue.forward[i].exposed_comm();
    gpu += t;
    if (i < *free_issue.forward_issue.sync_piece) gpu_before += t;
  }
  CHECK(free_issue.total.forward() == seconds(gpu));

  // Under CUDA graphs the ops before the wait are one graph launch (L) and those after it stay eager: with
  // L = 1 ms and n_after ops after the wait, L + max((n_after − 1) L, g_after) then the next layer's
  // graph, max(that + g_before, n_after·L + max(L, g_before)), n_after counted in launches.
  in.plan.framework.launch_overhead_s = 1e-3;
  in.plan.framework.cuda_graphs = true;
  const UnitCost graphs = costs_of(in).units[0];
  double n_after = 0;
  for (std::size_t i = index_of(ops.forward, "ep_dispatch"); i < ops.forward.size(); ++i)
    n_after += ops.forward[i].communication ? 1 : ops.forward[i].kernel.kernels;
  const double g_after = gpu - gpu_before;
  const double f2 = 1e-3 + std::max((n_after - 1) * 1e-3, g_after);
  const double want = std::max(f2 + gpu_before, n_after * 1e-3 + std::max(1e-3, gpu_before));
  CHECK(graphs.total.forward() == seconds(want));
  CHECK(graphs.total.forward() < host_bound.total.forward());
  // Without the wait CUDA graphs lift the host's bound entirely.
  in.plan.framework.moe_host_sync = false;
  CHECK(costs_of(in).units[0].total.forward() == seconds(gpu));
}

TEST_CASE("an update issued tensor by tensor behind a host wait: sum of max(k·L, L + the tensor's share)") {
  // Two tensors of 1000 elements and one of 3000; update kernels of 1 ms shared by elements: 0.2, 0.2 and
  // 0.6 ms. L = 20 us, k = 8 ops a tensor (160 us of issue): max(160, 20 + 200) · 2 + max(160, 20 + 600)
  // = 440 + 620 = 1060 us.
  Framework fw;
  fw.launch_overhead_s = 20e-6;
  fw.optimizer_tensor_ops = 8;
  const std::vector<TensorShape> tensors{{1000, 1, 2}, {3000, 1, 1}};
  CHECK(per_tensor_update_s(tensors, 1e-3, fw) == seconds(1060e-6));
  // Kernels of 0.1 ms: 20, 20 and 60 us, each below its 160 us of issue: 3 · 160 = 480 us.
  CHECK(per_tensor_update_s(tensors, 0.1e-3, fw) == seconds(480e-6));
  // A multi-tensor update, or one under CUDA graphs: the kernels alone.
  fw.cuda_graphs = true;
  CHECK(per_tensor_update_s(tensors, 0.1e-3, fw) == seconds(0.1e-3));
  fw.cuda_graphs = false;
  fw.optimizer_tensor_ops = 0;
  CHECK(per_tensor_update_s(tensors, 0.1e-3, fw) == seconds(0.1e-3));
}

TEST_CASE("a backward that runs a MoE layer's forward again waits where that forward waits") {
  StepInput in = moe_gpt();
  in.plan.recompute = Recompute::full;
  const LayerOps ops = transformer_layer_ops(in.model, shard_of(in.plan, in.training.precision));
  const auto sync = recompute_sync_index(ops.backward, in.plan.framework);
  REQUIRE(sync.has_value());
  CHECK(ops.backward[*sync].name == "recompute.ep_dispatch");
  CHECK_FALSE(recompute_sync_index(ops.forward, in.plan.framework).has_value());  // no op recomputed
  // Recomputing the activation alone re-runs no router and no exchange: nothing to wait for.
  StepInput act = in;
  act.plan.recompute = Recompute::selective;
  act.plan.recompute_modules = static_cast<std::uint8_t>(RecomputeModule::moe_act);
  const LayerOps act_ops = transformer_layer_ops(act.model, shard_of(act.plan, act.training.precision));
  CHECK_FALSE(recompute_sync_index(act_ops.backward, act.plan.framework).has_value());

  // Under CUDA graphs a pass without a wait is its GPU time; with the recomputed forward's wait the
  // backward pays the stretch from it as the forward does: L = 1 ms for the first op after the wait, the
  // n_after − 1 ops after it against their GPU time, then the next layer's recomputed ops before the wait
  // as one graph launch, L + max((n_after − 1) L, g_after) then max(that + g_before, n_after·L + max(L,
  // g_before)).
  in.plan.framework.launch_overhead_s = 1e-3;
  in.plan.framework.expert_launch_s = 0;
  in.plan.framework.cuda_graphs = true;
  const UnitCost graphs = costs_of(in).units[0];
  REQUIRE(graphs.backward_issue.sync_piece.has_value());
  double gpu_before = 0, gpu = 0;
  for (std::size_t i = 0; i < graphs.backward.size(); ++i) {
    if (graphs.backward[i].name == "host_launches") continue;
    const double t = graphs.backward[i].compute + graphs.backward[i].exposed_comm();
    gpu += t;
    if (i < *graphs.backward_issue.sync_piece) gpu_before += t;
  }
  double n_after = 0;
  for (std::size_t i = *sync; i < ops.backward.size(); ++i)
    n_after += ops.backward[i].communication ? 1 : ops.backward[i].kernel.kernels;
  const double g_after = gpu - gpu_before;
  const double f2 = 1e-3 + std::max((n_after - 1) * 1e-3, g_after);
  const double want = std::max(f2 + gpu_before, n_after * 1e-3 + std::max(1e-3, gpu_before));
  CHECK(want > gpu);
  CHECK(graphs.total.backward() == seconds(want));
  // A framework that does not wait (capacity-based dispatch) leaves the graphed backward its GPU time.
  in.plan.framework.moe_host_sync = false;
  CHECK(costs_of(in).units[0].total.backward() == seconds(gpu));
}
