#include "models/report/explain_bound.hpp"

#include <fmt/format.h>

#include <limits>
#include <string>

#include "models/report/summary.hpp"
#include "models/report/what_bounds.hpp"
#include "models/step/step_plan.hpp"
#include "models/step/unit_pricing.hpp"

namespace trainsim::model {

namespace {

// The pass of a layer whose GPU time leaves the eager host the least room: GPU seconds (its pieces, the
// host's wait left out) over the host's issue seconds (UnitCost::PassIssue). The embedding and the head,
// one short pass each per micro-batch, are left out: a layer's passes repeat through the step.
struct HostHeadroom {
  double ratio = std::numeric_limits<double>::infinity();
  double gpu = 0, host = 0;
  std::string pass;
};

HostHeadroom tightest_pass(const StepCosts& costs) {
  HostHeadroom out;
  for (const UnitCost& u : costs.units) {
    if (u.name == "embedding" || u.name == "head") continue;
    for (const auto& [direction, pieces, issue] : {std::tuple{"forward", &u.forward, &u.forward_issue},
                                                   std::tuple{"backward", &u.backward, &u.backward_issue}}) {
      if (issue->host_s <= 0) continue;
      const double gpu = device_seconds(*pieces);
      if (gpu / issue->host_s < out.ratio)
        out = {gpu / issue->host_s, gpu, issue->host_s, fmt::format("{} {}", u.name, direction)};
    }
  }
  return out;
}

}  // namespace

ExplainSection explain_bound(const StepInput& in) {
  ExplainSection out{.title = "what bounds this layout, closed form"};
  const StepReport step = simulate_step(in, Fidelity::analytic);
  if (step.iteration_time <= 0) {
    out.notes.push_back("not a layout: " + step.reason);
    return out;
  }
  const StepShares shares = step_shares(step);
  out.lines.push_back({"compute share",
                       fmt::format("{} compute / {} step; compute-bound at {} or more",
                                   format_human(FieldUnit::seconds, shares.compute),
                                   format_human(FieldUnit::seconds, shares.total()), kComputeBound),
                       shares.compute_share(), ""});
  if (shares.capacity > 0) {
    out.lines.push_back({"memory fill",
                         fmt::format("{} / {} of HBM on the fullest GPU; memory-bound at {} or more",
                                     format_human(FieldUnit::bytes, shares.memory),
                                     format_human(FieldUnit::bytes, shares.capacity), kMemoryBound),
                         shares.memory_fill(), ""});
  }
  const Framework& fw = in.plan.framework;
  if (!fw.cuda_graphs && fw.launch_overhead_s > 0) {
    const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
    const HostHeadroom h = tightest_pass(simulated_costs(in, plan, Fidelity::analytic));
    if (h.host > 0) {
      out.lines.push_back(
          {"host headroom",
           fmt::format(
               "{} of GPU / {} of host issue in a {} (the tightest pass); the host would set it from about "
               "{:.0f} us an op (framework.launch_overhead: {:.0f} us, models/spec/framework.hpp)",
               format_human(FieldUnit::seconds, h.gpu), format_human(FieldUnit::seconds, h.host), h.pass,
               h.ratio * fw.launch_overhead_s * 1e6, fw.launch_overhead_s * 1e6),
           h.ratio, ""});
    }
  }
  const Bound bound = what_bounds(shares);
  out.notes.push_back(fmt::format("bound by {}: {}", bound.what, bound.why));
  return out;
}

}  // namespace trainsim::model
