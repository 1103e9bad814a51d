#pragma once
// The units a reported value is in, and how a person reads it: "13.8 s", "61.2 GiB", "$4.51M", "41.5 %".
// Below every room that reports (run/'s messages, report/'s tables, the report pages' axes), so that all
// of them write a quantity the same way.
#include <string>

namespace trainsim::model {

enum class FieldUnit { count, seconds, bytes, usd, fraction, flops, tflops, per_second, kwh, kg, flag, text };

/// The display unit of a value of this magnitude: value / divisor, written between prefix and suffix
/// ("$" … "M", "" … " d"). format_human and the report's chart axes both choose units here, so a table
/// and an axis beside it never disagree.
struct HumanScale {
  double divisor = 1;
  const char* prefix = "";
  const char* suffix = "";
};
[[nodiscard]] HumanScale human_scale(FieldUnit unit, double magnitude);

/// A value in human units, e.g. 49.3e9 bytes -> "45.9 GiB"; 3.6e6 s -> "41.7 d".
std::string format_human(FieldUnit unit, double value);

}  // namespace trainsim::model
