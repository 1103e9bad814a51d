#include "models/run/lr_schedule.hpp"

#include <fmt/format.h>

#include <cmath>

#include "sim/error.hpp"

namespace trainsim::model {

MovedTargetTokens tokens_for_moved_target(LrSchedule schedule, double decay_fraction, double first_tokens,
                                          double next_tokens) {
  if (!(std::isfinite(first_tokens) && first_tokens > 0 && std::isfinite(next_tokens))) {
    throw InputError(
        fmt::format("a moved target needs positive token counts (got {} and {})", first_tokens, next_tokens));
  }
  if (!(next_tokens >= first_tokens)) {
    throw InputError(
        fmt::format("convergence.next_target_loss must be a lower loss than target_loss: it "
                    "takes {:.4g} tokens, fewer than the first target's {:.4g}",
                    next_tokens, first_tokens));
  }
  if (!(decay_fraction > 0 && decay_fraction < 1)) {
    throw InputError(
        fmt::format("training.schedule.decay_fraction must be in (0, 1) (got {})", decay_fraction));
  }
  switch (schedule) {
    case LrSchedule::cosine:
      return {.tokens = first_tokens + next_tokens, .extra_tokens = first_tokens};
    case LrSchedule::wsd:
      return {.tokens = next_tokens + decay_fraction * first_tokens,
              .extra_tokens = decay_fraction * first_tokens};
  }
  return {};
}

}  // namespace trainsim::model
