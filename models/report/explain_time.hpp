#pragma once
// The time half of `trainsim explain`: where one iteration's seconds go on the critical pipeline stage,
// each part with the numbers behind it, in closed form (analytic_step.hpp): the kernels of its passes per
// unit and op run, each blocking collective's exposed time, and the data-parallel, pipeline, bubble and
// optimizer parts. The lines add up to the analytic iteration time.
#include "models/report/explain.hpp"
#include "models/step/step_simulator.hpp"

namespace trainsim::model {

/// The section "time per iteration, stage s (critical)"; for a plan that is not a layout, a note why.
/// Throws InputError as simulate_step does.
[[nodiscard]] ExplainSection explain_time(const StepInput& input);

}  // namespace trainsim::model
