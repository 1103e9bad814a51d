#pragma once
// The one table-driven parser of physical quantities written in scenario and preset files (SPEC "Scenario
// files"): "80 GiB", "200 Gb/s", "312 TFLOP/s", "2 h", "400 W", "$2.50/h", "$0.02/GB", "350 g/kWh" …
// The caller says which dimension it expects; the result is an SI double (bytes, B/s, FLOP/s, s, W, USD,
// USD per hour / per GB / per GB-month / per kWh, events per second, grams per kWh).
// Errors are returned (or thrown as trainsim::InputError without a location) with the message a user can
// act on; the YAML loader adds file:line:col and the key path.
#include <cstdint>
#include <string>
#include <string_view>

namespace trainsim::scenario {

enum class Dimension {
  bytes,             ///< B kB MB GB TB (decimal) KiB MiB GiB TiB (binary)
  bytes_per_s,       ///< B/s kB/s MB/s GB/s TB/s, and bits: b/s kb/s Mb/s Gb/s Tb/s Gbps (÷ 8)
  flops_per_s,       ///< FLOP/s GFLOP/s TFLOP/s PFLOP/s
  seconds,           ///< ps ns us ms s min h d
  watts,             ///< W kW
  usd,               ///< "$12.5", "$4.5M" (k, M, B suffixes)
  usd_per_hour,      ///< "$2.10/h" (also /s, /min, /d): USD per hour
  usd_per_gb,        ///< "$0.02/GB": USD per 1e9 bytes
  usd_per_gb_month,  ///< "$0.023/GB-month": USD per 1e9 bytes per month
  usd_per_kwh,       ///< "$0.12/kWh"
  rate_per_s,        ///< "0.02 /h", "1 /d": events per second
  grams_per_kwh,     ///< "350 g/kWh" (also kg/kWh)
};

/// Whether zero is meaningful for the value (negative values are never accepted).
enum class Bound { positive, non_negative };

/// How the dimension is written, for messages: e.g. "a size with a unit, like \"80 GiB\"".
[[nodiscard]] std::string_view expected_unit(Dimension dimension);

struct QuantityResult {
  double value = 0;   ///< SI value when ok()
  std::string error;  ///< empty when ok(); otherwise what was expected and what was found
  [[nodiscard]] bool ok() const { return error.empty(); }
};

/// Parses `text` (surrounding spaces allowed; a space between number and unit optional). A price with no
/// denominator ("$2.50") takes the one the caller expects (the key names it: gpu_hour, egress). A bare number
/// is an error that names the expected unit; so is a unit of another dimension, a negative value, zero
/// under Bound::positive, or anything that is not finite (nan, inf, 1e999).
[[nodiscard]] QuantityResult try_parse_quantity(std::string_view text, Dimension dimension,
                                                Bound bound = Bound::positive);
/// As try_parse_quantity, throwing trainsim::InputError(message) on error.
[[nodiscard]] double parse_quantity(std::string_view text, Dimension dimension,
                                    Bound bound = Bound::positive);

/// A plain count: "96", "300e9", "1.5e12" — digits, optional fraction and exponent only; the value must
/// be integral and within [min, max]. YAML 1.1 spellings (010, 0x1F, yes, .nan) are errors.
[[nodiscard]] QuantityResult try_parse_count(std::string_view text, double min, double max);
/// A plain real number (ratios, fractions): decimal notation only, finite, within [min, max].
[[nodiscard]] QuantityResult try_parse_number(std::string_view text, double min, double max);

/// Text that try_parse_quantity reads back to exactly `si_value` (shortest round-trip digits), e.g.
/// "85899345920 B", "$2.5/h", "7200 s". Used by dump_scenario.
[[nodiscard]] std::string format_quantity(double si_value, Dimension dimension);
/// A value from the input, quoted for a message: bounded and escaped (a 300-digit number or raw bytes are
/// not echoed whole).
[[nodiscard]] std::string in_quotes(std::string_view s);
/// Shortest decimal text of `value` that reads back exactly ("300000000000", "0.1").
[[nodiscard]] std::string format_number(double value);

}  // namespace trainsim::scenario
