#include "models/step/kept_units.hpp"

#include <array>

#include "sim/recent_results.hpp"

namespace trainsim::model {

namespace {

// What the units are priced from (kept_units.hpp).
struct UnitInputs {
  TransformerSpec model;
  topo::ClusterSpec cluster;
  TrainingSpec training;
  ParallelPlan plan;                                    // units_plan
  std::array<topo::CommGroup, kCommGroups + 1> groups;  // Communicators::unit_groups
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
  thread_local sim::RecentResults<UnitInputs, KeptUnitCosts, kKept> kept;
  const ParallelPlan plan = units_plan(in.plan);
  const auto groups = comms.unit_groups();
  KeptUnitCosts* units = kept.find([&](const UnitInputs& k) {
    return k.groups == groups && k.plan == plan && k.model == in.model && k.training == in.training &&
           k.cluster == in.cluster;
  });
  if (units != nullptr) return *units;
  return kept.insert(UnitInputs{in.model, in.cluster, in.training, plan, groups}, {});
}

}  // namespace trainsim::model
