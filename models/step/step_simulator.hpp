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

/// Knobs of one step's simulation.
struct StepOptions {
  /// Simulate every GPU of the cluster instead of one representative per symmetry class (one pipeline of
  /// one data-parallel replica, one tensor-parallel rank). Exists to test that the collapse is exact;
  /// refused (InputError) above 4,096 GPUs. Event fidelity only (the analytic one ignores it).
  bool full_cluster = false;
  /// Where the Chrome trace of the step goes; "" = no trace. One process per simulated stage (or GPU
  /// under full_cluster), one thread per stream, the memory in use as a counter. At the analytic fidelity
  /// it is the closed form's timeline in the same layout (models/step/analytic_trace.hpp), marked
  /// "fidelity": "analytic" in its otherData and in every slice's args.
  std::string trace_path;
  /// The event trace's slices: each kernel run and collective (layer), or one slice per pass and lane
  /// (pass; pass_detail_sink.hpp). The analytic trace is per pass either way.
  enum class TraceDetail : std::uint8_t { layer, pass } trace_detail = TraceDetail::layer;
  /// Write the trace gzip-compressed (trace_path should then end in .gz).
  bool trace_gzip = false;
};

struct StepPlan;   // step_plan.hpp
struct StepCosts;  // step_costs.hpp

/// The costs a step of `plan` runs with: step_costs, and with cluster.stragglers those of the slowest
/// replica that holds one (timed at `fidelity`; step_costs.hpp's straggler_slowdowns). simulate_step and
/// explain both price with them.
[[nodiscard]] StepCosts simulated_costs(const StepInput& input, const StepPlan& plan, Fidelity fidelity);

/// Simulates one step. See the file comment for the error contract.
[[nodiscard]] StepReport simulate_step(const StepInput& input, Fidelity fidelity = Fidelity::event,
                                       const StepOptions& options = {});

/// "analytic" / "event", and back (InputError on anything else).
[[nodiscard]] const char* to_string(Fidelity f);
[[nodiscard]] Fidelity parse_fidelity(std::string_view text);

}  // namespace trainsim::model
