#pragma once
// `trainsim explain --ops`: one transformer layer's ops on one GPU, one line each, forward then backward —
// each kernel's time alone (kernel_time: its FLOPs or bytes, the rate it reaches and what bounds it) and
// each collective's closed-form time on the group the placement gives. What the step makes of them
// (overlap, the host's waits, the pipeline) is the time section's (explain_time.hpp); this one says which
// kernels those seconds are made of.
#include "models/report/explain.hpp"
#include "models/step/step_simulator.hpp"

namespace trainsim::model {

/// The section "ops of one <layer> per micro-batch": the layer kind of the first MoE layer (of the first
/// layer for a dense model), each op of its forward and backward lists with its seconds, and the lists'
/// sums. Eager frameworks add each op's host issue (host_issue.hpp's op_issue_s). A model of generic
/// layers, or a plan that is not a layout, gets a note instead of lines. Throws InputError as
/// simulate_step does.
[[nodiscard]] ExplainSection explain_ops(const StepInput& input);

}  // namespace trainsim::model
