#pragma once
// The analytic (closed-form) fast path over the step costs (step_costs.hpp).
//
// analytic_step() turns them into a step time: the pipeline is timed by replaying the schedule with these
// per-stage costs (time_schedule: O(passes), no event queue), data-parallel buckets are laid after each
// chunk's gradient window, ZeRO-3 gathers hide under compute when shorter (closed form), then the
// optimizer. Each stage finishes at its own time; the latest sets the step.
//
// Agreement with the event-driven path (tests/models/step_simulator_test.cpp): within 0.4% on the example
// scenarios and 2% on every ZeRO 0–2 layout tested, since both use these costs and the same schedule; they
// differ only in when gradient buckets become ready (here evenly over each chunk's last backward, there at
// its layer boundaries). The one known gap: ZeRO-3 when gathers outweigh a pass's compute — the closed
// form charges every pass max(kernels, gathers) (plus the first layer's gather once), while the event run
// gathers one layer ahead, so gathers do not run ahead under the embedding and LM-head kernels or while a
// pass waits for its neighbour (slower, by up to one layer's and those units' kernels per pass), and it
// streams them through the pipeline's warm-up and cool-down waits (faster); on the test layout the event
// time is ≈7% higher. The event path also lets data-parallel and pipeline traffic that meet on a NIC
// share it (step_network.hpp), which the closed form does not: that only ever lengthens the event run.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "models/pipeline_schedule.hpp"
#include "models/step_costs.hpp"
#include "models/step_plan.hpp"
#include "models/step_report.hpp"
#include "models/step_simulator.hpp"

namespace trainsim::model {

/// The time side of a step report.
struct StepTiming {
  double iteration_time = 0;
  TimeBreakdown time;          ///< of the stage that finishes last; sums to iteration_time
  double bubble_fraction = 0;  ///< time.bubble / iteration_time
  int critical_stage = 0;      ///< the pipeline rank that finishes last
};

/// Where analytic_step lays a step's pieces in time, seconds from the step's start: what the analytic trace
/// (models/analytic_trace.hpp) draws. Everything here is what the closed form computes anyway.
struct AnalyticLayout {
  struct Bucket {
    int chunk = 0;  ///< the model chunk whose gradients it reduces
    double start = 0;
    double end = 0;
  };
  PipelineOrder order;  ///< per rank, its passes in execution order
  /// Per rank, time_schedule's span of each pass of `order` (a pass includes its exposed tp/cp/ep
  /// collectives and, under ZeRO-3, what its weight gathers exceed its compute), before `first_gather`.
  PassSpans passes;
  std::vector<double> first_gather;          ///< per rank: ZeRO-3's first gather, delaying its whole list
  std::vector<std::vector<Bucket>> buckets;  ///< per rank: gradient buckets on its dp stream, in order
  std::vector<double> reduced;               ///< per rank: gradients reduced; the grad-norm all-reduce starts
  std::vector<double> finish;                ///< per rank: its step ends (optimizer, ZeRO 1–2 gather done)
};

/// Closed-form step time from the costs (see the file comment). With `layout` (optional; no cost without
/// it), also reports where each piece lies in time.
[[nodiscard]] StepTiming analytic_step(const StepInput& input, const StepPlan& plan, const StepCosts& costs,
                                       AnalyticLayout* layout = nullptr);

/// The per-pass costs as time_schedule's input (forward/backward include exposed collectives).
[[nodiscard]] PassTimes pass_times(const StepCosts& costs);

}  // namespace trainsim::model
