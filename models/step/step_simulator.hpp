#pragma once
// The entry point of the step model: simulate one training iteration (one optimizer step) of a model on a
// cluster under a parallel layout, and report where the time and the memory go (SPEC "Outputs", per
// iteration). Two fidelities behind one interface:
//  - Fidelity::analytic — closed form (roofline compute, α-β collectives, schedule bubble); microseconds
//    per layout, for sweeps and search;
//  - Fidelity::event — the step lowered to a task DAG and run on the discrete-event engine with separate
//    compute / TP / PP / DP streams per GPU, so overlap is simulated rather than assumed.
// On the example scenarios they agree within 2% (a permanent test).
//
// Never throws for an infeasible layout (degrees that do not divide, memory that does not fit): the
// result has feasible = false (or fits = false) and a reason. Throws InputError only for inputs that are
// not a layout at all (e.g. a model with zero layers).
#include <cstdint>
#include <string>
#include <string_view>

#include "models/spec/parallel_plan.hpp"
#include "models/spec/training_spec.hpp"
#include "models/spec/transformer_spec.hpp"
#include "models/step/step_report.hpp"
#include "topologies/cluster_spec.hpp"

namespace trainsim::sim {
class ChromeTraceWriter;  // sim/trace.hpp
}  // namespace trainsim::sim

namespace trainsim::model {

enum class Fidelity { analytic, event };

/// Everything one step depends on. Plain values: cheap to copy per sweep point.
struct StepInput {
  TransformerSpec model;
  topo::ClusterSpec cluster;
  ParallelPlan plan;
  TrainingSpec training;
  double memory_headroom = 0;  ///< fraction of HBM that must stay free for `fits` (budget.memory_headroom)
};

/// Which GPUs the event fidelity simulates; the report's step_mode says which ran.
enum class StepMode : std::uint8_t {
  /// full_cluster where the scenario is asymmetric — a degraded NIC (the pipeline sends and the rings
  /// through it slowed as flows, not in closed form) or a straggler (each replica slowed by its own) — and
  /// the event graph stays within its limits (event_graph_limits.hpp); collapsed otherwise.
  automatic,
  /// One GPU per pipeline rank stands for its symmetric peers; the fabric beyond the NICs in closed form.
  collapsed,
  /// Every data-parallel replica and pipeline rank, each GPU's data-parallel and pipeline transfers routed
  /// over the cluster graph (step_network.hpp: ECMP collisions, oversubscribed leaves, background traffic
  /// and degraded NICs become flows that share links; the model-parallel ranks of one replica's stage stay
  /// one instance, each unit's pass one task); a straggler slows the kernels of the replica holding it.
  /// Bounded by the event graph's limits (event_graph_limits.hpp; InputError beyond them).
  full_cluster,
};

/// Knobs of one step's simulation.
struct StepOptions {
  /// Which GPUs the event fidelity simulates (the analytic one ignores it).
  StepMode mode = StepMode::automatic;
  /// Where the step's Chrome trace is recorded (the caller writes it out); null = no trace. One process per
  /// simulated stage (or stage of each replica under full_cluster), one thread per stream (the optimizer
  /// update on its own), the memory in use as a counter. At the analytic fidelity it is the closed form's
  /// timeline in the same layout (models/step/analytic_trace.hpp), marked "fidelity": "analytic" in its
  /// otherData and in every slice's args. Nothing is recorded for an infeasible step.
  sim::ChromeTraceWriter* trace = nullptr;
  /// The event trace's slices: each kernel run and collective (layer), or one slice per pass and lane
  /// (pass; pass_detail_sink.hpp). The analytic trace is per pass either way.
  enum class TraceDetail : std::uint8_t { layer, pass } trace_detail = TraceDetail::layer;
  /// false: a layout that does not fit in memory is reported without its time (the time figures stay 0),
  /// for a caller that drops such layouts anyway (a search); its memory and reason are reported as ever.
  bool time_unfit = true;
};

struct StepPlan;   // step_plan.hpp
struct StepCosts;  // step_costs.hpp

/// The costs a collapsed or closed-form step of `plan` runs with: step_costs (the event fidelity's collapsed
/// step with FabricPricing::shared_links, the analytic fidelity's with closed_form), a degraded NIC's pace on
/// the data-parallel times, and with cluster.stragglers those of the slowest replica that holds one (timed at
/// `fidelity`; step_costs.hpp's straggler_slowdowns). simulate_step and explain both price with them; the
/// full cluster prices those asymmetries itself (StepMode::full_cluster).
[[nodiscard]] StepCosts simulated_costs(const StepInput& input, const StepPlan& plan, Fidelity fidelity);

/// Simulates one step. See the file comment for the error contract.
[[nodiscard]] StepReport simulate_step(const StepInput& input, Fidelity fidelity = Fidelity::event,
                                       const StepOptions& options = {});

/// "analytic" / "event", and back (InputError on anything else).
[[nodiscard]] const char* to_string(Fidelity f);
[[nodiscard]] Fidelity parse_fidelity(std::string_view text);

}  // namespace trainsim::model
