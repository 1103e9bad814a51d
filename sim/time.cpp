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
  // from_seconds rounds below 2^52 ps inline; from there up every double is a whole count of picoseconds.
  return Duration(static_cast<std::int64_t>(ps));
}

}  // namespace trainsim::sim
