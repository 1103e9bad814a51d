#include "scenarios/studies/simulation.hpp"

#include "models/run/checkpoint_size.hpp"
#include "models/run/run_model.hpp"

namespace trainsim::scenario {

model::StepInput step_input_of(const Scenario& s) {
  return model::StepInput{.model = s.model,
                          .cluster = s.cluster,
                          .plan = s.parallelism,
                          .training = s.training,
                          .memory_headroom = s.budget.memory_headroom.value_or(0.0)};
}

ScenarioResult simulate_scenario(const Scenario& s, model::Fidelity fidelity,
                                 const model::StepOptions& options) {
  ScenarioResult result;
  result.step = model::simulate_step(step_input_of(s), fidelity, options);
  model::CheckpointSize checkpoint;
  if (result.step.feasible) checkpoint = model::checkpoint_size(s.model, s.parallelism, s.training);
  const model::RunInputs run{.step = result.step,
                             .global_batch = s.training.global_batch,
                             .seq_len = s.model.seq_len,
                             .training = s.training,
                             .cluster = s.cluster,
                             .checkpoint = s.checkpoint,
                             .failures = s.failures,
                             .pricing = s.pricing,
                             .budget = s.budget,
                             .checkpoint_bytes = checkpoint.total(),
                             .checkpoint_writers = {.ranks = checkpoint.writing_ranks,
                                                    .bytes_per_rank_max = checkpoint.bytes_per_rank_max}};
  result.run = model::simulate_run(run);
  return result;
}

}  // namespace trainsim::scenario
