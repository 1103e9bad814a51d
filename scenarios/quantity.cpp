#include "scenarios/quantity.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <optional>

#include "sim/error.hpp"
#include "sim/utf8_text.hpp"

namespace trainsim::scenario {
namespace {

struct Unit {
  std::string_view spelling;  ///< money units start with '$' and hold what follows the amount
  Dimension dimension;
  double factor;  ///< SI value of one unit
};

constexpr double kHour = 3600.0;
// One table for every unit the SPEC lists (and a few obvious aliases). Lookup is exact and case-sensitive,
// because "Mb/s" and "MB/s" differ by a factor of eight.
constexpr std::array kUnits{
    Unit{"B", Dimension::bytes, 1.0},
    Unit{"kB", Dimension::bytes, 1e3},
    Unit{"KB", Dimension::bytes, 1e3},
    Unit{"MB", Dimension::bytes, 1e6},
    Unit{"GB", Dimension::bytes, 1e9},
    Unit{"TB", Dimension::bytes, 1e12},
    Unit{"PB", Dimension::bytes, 1e15},
    Unit{"KiB", Dimension::bytes, 1024.0},
    Unit{"MiB", Dimension::bytes, 1024.0 * 1024},
    Unit{"GiB", Dimension::bytes, 1024.0 * 1024 * 1024},
    Unit{"TiB", Dimension::bytes, 1024.0 * 1024 * 1024 * 1024},
    Unit{"b/s", Dimension::bytes_per_s, 1.0 / 8},
    Unit{"kb/s", Dimension::bytes_per_s, 1e3 / 8},
    Unit{"Mb/s", Dimension::bytes_per_s, 1e6 / 8},
    Unit{"Gb/s", Dimension::bytes_per_s, 1e9 / 8},
    Unit{"Tb/s", Dimension::bytes_per_s, 1e12 / 8},
    Unit{"Mbps", Dimension::bytes_per_s, 1e6 / 8},
    Unit{"Gbps", Dimension::bytes_per_s, 1e9 / 8},
    Unit{"Tbps", Dimension::bytes_per_s, 1e12 / 8},
    Unit{"B/s", Dimension::bytes_per_s, 1.0},
    Unit{"kB/s", Dimension::bytes_per_s, 1e3},
    Unit{"MB/s", Dimension::bytes_per_s, 1e6},
    Unit{"GB/s", Dimension::bytes_per_s, 1e9},
    Unit{"TB/s", Dimension::bytes_per_s, 1e12},
    Unit{"GiB/s", Dimension::bytes_per_s, 1024.0 * 1024 * 1024},
    Unit{"FLOP/s", Dimension::flops_per_s, 1.0},
    Unit{"GFLOP/s", Dimension::flops_per_s, 1e9},
    Unit{"TFLOP/s", Dimension::flops_per_s, 1e12},
    Unit{"PFLOP/s", Dimension::flops_per_s, 1e15},
    Unit{"ps", Dimension::seconds, 1e-12},
    Unit{"ns", Dimension::seconds, 1e-9},
    Unit{"us", Dimension::seconds, 1e-6},
    Unit{"µs", Dimension::seconds, 1e-6},
    Unit{"ms", Dimension::seconds, 1e-3},
    Unit{"s", Dimension::seconds, 1.0},
    Unit{"min", Dimension::seconds, 60.0},
    Unit{"h", Dimension::seconds, kHour},
    Unit{"d", Dimension::seconds, 24 * kHour},
    Unit{"W", Dimension::watts, 1.0},
    Unit{"kW", Dimension::watts, 1e3},
    Unit{"MW", Dimension::watts, 1e6},
    Unit{"/s", Dimension::rate_per_s, 1.0},
    Unit{"/min", Dimension::rate_per_s, 1.0 / 60},
    Unit{"/h", Dimension::rate_per_s, 1.0 / kHour},
    Unit{"/d", Dimension::rate_per_s, 1.0 / (24 * kHour)},
    Unit{"g/kWh", Dimension::grams_per_kwh, 1.0},
    Unit{"kg/kWh", Dimension::grams_per_kwh, 1e3},
    Unit{"$", Dimension::usd, 1.0},
    Unit{"$/h", Dimension::usd_per_hour, 1.0},
    Unit{"$/GPU-hour", Dimension::usd_per_hour, 1.0},
    Unit{"$/min", Dimension::usd_per_hour, 60.0},
    Unit{"$/s", Dimension::usd_per_hour, kHour},
    Unit{"$/d", Dimension::usd_per_hour, 1.0 / 24},
    Unit{"$/GB", Dimension::usd_per_gb, 1.0},
    Unit{"$/TB", Dimension::usd_per_gb, 1e-3},
    Unit{"$/GB-month", Dimension::usd_per_gb_month, 1.0},
    Unit{"$/TB-month", Dimension::usd_per_gb_month, 1e-3},
    Unit{"$/kWh", Dimension::usd_per_kwh, 1.0},
    Unit{"$/MWh", Dimension::usd_per_kwh, 1e-3},
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

/// Reads a decimal number at the start of `s` with a strict grammar: [-+]? digits [. digits] [e[-+]digits].
/// No leading zeros (YAML 1.1 reads 010 as octal), no hex, no nan/inf. On success `s` is advanced.
struct NumberScan {
  std::optional<double> value;
  std::string error;
};

NumberScan scan_number(std::string_view& s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  const std::size_t int_start = i;
  while (i < s.size() && is_digit(s[i])) ++i;
  const std::size_t int_digits = i - int_start;
  std::size_t frac_digits = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    const std::size_t frac_start = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    frac_digits = i - frac_start;
  }
  if (int_digits == 0 && frac_digits == 0) {
    return {std::nullopt, "expected a number, found " + in_quotes(s)};
  }
  if (int_digits > 1 && s[int_start] == '0') {
    return {std::nullopt, "leading zeros are not accepted (YAML 1.1 reads " + in_quotes(s) +
                              " as an octal number); write the number without them"};
  }
  if (i < s.size() && (s[i] == 'x' || s[i] == 'X' || s[i] == 'o') && int_digits == 1 && s[int_start] == '0') {
    return {std::nullopt, "hexadecimal and octal numbers are not accepted, found " + in_quotes(s)};
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < s.size() && (s[j] == '-' || s[j] == '+')) ++j;
    const std::size_t exp_start = j;
    while (j < s.size() && is_digit(s[j])) ++j;
    if (j > exp_start) i = j;  // otherwise the 'e' is not an exponent and belongs to what follows
  }
  double value = 0;
  // from_chars does not take a leading '+'.
  const std::size_t from = (s[0] == '+') ? 1 : 0;
  const auto [end, ec] = std::from_chars(s.data() + from, s.data() + i, value);
  if (ec == std::errc::result_out_of_range || !std::isfinite(value)) {
    return {std::nullopt, "the number " + in_quotes(s.substr(0, i)) + " is out of range"};
  }
  if (ec != std::errc() || end != s.data() + i)
    return {std::nullopt, "expected a number, found " + in_quotes(s)};
  s.remove_prefix(i);
  return {value, ""};
}

std::string_view dimension_noun(Dimension d) {
  switch (d) {
    case Dimension::bytes:
      return "a size";
    case Dimension::bytes_per_s:
      return "a bandwidth";
    case Dimension::flops_per_s:
      return "a throughput";
    case Dimension::seconds:
      return "a duration";
    case Dimension::watts:
      return "a power";
    case Dimension::usd:
      return "an amount of money";
    case Dimension::usd_per_hour:
      return "a price per hour";
    case Dimension::usd_per_gb:
      return "a price per GB";
    case Dimension::usd_per_gb_month:
      return "a price per GB-month";
    case Dimension::usd_per_kwh:
      return "an energy price";
    case Dimension::rate_per_s:
      return "a rate";
    case Dimension::grams_per_kwh:
      return "a carbon intensity";
  }
  return "a quantity";
}

/// Words that YAML 1.1 reads as booleans or special floats: named in messages because they surprise.
bool is_yaml11_word(std::string_view s) {
  static constexpr std::array kWords{"yes",  "no",   "on",    "off",   "true", "false", "y",    "n",
                                     ".nan", ".inf", "-.inf", "+.inf", "nan",  "inf",   "null", "~"};
  std::string lower;
  for (char c : s) lower += static_cast<char>((c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c);
  for (std::string_view w : kWords) {
    if (lower == w) return true;
  }
  return false;
}

QuantityResult fail(std::string message) {
  return {0, std::move(message)};
}

QuantityResult check_bound(double value, std::string_view text, Bound bound) {
  if (value < 0) return fail("must not be negative, found " + in_quotes(text));
  if (value == 0 && bound == Bound::positive)
    return fail("must be greater than zero, found " + in_quotes(text));
  if (!std::isfinite(value)) return fail("the value " + in_quotes(text) + " is out of range");
  return {value, ""};
}

}  // namespace

std::string_view expected_unit(Dimension dimension) {
  switch (dimension) {
    case Dimension::bytes:
      return "a size with a unit, like \"80 GiB\" (B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)";
    case Dimension::bytes_per_s:
      return "a bandwidth with a unit, like \"200 Gb/s\" or \"25 GB/s\" (b/s, kb/s, Mb/s, Gb/s, Tb/s, Gbps, "
             "B/s, kB/s, MB/s, GB/s, TB/s)";
    case Dimension::flops_per_s:
      return "a throughput with a unit, like \"312 TFLOP/s\" (FLOP/s, GFLOP/s, TFLOP/s, PFLOP/s)";
    case Dimension::seconds:
      return "a duration with a unit, like \"2 h\" (ps, ns, us, ms, s, min, h, d)";
    case Dimension::watts:
      return "a power with a unit, like \"400 W\" (W, kW)";
    case Dimension::usd:
      return "an amount of money, like \"$12.5\" or \"$4.5M\"";
    case Dimension::usd_per_hour:
      return "a price per GPU-hour, like \"$2.10/h\"";
    case Dimension::usd_per_gb:
      return "a price per GB, like \"$0.02/GB\"";
    case Dimension::usd_per_gb_month:
      return "a price per GB-month, like \"$0.023/GB-month\"";
    case Dimension::usd_per_kwh:
      return "an energy price, like \"$0.12/kWh\"";
    case Dimension::rate_per_s:
      return "a rate, like \"0.02 /h\" (per s, min, h or d)";
    case Dimension::grams_per_kwh:
      return "a carbon intensity, like \"350 g/kWh\"";
  }
  return "a quantity with a unit";
}

QuantityResult try_parse_quantity(std::string_view text, Dimension dimension, Bound bound) {
  const std::string_view original = trim(text);
  std::string_view s = original;
  const std::string expected = "expected " + std::string(expected_unit(dimension));
  if (s.empty()) return fail(expected + ", found an empty value");
  if (is_yaml11_word(s)) return fail(expected + ", found " + in_quotes(s));

  const bool money = s.front() == '$';
  if (money) s.remove_prefix(1);
  const NumberScan number = scan_number(s);
  if (!number.value) return fail(number.error + "; " + expected);
  double value = *number.value;
  std::string unit;
  if (money) {
    // "$4.5M": a magnitude suffix directly after the amount.
    if (!s.empty() && (s.front() == 'k' || s.front() == 'K' || s.front() == 'M' || s.front() == 'B') &&
        (s.size() == 1 || s[1] == '/' || s[1] == ' ')) {
      value *= s.front() == 'M' ? 1e6 : s.front() == 'B' ? 1e9 : 1e3;
      s.remove_prefix(1);
    }
    unit = "$";
    for (char c : s) {
      if (c != ' ') unit += c;  // "$2.10 / h" reads like "$2.10/h"
    }
  } else {
    unit = std::string(trim(s));
  }
  if (unit.empty()) {
    return fail(expected + "; found the bare number " + in_quotes(original));
  }
  // A price without a denominator takes the key's: `gpu_hour: "$2.50"` is per GPU-hour (SPEC: "per GPU-hour
  // unless the key says otherwise"), `egress: "$0.02"` per GB.
  if (unit == "$" && (dimension == Dimension::usd_per_hour || dimension == Dimension::usd_per_gb ||
                      dimension == Dimension::usd_per_gb_month || dimension == Dimension::usd_per_kwh)) {
    return check_bound(value, original, bound);
  }
  for (const Unit& u : kUnits) {
    if (u.spelling != unit) continue;
    if (u.dimension != dimension) {
      return fail(in_quotes(original) + " is " + std::string(dimension_noun(u.dimension)) + "; " + expected);
    }
    return check_bound(value * u.factor, original, bound);
  }
  return fail("unknown unit " + in_quotes(money ? unit.substr(1) : unit) + " in " + in_quotes(original) +
              "; " + expected);
}

double parse_quantity(std::string_view text, Dimension dimension, Bound bound) {
  QuantityResult r = try_parse_quantity(text, dimension, bound);
  if (!r.ok()) throw InputError(r.error);
  return r.value;
}

QuantityResult try_parse_number(std::string_view text, double min, double max) {
  const std::string_view original = trim(text);
  if (original.empty()) return fail("expected a number, found an empty value");
  if (is_yaml11_word(original)) return fail("expected a number, found " + in_quotes(original));
  std::string_view s = original;
  const NumberScan number = scan_number(s);
  if (!number.value) return fail(number.error);
  if (!trim(s).empty()) {
    return fail("expected a plain number, found " + in_quotes(original) + " (no unit is expected here)");
  }
  const double value = *number.value;
  if (value < min) {
    return fail("must be at least " + format_number(min) + ", found " + in_quotes(original));
  }
  if (value > max) return fail("must be at most " + format_number(max) + ", found " + in_quotes(original));
  return {value, ""};
}

QuantityResult try_parse_count(std::string_view text, double min, double max) {
  QuantityResult r = try_parse_number(text, min, max);
  if (r.ok() && r.value != std::floor(r.value)) {
    return fail("expected a whole number, found " + in_quotes(trim(text)));
  }
  return r;
}

std::string format_number(double value) {
  std::array<char, 64> buffer{};
  const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  TRAINSIM_CHECK(ec == std::errc(), "to_chars failed");
  return {buffer.data(), end};
}

std::string format_quantity(double si_value, Dimension dimension) {
  std::string n = format_number(si_value);
  switch (dimension) {
    case Dimension::bytes:
      return n + " B";
    case Dimension::bytes_per_s:
      return n + " B/s";
    case Dimension::flops_per_s:
      return n + " FLOP/s";
    case Dimension::seconds:
      return n + " s";
    case Dimension::watts:
      return n + " W";
    case Dimension::usd:
      return "$" + n;
    case Dimension::usd_per_hour:
      return "$" + n + "/h";
    case Dimension::usd_per_gb:
      return "$" + n + "/GB";
    case Dimension::usd_per_gb_month:
      return "$" + n + "/GB-month";
    case Dimension::usd_per_kwh:
      return "$" + n + "/kWh";
    case Dimension::rate_per_s:
      return n + " /s";
    case Dimension::grams_per_kwh:
      return n + " g/kWh";
  }
  return n;
}

std::string in_quotes(std::string_view s) {
  return "\"" + sim::escaped_excerpt(s, 40) + "\"";
}

}  // namespace trainsim::scenario
