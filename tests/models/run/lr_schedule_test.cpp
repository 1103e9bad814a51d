// A target that moves: cosine starts again from scratch, WSD keeps its stable phase and decays again.
#include "models/run/lr_schedule.hpp"

#include <doctest/doctest.h>

#include "sim/error.hpp"

using namespace trainsim;
using namespace trainsim::model;

TEST_CASE("a moved target: cosine pays both runs, WSD the new run and the first run's decay") {
  // First target 100 tokens, the new one 300. Cosine: 100 + 300 = 400, 100 beyond a run straight to the
  // new target. WSD with 20 % decay: the stable 80 tokens are kept, 300 + 0.2 · 100 = 320, 20 extra.
  const MovedTargetTokens cosine = tokens_for_moved_target(LrSchedule::cosine, 0.2, 100, 300);
  CHECK(cosine.tokens == 400);
  CHECK(cosine.extra_tokens == 100);
  const MovedTargetTokens wsd = tokens_for_moved_target(LrSchedule::wsd, 0.2, 100, 300);
  CHECK(wsd.tokens == doctest::Approx(320));
  CHECK(wsd.extra_tokens == doctest::Approx(20));
  // The same target again: WSD redoes only its decay, cosine the whole run.
  CHECK(tokens_for_moved_target(LrSchedule::wsd, 0.1, 100, 100).tokens == doctest::Approx(110));
  CHECK(tokens_for_moved_target(LrSchedule::cosine, 0.1, 100, 100).tokens == 200);
}

TEST_CASE("a moved target must be the lower loss, and the decay a fraction of the run") {
  CHECK_THROWS_AS((void)tokens_for_moved_target(LrSchedule::wsd, 0.2, 300, 100), InputError);
  CHECK_THROWS_AS((void)tokens_for_moved_target(LrSchedule::wsd, 0.0, 100, 300), InputError);
  CHECK_THROWS_AS((void)tokens_for_moved_target(LrSchedule::wsd, 1.0, 100, 300), InputError);
  CHECK_THROWS_AS((void)tokens_for_moved_target(LrSchedule::cosine, 0.2, 0, 300), InputError);
}
