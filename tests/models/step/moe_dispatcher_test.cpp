// Megatron-Core's all-gather MoE token dispatcher (framework.moe_dispatcher: allgather,
// token_dispatcher.py's MoEAllGatherTokenDispatcher): its collectives' bytes derived by hand, against the
// all-to-all dispatcher's; the slots each rank computes; its gather buffer; its group's placement in the
// step, closed form and routed; and the layout rule it brings.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "models/step/layout_rules.hpp"
#include "models/step/step_costs.hpp"
#include "models/step/step_plan.hpp"
#include "models/step/step_simulator.hpp"
#include "models/workload/activation_memory.hpp"
#include "models/workload/layer_ops.hpp"
#include "models/workload/shard.hpp"
#include "tests/support/fixtures.hpp"
#include "topologies/collective_cost.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

constexpr double kS = 2048, kH = 12288, kP = 2;  // GPT-3 175B's sequence and width; bf16

// GPT-3 175B made MoE: 8 experts of its own width (4h, gelu), top `k`.
TransformerSpec gpt3_moe(std::int64_t k) {
  TransformerSpec s = testing::gpt3_175b(Attention::flash);
  s.experts = 8;
  s.top_k = k;
  return s;
}

LayerOp find(const std::vector<LayerOp>& ops, const std::string& name) {
  const auto it = std::find_if(ops.begin(), ops.end(), [&](const LayerOp& o) { return o.name == name; });
  REQUIRE_MESSAGE(it != ops.end(), name);
  return *it;
}

bool has(const std::vector<LayerOp>& ops, const std::string& name) {
  return std::any_of(ops.begin(), ops.end(), [&](const LayerOp& o) { return o.name == name; });
}

long count(const std::vector<LayerOp>& ops, Collective c) {
  return std::count_if(ops.begin(), ops.end(),
                       [c](const LayerOp& o) { return o.communication && o.comm.collective == c; });
}

// The bytes one rank receives in a collective of nccl-tests "size" `bytes` over n ranks (all-gather: the
// n − 1 other ranks' parts of the output; all-to-all: the (n − 1)/n of its slots that leave each rank).
double received(double bytes, double n) {
  return bytes * (n - 1) / n;
}

// A MoE GPT (16 layers of hidden 2048, 8 experts of 4096, top 2) on two DGX H100: tp 8 with sequence
// parallelism inside each node, ep 2 on its own axis across them; buckets after the backward.
StepInput experts_across_nodes() {
  StepInput in;
  in.model = testing::gpt(16, 2048, 16, 4096);
  in.model.experts = 8;
  in.model.top_k = 2;
  in.model.expert_ffn_hidden = 4096;
  in.cluster = testing::dgx_h100(2);
  in.plan.tp = 8;
  in.plan.ep = 2;
  in.plan.sequence_parallel = true;
  in.plan.zero = ZeroStage::none;
  in.plan.overlap_grad_reduce = false;
  in.plan.framework.moe_dispatcher = MoeDispatcher::all_gather;
  in.training.global_batch = 16;
  return in;
}

}  // namespace

TEST_CASE("tp 1, ep 4: each rank gathers the group's 4·T tokens and reduce-scatters their outputs back") {
  // One sequence of T = 2048 tokens per rank, h = 12288, bf16, 8 experts top 2, ep 4 (2 experts a rank).
  // The group gathers G = 4·T tokens: the all-gather's output is 2·G·h bytes, of which a rank receives
  // the other 3·T·h·2; the routing map is G·8 bools and the probabilities G·8 bf16 values. The experts'
  // outputs (G tokens, each a partial sum over the rank's experts) are reduce-scattered back: 2·G·h bytes
  // in. A rank computes the G·2/4 = T·2 slots routed to its experts: the all-to-all dispatcher's count.
  Shard sh;
  sh.ep = 4;
  sh.moe_all_gather = true;
  const TransformerSpec s = gpt3_moe(2);
  const LayerOps ops = transformer_layer_ops(s, sh);
  const double g = 4 * kS;
  const LayerOp gather = find(ops.forward, "ep_dispatch.all_gather");
  CHECK(gather.comm.collective == Collective::all_gather);
  CHECK(gather.comm.group == CommGroup::expert_tp_ep);
  CHECK(gather.comm.bytes == kP * g * kH);
  CHECK(received(gather.comm.bytes, 4) == 3 * kS * kH * kP);
  CHECK(find(ops.forward, "ep_dispatch.map_all_gather").comm.bytes == g * 8);
  CHECK(find(ops.forward, "ep_dispatch.probs_all_gather").comm.bytes == kP * g * 8);
  const LayerOp combine = find(ops.forward, "ep_combine.reduce_scatter");
  CHECK(combine.comm.collective == Collective::reduce_scatter);
  CHECK(combine.comm.bytes == kP * g * kH);
  // Backward: the output gradient gathered, the input's and the probabilities' gradients reduce-scattered.
  CHECK(find(ops.backward, "ep_combine.bwd.all_gather").comm.bytes == kP * g * kH);
  CHECK(find(ops.backward, "ep_dispatch.bwd.reduce_scatter").comm.bytes == kP * g * kH);
  CHECK(find(ops.backward, "ep_dispatch.bwd.probs_reduce_scatter").comm.bytes == kP * g * 8);
  CHECK(count(ops.forward, Collective::all_to_all) == 0);
  CHECK(count(ops.backward, Collective::all_to_all) == 0);
  // fc1 (h → 4h) on T·2 slots, as two grouped experts of T slots each: 2·(2T)·4h·h FLOPs.
  const LayerOp fc1 = find(ops.forward, "fc1");
  CHECK(fc1.kernel.flops == 2 * (2 * kS) * 4 * kH * kH);
  CHECK(fc1.kernel.groups == 2);
  CHECK(fc1.kernel.m == kS);
}

TEST_CASE("the all-gather moves ep/top_k times the all-to-all's bytes: equal at top_k = ep, fewer above") {
  // Per rank and direction, tp 1, ep n: the all-gather receives (n − 1)·T·h·p whatever top_k; the
  // all-to-all sends T·top_k·h·p of which (n − 1)/n leaves the rank. Their ratio is n/top_k.
  Shard all_to_all;
  all_to_all.ep = 4;
  Shard all_gather = all_to_all;
  all_gather.moe_all_gather = true;
  for (const std::int64_t k : {1, 2, 4, 8}) {
    CAPTURE(k);
    const TransformerSpec s = gpt3_moe(k);
    const double a2a = find(transformer_layer_ops(s, all_to_all).forward, "ep_dispatch").comm.bytes;
    const double ag = find(transformer_layer_ops(s, all_gather).forward, "ep_dispatch.all_gather").comm.bytes;
    CHECK(a2a == kP * kS * static_cast<double>(k) * kH);
    CHECK(received(ag, 4) == doctest::Approx(4.0 / static_cast<double>(k) * received(a2a, 4)).epsilon(1e-12));
  }
}

TEST_CASE("tp 8 with sequence parallelism, ep 4: the group is tp × ep, the block gathers nothing over tp") {
  // A rank holds T/8 = 256 tokens; the 8 · 4 = 32 ranks gather G = 32 · 256 = 4·T of them. Without shared
  // experts the block's own sequence-parallel gather and reduce-scatter are gone: the forward keeps the
  // attention's all-gather and reduce-scatter and adds three all-gathers and one reduce-scatter. A rank
  // computes 1/8 of each of its 2 experts' width on the G·2/4 = 2·T slots routed to them, the router
  // only its own 256 tokens.
  Shard sh;
  sh.tp = 8;
  sh.sequence_parallel = true;
  sh.ep = 4;
  sh.moe_all_gather = true;
  const LayerOps ops = transformer_layer_ops(gpt3_moe(2), sh);
  CHECK(find(ops.forward, "ep_dispatch.all_gather").comm.bytes == kP * 4 * kS * kH);
  CHECK(count(ops.forward, Collective::all_gather) == 1 + 3);
  CHECK(count(ops.forward, Collective::reduce_scatter) == 1 + 1);
  CHECK(find(ops.forward, "fc1").kernel.flops == 2 * (2 * kS) * (4 * kH / 8) * kH);
  CHECK(find(ops.forward, "router").kernel.flops == 2 * (kS / 8) * 8 * kH);
  // ep 1 and tp 1: nothing to gather, no collective at all.
  Shard alone;
  alone.moe_all_gather = true;
  const LayerOps local = transformer_layer_ops(gpt3_moe(2), alone);
  CHECK(count(local.forward, Collective::all_gather) == 0);
  CHECK_FALSE(has(local.forward, "ep_combine.reduce_scatter"));
}

TEST_CASE("its activations are the all-to-all dispatcher's, plus one gather buffer per GPU") {
  // The permuted slots are what both dispatchers keep; the gathered tokens go to a buffer kept for the
  // run (use_global_buffer): p · G · h = 2 · (4096/8 · 8 · 4) · 12288 bytes at tp 8 (sequence parallel), ep
  // 4, one sequence of 4,096 tokens.
  ParallelPlan plan;
  plan.tp = 8;
  plan.sequence_parallel = true;
  plan.ep = 4;
  TransformerSpec s = gpt3_moe(2);
  s.seq_len = 4096;
  const StageActivation a2a = stage_activation(s, plan, topo::Precision::bf16, 0, 2, 1);
  plan.framework.moe_dispatcher = MoeDispatcher::all_gather;
  const StageActivation ag = stage_activation(s, plan, topo::Precision::bf16, 0, 2, 1);
  CHECK(ag.per_micro_batch == a2a.per_micro_batch);
  CHECK(a2a.dispatch_buffer == 0);
  CHECK(ag.dispatch_buffer == kP * (4096.0 / 8 * 8 * 4) * kH);
  CHECK(ag.total() == a2a.total() + ag.dispatch_buffer);
  // A last stage of no layers but a multi-token-prediction module runs a MoE layer too: it has the buffer.
  plan.pp = 2;
  s.mtp_layers = 1;
  CHECK(stage_activation(s, plan, topo::Precision::bf16, 1, 0, 2).dispatch_buffer == ag.dispatch_buffer);
  CHECK(stage_activation(s, plan, topo::Precision::bf16, 0, 0, 2).dispatch_buffer == 0);
}

TEST_CASE("the dispatcher's collectives run on the tp × ep ranks as placed: 16 over two nodes") {
  // tp 8 inside each DGX H100, ep 2 across the two: the group is all 16 GPUs, 8 on each node, alone on
  // its NICs, each collective blocking and priced as such.
  const StepInput in = experts_across_nodes();
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  const StepCosts costs = step_costs(in, plan);
  const UnitCost& layer = costs.units.at(0);
  REQUIRE(layer.name == "layer");
  const auto it = std::find_if(layer.forward.begin(), layer.forward.end(),
                               [](const CostPiece& x) { return x.name == "ep_dispatch.all_gather"; });
  REQUIRE(it != layer.forward.end());
  CHECK(it->kind == CostPiece::Kind::collective);
  CHECK(it->group == CommGroup::expert_tp_ep);
  const topo::CommGroup group{16, 8, 2, 1, 1};
  const double bytes = kP * (4096.0 / 8) * 16 * 2048;  // own tokens · tp · ep · h
  CHECK(it->comm ==
        doctest::Approx(topo::collective_time(topo::CollectiveOp::all_gather, bytes, group, in.cluster))
            .epsilon(1e-12));
}

TEST_CASE("routed in the full cluster, the dispatcher's collectives leave the node as flows") {
  // tp 8 inside each DGX H100, ep 2 across the two: the 16-rank group crosses the nodes, so each of its
  // collectives is priced on the uncontended fabric and lowered as flows. The ring's flows over 8 ranks a
  // node and the closed form's tiers differ slightly (a 16-rank all-to-all group, 8 a node, shows the same
  // 1 %): the full cluster stays within 2 % of the collapsed step.
  const StepInput in = experts_across_nodes();
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  const StepCosts costs = step_costs(in, plan, FabricPricing::routed);
  int routed = 0;
  for (const CostPiece& x : costs.units.at(0).forward) {
    if (x.group == CommGroup::expert_tp_ep && !x.routed.empty()) ++routed;
  }
  CHECK(routed == 4);  // the map, probabilities and tokens gathered, the outputs reduce-scattered
  StepOptions o;
  o.mode = StepMode::full_cluster;
  const StepReport every = simulate_step(in, Fidelity::event, o);
  const StepReport collapsed = simulate_step(in, Fidelity::event);
  REQUIRE(every.feasible);
  CHECK(every.step_mode == "full-cluster");
  CHECK(every.iteration_time == doctest::Approx(collapsed.iteration_time).epsilon(0.02));
}

TEST_CASE("under tp > 1 the all-gather dispatcher needs sequence parallelism") {
  StepInput in = experts_across_nodes();
  CHECK(layout_rules(in.model, in.plan, in.training, 16).empty());
  in.plan.sequence_parallel = false;
  const auto problems = layout_rules(in.model, in.plan, in.training, 16);
  REQUIRE(problems.size() == 1);
  CHECK(problems.front().key == LayoutKey::moe_dispatcher);
  CHECK(key_path(problems.front().key) == "framework.moe_dispatcher");
  in.plan.framework.moe_dispatcher = MoeDispatcher::all_to_all;
  CHECK(layout_rules(in.model, in.plan, in.training, 16).empty());
}
