// The quantity parser: every unit of the SPEC list, by hand-computed SI values, and its error messages
// verbatim.
#include "scenarios/quantity.hpp"

#include <doctest/doctest.h>

#include <string>

#include "sim/error.hpp"

using namespace trainsim::scenario;

namespace {
double parse(const char* text, Dimension d) {
  return parse_quantity(text, d);
}
std::string error_of(const char* text, Dimension d, Bound b = Bound::positive) {
  return try_parse_quantity(text, d, b).error;
}
}  // namespace

TEST_CASE("sizes accept decimal and binary units") {
  CHECK(parse("1 B", Dimension::bytes) == 1.0);
  CHECK(parse("2 kB", Dimension::bytes) == 2e3);
  CHECK(parse("40 MB", Dimension::bytes) == 40e6);
  CHECK(parse("80 GB", Dimension::bytes) == 80e9);
  CHECK(parse("1.5 TB", Dimension::bytes) == 1.5e12);
  CHECK(parse("1 KiB", Dimension::bytes) == 1024.0);
  CHECK(parse("1 MiB", Dimension::bytes) == 1048576.0);
  CHECK(parse("80 GiB", Dimension::bytes) == 85899345920.0);
  CHECK(parse("2 TiB", Dimension::bytes) == 2199023255552.0);
  CHECK(parse("  80GiB ", Dimension::bytes) == 85899345920.0);
}

TEST_CASE("bandwidths accept bits and bytes per second") {
  CHECK(parse("8 b/s", Dimension::bytes_per_s) == 1.0);
  CHECK(parse("8 kb/s", Dimension::bytes_per_s) == 1e3);
  CHECK(parse("8 Mb/s", Dimension::bytes_per_s) == 1e6);
  CHECK(parse("200 Gb/s", Dimension::bytes_per_s) == 25e9);
  CHECK(parse("1.6 Tb/s", Dimension::bytes_per_s) == doctest::Approx(200e9).scale(0));
  CHECK(parse("400 Gbps", Dimension::bytes_per_s) == 50e9);
  CHECK(parse("5 B/s", Dimension::bytes_per_s) == 5.0);
  CHECK(parse("5 kB/s", Dimension::bytes_per_s) == 5e3);
  CHECK(parse("5 MB/s", Dimension::bytes_per_s) == 5e6);
  CHECK(parse("300 GB/s", Dimension::bytes_per_s) == 300e9);
  CHECK(parse("3.35 TB/s", Dimension::bytes_per_s) == 3.35e12);
}

TEST_CASE("throughputs accept FLOP/s with SI prefixes") {
  CHECK(parse("7 FLOP/s", Dimension::flops_per_s) == 7.0);
  CHECK(parse("7 GFLOP/s", Dimension::flops_per_s) == 7e9);
  CHECK(parse("312 TFLOP/s", Dimension::flops_per_s) == 312e12);
  CHECK(parse("2 PFLOP/s", Dimension::flops_per_s) == 2e15);
}

TEST_CASE("durations accept picoseconds to days") {
  CHECK(parse("3 ps", Dimension::seconds) == doctest::Approx(3e-12).scale(0));
  CHECK(parse("600 ns", Dimension::seconds) == doctest::Approx(600e-9).scale(0));
  CHECK(parse("4 us", Dimension::seconds) == doctest::Approx(4e-6).scale(0));
  CHECK(parse("1.5 ms", Dimension::seconds) == doctest::Approx(1.5e-3).scale(0));
  CHECK(parse("30 s", Dimension::seconds) == 30.0);
  CHECK(parse("15 min", Dimension::seconds) == 900.0);
  CHECK(parse("2 h", Dimension::seconds) == 7200.0);
  CHECK(parse("40 d", Dimension::seconds) == 3456000.0);
}

TEST_CASE("powers, money, prices, rates and carbon intensity parse to SI values") {
  CHECK(parse("400 W", Dimension::watts) == 400.0);
  CHECK(parse("6.5 kW", Dimension::watts) == 6500.0);
  CHECK(parse("$12.5", Dimension::usd) == 12.5);
  CHECK(parse("$4.5M", Dimension::usd) == 4.5e6);
  CHECK(parse("$20k", Dimension::usd) == 20e3);
  CHECK(parse("$2.10/h", Dimension::usd_per_hour) == 2.10);
  CHECK(parse("$2.50", Dimension::usd_per_hour) == 2.50);  // the key names the denominator
  CHECK(parse("$0.02/GB", Dimension::usd_per_gb) == 0.02);
  CHECK(parse("$0.023/GB-month", Dimension::usd_per_gb_month) == 0.023);
  CHECK(parse("$0.12/kWh", Dimension::usd_per_kwh) == 0.12);
  CHECK(parse("0.02 /h", Dimension::rate_per_s) == doctest::Approx(0.02 / 3600).scale(0));
  CHECK(parse("1 /d", Dimension::rate_per_s) == doctest::Approx(1.0 / 86400).scale(0));
  CHECK(parse("350 g/kWh", Dimension::grams_per_kwh) == 350.0);
}

TEST_CASE("a bare number where a unit is needed names the expected unit") {
  CHECK(error_of("200", Dimension::bytes_per_s) ==
        "expected a bandwidth with a unit, like \"200 Gb/s\" or \"25 GB/s\" (b/s, kb/s, Mb/s, Gb/s, Tb/s, "
        "Gbps, B/s, "
        "kB/s, MB/s, GB/s, TB/s); found the bare number \"200\"");
  CHECK(error_of("7200", Dimension::seconds) ==
        "expected a duration with a unit, like \"2 h\" (ps, ns, us, ms, s, min, h, d); found the bare number "
        "\"7200\"");
}

TEST_CASE("a unit of another dimension, an unknown unit, and out-of-range values are errors") {
  CHECK(error_of("200 GB", Dimension::bytes_per_s) ==
        "\"200 GB\" is a size; expected a bandwidth with a unit, like \"200 Gb/s\" or \"25 GB/s\" (b/s, "
        "kb/s, Mb/s, "
        "Gb/s, Tb/s, Gbps, B/s, kB/s, MB/s, GB/s, TB/s)");
  CHECK(error_of("2 hours", Dimension::seconds) ==
        "unknown unit \"hours\" in \"2 hours\"; expected a duration with a unit, like \"2 h\" (ps, ns, us, "
        "ms, s, min, "
        "h, d)");
  CHECK(error_of("-5 GB", Dimension::bytes) == "must not be negative, found \"-5 GB\"");
  CHECK(error_of("0 GB", Dimension::bytes) == "must be greater than zero, found \"0 GB\"");
  CHECK(try_parse_quantity("0 GB", Dimension::bytes, Bound::non_negative).ok());
  CHECK(error_of(".nan", Dimension::seconds) ==
        "expected a duration with a unit, like \"2 h\" (ps, ns, us, ms, s, min, h, d), found \".nan\"");
  CHECK(error_of("1e999 B", Dimension::bytes) ==
        "the number \"1e999\" is out of range; expected a size with a unit, "
        "like \"80 GiB\" (B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)");
  CHECK_THROWS_AS((void)parse_quantity("fast", Dimension::seconds), trainsim::InputError);
}

TEST_CASE("counts accept scientific notation and reject YAML 1.1 surprises") {
  CHECK(try_parse_count("96", 1, 1e6).value == 96.0);
  CHECK(try_parse_count("300e9", 1, 1e18).value == 300e9);
  CHECK(try_parse_count("1.5e12", 1, 1e18).value == 1.5e12);
  CHECK(try_parse_count("010", 1, 1e6).error ==
        "leading zeros are not accepted (YAML 1.1 reads \"010\" as an octal number); write the number "
        "without them");
  CHECK(try_parse_count("0x1F", 1, 1e6).error ==
        "hexadecimal and octal numbers are not accepted, found \"0x1F\"");
  CHECK(try_parse_count("yes", 1, 1e6).error == "expected a number, found \"yes\"");
  CHECK(try_parse_count(".inf", 1, 1e6).error == "expected a number, found \".inf\"");
  CHECK(try_parse_count("2.5", 1, 1e6).error == "expected a whole number, found \"2.5\"");
  CHECK(try_parse_count("0", 1, 1e6).error == "must be at least 1, found \"0\"");
  CHECK(try_parse_count("1e30", 1, 1e7).error == "must be at most 1e+07, found \"1e30\"");
  CHECK(try_parse_number("8 GPUs", 0, 10).error ==
        "expected a plain number, found \"8 GPUs\" (no unit is expected here)");
}

TEST_CASE("formatted quantities read back to the same double") {
  for (double x : {85899345920.0, 0.1, 2.5e-7, 1.0 / 3.0, 312e12}) {
    for (Dimension d : {Dimension::bytes, Dimension::bytes_per_s, Dimension::flops_per_s, Dimension::seconds,
                        Dimension::watts, Dimension::usd, Dimension::usd_per_hour, Dimension::usd_per_gb,
                        Dimension::usd_per_gb_month, Dimension::usd_per_kwh, Dimension::rate_per_s,
                        Dimension::grams_per_kwh}) {
      CHECK(parse_quantity(format_quantity(x, d), d) == x);
    }
  }
}
