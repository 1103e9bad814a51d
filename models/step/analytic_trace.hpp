#pragma once
// The analytic fidelity's trace: the closed-form timeline of one step (analytic_step.hpp), written in the
// event-driven trace's layout (step_lowering.hpp: same processes, threads, slice names and counter) so the
// two open side by side in Perfetto — but computed, not simulated: no task graph, no event queue. It shows
// where the closed form puts each piece, which is also where it is approximate (no contention on a stream
// it does not model as a queue, e.g. two hand-overs closer than p2p_s both run at once on "pp comm").
//
// The closed form prices a pass as one sum (PassCost), so a pass is one slice here where the event trace
// has one per layer piece; every slice of a pass starts with the pass's label, as the event trace's do
// ("F mb3 c0", "B mb3 c0"; "W mb3 c0" under ZB-H1), so a search for "F mb3 c0" finds the same work in both.
// Per pipeline rank, a process "stage N" (the representative GPU of that rank) with threads:
//  - "compute": each pass from the start time_schedule gives it, for the length of its kernels (the slice is
//    named by the label alone);
//  - "optimizer": the update, after the gradient-norm all-reduce;
//  - "tp comm": the pass's exposed tensor/context/expert-parallel collectives summed ("F mb3 c0
//    collectives"), right after its kernels;
//  - "pp comm": each activation (gradient) hand-over to the next (previous) virtual stage, from the end of
//    the pass for p2p_s, the delay time_schedule charges the receiving pass;
//  - "dp comm": the gradient buckets where analytic_step lays them (in order of readiness over each
//    chunk's last backward, or after the last pass without overlap_grad_reduce); under ZeRO-3 the first
//    gather (it delays the rank's whole list) and each pass's gathers (+ reduce-scatters after a backward)
//    from the pass's start — the pass lasts the longer of its own time and its gathers; the gradient-norm
//    all-reduce; ZeRO 1–2's all-gather of the updated weights;
//  - the "memory_bytes" counter (with `memory`): the resident bytes at 0, one micro-batch·chunk's stash
//    added at each forward's end and released at each backward's (not W's), as the event trace does.
// A pass ends where time_schedule ends it (kernels + exposed collectives, or its ZeRO-3 gathers if longer);
// every slice carries the arg "fidelity": "analytic"; the latest
// slice ends at the returned iteration time.
#include <span>

#include "models/step/analytic_step.hpp"
#include "models/step/step_lowering.hpp"
#include "sim/trace.hpp"

namespace trainsim::model {

/// The args every slice of the analytic trace carries ("fidelity": "analytic"), for slices others add to
/// it (the checkpoint track).
[[nodiscard]] std::span<const sim::TraceArg> analytic_slice_args();

/// analytic_step(), and its timeline into `sink` (see the file comment). Returns analytic_step's timing
/// unchanged. Precondition: plan.feasible; `memory` (optional) has one entry per pipeline rank.
StepTiming trace_analytic_step(const StepInput& input, const StepPlan& plan, const StepCosts& costs,
                               sim::TraceSink& sink, const StageMemoryTrack* memory = nullptr);

}  // namespace trainsim::model
