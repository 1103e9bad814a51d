#pragma once
// The last section of `trainsim explain`: what bounds the layout, by the one rule the report pages and
// `compare` use (what_bounds.hpp), on the closed-form step that the time section breaks down.
#include "models/report/explain.hpp"
#include "models/step/step_simulator.hpp"

namespace trainsim::model {

/// The section "what bounds this layout, closed form": the compute share and memory fill the rule reads,
/// against its thresholds, and the verdict with its one line as a note. For a plan that is not a layout,
/// a note why. Throws InputError as simulate_step does.
[[nodiscard]] ExplainSection explain_bound(const StepInput& input);

}  // namespace trainsim::model
