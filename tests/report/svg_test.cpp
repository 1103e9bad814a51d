#include "report/svg.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace trainsim;
using model::FieldUnit;
using report::Scale;

namespace {

std::vector<std::string> labels(const report::Axis& a) {
  std::vector<std::string> out;
  for (const auto& t : a.ticks) out.push_back(t.label);
  return out;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a value axis is linear with round ticks in the unit a person would use") {
  // 45.7 days of run time: days, a step of 10 (45.7 / 5 = 9.1, rounded up to 10), from zero to 50 d.
  const auto days = report::value_axis("run time", FieldUnit::seconds, {0.0, 45.66 * 86400});
  CHECK(days.scale == Scale::linear);
  CHECK(labels(days) == std::vector<std::string>{"0 d", "10 d", "20 d", "30 d", "40 d", "50 d"});
  CHECK(days.hi == doctest::Approx(50 * 86400.0));
  // $1.1M to $4.7M, not from zero: a step of $1M (3.6 / 5 = 0.72, rounded up to 1).
  const auto usd = report::value_axis("cost", FieldUnit::usd, {1.1e6, 4.7e6}, false);
  CHECK(labels(usd) == std::vector<std::string>{"$1M", "$2M", "$3M", "$4M", "$5M"});
  // 0 to 80 GiB: GiB, a step of 20; zero reads "0 GiB".
  const auto gib = report::value_axis("memory", FieldUnit::bytes, {0.0, 80.0 * (1 << 30)});
  CHECK(labels(gib) == std::vector<std::string>{"0 GiB", "20 GiB", "40 GiB", "60 GiB", "80 GiB"});
  // $0 to $1.7M: a step of $0.5M (1.7 / 5 = 0.34 -> 0.5), one decimal, and a bare "$0".
  CHECK(labels(report::value_axis("bill", FieldUnit::usd, {0.0, 1.7e6})) ==
        std::vector<std::string>{"$0", "$0.5M", "$1.0M", "$1.5M", "$2.0M"});
  // Counts step by whole numbers: 0 to 12 jobs would step by 2.5 (12 / 5 = 2.4); it steps by 5.
  CHECK(labels(report::value_axis("jobs", FieldUnit::count, {0.0, 12.0})) ==
        std::vector<std::string>{"0", "5", "10", "15"});
  // A time series ends where its data does: 0 to 7 d, not to the next round tick at 8 d.
  auto week = report::value_axis("t", FieldUnit::seconds, {0.0, 7 * 86400.0});
  report::end_at(week, 7 * 86400.0);
  CHECK(week.hi == 7 * 86400.0);
  CHECK(labels(week) == std::vector<std::string>{"0 d", "2 d", "4 d", "6 d"});
}

TEST_CASE("a value axis is logarithmic once its values span a decade, with round human ticks") {
  CHECK(report::value_axis("x", FieldUnit::usd, {1e6, 9.9e6}, false).scale == Scale::linear);
  // $1.1M to $23M spans 21x: 1-2-5 ticks from the rung below to the rung above.
  const auto usd = report::value_axis("cost", FieldUnit::usd, {1.1e6, 2.3e7}, false);
  CHECK(usd.scale == Scale::log);
  CHECK(labels(usd) == std::vector<std::string>{"$1M", "$2M", "$5M", "$10M", "$20M", "$50M"});
  // 1 h to 30 d: round durations (1 h 2 h 3 h 6 h 12 h 1 d 2 d 5 d 10 d 20 d 50 d), eleven thinned to every
  // other one; each label in its own unit.
  const auto time = report::value_axis("run time", FieldUnit::seconds, {3600.0, 30 * 86400.0}, false);
  CHECK(time.scale == Scale::log);
  CHECK(labels(time) == std::vector<std::string>{"60 min", "3 h", "12 h", "2 d", "10 d", "50 d"});
  // On a log axis 10 sits halfway between 1 and 100.
  report::Axis a{.scale = Scale::log, .lo = 1, .hi = 100};
  CHECK(a.fraction(10) == doctest::Approx(0.5));
}

TEST_CASE("a key axis places numbers and quantities by value and anything else in equal slots") {
  // Durations as written in a sweep: 1800 s to 21600 s spans 12x, so logarithmic; labels as written.
  const auto interval = report::key_axis("checkpoint.interval", {"30 min", "1 h", "3 h", "6 h"});
  CHECK(interval.scale == Scale::log);
  CHECK(interval.position("3 h") == doctest::Approx(10800.0));
  CHECK(labels(interval) == std::vector<std::string>{"30 min", "1 h", "3 h", "6 h"});
  CHECK_FALSE(interval.position("2 h"));
  // Node counts 8 to 256 (32x): logarithmic; tp 1 to 8 (8x): linear.
  CHECK(report::key_axis("nodes", {"8", "16", "32", "64", "128", "256"}).scale == Scale::log);
  const auto tp = report::key_axis("tp", {"1", "2", "4", "8"});
  CHECK(tp.scale == Scale::linear);
  CHECK(tp.position("4") == doctest::Approx(4.0));
  // Names, mixed kinds and a single value are categories: slot i of n centred at (i + 0.5) / n.
  const auto optimizer = report::key_axis("optimizer", {"adamw", "adam8bit"});
  CHECK(optimizer.scale == Scale::category);
  CHECK(optimizer.fraction(*optimizer.position("adamw")) == doctest::Approx(0.25));
  CHECK(optimizer.fraction(*optimizer.position("adam8bit")) == doctest::Approx(0.75));
  CHECK(report::key_axis("mixed", {"30 min", "adamw"}).scale == Scale::category);
  CHECK(report::key_axis("one", {"64"}).scale == Scale::category);
}

TEST_CASE("tick labels carry their own human unit") {
  CHECK(report::tick_label(FieldUnit::usd, 1.5e6) == "$1.5M");
  CHECK(report::tick_label(FieldUnit::seconds, 1800) == "30 min");
  CHECK(report::tick_label(FieldUnit::bytes, 64.0 * (1 << 30)) == "64 GiB");
  CHECK(report::tick_label(FieldUnit::count, 2048) == "2048");
}

TEST_CASE("an x-y chart gives every mark its hover text and names itself for tests and readers") {
  report::XYChart chart{.id = "c1",
                        .x = report::value_axis("cost", FieldUnit::usd, {1e6, 5e7}, false),
                        .y = report::value_axis("time", FieldUnit::seconds, {86400.0, 2 * 86400.0}, false)};
  chart.layers.push_back(
      {.label = "points", .marks = {{1e6, 86400, "a & b"}, {2e6, 1.5 * 86400, "c"}, {4e7, 2 * 86400, "d"}}});
  chart.layers.push_back(
      {.label = "front", .marker = report::Marker::ring, .step = true, .marks = {{1e6, 86400, "e"}}});
  const std::string svg = report::render(chart);
  CHECK(svg.find(R"(data-chart="c1")") != std::string::npos);
  CHECK(count(svg, R"(class="mark")") == 4);
  CHECK(svg.find("<title>a &amp; b</title>") != std::string::npos);
  CHECK(svg.find("cost (log scale)") != std::string::npos);
  CHECK(svg.find(">points</span>") != std::string::npos);  // the legend
}

TEST_CASE("bars stack their parts and say the total against a capacity") {
  const double gib = 1 << 30;
  report::BarChart chart{
      .id = "mem",
      .unit = FieldUnit::bytes,
      .rows = {{"stage 0", {{"weights", 12 * gib, "#111"}, {"activations", 20 * gib, "#222"}}}},
      .limit = report::Rule{80 * gib, "capacity"}};
  const std::string svg = report::render(chart);
  CHECK(svg.find("32.0 GiB (40 %)") != std::string::npos);                           // 12 + 20 of 80
  CHECK(svg.find("stage 0 — activations: 20.0 GiB (62.5 %)") != std::string::npos);  // 20 of 32
  CHECK(count(svg, R"(class="mark")") == 2);
  CHECK(report::render(report::BarChart{.id = "empty"}) == "<p>(nothing to show)</p>");
}

TEST_CASE("lanes draw one box per slice and the path through them") {
  report::LaneChart chart{.id = "t",
                          .lanes = {{"stage 0"}, {"stage 1"}},
                          .x = report::value_axis("t", FieldUnit::seconds, {0.0, 2.0})};
  chart.boxes = {{0, 0, 1, "#111", "a", true}, {1, 1, 2, "#222", "b", true}};
  chart.path = {{0, 0, 1}, {1, 1, 2}};
  const std::string svg = report::render(chart);
  CHECK(count(svg, R"(class="mark")") == 2);
  CHECK(svg.find("critical-path") != std::string::npos);
}
