#include "sim/time.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

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

TEST_CASE("the inline conversion rounds as std::nearbyint and std::ceil do, on either side of 2^52 ps") {
  // The documented rule with the library's rounding: the nearest whole count when within 1e-12 of it,
  // else the next count up.
  const auto rule = [](double seconds) {
    const double ps = seconds * 1e12;
    const double nearest = std::nearbyint(ps);
    return static_cast<std::int64_t>(std::fabs(ps - nearest) <= 1e-12 * nearest ? nearest : std::ceil(ps));
  };
  std::mt19937_64 draw(52);
  std::uniform_real_distribution<double> exponent(-15.0, 6.9);  // 1e-15 s to about 8e6 s
  std::uniform_int_distribution<std::int64_t> whole(0, std::int64_t{1} << 53);
  for (int i = 0; i < 200'000; ++i) {
    const double seconds = std::pow(10.0, exponent(draw));
    CHECK(Duration::from_seconds(seconds).ps() == rule(seconds));
    // Whole and half picosecond counts, and their neighbours, around 2^52 ps too.
    const double count = static_cast<double>(whole(draw)) / (i % 2 == 0 ? 1.0 : 2.0);
    for (const double s :
         {count / 1e12, std::nextafter(count / 1e12, 0.0), std::nextafter(count / 1e12, 1e7)})
      CHECK(Duration::from_seconds(s).ps() == rule(s));
  }
  CHECK(Duration::from_seconds(-0.0).ps() == 0);
}
