#pragma once
// What the learning-rate schedule costs when a campaign's target moves after its run reaches it
// (convergence.next_target_loss). A cosine schedule's length is fixed when the run starts (Hoffmann et al.
// 2022 match the cosine cycle to the run's tokens; a cycle longer or shorter than the run reaches a worse
// loss), so a new, lower target is a new run from scratch. A warmup-stable-decay (WSD) run keeps its
// stable-phase checkpoints: it continues from the last one before its decay and decays again at the new
// length (Hägele et al. 2024, "Scaling Laws and Compute-Optimal Training Beyond Fixed Training Durations",
// arXiv:2405.18392: a constant learning rate with a cooldown matches cosine and can be extended). Both are
// taken to need the same tokens for the same loss. Pure functions.
#include "models/spec/training_spec.hpp"

namespace trainsim::model {

struct MovedTargetTokens {
  double tokens = 0;        ///< trained by the whole campaign, to both targets
  double extra_tokens = 0;  ///< beyond a single run straight to the new target
};

/// Tokens to reach a first target (`first_tokens` for a run to it alone) and then a lower one
/// (`next_tokens` for a run to it alone):
///   cosine: first + next (a second run from scratch), extra = first;
///   wsd:    next + f·first, where f = `decay_fraction` of a run is its final decay: the stable phase of
///           the first run, (1 − f)·first, is kept, the first decay f·first is the extra.
/// Throws InputError unless next_tokens >= first_tokens (the new target must be the lower loss) and
/// 0 < decay_fraction < 1.
[[nodiscard]] MovedTargetTokens tokens_for_moved_target(LrSchedule schedule, double decay_fraction,
                                                        double first_tokens, double next_tokens);

}  // namespace trainsim::model
