#include "sim/time.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "sim/error.hpp"

using trainsim::sim::Duration;
using trainsim::sim::Time;

TEST_CASE("time arithmetic is exact integer picoseconds and usable at compile time") {
  constexpr Time t = Time::zero() + Duration::from_ps(1500);
  static_assert(t.ps() == 1500);
  static_assert((t - Time::from_ps(500)) == Duration::from_ps(1000));
  static_assert(Duration::from_ps(7) * 3 == Duration::from_ps(21));
  static_assert(Duration::from_ps(7) / 2 == Duration::from_ps(3));
  static_assert(-Duration::from_ps(4) < Duration::zero());
  CHECK(Time::from_ps(2'000'000'000'000).seconds() == 2.0);
  CHECK(Duration::from_ps(1'500'000'000).seconds() == 1.5e-3);
}

TEST_CASE("a whole number of picoseconds converts exactly despite floating-point rounding") {
  CHECK(Duration::from_seconds(1e-9).ps() == 1000);  // 1e-9 * 1e12 is 1000.0000000000001 in double
  CHECK(Duration::from_seconds(1.0).ps() == 1'000'000'000'000);
  CHECK(Duration::from_seconds(0.1).ps() == 100'000'000'000);
  CHECK(Duration::from_seconds(3e-6).ps() == 3'000'000);
}

TEST_CASE("a fractional picosecond rounds up and non-zero work lasts at least one picosecond") {
  CHECK(Duration::from_seconds(1.5e-12).ps() == 2);
  CHECK(Duration::from_seconds(1e-15).ps() == 1);
  CHECK(Duration::from_seconds(1e-300).ps() == 1);
  CHECK(Duration::from_seconds(std::numeric_limits<double>::denorm_min()).ps() == 1);
  CHECK(Duration::from_seconds(0.0).ps() == 0);
}

TEST_CASE("a duration from NaN, negative, infinite or too many seconds is rejected as bad input") {
  CHECK_THROWS_AS(Duration::from_seconds(std::nan("")), trainsim::InputError);
  CHECK_THROWS_AS(Duration::from_seconds(-1e-12), trainsim::InputError);
  CHECK_THROWS_AS(Duration::from_seconds(std::numeric_limits<double>::infinity()), trainsim::InputError);
  CHECK_THROWS_WITH_AS(Duration::from_seconds(1e7), doctest::Contains("does not fit"), trainsim::InputError);
  CHECK(Duration::from_seconds(9e6).ps() == 9'000'000'000'000'000'000);
}
