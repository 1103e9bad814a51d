// The step's price of a MoE block's expert-parallel all-to-all (expert_all_to_all_estimate) is the one every
// fabric pricing uses: the closed form, the event fidelity's shared links and the routed full cluster.
#include "models/step/unit_pricing.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "models/step/step_costs.hpp"
#include "models/step/step_plan.hpp"
#include "tests/support/fixtures.hpp"
#include "topologies/collective_cost.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

// A MoE GPT (4 layers of hidden 2048, 64 experts of 1024, top 8, force-balanced) on one DGX H100: ep 8
// over its 8 GPUs, micro-batch 1 of 4,096 tokens, bf16.
StepInput experts_in_one_node(MoeDispatcher dispatcher) {
  StepInput in;
  in.model = testing::gpt(4, 2048, 16, 4096);
  in.model.experts = 64;
  in.model.top_k = 8;
  in.model.expert_ffn_hidden = 1024;
  in.cluster = testing::dgx_h100(1);
  in.plan.ep = 8;
  in.plan.dp = 1;
  in.plan.zero = ZeroStage::none;
  in.plan.framework.moe_dispatcher = dispatcher;
  in.training.global_batch = 8;
  in.training.precision = Precision::bf16;
  return in;
}

double dispatch_seconds(const StepInput& in, FabricPricing pricing) {
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE_MESSAGE(plan.feasible, plan.reason);
  const StepCosts costs = step_costs(in, plan, pricing);
  const auto& forward = costs.units.at(0).forward;
  const auto it = std::find_if(forward.begin(), forward.end(),
                               [](const CostPiece& x) { return x.name == "ep_dispatch"; });
  REQUIRE(it != forward.end());
  return it->comm;
}

}  // namespace

TEST_CASE(
    "inside one node HybridEP's dispatch is the all-to-all of 1 - (7/8)^8 of the slots, at every pricing") {
  // Per rank 4,096 tokens · 8 slots · 2,048 elements · 2 bytes = 134,217,728 bytes of slots. Token-based, a
  // token goes once to each of its distinct destination GPUs, 8 · (1 − (7/8)^8) of them with its own: an
  // all-to-all of 4,096 · 2,048 · 2 · 8 · (1 − (7/8)^8) = 134,217,728 · 0.656391084 bytes over the node.
  const double slots = 4096.0 * 8 * 2048 * 2;
  const topo::CommGroup node{8, 8, 1, 1, 1};
  const StepInput token = experts_in_one_node(MoeDispatcher::hybridep);
  const StepInput plain = experts_in_one_node(MoeDispatcher::all_to_all);
  const double expected =
      topo::collective_time(topo::CollectiveOp::all_to_all, slots * 0.656391084, node, token.cluster);
  for (const FabricPricing pricing :
       {FabricPricing::closed_form, FabricPricing::shared_links, FabricPricing::routed}) {
    CAPTURE(static_cast<int>(pricing));
    CHECK(dispatch_seconds(token, pricing) == doctest::Approx(expected).epsilon(1e-8));
    CHECK(dispatch_seconds(token, pricing) ==
          expert_all_to_all_estimate(slots, {8}, token.plan.framework, node, token.cluster).time_s);
    CHECK(dispatch_seconds(plain, pricing) ==
          doctest::Approx(topo::collective_time(topo::CollectiveOp::all_to_all, slots, node, plain.cluster))
              .epsilon(1e-12));
  }
}

TEST_CASE("DeepEP's NVLink leg moves no more than its SMs copy; HybridEP's and NCCL's are not bounded so") {
  // One DGX H100 given a peer-copy rate of 10 GB/s an SM. DeepEP on 20 SMs copies 200 GB/s: a rank's
  // 8 · (1 − (7/8)^8) = 5.251128671 rows a token, 0.656391084 bytes a byte of slots, take that over 200 GB/s,
  // slower than the link; on 120 SMs (1.2 TB/s) the link sets it, as for HybridEP.
  topo::ClusterSpec cluster = testing::dgx_h100(1);
  cluster.node.gpu.efficiency.sm_peer_copy_bytes_per_s = 10e9;
  const topo::GpuSpec& gpu = cluster.node.gpu;
  const topo::CommGroup node{8, 8, 1, 1, 1};
  const double slots = 4096.0 * 8 * 7168 * 2;
  Framework deepep;
  deepep.moe_dispatcher = MoeDispatcher::deepep;
  deepep.moe_dispatcher_sms = 20;
  Framework hybridep;
  hybridep.moe_dispatcher = MoeDispatcher::hybridep;
  CHECK(dispatcher_copy_bytes_per_s(deepep, gpu) == doctest::Approx(200e9).epsilon(1e-12));
  CHECK(dispatcher_copy_bytes_per_s(hybridep, gpu) == 0);
  CHECK(dispatcher_copy_bytes_per_s(Framework{}, gpu) == 0);
  CHECK(expert_all_to_all_estimate(slots, {8}, deepep, node, cluster).time_s ==
        doctest::Approx(slots * 0.656391084 / 200e9).epsilon(1e-8));
  const double link = expert_all_to_all_estimate(slots, {8}, hybridep, node, cluster).time_s;
  CHECK(link < slots * 0.656391084 / 200e9);
  deepep.moe_dispatcher_sms = 120;
  CHECK(expert_all_to_all_estimate(slots, {8}, deepep, node, cluster).time_s == link);
  // DeepEP's default 20 SMs on a GPU without a measured rate: no bound.
  deepep.moe_dispatcher_sms = 0;
  cluster.node.gpu.efficiency.sm_peer_copy_bytes_per_s = 0;
  CHECK(dispatcher_copy_bytes_per_s(deepep, cluster.node.gpu) == 0);
  CHECK(expert_all_to_all_estimate(slots, {8}, deepep, node, cluster).time_s == link);
}
