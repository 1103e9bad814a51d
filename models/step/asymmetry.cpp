// What differs between ranks of a layout that is otherwise symmetric: stragglers' slower kernels and degraded
// NICs' slower data-parallel traffic, as changes to the symmetric costs (see asymmetry.hpp).
#include "models/step/asymmetry.hpp"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "models/step/communicators.hpp"
#include "models/step/unit_pricing.hpp"
#include "sim/error.hpp"

namespace trainsim::model {

std::map<std::int64_t, std::vector<double>> replica_slowdowns(const ParallelPlan& plan,
                                                              const topo::ClusterSpec& cluster) {
  if (cluster.stragglers.empty()) return {};
  const PlanPlacement placed = plan_placement(plan, cluster);
  const topo::Placement& placement = placed.placement;
  const std::size_t dp = placed.axis(ParallelAxis::dp);
  const std::size_t pp = placed.axis(ParallelAxis::pp);
  const std::int64_t gpn = cluster.gpus_in_use_per_node();
  // A replica is its data-parallel coordinates (sharding group inner: full_cluster_gpus' numbering); its
  // tp/cp/ep ranks of one stage wait for each other in their blocking collectives, so the slowest GPU of a
  // stage sets the stage.
  std::map<std::int64_t, std::vector<double>> replicas;
  for (const topo::Straggler& s : cluster.stragglers) {
    const std::int64_t end = std::min(placement.world_size(), (s.node + 1) * gpn);
    for (std::int64_t r = s.node * gpn; r < end; ++r) {
      const std::vector<std::int64_t> c = placement.coordinates(r);
      std::vector<double>& f = replicas[c[dp + 1] * plan.dp_shard() + c[dp]];
      if (f.empty()) f.assign(static_cast<std::size_t>(plan.pp), 1.0);
      double& stage = f[static_cast<std::size_t>(c[pp])];
      stage = std::max(stage, s.slowdown);
    }
  }
  return replicas;
}

std::vector<std::vector<double>> straggler_slowdowns(const ParallelPlan& plan,
                                                     const topo::ClusterSpec& cluster) {
  std::vector<std::vector<double>> distinct;
  for (auto& [replica, f] : replica_slowdowns(plan, cluster)) {
    if (std::find(distinct.begin(), distinct.end(), f) == distinct.end()) distinct.push_back(std::move(f));
  }
  return distinct;
}

namespace {

// Unit -> its changed copy.
using UnitCopies = std::map<int, int>;

// Gives pipeline rank `s` its own copy of every unit it runs, changed by `change`, so that the other ranks
// keep theirs (a unit run by several chunks of the rank is copied once). Ranks changed alike may pass the
// same `copies`: a unit one of them copied is the copy the others need (the same unit, the same change).
template <class Change>
void change_rank_units(StepCosts& costs, const StepPlan& plan, int s, Change&& change, UnitCopies& copies) {
  for (int c = 0; c < plan.virtual_stages; ++c) {
    for (UnitRun& run : costs.chunk_units[plan.virtual_stage_index(c, s)]) {
      auto it = copies.find(run.unit);
      if (it == copies.end()) {
        UnitCost u = costs.units[static_cast<std::size_t>(run.unit)];
        change(u);
        it = copies.emplace(run.unit, static_cast<int>(costs.units.size())).first;
        costs.units.push_back(std::move(u));
      }
      run.unit = it->second;
    }
  }
}

}  // namespace

void slow_stages(StepCosts& costs, const StepPlan& plan, const std::vector<double>& slowdown) {
  TRAINSIM_CHECK(slowdown.size() == static_cast<std::size_t>(plan.pp), "one slowdown per pipeline rank");
  const int p = plan.pp;
  // The ranks slowed by the same factor share their units' copies: the closed form slows every rank alike
  // (the expected slowest GPU), and a unit copied once per rank was a third of a search's allocations.
  std::vector<std::pair<double, UnitCopies>> copies_by_factor;
  const auto copies_for = [&](double f) -> UnitCopies& {
    for (auto& [factor, copies] : copies_by_factor) {
      if (factor == f) return copies;
    }
    return copies_by_factor.emplace_back(f, UnitCopies{}).second;
  };
  for (int s = 0; s < p; ++s) {
    const double f = slowdown[static_cast<std::size_t>(s)];
    if (f == 1) continue;
    if (costs.chunk_units.empty()) {  // hand-made costs: the pass sums only
      for (int c = 0; c < plan.virtual_stages; ++c) {
        PassCost& pass = costs.passes[plan.virtual_stage_index(c, s)];
        pass.forward_compute *= f;
        pass.backward_compute *= f;
        pass.weight_compute *= f;
      }
    } else {
      change_rank_units(
          costs, plan, s,
          [f](UnitCost& u) {
            for (auto* pieces : {&u.forward, &u.backward}) {
              for (CostPiece& piece : *pieces) {
                piece.compute *= f;
                piece.weight *= f;
              }
            }
            u.total = pass_sums(u);
          },
          copies_for(f));
      for (int c = 0; c < plan.virtual_stages; ++c) {
        const std::size_t vs = plan.virtual_stage_index(c, s);
        costs.passes[vs] = pass_cost(costs.units, costs.chunk_units[vs]);
      }
    }
    costs.stages[static_cast<std::size_t>(s)].optimizer_s *= f;
  }
}

std::vector<double> degraded_nic_slowdowns(const ParallelPlan& plan, const topo::ClusterSpec& cluster,
                                           const StepCosts& costs) {
  if (cluster.degraded.empty() || !costs.dp_crosses_nodes) return {};
  const PlanPlacement placed = plan_placement(plan, cluster);
  const topo::Placement& placement = placed.placement;
  const std::size_t pp = placed.axis(ParallelAxis::pp);
  const std::int64_t gpn = cluster.gpus_in_use_per_node();
  std::vector<double> f(static_cast<std::size_t>(plan.pp), 1.0);
  for (const topo::DegradedNic& d : cluster.degraded) {
    const double ratio = cluster.nic_bytes_per_s() / d.bytes_per_s;
    for (std::int64_t g = 0; g < gpn; ++g) {
      const std::int64_t r = d.node * gpn + g;
      if (cluster.nic_of_gpu(g) != d.nic || r >= placement.world_size()) continue;
      double& stage = f[static_cast<std::size_t>(placement.coordinates(r)[pp])];
      stage = std::max(stage, ratio);
    }
  }
  return f;
}

void slow_data_parallel(StepCosts& costs, const StepPlan& plan, const std::vector<double>& slowdown) {
  TRAINSIM_CHECK(slowdown.size() == static_cast<std::size_t>(plan.pp), "one slowdown per pipeline rank");
  const auto slow = [](double& seconds, double latency_s, double f) {
    seconds = slowed_bandwidth(seconds, latency_s, f);
  };
  for (int s = 0; s < plan.pp; ++s) {
    const double f = slowdown[static_cast<std::size_t>(s)];
    if (f <= 1) continue;
    StageCost& sc = costs.stages[static_cast<std::size_t>(s)];
    slow(sc.bucket_s, sc.bucket_latency_s, f);
    slow(sc.param_gather_s, sc.param_gather_latency_s, f);
    slow(sc.optimizer_comm_s, sc.optimizer_comm_latency_s, f);
    if (!costs.gathers_weights) continue;
    // ZeRO-3: this rank's units, copied so the other ranks keep theirs.
    UnitCopies copies;
    change_rank_units(
        costs, plan, s,
        [&](UnitCost& u) {
          slow(u.gather_s, u.gather_latency_s, f);
          slow(u.reduce_s, u.reduce_latency_s, f);
        },
        copies);
    sum_zero3_stage(costs, plan, s);
  }
}

}  // namespace trainsim::model
