#include "models/run/tuning.hpp"

#include <doctest/doctest.h>

#include "sim/error.hpp"

using namespace trainsim;

TEST_CASE("successive halving of 27 trials by 3 costs 4 full trials from scratch and 3 resumed") {
  // Rungs: 27 @ 1/27, 9 @ 1/9, 3 @ 1/3, 1 @ 1.
  // From scratch: 27/27 + 9/9 + 3/3 + 1·1 = 1 + 1 + 1 + 1 = 4.
  // Resumed: 27·(1/27) + 9·(1/9 − 1/27) + 3·(1/3 − 1/9) + 1·(1 − 1/3)
  //        = 1 + 9·(2/27) + 3·(2/9) + 2/3 = 1 + 2/3 + 2/3 + 2/3 = 3.
  const auto plan = model::successive_halving(27, 3, 1.0 / 27);
  REQUIRE(plan.rungs.size() == 4);
  const std::int64_t trials[] = {27, 9, 3, 1};
  const double fractions[] = {1.0 / 27, 1.0 / 9, 1.0 / 3, 1.0};
  double sum = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(plan.rungs[i].trials == trials[i]);
    CHECK(plan.rungs[i].fraction == doctest::Approx(fractions[i]).epsilon(1e-12).scale(0));
    CHECK(plan.rungs[i].cost == doctest::Approx(1).epsilon(1e-12).scale(0));
    sum += plan.rungs[i].cost;
  }
  CHECK(plan.rungs.back().fraction == 1.0);  // the last rung is exactly the full budget
  CHECK(plan.total == doctest::Approx(4).epsilon(1e-12).scale(0));
  CHECK(plan.total == sum);  // the total is the sum of its rungs, exactly

  const auto resumed = model::successive_halving(27, 3, 1.0 / 27, 1, /*resume=*/true);
  REQUIRE(resumed.rungs.size() == 4);
  CHECK(resumed.rungs[0].cost == doctest::Approx(1).epsilon(1e-12).scale(0));
  double resumed_sum = resumed.rungs[0].cost;
  for (std::size_t i = 1; i < 4; ++i) {
    CHECK(resumed.rungs[i].cost == doctest::Approx(2.0 / 3).epsilon(1e-12).scale(0));
    resumed_sum += resumed.rungs[i].cost;
  }
  CHECK(resumed.total == doctest::Approx(3).epsilon(1e-12).scale(0));
  CHECK(resumed.total == resumed_sum);
}

TEST_CASE("successive halving stops at the rung that reaches the full budget, or when trials run out") {
  // 81 trials, eta 3, from 1/9: 81 @ 1/9, 27 @ 1/3, 9 @ 1 — stop (all at the full budget);
  // cost 9 + 9 + 9 = 27.
  const auto capped = model::successive_halving(81, 3, 1.0 / 9);
  REQUIRE(capped.rungs.size() == 3);
  CHECK(capped.rungs[2].trials == 9);
  CHECK(capped.total == doctest::Approx(27).epsilon(1e-12).scale(0));
  // max_fraction 1/2, eta 2, 8 trials from 1/8: 8 @ 1/8, 4 @ 1/4, 2 @ 1/2; cost 1 + 1 + 1 = 3.
  const auto half = model::successive_halving(8, 2, 1.0 / 8, 0.5);
  REQUIRE(half.rungs.size() == 3);
  CHECK(half.rungs[2].fraction == 0.5);
  CHECK(half.total == doctest::Approx(3).epsilon(1e-12).scale(0));
  // 10 trials, eta 3, from 1/9: floor(10/1) = 10 @ 1/9, floor(10/3) = 3 @ 1/3, floor(10/9) = 1 @ 1;
  // cost 10/9 + 1 + 1 = 28/9.
  const auto ten = model::successive_halving(10, 3, 1.0 / 9);
  REQUIRE(ten.rungs.size() == 3);
  CHECK(ten.rungs[1].trials == 3);
  CHECK(ten.total == doctest::Approx(28.0 / 9).epsilon(1e-12).scale(0));
  // 3 trials, eta 3, from 1/27: 3 @ 1/27, 1 @ 1/9, then floor(3/9) = 0: the survivor stops at 1/9.
  const auto short_of_trials = model::successive_halving(3, 3, 1.0 / 27);
  REQUIRE(short_of_trials.rungs.size() == 2);
  CHECK(short_of_trials.rungs[1].fraction == doctest::Approx(1.0 / 9).epsilon(1e-12).scale(0));
  CHECK(short_of_trials.total == doctest::Approx(3.0 / 27 + 1.0 / 9).epsilon(1e-12).scale(0));
}

TEST_CASE(
    "no early stopping trains every trial to the budget, and ASHA costs what its synchronous rungs cost") {
  // none: 27 trials · 1 = 27; with max_fraction 0.5, 13.5.
  CHECK(model::tuning_plan(model::EarlyStopping::none, 27, 3, 1.0 / 27).total == 27);
  CHECK(model::tuning_plan(model::EarlyStopping::none, 27, 3, 1.0 / 27, 0.5).total == 13.5);
  CHECK(model::tuning_plan(model::EarlyStopping::asha, 27, 3, 1.0 / 27).total ==
        doctest::Approx(4).epsilon(1e-12).scale(0));
  CHECK(model::tuning_plan(model::EarlyStopping::successive_halving, 27, 3, 1.0 / 27, 1, true).total ==
        doctest::Approx(3).epsilon(1e-12).scale(0));
}

TEST_CASE("the wall clock of the trials runs each rung in waves of the concurrent slots") {
  // 27/9/3/1 from scratch, one full trial = 3600 s, 8 at a time:
  //   rung 0: ceil(27/8) = 4 waves · 3600/27 s;  rung 1: ceil(9/8) = 2 · 3600/9;
  //   rung 2: ceil(3/8) = 1 · 3600/3;            rung 3: 1 · 3600.
  //   total = 3600 · (4/27 + 2/9 + 1/3 + 1) = 3600 · (4 + 6 + 9 + 27)/27 = 3600 · 46/27 = 6133.33 s.
  const auto plan = model::successive_halving(27, 3, 1.0 / 27);
  const auto times = model::rung_times(plan, 3600);
  REQUIRE(times.size() == 4);
  CHECK(times[0].seconds_per_trial == doctest::Approx(3600.0 / 27).epsilon(1e-12).scale(0));
  CHECK(model::wall_clock_of_trials(times, 8) == doctest::Approx(3600.0 * 46 / 27).epsilon(1e-12).scale(0));
  // One slot: every trial in turn, 3600 · 4 (the cost) = 14400 s. 27 slots: one wave a rung,
  // 3600 · (1/27 + 1/9 + 1/3 + 1) = 3600 · 40/27 = 5333.33 s.
  CHECK(model::wall_clock_of_trials(times, 1) == doctest::Approx(14400).epsilon(1e-12).scale(0));
  CHECK(model::wall_clock_of_trials(times, 27) == doctest::Approx(3600.0 * 40 / 27).epsilon(1e-12).scale(0));
  // Resumed, 8 at a time: per-trial times 3600·{1/27, 2/27, 2/9, 2/3};
  //   3600 · (4/27 + 2·2/27 + 2/9 + 2/3) = 3600 · (4 + 4 + 6 + 18)/27 = 3600 · 32/27 = 4266.67 s.
  const auto resumed = model::rung_times(model::successive_halving(27, 3, 1.0 / 27, 1, true), 3600);
  CHECK(model::wall_clock_of_trials(resumed, 8) == doctest::Approx(3600.0 * 32 / 27).epsilon(1e-12).scale(0));
  CHECK(model::wall_clock_of_trials({}, 8) == 0);
}

TEST_CASE("bad tuning inputs are refused with a message naming the problem") {
  CHECK_THROWS_WITH_AS((void)model::successive_halving(0, 3, 0.1), doctest::Contains("at least 1 trial"),
                       InputError);
  CHECK_THROWS_WITH_AS((void)model::successive_halving(27, 1, 0.1), doctest::Contains("eta > 1"), InputError);
  CHECK_THROWS_WITH_AS((void)model::successive_halving(27, 0.5, 0.1), doctest::Contains("eta > 1"),
                       InputError);
  CHECK_THROWS_WITH_AS((void)model::successive_halving(27, 3, 0), doctest::Contains("min_fraction"),
                       InputError);
  CHECK_THROWS_WITH_AS((void)model::successive_halving(27, 3, 1.5), doctest::Contains("min_fraction"),
                       InputError);
  CHECK_THROWS_WITH_AS((void)model::successive_halving(27, 3, 0.1, 1.2), doctest::Contains("max_fraction"),
                       InputError);
  CHECK_THROWS_WITH_AS((void)model::successive_halving(27, 3, 0.5, 0.25),
                       doctest::Contains("above max_fraction"), InputError);
  CHECK_THROWS_WITH_AS((void)model::tuning_plan(model::EarlyStopping::none, 0, 3, 0.1),
                       doctest::Contains("at least 1 trial"), InputError);
  CHECK_THROWS_WITH_AS((void)model::wall_clock_of_trials({{.trials = 3, .seconds_per_trial = 1}}, 0),
                       doctest::Contains("concurrent"), InputError);
  CHECK_THROWS_WITH_AS((void)model::wall_clock_of_trials({{.trials = 3, .seconds_per_trial = -1}}, 2),
                       doctest::Contains("trial's time"), InputError);
}
