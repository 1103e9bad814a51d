#include "models/spec/human_units.hpp"

#include <fmt/format.h>

#include <cmath>

namespace trainsim::model {

namespace {

// The largest power of `base` not above `a` that has a unit in `units` (smallest first), with that unit:
// SI prefixes for base 1,000, binary ones for 1,024.
template <std::size_t N>
HumanScale prefixed(double a, double base, const char* const (&units)[N]) {
  std::size_t i = 0;
  double divisor = 1;
  while (a / divisor >= base && i + 1 < N) {
    divisor *= base;
    ++i;
  }
  return {divisor, "", units[i]};
}

}  // namespace

HumanScale human_scale(FieldUnit unit, double magnitude) {
  const double a = std::fabs(magnitude);
  switch (unit) {
    case FieldUnit::seconds:
      if (a == 0) return {1, "", " s"};
      if (a < 1e-3) return {1e-6, "", " us"};
      if (a < 1) return {1e-3, "", " ms"};
      if (a < 120) return {1, "", " s"};
      if (a < 7200) return {60, "", " min"};
      if (a < 2 * 86400) return {3600, "", " h"};
      return {86400, "", " d"};
    case FieldUnit::bytes: {
      static const char* const kUnits[] = {" B", " KiB", " MiB", " GiB", " TiB", " PiB", " EiB"};
      return prefixed(a, 1024, kUnits);
    }
    case FieldUnit::usd:
      if (a < 1e3) return {1, "$", ""};
      if (a < 1e6) return {1e3, "$", "k"};
      if (a < 1e9) return {1e6, "$", "M"};
      return {1e9, "$", "B"};
    case FieldUnit::fraction:
      return {0.01, "", " %"};
    case FieldUnit::flops: {
      static const char* const kUnits[] = {" FLOP",  " kFLOP", " MFLOP", " GFLOP",
                                           " TFLOP", " PFLOP", " EFLOP", " ZFLOP"};
      return prefixed(a, 1000, kUnits);
    }
    case FieldUnit::tflops:
      return {1, "", " TFLOP/s"};
    case FieldUnit::per_second: {
      static const char* const kUnits[] = {" /s", " k/s", " M/s", " G/s", " T/s", " P/s", " E/s", " Z/s"};
      return prefixed(a, 1000, kUnits);
    }
    case FieldUnit::kwh: {
      static const char* const kUnits[] = {" kWh", " MWh", " GWh", " TWh", " PWh", " EWh", " ZWh", " YWh"};
      return prefixed(a, 1000, kUnits);
    }
    case FieldUnit::kg: {
      static const char* const kUnits[] = {" kg", " t", " kt", " Mt", " Gt", " Tt", " Pt", " Et"};
      return prefixed(a, 1000, kUnits);
    }
    case FieldUnit::count:
      if (a < 1e4) return {1, "", ""};
      if (a < 1e6) return {1e3, "", "K"};
      if (a < 1e9) return {1e6, "", "M"};
      if (a < 1e12) return {1e9, "", "B"};
      return {1e12, "", "T"};
    case FieldUnit::flag:
    case FieldUnit::text:
      return {};
  }
  return {};
}

std::string format_human(FieldUnit unit, double v) {
  const double a = std::fabs(v);
  const HumanScale s = human_scale(unit, v);
  const double x = v / s.divisor;
  switch (unit) {
    case FieldUnit::seconds:
      if (a == 0) return "0 s";
      if (a < 1e-3) return fmt::format("{:.1f}{}", x, s.suffix);
      if (a < 1) return fmt::format("{:.2f}{}", x, s.suffix);
      if (a < 120) return fmt::format("{:.3g}{}", x, s.suffix);
      return fmt::format("{:.1f}{}", x, s.suffix);
    case FieldUnit::bytes:
      return s.divisor == 1 ? fmt::format("{:.0f}{}", x, s.suffix) : fmt::format("{:.1f}{}", x, s.suffix);
    case FieldUnit::usd:
      if (a > 0 && a < 0.01) return fmt::format("${:.3g}", v);  // a price per token
      if (a < 1e3) return fmt::format("${:.2f}", v);
      if (a < 1e6) return fmt::format("${:.1f}k", x);
      return fmt::format("${:.2f}{}", x, s.suffix);
    case FieldUnit::fraction:
      return fmt::format("{:.1f}{}", x, s.suffix);
    case FieldUnit::flops:
    case FieldUnit::per_second:
    case FieldUnit::kwh:
    case FieldUnit::kg:
      return fmt::format("{:.{}g}{}", x, unit == FieldUnit::flops ? 3 : 4, s.suffix);
    case FieldUnit::tflops:
      return fmt::format("{:.1f}{}", v, s.suffix);
    case FieldUnit::flag:
      return v != 0 ? "yes" : "no";
    case FieldUnit::count:
      if (a < 1e4) return v == std::floor(v) ? fmt::format("{:.0f}", v) : fmt::format("{:.4g}", v);
      if (a < 1e6) return fmt::format("{:.1f}K", x);
      return fmt::format("{:.2f}{}", x, s.suffix);
    case FieldUnit::text:
      return "";
  }
  return fmt::format("{}", v);
}

}  // namespace trainsim::model
