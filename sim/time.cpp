#include "sim/time.hpp"

#include <cmath>
#include <string>

#include "sim/error.hpp"

namespace trainsim::sim {

Duration Duration::checked_from_seconds(double seconds) {
  if (std::isnan(seconds) || seconds < 0.0 || std::isinf(seconds)) {
    throw InputError("a duration must be a finite number of seconds >= 0, got " + std::to_string(seconds));
  }
  const double ps = seconds * 1e12;
  // 2^63 as a double; anything at or above it does not fit in int64.
  if (ps >= 9223372036854775808.0) {
    throw InputError("a duration of " + std::to_string(seconds) +
                     " s does not fit in int64 picoseconds (max about 9.2e6 s)");
  }
  // Snap products that are an integer up to the rounding error of the multiplication (1e-9 * 1e12 is
  // 1000.0000000000001); otherwise round up so no non-zero work becomes free.
  const double nearest = std::nearbyint(ps);
  if (std::fabs(ps - nearest) <= 1e-12 * nearest) return Duration(static_cast<std::int64_t>(nearest));
  return Duration(static_cast<std::int64_t>(std::ceil(ps)));
}

}  // namespace trainsim::sim
