#pragma once
// The analytic (closed-form) fast path over the step costs (step_costs.hpp).
//
// analytic_step() turns them into a step time: the pipeline is timed by replaying the schedule with these
// per-stage costs (time_schedule: O(passes), no event queue), data-parallel buckets are laid after each
// chunk's gradient window, ZeRO-3 passes are lengthened by their units' waits for weights gathered a
// bounded number of units ahead (gathered_pass, the same order the event run follows), blocking
// hand-overs are part of the sender's pass, then the optimizer and (ZeRO 1–2) what the weights'
// all-gather does not hide under the next step's first forward. Each stage finishes at its own time; the
// latest sets the step.
//
// Agreement with the event-driven path (tests/models/step/step_simulator_test.cpp): within 0.4% on the
// example scenarios and 2% on every ZeRO 0–2 layout tested, since both use these costs and the same schedule;
// they differ only in when gradient buckets become ready (here evenly over each chunk's last backward, there
// at its layer boundaries). Under ZeRO-3 both follow the same per-unit order within a pass, and a pass's
// gathers and reductions share the GPU's port in both (here shared_port.hpp, there the flows of
// step_network.hpp); they differ in that the event run's gradient reductions queue on their stream across
// passes, into the next pass's gathers (the closed form adds only the last backward's tail): that only ever
// lengthens the event run. The overlapped all-gather of ZeRO 1–2's updated weights is closed-form in both.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "models/step/pipeline_schedule.hpp"
#include "models/step/step_costs.hpp"
#include "models/step/step_plan.hpp"
#include "models/step/step_report.hpp"
#include "models/step/step_simulator.hpp"

namespace trainsim::model {

/// The time side of a step report.
struct StepTiming {
  double iteration_time = 0;
  TimeBreakdown time;          ///< of critical_stage; sums to iteration_time
  double bubble_fraction = 0;  ///< time.bubble / iteration_time
  /// The pipeline rank whose time `time` shows: the busiest one (kernels and exposed communication), whose
  /// work bounds the pipeline. The rank that finishes last is stage 0 in every schedule (it runs the last
  /// backward), and its idle slots would show the busiest rank's work as bubble.
  int critical_stage = 0;
  /// Over every pipeline rank, the mean of kernel compute / iteration_time: how busy the fleet is (energy).
  double fleet_compute_fraction = 0;
  /// Over every pipeline rank, the mean idle share: bubble_fraction plus what each rank's work falls short
  /// of the shown rank's (the time it waits for the busiest).
  double fleet_idle_fraction = 0;
};

/// Sets t.fleet_compute_fraction and t.fleet_idle_fraction from each rank's stage_work (`works`, from
/// stage_works) and the shown rank's breakdown (t.time, t.critical_stage, t.iteration_time).
void set_fleet_fractions(StepTiming& t, const std::vector<TimeBreakdown>& works);

/// The busiest pipeline rank: the largest busy() of its stage_work (`works`, from stage_works) plus
/// `exposed[s]` (what the rank's own passes wait for beyond their kernels), the lowest rank among equals
/// within a relative 1e-9, so that stages alike to rounding keep stage 0.
[[nodiscard]] int busiest_stage(const std::vector<TimeBreakdown>& works, const std::vector<double>& exposed);

/// Where analytic_step lays a step's pieces in time, seconds from the step's start: what the analytic trace
/// (models/step/analytic_trace.hpp) draws. Everything here is what the closed form computes anyway.
struct AnalyticLayout {
  struct Bucket {
    int chunk = 0;  ///< the model chunk whose gradients it reduces
    double start = 0;
    double end = 0;
  };
  PipelineOrder order;  ///< per rank, its passes in execution order
  /// Per rank, time_schedule's span of each pass of `order` (a pass includes its exposed tp/cp/ep
  /// collectives, under ZeRO-3 its waits for weight gathers, and a blocking hand-over).
  PassSpans passes;
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

/// ZeRO-3: one pass of micro-batch through virtual stage `vs`, its units in execution order, each waiting
/// for its weights (when `gather`), gathered one after another on the data-parallel stream and issued
/// when the unit costs.zero3_prefetch places earlier starts (prefetch 0: when the previous unit ends), and
/// (backward) each unit's gradients reduced after it on a stream of their own — before the next unit
/// starts when costs.synchronous_zero3. The two streams share the GPU's port (SharedPort,
/// shared_port.hpp): a gather that runs beside a reduction takes the port's half while both move bytes.
struct GatheredPass {
  double extra = 0;        ///< how much longer than its units' own time the pass takes
  double reduce_tail = 0;  ///< how long the reductions run on after the pass's last unit
};
[[nodiscard]] GatheredPass gathered_pass(const StepCosts& costs, int vs, bool backward, bool gather);

/// ZeRO 1–2: what the all-gather of rank s's updated weights adds to the step: all of it, or with the
/// framework's overlap_param_gather what exceeds the forward kernels of the next step's first micro-batch
/// (at least one bucket, which nothing precedes).
[[nodiscard]] double exposed_param_gather(const StepInput& input, const StepPlan& plan,
                                          const StepCosts& costs, int s);

}  // namespace trainsim::model
