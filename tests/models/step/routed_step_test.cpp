// The full-cluster step with its transfers routed over the cluster graph (step_network.hpp, FabricRoutes):
// where nothing in the fabric is shared it is the collapsed step; where the fabric's links are shared, the
// step pays exactly the share of the most loaded link its flows cross, derived here from the graph's routes
// and the closed form's bandwidth terms.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "models/step/step_costs.hpp"
#include "models/step/step_plan.hpp"
#include "models/step/step_simulator.hpp"
#include "tests/support/fixtures.hpp"
#include "topologies/cluster_graph.hpp"

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

// The bandwidth terms of the buckets on the one pipeline rank (time − size-independent latency), summed.
double bucket_bandwidth_s(const StepInput& in) {
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  const StepCosts costs = step_costs(in, plan);
  const StageCost& sc = costs.stages.at(0);
  return sc.buckets * (sc.bucket_s - sc.bucket_latency_s);
}

// The most ring flows (GPU k of node n → GPU k of node n + 1, every k and n) that the graph routes over one
// link, as ECMP places them.
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
  // bucket's bandwidth term takes 8 times as long. The closed form's leaf share says the same:
  // min(1, up / (down · leaves/nodes)) = 1/8. Against a 1:1 fabric of 8 uplinks (radix 16; the flows
  // there may meet on a spine link, so the reference is the collapsed step, which prices it uncontended).
  StepInput one_to_one = four_replicas();
  leaves(one_to_one, 16, 1.0);
  StepInput eight_to_one = four_replicas();
  leaves(eight_to_one, 9, 8.0);
  const double bandwidth = bucket_bandwidth_s(one_to_one);
  REQUIRE(bandwidth > 0);
  const StepReport reference = simulate_step(one_to_one, Fidelity::event);
  const StepReport routed = full(eight_to_one);
  const StepReport closed_form = simulate_step(eight_to_one, Fidelity::event);
  CHECK(routed.iteration_time - reference.iteration_time == doctest::Approx(7 * bandwidth).epsilon(1e-6));
  CHECK(routed.iteration_time == doctest::Approx(closed_form.iteration_time).epsilon(1e-6));
}

TEST_CASE("ECMP: ring flows hashed onto one spine link split it, and the step waits for the most loaded") {
  // 1:1 at radix 16: each node on its own leaf with 8 uplinks, one to each of 8 spines; the 8 flows leaving
  // a node are spread over them by the routes' hash, and some meet. Each replica's flows share links only
  // with each other (a leaf holds one node and the ring goes to the next), they are equal and start
  // together, so a replica's bucket takes the most loaded of its links times the bandwidth term, and the
  // slowest replica sets the step.
  StepInput in = four_replicas();
  leaves(in, 16, 1.0);
  const int most = most_flows_on_a_link(in.cluster);
  REQUIRE(most > 1);  // this layout's hash does collide (else the case tests nothing)
  const StepReport collapsed = simulate_step(in, Fidelity::event);
  const StepReport routed = full(in);
  CHECK(routed.iteration_time - collapsed.iteration_time ==
        doctest::Approx((most - 1) * bucket_bandwidth_s(in)).epsilon(1e-6));
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
  // tp 2, pp 2, dp 2 on one node of 8 GPUs: ranks tp fastest, then pp, then dp (the default order), so
  // rank = tp + 2·pp + 4·dp; the list runs dp, then tp, then pp.
  StepInput in = testing::small_gpt_on_a100(1, 2, 2, 2, 8);
  const std::vector<std::int64_t> gpus = full_cluster_gpus(in.plan, in.cluster);
  CHECK(gpus == std::vector<std::int64_t>{0, 2, 1, 3, 4, 6, 5, 7});
}
