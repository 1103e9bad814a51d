#pragma once
// Simulated time: integer picoseconds behind two strong types (DESIGN principle 1).
//  - Duration: a signed span of time (the difference of two Times may be negative).
//  - Time: a point on the simulation clock, picoseconds since the start of the simulation.
// int64 picoseconds cover about 106 days, far more than one simulated training step; run-level totals
// (days, dollars) are doubles in the report layer. Arithmetic is exact and unchecked (like int64);
// the one conversion from double seconds, Duration::from_seconds, is checked.
#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>

namespace trainsim::sim {

// Duration::from_seconds rounds by IEEE double arithmetic as written (see there).
#ifdef __FAST_MATH__
#error "Duration::from_seconds needs IEEE arithmetic without reassociation: build without -ffast-math"
#endif

class Duration {
 public:
  constexpr Duration() = default;

  /// Exactly `ps` picoseconds.
  static constexpr Duration from_ps(std::int64_t ps) { return Duration(ps); }
  /// The ONE conversion from double seconds. Rounds up to a whole picosecond, so any non-zero work lasts
  /// at least 1 ps; a value within floating-point rounding error (1e-12 relative) of a whole picosecond
  /// count becomes that count (1e-9 s is 1000 ps, not 1001). Throws InputError for NaN, negative,
  /// infinite, or values that do not fit in int64 picoseconds (about 9.2e6 s).
  static Duration from_seconds(double seconds) {
    // Inline for the common case, below 2^52 ps (about 75 minutes): adding and taking away 2^52 rounds to
    // the nearest whole picosecond as std::nearbyint does, exactly; whole counts past it are the double
    // itself; one not snapped is that nearest, or the next up when it rounded down (std::ceil). A lowering
    // converts millions of pieces; the library calls cost more than the arithmetic. Exact only as written:
    // reassociation folds (ps + 2^52) - 2^52 to ps, and contracting seconds * 1e12 + 2^52 into one fused
    // multiply-add rounds once where the snap needs two roundings. Hence -ffast-math is refused (above the
    // class), and the build names no -ffp-contract=fast and no FMA target (-march).
    constexpr double kExact = 4503599627370496.0;  // 2^52: every double from here up is whole
    const double ps = seconds * 1e12;
    if (ps >= 0.0 && ps < kExact) [[likely]] {
      const double nearest = (ps + kExact) - kExact;
      if (std::fabs(ps - nearest) <= 1e-12 * nearest) return Duration(static_cast<std::int64_t>(nearest));
      return Duration(static_cast<std::int64_t>(nearest < ps ? nearest + 1.0 : nearest));
    }
    return checked_from_seconds(seconds);
  }
  static constexpr Duration zero() { return Duration(0); }
  /// The largest representable span; used as "never".
  static constexpr Duration max() { return Duration(std::numeric_limits<std::int64_t>::max()); }

  [[nodiscard]] constexpr std::int64_t ps() const { return ps_; }
  /// In seconds, as a double (correctly rounded: whole seconds come back exact).
  [[nodiscard]] constexpr double seconds() const { return static_cast<double>(ps_) / 1e12; }

  constexpr Duration& operator+=(Duration other) {
    ps_ += other.ps_;
    return *this;
  }
  constexpr Duration& operator-=(Duration other) {
    ps_ -= other.ps_;
    return *this;
  }
  friend constexpr Duration operator+(Duration a, Duration b) { return Duration(a.ps_ + b.ps_); }
  friend constexpr Duration operator-(Duration a, Duration b) { return Duration(a.ps_ - b.ps_); }
  friend constexpr Duration operator-(Duration a) { return Duration(-a.ps_); }
  friend constexpr Duration operator*(Duration a, std::int64_t k) { return Duration(a.ps_ * k); }
  friend constexpr Duration operator*(std::int64_t k, Duration a) { return Duration(a.ps_ * k); }
  /// Integer division, truncating toward zero like int64.
  friend constexpr Duration operator/(Duration a, std::int64_t k) { return Duration(a.ps_ / k); }
  friend constexpr auto operator<=>(Duration, Duration) = default;

 private:
  constexpr explicit Duration(std::int64_t ps) : ps_(ps) {}
  /// from_seconds past its inline range: the checks, and a count from 2^52 ps up (every double there whole).
  static Duration checked_from_seconds(double seconds);
  std::int64_t ps_ = 0;
};

class Time {
 public:
  constexpr Time() = default;

  static constexpr Time from_ps(std::int64_t ps) { return Time(ps); }
  /// The start of the simulation.
  static constexpr Time zero() { return Time(0); }
  /// The end of time; used as "never" (do not add to it).
  static constexpr Time max() { return Time(std::numeric_limits<std::int64_t>::max()); }

  [[nodiscard]] constexpr std::int64_t ps() const { return ps_; }
  /// Seconds since the start, as a double.
  [[nodiscard]] constexpr double seconds() const { return static_cast<double>(ps_) / 1e12; }
  /// The span since the start of the simulation.
  [[nodiscard]] constexpr Duration since_start() const { return Duration::from_ps(ps_); }

  constexpr Time& operator+=(Duration d) {
    ps_ += d.ps();
    return *this;
  }
  friend constexpr Time operator+(Time t, Duration d) { return Time(t.ps_ + d.ps()); }
  friend constexpr Time operator+(Duration d, Time t) { return Time(t.ps_ + d.ps()); }
  friend constexpr Time operator-(Time t, Duration d) { return Time(t.ps_ - d.ps()); }
  friend constexpr Duration operator-(Time a, Time b) { return Duration::from_ps(a.ps_ - b.ps_); }
  friend constexpr auto operator<=>(Time, Time) = default;

 private:
  constexpr explicit Time(std::int64_t ps) : ps_(ps) {}
  std::int64_t ps_ = 0;
};

constexpr Time max(Time a, Time b) {
  return a < b ? b : a;
}
constexpr Duration max(Duration a, Duration b) {
  return a < b ? b : a;
}

}  // namespace trainsim::sim
