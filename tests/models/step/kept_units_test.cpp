#include "models/step/kept_units.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "models/step/step_costs.hpp"
#include "models/step/step_plan.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

StepCosts priced(const StepInput& in) {
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  return step_costs(in, plan);
}

// `in` priced on a thread of its own, which has kept nothing: what the step costs without kept units.
StepCosts priced_alone(const StepInput& in) {
  StepCosts out;
  std::thread([&] { out = priced(in); }).join();
  return out;
}

// Every field of every unit, to the bit (the structs declare no operator==: each is listed here, so a field
// added to UnitCost, CostPiece, PassCost or the routed collectives belongs in these lists).
auto fields(const RoutedCollective& c) {
  return std::tie(c.op, c.bytes, c.algo, c.protocol, c.over);
}
bool same(const RoutedCollective& x, const RoutedCollective& y) {
  return fields(x) == fields(y);
}
bool same(const RoutedComm& x, const RoutedComm& y) {
  return x.group == y.group && same(x.flows, y.flows) && x.seconds == y.seconds && x.latency_s == y.latency_s;
}
bool same(const CostPiece& x, const CostPiece& y) {
  return std::tie(x.kind, x.group, x.compute, x.weight, x.comm, x.name, x.comm_name) ==
             std::tie(y.kind, y.group, y.compute, y.weight, y.comm, y.name, y.comm_name) &&
         std::ranges::equal(x.routed, y.routed, [](const auto& a, const auto& b) { return same(a, b); });
}
auto fields(const PassCost& p) {
  return std::tie(p.forward_compute, p.forward_comm, p.backward_compute, p.backward_comm, p.weight_compute,
                  p.forward_ep_comm, p.backward_ep_comm, p.forward_alone, p.backward_alone);
}
auto fields(const UnitCost::PassIssue& i) {
  return std::tie(i.host_s, i.sync_piece, i.before_sync_s);
}
auto scalars(const UnitCost& u) {
  return std::tie(u.name, u.gather_s, u.gather_latency_s, u.reduce_s, u.reduce_latency_s, u.routes_pieces,
                  u.forward_alone_s, u.backward_alone_s, u.forward_alone_kernels_s,
                  u.backward_alone_kernels_s);
}
bool same(const UnitCost& x, const UnitCost& y);
template <class T>
bool same_list(const std::vector<T>& x, const std::vector<T>& y) {
  return std::ranges::equal(x, y, [](const T& a, const T& b) { return same(a, b); });
}
bool same(const UnitCost& x, const UnitCost& y) {
  return scalars(x) == scalars(y) && fields(x.total) == fields(y.total) &&
         fields(x.forward_issue) == fields(y.forward_issue) &&
         fields(x.backward_issue) == fields(y.backward_issue) && same_list(x.forward, y.forward) &&
         same_list(x.backward, y.backward) && same_list(x.gather_flows, y.gather_flows) &&
         same_list(x.reduce_flows, y.reduce_flows);
}
bool same_units(const StepCosts& a, const StepCosts& b) {
  return same_list(a.units, b.units);
}

// GPT-3 175B on 64 A100 at tp 4, cp 2 (so that the context-parallel ring has a group to place), pp 8.
StepInput base() {
  StepInput in = testing::gpt3_175b_on_1024_a100();
  in.cluster = testing::dgx_a100(8);
  in.plan.tp = 4;
  in.plan.cp = 2;
  in.plan.pp = 8;
  in.plan.dp = 1;
  return in;
}

}  // namespace

TEST_CASE("a step priced after another that differs in what its units are priced from gets its own units") {
  // Each change alters the units (checked against the base): were it missing from what the kept units are
  // matched on, the second step would get the first one's.
  const std::vector<std::pair<std::string, std::function<void(StepInput&)>>> changes = {
      {"model.vocab (the embedding and head)", [](StepInput& in) { in.model.vocab *= 2; }},
      {"model.seq_len", [](StepInput& in) { in.model.seq_len /= 2; }},
      {"cluster.node.gpu.hbm_bytes_per_s", [](StepInput& in) { in.cluster.node.gpu.hbm_bytes_per_s /= 2; }},
      {"cluster.node.intra_bytes_per_s", [](StepInput& in) { in.cluster.node.intra_bytes_per_s /= 4; }},
      {"training.precision", [](StepInput& in) { in.training.precision = topo::Precision::fp32; }},
      {"plan.recompute", [](StepInput& in) { in.plan.recompute = Recompute::full; }},
      {"plan.micro_batch", [](StepInput& in) { in.plan.micro_batch = 2; }},
      {"plan.sequence_parallel", [](StepInput& in) { in.plan.sequence_parallel = false; }},
      {"plan.framework.fused_elementwise",
       [](StepInput& in) { in.plan.framework.fused_elementwise = !in.plan.framework.fused_elementwise; }},
      // The same shard, the cp ring placed across nodes: only the groups differ.
      {"plan.order (cp outermost)",
       [](StepInput& in) {
         in.plan.order = {ParallelAxis::tp, ParallelAxis::ep, ParallelAxis::dp, ParallelAxis::pp,
                          ParallelAxis::cp};
       }},
  };
  const StepInput first = base();
  const StepCosts first_alone = priced_alone(first);
  for (const auto& [what, change] : changes) {
    CAPTURE(what);
    StepInput second = first;
    change(second);
    const StepCosts want = priced_alone(second);
    REQUIRE(!same_units(want, first_alone));  // the change matters to the units
    (void)priced(first);                      // kept on this thread
    CHECK(same_units(priced(second), want));
  }
}

TEST_CASE("a step whose plan differs only where its groups run gets the units of those groups") {
  // dp inside cp: one replica puts the cp pair on one node (ranks 0 and 4), two replicas put it on two
  // (ranks 0 and 8). The plans differ only in pp and dp, which the units do not read, so the groups alone
  // tell the two steps apart.
  StepInput first = base();
  first.plan.order = {ParallelAxis::tp, ParallelAxis::dp, ParallelAxis::cp, ParallelAxis::ep,
                      ParallelAxis::pp};
  StepInput second = first;
  second.plan.pp = 4;
  second.plan.dp = 2;
  REQUIRE(units_plan(first.plan) == units_plan(second.plan));
  const StepCosts want = priced_alone(second);
  REQUIRE(!same_units(want, priced_alone(first)));
  (void)priced(first);
  CHECK(same_units(priced(second), want));
}

TEST_CASE("steps that differ only in what units do not read share them, and price as they do alone") {
  const StepInput first = base();
  StepInput second = first;
  second.plan.pp = 4;
  second.plan.dp = 2;
  second.plan.zero = ZeroStage::parameters;
  second.plan.schedule = Schedule::interleaved;
  second.plan.virtual_stages = 3;
  second.plan.framework.reshard_after_forward = false;
  second.plan.bucket_bytes = 1e6;
  CHECK(units_plan(first.plan) == units_plan(second.plan));
  (void)priced(first);
  const StepCosts shared = priced(second);
  const StepCosts alone = priced_alone(second);
  CHECK(same_units(shared, alone));
  // Kept for the first step, the units are the same set.
  CHECK(&kept_units(first, communicators(first.plan, first.cluster)) ==
        &kept_units(second, communicators(second.plan, second.cluster)));
}

TEST_CASE("MoE steps whose expert-parallel group alone runs elsewhere get their own units") {
  // Four experts at ep 2, tp 1, cp 1 on 2 DGX A100, dp inside ep: rank = dp index + dp · ep index. At dp 4
  // (pp 2) the ep pair is ranks 0 and 4, one node; at dp 8 (pp 1) it is ranks 0 and 8, two nodes. The
  // plans differ only in pp and dp, which the units do not read; the tp, cp and expert_tp groups are single
  // ranks either way (the cp pair is the same pair either way), and expert_tp_ep is expert_tp (1) × ep, the
  // ep pair again: only where the ep pair runs tells the two steps apart, so the units kept for the first
  // must not serve the second.
  StepInput first;
  first.model = testing::four_expert_moe();
  first.cluster = testing::dgx_a100(2);
  first.plan.ep = 2;
  first.plan.dp = 4;
  first.plan.pp = 2;
  first.plan.order = {ParallelAxis::tp, ParallelAxis::cp, ParallelAxis::dp, ParallelAxis::ep,
                      ParallelAxis::pp};
  first.training.global_batch = 64;
  StepInput second = first;
  second.plan.dp = 8;
  second.plan.pp = 1;
  REQUIRE(units_plan(first.plan) == units_plan(second.plan));

  const auto first_groups = communicators(first.plan, first.cluster).unit_groups();
  const auto second_groups = communicators(second.plan, second.cluster).unit_groups();
  const auto at = [](CommGroup g) { return static_cast<std::size_t>(g); };
  CHECK(first_groups[at(CommGroup::tp)].size == 1);
  CHECK(first_groups[at(CommGroup::cp)].size == 1);
  CHECK(first_groups[at(CommGroup::expert_tp)].size == 1);
  CHECK(first_groups[at(CommGroup::ep)].nodes == 1);
  CHECK(second_groups[at(CommGroup::ep)].nodes == 2);
  for (std::size_t g = 0; g < first_groups.size(); ++g) {
    CAPTURE(g);
    if (g == at(CommGroup::ep) || g == at(CommGroup::expert_tp_ep)) {
      CHECK(first_groups[g].size == 2);
      CHECK(first_groups[g] != second_groups[g]);
    } else {
      CHECK(first_groups[g] == second_groups[g]);
    }
  }

  const StepCosts want = priced_alone(second);
  REQUIRE(!same_units(want, priced_alone(first)));  // the all-to-alls cross the network in the second
  (void)priced(first);
  CHECK(same_units(priced(second), want));
}
