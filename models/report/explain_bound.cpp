#include "models/report/explain_bound.hpp"

#include <fmt/format.h>

#include "models/report/summary.hpp"
#include "models/report/what_bounds.hpp"

namespace trainsim::model {

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
  const Bound bound = what_bounds(shares);
  out.notes.push_back(fmt::format("bound by {}: {}", bound.what, bound.why));
  return out;
}

}  // namespace trainsim::model
