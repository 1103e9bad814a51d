#include "models/step/kept_units.hpp"

#include <utility>
#include <vector>

namespace trainsim::model {

namespace {

// The groups a unit's collectives run over (Communicators::of, and cp_pair for the ring exchange).
struct LayerGroups {
  topo::CommGroup tp, cp, ep, expert_tp, expert_tp_ep, cp_pair;
  explicit LayerGroups(const Communicators& c)
      : tp(c.tp),
        cp(c.cp),
        ep(c.ep),
        expert_tp(c.expert_tp),
        expert_tp_ep(c.expert_tp_ep),
        cp_pair(c.cp_pair) {}
  bool operator==(const LayerGroups&) const = default;
};

// What the units are priced from (kept_units.hpp).
struct UnitInputs {
  TransformerSpec model;
  topo::ClusterSpec cluster;
  TrainingSpec training;
  ParallelPlan plan;  // units_plan
  LayerGroups groups;
};

// A search prices a schedule's layouts one after another (layout_search.cpp's scoring order): a few recent
// sets cover the recompute and micro-batch choices it cycles through.
constexpr std::size_t kKept = 8;

}  // namespace

ParallelPlan units_plan(ParallelPlan plan) {
  plan.dp = 0;
  plan.dp_auto = false;
  plan.pp = 0;
  plan.schedule = Schedule::one_f_one_b;
  plan.virtual_stages = 0;
  plan.stage_layers.clear();
  plan.zero = ZeroStage::none;
  plan.shard_group = 0;
  plan.overlap_grad_reduce = false;
  plan.bucket_bytes = 0;
  plan.framework.reshard_after_forward = false;
  return plan;
}

KeptUnitCosts& kept_units(const StepInput& in, const Communicators& comms) {
  thread_local std::vector<std::pair<UnitInputs, KeptUnitCosts>> kept;
  thread_local std::size_t oldest = 0;
  const ParallelPlan plan = units_plan(in.plan);
  const LayerGroups groups(comms);
  for (auto& [inputs, units] : kept) {
    if (inputs.groups == groups && inputs.plan == plan && inputs.model == in.model &&
        inputs.training == in.training && inputs.cluster == in.cluster)
      return units;
  }
  std::pair<UnitInputs, KeptUnitCosts> fresh{UnitInputs{in.model, in.cluster, in.training, plan, groups}, {}};
  if (kept.size() < kKept) return kept.emplace_back(std::move(fresh)).second;
  auto& slot = kept[oldest];
  oldest = (oldest + 1) % kKept;
  slot = std::move(fresh);
  return slot.second;
}

}  // namespace trainsim::model
