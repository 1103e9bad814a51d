#pragma once
// One loaded scenario simulated end to end — the single composition used by `trainsim run`, sweeps,
// search and validation: the iteration at the chosen fidelity, the checkpoint size of its optimizer and
// layout, then the whole run around the iteration (checkpoints, failures, money).
#include <string>
#include <vector>

#include "models/run/run_report.hpp"
#include "models/step/step_report.hpp"
#include "models/step/step_simulator.hpp"
#include "scenarios/scenario.hpp"

namespace trainsim::scenario {

struct ScenarioResult {
  model::StepReport step;
  model::RunReport run;
};

/// The step's inputs in the scenario.
[[nodiscard]] model::StepInput step_input_of(const Scenario& scenario);

/// Simulates `scenario`. Infeasible layouts are values in the result; throws InputError only for input
/// that is not a layout at all (see model::simulate_step). `options` selects a trace to record (the step's
/// timeline, then the checkpoint track after it: models/run/checkpoint_trace.hpp) and the per-GPU
/// (uncollapsed) event simulation.
[[nodiscard]] ScenarioResult simulate_scenario(const Scenario& scenario, model::Fidelity fidelity,
                                               const model::StepOptions& options = {});

/// What `trainsim run` tells the user before the summary (one line each, without "note: "): the
/// framework chosen for a scenario that names none, and checkpoint writes priced without a storage
/// bandwidth.
[[nodiscard]] std::vector<std::string> run_notes(const Scenario& scenario);

}  // namespace trainsim::scenario
