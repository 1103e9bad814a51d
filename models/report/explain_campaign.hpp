#pragma once
// explain's campaign sections: how a target loss sets the run's length (the law, its floor, the tokens,
// the critical batch and its penalty, with the numbers in) and how the tuning trials are cut into rungs.
#include <cstdint>

#include "models/report/explain.hpp"
#include "models/spec/campaign_spec.hpp"
#include "models/spec/optimizer_spec.hpp"
#include "models/spec/transformer_spec.hpp"

namespace trainsim::model {

/// The run to `c.target_loss` for `model` trained by `optimizer` at a global batch of `global_batch`
/// sequences, with every source's speedup of the optimizer over AdamW. Throws InputError when the target is
/// out of the model's reach (as the run does).
[[nodiscard]] ExplainSection explain_convergence(const TransformerSpec& model, std::int64_t global_batch,
                                                 OptimizerKind optimizer, const ConvergenceSpec& c);

/// The rungs of the trials, in trials and fractions of a trial's budget, and their sum.
[[nodiscard]] ExplainSection explain_tuning(const TuningSpec& t);

}  // namespace trainsim::model
