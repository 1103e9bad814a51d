#pragma once
// A cluster file (scenarios/cluster_file.hpp) to the queue simulator's input and its result: every job's
// run time from the step model, through simulate_scenario as `trainsim run` does (analytic fidelity),
// at the nodes it asks for on the cluster's node type; the arrival streams drawn from their seeds.
//
// Contract:
//  - Each distinct (scenario file, node count) is loaded and simulated once and memoised; `simulations`
//    says how many there were. Every (scenario, nodes) an arrival mix can draw is simulated, drawn or not.
//  - A job's run time is its run's wall clock (RunReport::run_time): its own checkpoints included. With
//    `failures:` in the cluster file the scenario's own failure model is switched off and the cluster's
//    node failures are events instead (not counted twice); without it the scenario's expected failure
//    losses stay in its run time.
//  - A scenario that does not load, is infeasible or does not fit in memory at a node count is an
//    InputError at the `scenario` key that named it.
//  - With `cluster.contention`: each job's traffic per step (bytes per GPU through its NICs: its
//    data-parallel collectives when they span nodes, its pipeline hand-overs when its stages do) from the
//    step model's costs, and spec.slowdown pricing a share s of the links as the scenario with
//    cluster.background = 1 - (1 - its own) x s, memoised per (scenario, nodes, share bucket). An
//    InputError at `cluster.contention` on a fabric without leaves and spines (torus, dragonfly).
//  - Deterministic: the same file gives the same jobs, byte for byte.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "models/cluster/queue_report.hpp"
#include "models/cluster/queue_spec.hpp"
#include "scenarios/cluster_file.hpp"

namespace trainsim::scenario {

struct ClusterStudy {
  model::QueueSpec spec;
  std::size_t simulations = 0;  ///< distinct (scenario, node count) pairs simulated
  /// With contention: how many (scenario, nodes, share bucket) steps spec.slowdown has priced so far.
  std::function<std::size_t()> repricings;
};

/// The queue simulator's input for `file` (see the contract above).
[[nodiscard]] ClusterStudy build_cluster_study(const ClusterFile& file);

/// The lines every output carries about what the numbers include and leave out (contention-free, memoised).
[[nodiscard]] std::vector<std::string> cluster_study_notes(const ClusterStudy& study);

}  // namespace trainsim::scenario
