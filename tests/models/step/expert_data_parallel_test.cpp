// Expert gradients and parameters over the expert-data-parallel group (Communicators::expert_grad,
// expert_shard): Megatron-Core's world / (pp · ep · expert_tp) ranks holding the same expert shard
// (parallel_state.initialize_model_parallel), over which DistributedDataParallel reduces its expert buffers
// and the distributed optimizer shards and gathers expert parameters. Groups worked out by hand from the
// rank numbering (tp-cp-ep-dp-pp, innermost first; rank r on node r / 8).
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "models/step/communicators.hpp"
#include "models/step/step_costs.hpp"
#include "models/step/step_network.hpp"
#include "models/step/step_plan.hpp"
#include "models/workload/rank_tensors.hpp"
#include "tests/support/fixtures.hpp"
#include "topologies/cluster_graph.hpp"
#include "topologies/collective_cost.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

// 16 GPUs on 2 DGX H100, tp 1, pp 1, cp 1, ZeRO-1: `experts` gelu experts of 1,024 on a two-layer
// h = 512 model without biases, ep `ep` over dp `dp` (folded or on an axis of its own).
StepInput moe_on_16(int experts, int ep, std::int64_t dp, bool folded) {
  StepInput in;
  in.model = testing::four_expert_moe();
  in.model.experts = experts;
  in.model.bias = false;
  in.cluster = testing::dgx_h100(2);
  in.plan.ep = ep;
  in.plan.dp = dp;
  in.plan.expert_folding = folded;
  in.plan.zero = ZeroStage::optimizer_states;
  in.training.global_batch = 64;
  return in;
}

// One expert per rank: 2 layers × (fc1 512×1,024 + fc2 1,024×512).
constexpr double kExpertParamsPerRank = 2.0 * 2 * 512 * 1024;
// bf16 training with the default optimizer (OptimizerSpec::fp32_grads false): weights and gradients both
// 2 bytes an element.
constexpr double kWeightElem = 2;
constexpr double kGradElem = 2;

const StageCost& stage0(const StepInput& in, StepCosts& holder) {
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  holder = step_costs(in, plan, FabricPricing::closed_form);
  return holder.stages[0];
}

}  // namespace

TEST_CASE("folded ep 4 over dp 16: the expert group is the 4 ranks one ep group apart, 2 per node") {
  const StepInput in = moe_on_16(4, 4, 16, true);
  const Communicators g = communicators(in.plan, in.cluster);
  // Ranks are dp ranks; the ep group is ranks 0..3, the ranks holding expert 0 are 0, 4, 8, 12: nodes 0, 0,
  // 1, 1. Dense gradients stay over all 16 (8 on each node).
  CHECK(g.ep.size == 4);
  CHECK(g.expert_grad.size == 4);
  CHECK(g.expert_grad.ranks_per_node == 2);
  CHECK(g.expert_grad.nodes == 2);
  CHECK(g.expert_shard.size == 4);
  // The memory model shards an expert's optimizer state over as many ranks.
  CHECK(static_cast<double>(g.expert_shard.size) == in.plan.expert_shard_ranks());
  CHECK(g.grad.size == 16);
  CHECK(g.grad.ranks_per_node == 8);
}

TEST_CASE("unfolded ep 4 × dp 4: the expert group is the dp ranks, the dense group dp·ep") {
  const StepInput in = moe_on_16(4, 4, 4, false);
  const Communicators g = communicators(in.plan, in.cluster);
  // rank = ep + 4·dp: expert 0's copies on ranks 0, 4, 8, 12, as folded.
  CHECK(g.expert_grad.size == 4);
  CHECK(g.expert_grad.ranks_per_node == 2);
  CHECK(g.expert_grad.nodes == 2);
  CHECK(g.grad.size == 16);
}

TEST_CASE("the expert bytes are each rank's own, reduced and gathered over the expert group") {
  StepCosts holder;
  const StepInput in = moe_on_16(4, 4, 16, true);
  const StageCost& sc = stage0(in, holder);
  CHECK(sc.expert_params == doctest::Approx(kExpertParamsPerRank));
  // Both groups hold more than one rank: every parameter's gradient is reduced and its weight gathered.
  const double reduce_elem = kGradElem;
  const double weight_elem = kWeightElem;
  CHECK(sc.dp_bytes_per_step == doctest::Approx(sc.params * (reduce_elem + weight_elem)));
  // The gather: the dense weights over the 16 ranks and the expert weights over the 4 (closed form).
  const Communicators g = communicators(in.plan, in.cluster);
  const double dense_weights = (sc.params - kExpertParamsPerRank) * weight_elem;
  const double expected =
      topo::estimate_collective(topo::CollectiveOp::all_gather, dense_weights, g.shard, in.cluster).time_s +
      topo::estimate_collective(topo::CollectiveOp::all_gather, kExpertParamsPerRank * weight_elem,
                                g.expert_shard, in.cluster)
          .time_s;
  CHECK(sc.param_gather_s == doctest::Approx(expected));
}

TEST_CASE("with ep = dp no rank shares an expert: no expert reduction, no expert gather") {
  StepCosts holder;
  const StepInput in = moe_on_16(16, 16, 16, true);
  const Communicators g = communicators(in.plan, in.cluster);
  CHECK(g.expert_grad.size == 1);
  CHECK(g.expert_shard.size == 1);
  const StageCost& sc = stage0(in, holder);
  CHECK(sc.expert_params == doctest::Approx(kExpertParamsPerRank));
  const double dense = sc.params - kExpertParamsPerRank;
  const double reduce_elem = kGradElem;
  const double weight_elem = kWeightElem;
  CHECK(sc.dp_bytes_per_step == doctest::Approx(dense * (reduce_elem + weight_elem)));
  CHECK(sc.param_gather_s ==
        doctest::Approx(topo::estimate_collective(topo::CollectiveOp::all_gather, dense * weight_elem,
                                                  g.shard, in.cluster)
                            .time_s));
}

TEST_CASE("folded over context and data ranks: the expert group is what ep leaves of cp × dp") {
  // cp 4, ep 2 over dp 4: rank = cp + 4·dp; the ep group is cp ranks 0, 1, so expert 0's copies are the
  // other half of cp with every dp rank: 0, 2, 4, …, 14, 4 on each node.
  StepInput in = moe_on_16(4, 2, 4, true);
  in.plan.cp = 4;
  Communicators g = communicators(in.plan, in.cluster);
  CHECK(g.expert_grad.size == 8);
  CHECK(g.expert_grad.ranks_per_node == 4);
  CHECK(g.expert_grad.nodes == 2);
  CHECK(static_cast<double>(g.expert_shard.size) == in.plan.expert_shard_ranks());
  // cp 2, ep 4 over dp 8: ep takes all of cp and dp ranks 0, 1 (rank = cp + 2·dp: ranks 0..3); the copies
  // are dp ranks 0, 2, 4, 6: ranks 0, 4, 8, 12, 2 on each node.
  in.plan.cp = 2;
  in.plan.ep = 4;
  in.plan.dp = 8;
  g = communicators(in.plan, in.cluster);
  CHECK(g.expert_grad.size == 4);
  CHECK(g.expert_grad.ranks_per_node == 2);
  CHECK(g.expert_grad.nodes == 2);
  CHECK(static_cast<double>(g.expert_shard.size) == in.plan.expert_shard_ranks());
}

TEST_CASE("HSDP: an expert's shard is what ep leaves of one sharding group, its replicas the others") {
  // dp 16 in sharding groups of 8, ep 4: expert 0's copies in group 0 are ranks 0, 4; with the other
  // group's, 0, 4, 8, 12.
  StepInput in = moe_on_16(4, 4, 16, true);
  in.plan.shard_group = 8;
  const Communicators g = communicators(in.plan, in.cluster);
  CHECK(g.expert_shard.size == 2);
  CHECK(g.expert_shard.nodes == 1);
  CHECK(static_cast<double>(g.expert_shard.size) == in.plan.expert_shard_ranks());
  CHECK(g.expert_grad.size == 4);
  CHECK(g.expert_grad.nodes == 2);
  CHECK(g.replica.size == 2);
}

namespace {

// The full cluster's expert-data-parallel groups of `in` on pipeline rank 0 (step_network.hpp), as the
// routed lowering lists them.
std::vector<std::vector<std::int64_t>> full_cluster_groups(const StepInput& in, DataGroup over) {
  FabricRoutes routes;
  routes.graph = std::make_shared<const topo::ClusterGraph>(topo::ClusterGraph::build(in.cluster));
  routes.gpus = full_cluster_gpus(in.plan, in.cluster);
  routes.tp = in.plan.tp;
  routes.ep = in.plan.ep_axis();
  routes.shard = static_cast<int>(in.plan.dp_shard());
  routes.expert_tp = in.plan.expert_tensor_parallel();
  routes.folded_ep = in.plan.expert_folding ? in.plan.ep : 1;
  const int dp = static_cast<int>(in.plan.dp);
  const StepNetwork net(in.cluster, StepCosts{}, StepLayout{dp, 1, dp}, true, routes);
  auto groups = net.data_parallel_groups(0, over);
  std::sort(groups.begin(), groups.end());
  return groups;
}

using Groups = std::vector<std::vector<std::int64_t>>;

}  // namespace

TEST_CASE("the full cluster's expert groups are the GPUs holding the same expert shard, worked by hand") {
  SUBCASE("folded ep 4 over dp 16: GPU r holds expert r mod 4, its copies 4 apart") {
    const StepInput in = moe_on_16(4, 4, 16, true);
    const Groups expected{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}};
    CHECK(full_cluster_groups(in, DataGroup::expert_gradient) == expected);
    CHECK(full_cluster_groups(in, DataGroup::expert_shard) == expected);
  }
  SUBCASE("unfolded ep 4 × dp 4: GPU e + 4d holds expert e, its copies the same e of every replica") {
    const StepInput in = moe_on_16(4, 4, 4, false);
    CHECK(full_cluster_groups(in, DataGroup::expert_gradient) ==
          Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}});
  }
  SUBCASE("tp 2, ep 4 folded over dp 8: GPU 2d + t holds expert d mod 4's tp shard t") {
    StepInput in = moe_on_16(4, 4, 8, true);
    in.plan.tp = 2;
    CHECK(full_cluster_groups(in, DataGroup::expert_gradient) ==
          Groups{{0, 8}, {1, 9}, {2, 10}, {3, 11}, {4, 12}, {5, 13}, {6, 14}, {7, 15}});
  }
  SUBCASE("expert_tp 1 under tp 2: ep takes both tp ranks and dp ranks 0, 1; copies 4 apart") {
    StepInput in = moe_on_16(4, 4, 8, true);
    in.plan.tp = 2;
    in.plan.expert_tp = 1;
    in.plan.sequence_parallel = true;
    // GPU 2d + t sits at x = t + 2d of (tp/expert_tp) × dp: its expert is x mod 4.
    CHECK(full_cluster_groups(in, DataGroup::expert_gradient) ==
          Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}});
  }
  SUBCASE("HSDP, sharding groups of 8: an expert's shard is 2 GPUs of one group, its copies 4 of both") {
    StepInput in = moe_on_16(4, 4, 16, true);
    in.plan.shard_group = 8;
    CHECK(full_cluster_groups(in, DataGroup::expert_shard) ==
          Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}, {8, 12}, {9, 13}, {10, 14}, {11, 15}});
    CHECK(full_cluster_groups(in, DataGroup::expert_gradient) ==
          Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}});
  }
}

TEST_CASE("routed, a bucket's expert share is listed over the expert group, its dense share over all") {
  const StepInput in = moe_on_16(4, 4, 16, true);
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  const StepCosts costs = step_costs(in, plan, FabricPricing::routed);
  const StageCost& sc = costs.stages.at(0);
  // ZeRO-1: each bucket reduce-scatters its dense share over the 16 ranks and its expert share over the 4
  // holding the same expert; the updated weights are gathered the same way.
  REQUIRE(sc.bucket_flows.size() == 2);
  CHECK(sc.bucket_flows[0].over == DataGroup::shard);
  CHECK(sc.bucket_flows[1].over == DataGroup::expert_shard);
  CHECK(sc.bucket_flows[1].op == topo::CollectiveOp::reduce_scatter);
  const double reduce_elem = kGradElem;
  CHECK(sc.bucket_flows[1].bytes == doctest::Approx(kExpertParamsPerRank * reduce_elem / sc.buckets));
  REQUIRE(sc.param_gather_flows.size() == 2);
  CHECK(sc.param_gather_flows[1].over == DataGroup::expert_shard);
  CHECK(sc.param_gather_flows[1].bytes == doctest::Approx(kExpertParamsPerRank * kWeightElem));
}

TEST_CASE(
    "ZeRO-3: a MoE layer's experts are gathered and reduce-scattered over the expert group, the rest over "
    "all") {
  // torchtitan's apply_fsdp shards the routed experts as a unit of their own over the expert-data-parallel
  // mesh (fully_shard(moe.experts) on edp_mesh when ep > 1): per MoE layer one gather and one
  // reduce-scatter of the block over the 16 ranks, and one of the experts over the 4 that hold the same one.
  StepInput in = moe_on_16(4, 4, 16, true);
  in.plan.zero = ZeroStage::parameters;
  in.plan.framework.gather_host_s = 1e-5;
  in.plan.framework.collective_host_per_rank_s = 1e-6;
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  const Communicators g = communicators(in.plan, in.cluster);
  REQUIRE(g.shard.size == 16);
  REQUIRE(g.expert_shard.size == 4);
  const UnitParameters up = unit_parameters(in.model, in.plan);
  // One expert per rank and layer: fc1 512 × 1,024 and fc2 1,024 × 512.
  constexpr double kExpertParamsPerLayer = 2.0 * 512 * 1024;
  CHECK(up.layer_expert == kExpertParamsPerLayer);
  const double weight_elem = kWeightElem;
  const double expert_bytes = kExpertParamsPerLayer * weight_elem;  // 2,097,152
  const double dense_bytes = (up.layer - kExpertParamsPerLayer) * weight_elem;
  const StepCosts closed = step_costs(in, plan, FabricPricing::closed_form);
  const UnitCost& layer = closed.units.at(0);
  auto gather = [&](double bytes, const topo::CommGroup& group) {
    return topo::estimate_collective(topo::CollectiveOp::all_gather, bytes, group, in.cluster).time_s + 1e-5 +
           1e-6 * static_cast<double>(group.size);
  };
  CHECK(layer.gather_s ==
        doctest::Approx(gather(dense_bytes, g.shard) + gather(expert_bytes, g.expert_shard)));
  // Routed, the two are listed as flows over their own groups, the experts' over the expert shards.
  const StepCosts routed = step_costs(in, plan, FabricPricing::routed);
  const UnitCost& routed_layer = routed.units.at(0);
  REQUIRE(routed_layer.gather_flows.size() == 2);
  CHECK(routed_layer.gather_flows[0].over == DataGroup::shard);
  CHECK(routed_layer.gather_flows[0].bytes == doctest::Approx(dense_bytes));
  CHECK(routed_layer.gather_flows[1].over == DataGroup::expert_shard);
  CHECK(routed_layer.gather_flows[1].bytes == doctest::Approx(expert_bytes));
  REQUIRE(routed_layer.reduce_flows.size() == 2);
  CHECK(routed_layer.reduce_flows[1].op == topo::CollectiveOp::reduce_scatter);
  CHECK(routed_layer.reduce_flows[1].over == DataGroup::expert_shard);
  CHECK(routed_layer.reduce_flows[1].bytes == doctest::Approx(kExpertParamsPerLayer * kGradElem));
}

TEST_CASE(
    "Muon under ZeRO-1: an expert matrix is gathered from, and its update scattered over, the expert group") {
  // Each rank holds one expert per layer, 2 layers × (fc1 512 × 1,024, fc2 1,024 × 512): 4 matrices of
  // 524,288 elements, whose state the distributed optimizer shards over the 4 ranks holding the same
  // expert. With 4 owners each gets one: the busiest owner receives 3/4 of its matrix's fp32 momentum
  // (a reduce-scatter of nccl size 524,288 × 4 B) and sends 3/4 of its bf16 update (an all-gather of
  // 524,288 × 2 B), both over the expert shard.
  StepInput in = moe_on_16(4, 4, 16, true);
  in.training.optimizer.kind = OptimizerKind::muon;
  REQUIRE(in.training.optimizer.state_precision == Precision::fp32);
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  const StepCosts routed = step_costs(in, plan, FabricPricing::routed);
  const StageCost& sc = routed.stages.at(0);
  std::vector<RoutedCollective> expert;
  for (const RoutedCollective& c : sc.optimizer_comm_flows) {
    CHECK((c.over == DataGroup::shard || c.over == DataGroup::expert_shard));
    if (c.over == DataGroup::expert_shard) expert.push_back(c);
  }
  REQUIRE(expert.size() == 2);
  CHECK(expert[0].op == topo::CollectiveOp::reduce_scatter);
  CHECK(expert[0].bytes == doctest::Approx(524288.0 * 4));
  CHECK(expert[1].op == topo::CollectiveOp::all_gather);
  CHECK(expert[1].bytes == doctest::Approx(524288.0 * 2));
  // Closed form: the expert exchanges cost what those two collectives cost over the 4 ranks, 2 a node.
  const Communicators g = communicators(in.plan, in.cluster);
  const StepCosts closed = step_costs(in, plan, FabricPricing::closed_form);
  const double expert_s =
      topo::estimate_collective(topo::CollectiveOp::reduce_scatter, 524288.0 * 4, g.expert_shard, in.cluster)
          .time_s +
      topo::estimate_collective(topo::CollectiveOp::all_gather, 524288.0 * 2, g.expert_shard, in.cluster)
          .time_s;
  double dense_s = 0;
  for (const RoutedCollective& c : sc.optimizer_comm_flows) {
    if (c.over == DataGroup::shard)
      dense_s += topo::estimate_collective(c.op, c.bytes, g.shard, in.cluster).time_s;
  }
  CHECK(closed.stages.at(0).optimizer_comm_s == doctest::Approx(dense_s + expert_s));
}
