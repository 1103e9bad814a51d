// The full-cluster step with its transfers routed over the cluster graph (step_network.hpp, FabricRoutes):
// where nothing in the fabric is shared it is the collapsed step; where the fabric's links are shared, the
// step pays exactly the share of the most loaded link its flows cross, derived here from the graph's routes
// and the closed form's bandwidth terms.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "models/step/asymmetry.hpp"
#include "models/step/communicators.hpp"
#include "models/step/step_costs.hpp"
#include "models/step/step_plan.hpp"
#include "models/step/step_simulator.hpp"
#include "tests/support/fixtures.hpp"
#include "topologies/cluster_graph.hpp"
#include "topologies/collective_cost.hpp"
#include "topologies/fabric_load.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

StepReport simulate(const StepInput& in, StepMode mode) {
  StepOptions o;
  o.mode = mode;
  return simulate_step(in, Fidelity::event, o);
}

StepReport full(const StepInput& in) {
  return simulate(in, StepMode::full_cluster);
}

// Four DGX A100 nodes, tp 8 inside each, dp 4 across them (one replica per node), no pipeline; gradients
// all-reduced in buckets after the backward (nothing overlaps them), so every bucket's time is exposed and
// the step is the collapsed step plus whatever the fabric adds to the buckets.
StepInput four_replicas() {
  StepInput in = testing::small_gpt_on_a100(4, 8, 1, 4, 16, 2048, 2048);
  in.plan.zero = ZeroStage::none;
  in.plan.overlap_grad_reduce = false;
  return in;
}

// Not rail-optimised: a node's 8 NICs on one leaf of `radix` ports at oversubscription `o`.
void leaves(StepInput& in, int radix, double o) {
  in.cluster.network.rail_optimized = false;
  in.cluster.network.switch_radix = radix;
  in.cluster.network.oversubscription = o;
}

// `in` on a fabric where nothing beyond the NICs is shared (one switch, topo::non_blocking_fabric) whose
// switch takes as long as a leaf-spine-leaf crossing (3 switches' latency): the same α and the closed form's
// uncontended bandwidth, the reference a shared fabric's slowdown is measured from.
StepInput non_blocking(StepInput in) {
  in.cluster = topo::non_blocking_fabric(in.cluster);
  in.cluster.network.switch_latency_s *= 3;
  return in;
}

// The bandwidth terms of the buckets on the one pipeline rank (time − size-independent latency), summed.
double bucket_bandwidth_s(const StepInput& in) {
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  const StepCosts costs = step_costs(in, plan);
  const StageCost& sc = costs.stages.at(0);
  return sc.buckets * (sc.bucket_s - sc.bucket_latency_s);
}

// The most ring flows (GPU k of node n → GPU k of node n + 1, every k and n) that the graph routes over one
// link beyond the NICs, as its routing places them.
int most_flows_on_a_link(const topo::ClusterSpec& cluster) {
  const topo::ClusterGraph g = topo::ClusterGraph::build(cluster);
  const std::int64_t gpn = cluster.gpus_in_use_per_node();
  std::map<topo::LinkIndex, int> load;
  for (std::int64_t n = 0; n < cluster.nodes; ++n) {
    for (std::int64_t k = 0; k < gpn; ++k) {
      const std::int64_t next = ((n + 1) % cluster.nodes) * gpn + k;
      for (topo::LinkIndex l : g.route(g.gpu(n * gpn + k), g.gpu(next))) ++load[l];
    }
  }
  int most = 0;
  for (const auto& [link, flows] : load) most = std::max(most, flows);
  return most;
}

// A MoE GPT (16 layers of hidden 2048, 8 experts of 4096, top 2) on two DGX H100: tp 8 inside each node,
// ep 2 on its own axis across them, so every expert all-to-all and every gradient bucket (the two ep ranks
// hold copies of the dense weights) leaves the node; buckets after the backward, nothing overlaps them.
StepInput experts_across_nodes() {
  StepInput in;
  in.model = testing::gpt(16, 2048, 16, 4096);
  in.model.experts = 8;
  in.model.top_k = 2;
  in.model.expert_ffn_hidden = 4096;
  in.cluster = testing::dgx_h100(2);
  in.plan.tp = 8;
  in.plan.ep = 2;
  in.plan.zero = ZeroStage::none;
  in.plan.overlap_grad_reduce = false;
  in.training.global_batch = 16;
  return in;
}

// The bandwidth terms (time − size-independent latency) of every routed context- or expert-parallel
// collective of one step on pipeline rank 0 (pp 1: every pass runs there), and of its gradient buckets.
double routed_bandwidth_s(const StepInput& in) {
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  const StepCosts costs = step_costs(in, plan, FabricPricing::routed);
  double pass = 0;
  for (const UnitRun& r : costs.chunk_units.at(0)) {
    const UnitCost& u = costs.units.at(static_cast<std::size_t>(r.unit));
    for (const auto* pieces : {&u.forward, &u.backward}) {
      for (const CostPiece& pc : *pieces) {
        for (const RoutedComm& rc : pc.routed) pass += r.count * (rc.seconds - rc.latency_s);
      }
    }
  }
  const StageCost& sc = costs.stages.at(0);
  return static_cast<double>(plan.micro_batches) * pass + sc.buckets * (sc.bucket_s - sc.bucket_latency_s);
}

}  // namespace

TEST_CASE("routed over a fabric where nothing is shared, the full cluster takes the collapsed step") {
  // The fixture's rail-optimised fat-tree holds these nodes under one leaf per rail: every route is GPU,
  // NIC, leaf, NIC, GPU, and no two flows share a link beyond a GPU's own NIC.
  for (ZeroStage zero : {ZeroStage::none, ZeroStage::optimizer_states, ZeroStage::parameters}) {
    StepInput in = testing::small_gpt_on_a100(4, 4, 2, 4, 32, 1024, 1024);
    in.plan.zero = zero;
    const StepReport collapsed = simulate_step(in, Fidelity::event);
    const StepReport every = full(in);
    CAPTURE(static_cast<int>(zero));
    REQUIRE(every.feasible);
    CHECK(collapsed.step_mode == "collapsed");
    CHECK(every.step_mode == "full-cluster");
    CHECK(every.iteration_time == doctest::Approx(collapsed.iteration_time).epsilon(1e-9));
  }
  // A MoE layout whose expert-parallel group folds over the data-parallel ranks: 4 DGX H100, tp 4, ep 4
  // over dp 8 (replica d on GPUs 4d to 4d + 3), so each bucket's expert share is reduced (and under ZeRO 1
  // gathered, under ZeRO-3 gathered and reduce-scattered per layer) over the 2 replicas holding the same
  // expert, d and d + 4, two nodes apart, and its dense share over all 8. Lowered over any other group, the
  // expert flows would not take the time they are priced at. (Where the dense group lowers unlike its
  // closed form — 8 nodes at tp 8 and dp 8, a hierarchical all-reduce — the two modes part by 4 % of the
  // step, with or without an expert reduction: not this test's subject.)
  for (ZeroStage zero : {ZeroStage::none, ZeroStage::optimizer_states, ZeroStage::parameters}) {
    StepInput in;
    in.model = testing::four_expert_moe();
    in.cluster = testing::dgx_h100(4);
    in.plan.tp = 4;
    in.plan.ep = 4;
    in.plan.dp = 8;
    in.plan.expert_folding = true;
    in.plan.zero = zero;
    in.training.global_batch = 64;
    const StepReport collapsed = simulate_step(in, Fidelity::event);
    const StepReport every = full(in);
    CAPTURE(static_cast<int>(zero));
    REQUIRE(every.feasible);
    CHECK(every.step_mode == "full-cluster");
    CHECK(every.iteration_time == doctest::Approx(collapsed.iteration_time).epsilon(1e-9));
  }
}

TEST_CASE("Llama-3 405B on 16,384 H100: the full cluster takes the collapsed step, with a straggler too") {
  // 128 replicas × 16 stages, every transfer routed over the 1:1 rail-optimised fat-tree (D-mod-K): each
  // ring flow and pipeline send has a spine link of its own, so the fabric adds nothing the collapsed step's
  // closed form does not, and every replica keeps the one simulated replica's timeline. With node 1,000
  // (stage 8 of replica 62) at 1.2x the full cluster slows that replica alone and the others wait for it at
  // the data-parallel collectives; the collapsed step prices the slowest replica for all: a synchronous
  // step is the same either way. About 3M tasks each: 5 s of CPU and 0.5 GB for the two full clusters,
  // the largest the tests run.
  const StepInput in = testing::llama3_405b_on_16k_h100();
  const StepReport collapsed = simulate_step(in, Fidelity::event);
  const StepReport every = full(in);
  REQUIRE(every.feasible);
  CHECK(collapsed.step_mode == "collapsed");
  CHECK(every.step_mode == "full-cluster");
  CHECK(every.iteration_time == doctest::Approx(collapsed.iteration_time).epsilon(1e-9));
  StepInput slow = in;
  slow.cluster.stragglers.push_back({1000, 1.2});
  const StepReport slow_collapsed = simulate(slow, StepMode::collapsed);
  const StepReport chosen = simulate_step(slow, Fidelity::event);
  CHECK(chosen.step_mode == "full-cluster");
  CHECK(chosen.iteration_time == doctest::Approx(slow_collapsed.iteration_time).epsilon(1e-9));
  CHECK(chosen.iteration_time > every.iteration_time);
}

TEST_CASE(
    "a whole-matrix optimizer's exchanges are data-parallel collectives: routed as flows, alone the "
    "collapsed step") {
  // Muon's gather and scatter, Shampoo's gradient gather and direction all-gather (distributed_update.hpp)
  // over the sharding group under ZeRO-1, priced and lowered as the gradient buckets are.
  for (OptimizerKind kind : {OptimizerKind::muon, OptimizerKind::shampoo}) {
    StepInput in = testing::small_gpt_on_a100(4, 4, 2, 4, 32, 1024, 1024);
    in.plan.zero = ZeroStage::optimizer_states;
    in.training.optimizer.kind = kind;
    CAPTURE(static_cast<int>(kind));
    const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
    const StepCosts routed = step_costs(in, plan, FabricPricing::routed);
    const StageCost& sc = routed.stages.at(0);
    REQUIRE(sc.optimizer_comm_flows.size() == 2);
    CHECK(sc.optimizer_comm_flows[0].op == topo::CollectiveOp::reduce_scatter);
    CHECK(sc.optimizer_comm_flows[1].op == topo::CollectiveOp::all_gather);
    CHECK(sc.optimizer_comm_flows[1].over == DataGroup::shard);
    CHECK(sc.optimizer_comm_s > sc.optimizer_comm_latency_s);
    const StepReport collapsed = simulate_step(in, Fidelity::event);
    const StepReport every = full(in);
    REQUIRE(every.feasible);
    CHECK(every.iteration_time == doctest::Approx(collapsed.iteration_time).epsilon(1e-9));
    // The update's time (the busiest pipeline rank's) counts its exchanges: kernels, exchanges and the
    // norm's all-reduce of one of the stages.
    const double update = simulate_step(in, Fidelity::analytic).time.optimizer;
    bool one_stage = false;
    for (const StageCost& st : step_costs(in, plan).stages) {
      const double sum = st.optimizer_s + st.optimizer_comm_s + st.grad_norm_s;
      one_stage = one_stage || (st.optimizer_comm_s > 0 && std::abs(update - sum) <= 1e-12 * sum);
    }
    CHECK(one_stage);
  }
}

TEST_CASE(
    "routed HSDP and per-tensor ZeRO-3 collectives, lowered one after another, alone: the collapsed step") {
  // HSDP (sharding groups of 2 replicas: a reduce-scatter over each, then an all-reduce over each shard's
  // 2 replicas) and ZeRO-3 with one gather and one reduce-scatter per parameter tensor: each collective of
  // the list is lowered over its own groups after the one before, so alone their flows take the sum of
  // their bandwidth terms, as the collapsed step prices them.
  StepInput hsdp = testing::small_gpt_on_a100(4, 4, 2, 4, 32, 1024, 1024);
  hsdp.plan.zero = ZeroStage::parameters;
  hsdp.plan.shard_group = 2;
  // Data-parallel ranks outermost (one replica a node, every sharding group and replica pair across nodes
  // on rails of their own), so that no flow shares a link with another.
  hsdp.plan.order = {ParallelAxis::tp, ParallelAxis::cp, ParallelAxis::ep, ParallelAxis::pp,
                     ParallelAxis::dp};
  StepInput per_tensor = testing::small_gpt_on_a100(4, 4, 2, 4, 32, 1024, 1024);
  per_tensor.plan.zero = ZeroStage::parameters;
  per_tensor.plan.framework.gather_per_tensor = true;
  for (const StepInput* in : {&hsdp, &per_tensor}) {
    CAPTURE(in->plan.shard_group);
    const StepReport collapsed = simulate_step(*in, Fidelity::event);
    const StepReport every = full(*in);
    REQUIRE(every.feasible);
    CHECK(every.iteration_time == doctest::Approx(collapsed.iteration_time).epsilon(1e-9));
  }
}

TEST_CASE("routed, ring steps inside a node share NVLink with the pipeline sends: never faster") {
  // tp 2, pp 2, dp 4 on two nodes: replicas 0 and 1 share node 0, so their ring step runs over the
  // NVSwitch links that stage 0's sends to stage 1 also use; the collapsed step prices every ring step at
  // the network's rate on ports of its own.
  for (ZeroStage zero : {ZeroStage::none, ZeroStage::optimizer_states, ZeroStage::parameters}) {
    StepInput in = testing::small_gpt_on_a100(2, 2, 2, 4, 16, 2048, 1024);
    in.plan.zero = zero;
    const StepReport collapsed = simulate_step(in, Fidelity::event);
    const StepReport every = full(in);
    CAPTURE(static_cast<int>(zero));
    // (10 ns: the whole-unit tasks round to the picosecond once where the pieces round each.)
    CHECK(every.iteration_time >= collapsed.iteration_time - 1e-8);
    CHECK(every.iteration_time == doctest::Approx(collapsed.iteration_time).epsilon(0.01));
  }
}

TEST_CASE(
    "an oversubscribed leaf's one uplink is shared by every ring flow leaving it, as the closed form says") {
  // Radix 9 at 8:1 gives each leaf 8 ports down (one node) and 1 up: the 8 ring flows leaving a node (one
  // per GPU) all cross that uplink and the next leaf's one downlink, at 1/8 of the rate each, so every
  // bucket's bandwidth term takes 8 times as long. The collapsed step's busiest link says the same
  // (shared_links.hpp). Against the non-blocking fabric.
  StepInput eight_to_one = four_replicas();
  leaves(eight_to_one, 9, 8.0);
  const StepInput uncontended = non_blocking(eight_to_one);
  const double bandwidth = bucket_bandwidth_s(uncontended);
  REQUIRE(bandwidth > 0);
  const StepReport reference = simulate_step(uncontended, Fidelity::event);
  const StepReport routed = full(eight_to_one);
  const StepReport closed_form = simulate_step(eight_to_one, Fidelity::event);
  CHECK(routed.iteration_time - reference.iteration_time == doctest::Approx(7 * bandwidth).epsilon(1e-6));
  CHECK(routed.iteration_time == doctest::Approx(closed_form.iteration_time).epsilon(1e-6));
}

TEST_CASE("D-mod-K: a 1:1 fat-tree carries every ring flow on a spine link of its own, in both modes") {
  // 1:1 at radix 16: each node on its own leaf with 8 uplinks, one to each of 8 spines. The flows leaving a
  // node go to NICs 0..7 of the next node, ports 0..7 of its leaf, so destination-based routing takes them
  // up spines 0..7: no link carries two (counted from the graph's routes), and the step is the non-blocking
  // fabric's in both modes.
  StepInput in = four_replicas();
  leaves(in, 16, 1.0);
  CHECK(most_flows_on_a_link(in.cluster) == 1);
  const StepReport reference = simulate_step(non_blocking(in), Fidelity::event);
  CHECK(full(in).iteration_time == doctest::Approx(reference.iteration_time).epsilon(1e-6));
  CHECK(simulate_step(in, Fidelity::event).iteration_time ==
        doctest::Approx(reference.iteration_time).epsilon(1e-6));
}

TEST_CASE("two ring flows routed up one spine link split it, and both modes wait for it") {
  // 2:1 at radix 12: 8 ports down (one node per leaf) and 4 up. The 8 flows leaving a node go to ports
  // 0..7 of the next leaf, up spines port mod 4: two flows on each uplink, at half their rate each, so every
  // bucket's bandwidth term takes twice as long, in the full cluster and in the collapsed step.
  StepInput in = four_replicas();
  leaves(in, 12, 2.0);
  CHECK(most_flows_on_a_link(in.cluster) == 2);
  const StepInput uncontended = non_blocking(in);
  const StepReport reference = simulate_step(uncontended, Fidelity::event);
  const StepReport routed = full(in);
  CHECK(routed.iteration_time - reference.iteration_time ==
        doctest::Approx(bucket_bandwidth_s(uncontended)).epsilon(1e-6));
  CHECK(simulate_step(in, Fidelity::event).iteration_time ==
        doctest::Approx(routed.iteration_time).epsilon(1e-6));
}

TEST_CASE("a degraded NIC is a slower link: the rings through it run at its pace, as the closed form says") {
  // Node 1's NIC 3 at half its rate: GPU 3 of node 0 sends to it and GPU 3 of node 1 sends from it, so two
  // replicas' buckets take twice their bandwidth term; the collapsed step prices the same through
  // degraded_nic_slowdowns.
  StepInput in = four_replicas();
  const StepReport healthy = simulate_step(in, Fidelity::event);
  in.cluster.degraded.push_back({1, 3, in.cluster.nic_bytes_per_s() / 2});
  const StepReport routed = full(in);
  const StepReport closed_form = simulate(in, StepMode::collapsed);
  StepInput undegraded = in;
  undegraded.cluster.degraded.clear();
  CHECK(routed.iteration_time - healthy.iteration_time ==
        doctest::Approx(bucket_bandwidth_s(undegraded)).epsilon(1e-6));
  CHECK(routed.iteration_time == doctest::Approx(closed_form.iteration_time).epsilon(1e-6));
  CHECK(closed_form.step_mode == "collapsed");
}

TEST_CASE(
    "by default the event fidelity simulates the full cluster where a NIC is degraded, else collapses") {
  StepInput in = four_replicas();
  CHECK(simulate_step(in, Fidelity::event).step_mode == "collapsed");
  CHECK(simulate_step(in, Fidelity::analytic).step_mode == "closed-form");
  in.cluster.degraded.push_back({1, 3, in.cluster.nic_bytes_per_s() / 2});
  const StepReport chosen = simulate_step(in, Fidelity::event);
  CHECK(chosen.step_mode == "full-cluster");
  CHECK(chosen.iteration_time == doctest::Approx(full(in).iteration_time).epsilon(1e-12));
  CHECK(simulate_step(in, Fidelity::analytic).step_mode == "closed-form");
}

TEST_CASE("a straggler slows only its own replica in the full cluster; the step waits for it as collapsed") {
  // Node 2 at 1.2x holds replica 2 (one replica per node): the full cluster slows that replica's kernels
  // alone, and the others wait for it at the data-parallel collectives; the collapsed step prices the
  // slowest replica for all. A synchronous step is the same either way, and its breakdown is the
  // straggler's: 1.2 times the kernels.
  StepInput in = four_replicas();
  const StepReport even = simulate(in, StepMode::collapsed);
  in.cluster.stragglers.push_back({2, 1.2});
  const StepReport collapsed = simulate(in, StepMode::collapsed);
  const StepReport chosen = simulate_step(in, Fidelity::event);
  CHECK(chosen.step_mode == "full-cluster");
  CHECK(chosen.iteration_time == doctest::Approx(collapsed.iteration_time).epsilon(1e-7));
  CHECK(chosen.time.compute == doctest::Approx(1.2 * even.time.compute).epsilon(1e-9));
  CHECK(chosen.iteration_time > even.iteration_time);
}

TEST_CASE("full_cluster_gpus places each simulated rank where the placement puts it") {
  // tp 2, pp 2, dp 2 on one node of 8 GPUs: ranks tp fastest, then dp, then pp (the default order,
  // Megatron-Core's tp-cp-ep-dp-pp), so rank = tp + 2·dp + 4·pp; the list runs dp, then tp, then pp.
  StepInput in = testing::small_gpt_on_a100(1, 2, 2, 2, 8);
  CHECK(full_cluster_gpus(in.plan, in.cluster) == std::vector<std::int64_t>{0, 4, 1, 5, 2, 6, 3, 7});
  // With the pipeline inside the data-parallel replicas: rank = tp + 2·pp + 4·dp.
  in.plan.order = {ParallelAxis::tp, ParallelAxis::cp, ParallelAxis::ep, ParallelAxis::pp, ParallelAxis::dp};
  CHECK(full_cluster_gpus(in.plan, in.cluster) == std::vector<std::int64_t>{0, 2, 1, 3, 4, 6, 5, 7});
}

TEST_CASE(
    "routed, context- and expert-parallel traffic leaving the node alone on its routes: the collapsed step") {
  // cp 2 across two DGX A100 (tp 8 fills a node), and the MoE model's ep 2 across two DGX H100: on the
  // fixtures' rail-optimised fat-trees every exchange joins GPU k of one node to GPU k of the other under
  // rail k's leaf, so no flow shares a link, and each takes its closed-form time on the uncontended fabric.
  // (The cp ranks hold copies of the gradients: their buckets cross the nodes too, after the backward, so
  // that they meet no exchange; under the backward they would share the NICs with them, which the
  // collapsed step, pricing the exchanges as busy tasks, does not see.)
  StepInput cp = testing::small_gpt_on_a100(2, 8, 1, 1, 8, 1024, 8192);
  cp.plan.cp = 2;
  cp.plan.zero = ZeroStage::none;
  cp.plan.overlap_grad_reduce = false;
  StepInput ep = experts_across_nodes();
  for (const StepInput* in : {&cp, &ep}) {
    CAPTURE(in->plan.cp);
    REQUIRE(routed_bandwidth_s(*in) > 0);  // something leaves the node
    const StepReport collapsed = simulate_step(*in, Fidelity::event);
    const StepReport every = full(*in);
    REQUIRE(every.feasible);
    CHECK(every.step_mode == "full-cluster");
    CHECK(every.iteration_time == doctest::Approx(collapsed.iteration_time).epsilon(1e-7));
  }
}

TEST_CASE("routed, an 8:1 leaf's one uplink takes 7/8 of the rate from every expert all-to-all crossing it") {
  // Not rail-optimised, radix 9 at 8:1: each node's 8 NICs on a leaf of its own with one uplink to one
  // spine. The 8 flows of each expert all-to-all from node 0 to node 1 (one per tp rank) all cross that
  // uplink and the spine's one link down, at 1/8 of their rate, as do the gradient buckets' ring flows; the
  // reverse direction runs on the other two links alike. So every such collective's bandwidth term takes 8
  // times as long: the step is the same layout on the uncontended fabric plus 7 times the sum of those
  // terms. (The closed form's leaf share says 1/4 for the all-to-all: it counts half its bytes as staying
  // on the leaf.) The collapsed step routes the same all-to-alls and rings and says the same.
  StepInput in = experts_across_nodes();
  leaves(in, 9, 8.0);
  const StepInput uncontended = non_blocking(in);
  const double bandwidth = routed_bandwidth_s(in);
  REQUIRE(bandwidth > 0);
  const StepReport reference = simulate(uncontended, StepMode::collapsed);
  const StepReport routed = full(in);
  CHECK(routed.iteration_time - reference.iteration_time == doctest::Approx(7 * bandwidth).epsilon(1e-6));
  CHECK(simulate(in, StepMode::collapsed).iteration_time ==
        doctest::Approx(routed.iteration_time).epsilon(1e-6));
}

TEST_CASE("the algorithm NCCL picks is the one the step's flows run: NVLS against the ring, by hand") {
  // dp 8 on one DGX H100, tp 1, gradients all-reduced in buckets after the backward. With NVLink SHARP
  // the closed form picks NVLS: base + in_switch_latency + S / (raw · in_switch_fraction) per bucket of S
  // bytes; without it the ring: base + 14 · (α + S/8 / (raw · intra_fraction)). The full cluster lowers
  // each as its flows (through the switch at the in-switch rate, or the ring's) and the step moves by the
  // buckets' difference, derived here from the node's figures. Small-message protocols are turned off so
  // that both run Simple.
  StepInput in = testing::small_gpt_on_a100(1, 1, 1, 8, 16, 1024, 1024);
  in.cluster = testing::dgx_h100(1);
  in.plan.zero = ZeroStage::none;
  in.plan.overlap_grad_reduce = false;
  in.cluster.node.comm.ll_bandwidth_fraction = 1e-3;
  in.cluster.node.comm.ll128_bandwidth_fraction = 1e-3;
  StepInput ring = in;
  ring.cluster.node.in_switch_reduction = false;
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  const StageCost sc = step_costs(in, plan).stages.at(0);
  const double bucket = sc.dp_bytes_per_step / sc.buckets;
  const topo::NodeSpec& node = in.cluster.node;
  const double raw = topo::intra_node_bytes_per_s(node);
  const double nvls_s = node.comm.base_latency_s + node.comm.in_switch_latency_s +
                        bucket / (raw * node.comm.in_switch_bandwidth_fraction);
  const double ring_s = node.comm.base_latency_s +
                        14 * (node.intra_latency_s + bucket / 8 / (raw * node.comm.intra_bandwidth_fraction));
  REQUIRE(nvls_s < ring_s);  // NCCL's choice on this node
  REQUIRE(sc.bucket_s == doctest::Approx(nvls_s).epsilon(1e-12));
  const StepReport with_nvls = full(in);
  const StepReport with_ring = full(ring);
  CHECK(with_ring.iteration_time - with_nvls.iteration_time ==
        doctest::Approx(sc.buckets * (ring_s - nvls_s)).epsilon(1e-6));
  CHECK(with_nvls.iteration_time ==
        doctest::Approx(simulate_step(in, Fidelity::event).iteration_time).epsilon(1e-9));
}
