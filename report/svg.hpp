#pragma once
// The charts of `trainsim report` as inline SVG: x-y charts (dots, lines, staircases, ticks and rules),
// horizontal bars and lanes (a pipeline timeline). No script: every mark carries its hover text in an SVG
// <title>, which browsers show as a tooltip. Every chart's <svg> has data-chart="ID" and each mark
// class="mark", so a test (or a reader of the file) can find what was drawn.
//
// Axes speak human units (model::human_scale: days, $k/$M, GiB, %), and a value axis is logarithmic when
// its values span a decade or more, so that 8 nodes and 2,048 nodes both stay readable.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/report/summary.hpp"
#include "models/report/what_bounds.hpp"

namespace trainsim::report {

enum class Scale { linear, log, category };

struct Tick {
  double at = 0;
  std::string label;
};

struct Axis {
  std::string title;
  model::FieldUnit unit = model::FieldUnit::count;
  Scale scale = Scale::linear;
  double lo = 0, hi = 1;  ///< the drawn domain (data units); categories sit at 0 … n-1
  std::vector<Tick> ticks;
  /// Key axes only: each value as written in the file and where it sits on the axis.
  std::vector<std::pair<std::string, double>> positions;

  /// Where v sits along the axis, 0 at lo and 1 at hi (categories: centred in equal slots).
  [[nodiscard]] double fraction(double v) const;
  /// A key axis' position of a value as written; nullopt for a value the axis does not hold.
  [[nodiscard]] std::optional<double> position(const std::string& text) const;
};

/// Values spanning at least this ratio (max / min, all positive) get a logarithmic axis.
inline constexpr double kLogAxisSpan = 10;

/// An axis for `values` in `unit`: logarithmic when they span kLogAxisSpan or more, else linear (from zero
/// when `from_zero`), with round ticks labelled in human units. Non-finite values are ignored.
[[nodiscard]] Axis value_axis(std::string title, model::FieldUnit unit, const std::vector<double>& values,
                              bool from_zero = true);
/// An axis for the distinct values of a swept or layout key, in the order given: when each is a number
/// ("64") or every one a quantity of one dimension ("30 min", "3 h"), they sit at their values
/// (logarithmic when they span kLogAxisSpan) with a tick at each labelled as written; otherwise they are
/// categories in equal slots ("adamw", "adam8bit").
[[nodiscard]] Axis key_axis(std::string title, const std::vector<std::string>& values);

/// Ends a linear axis at `hi` rather than at the next round tick, dropping the ticks beyond it: a time series
/// drawn up to where its data ends.
void end_at(Axis& axis, double hi);

/// A short label for one value in human units, its own scale chosen for it ("30 min", "$1.5M", "64 GiB").
[[nodiscard]] std::string tick_label(model::FieldUnit unit, double value);

enum class Marker { none, dot, ring, cross, tick, rule };

struct Mark {
  double x = 0, y = 0;
  std::string tip;  ///< hover text
};

/// A set of marks drawn alike. `line` joins them in the order given, `step` as a staircase (a Pareto
/// front: each step holds the better value until the next point). A tick is a short stroke on the x axis
/// at x; a rule a dashed vertical line across the plot at x (y is ignored for both).
struct Layer {
  std::string label;  ///< legend text; empty keeps the layer out of the legend
  std::string color = "#4e79a7";
  Marker marker = Marker::dot;
  bool line = false;
  bool step = false;
  double size = 3;
  std::vector<Mark> marks;
};

/// A horizontal line at y across the plot (a capacity), labelled at its right end.
struct Rule {
  double y = 0;
  std::string label;
};

struct XYChart {
  std::string id;
  Axis x, y;
  std::vector<Layer> layers;
  std::vector<Rule> y_rules;
  double width = 900, height = 320;
  bool legend = true;
};
[[nodiscard]] std::string render(const XYChart& chart);

struct BarPart {
  std::string name;
  double value = 0;
  std::string color;
};
struct BarRow {
  std::string label;
  std::vector<BarPart> parts;  ///< stacked left to right
};
/// Horizontal stacked bars on one value axis from zero, one row each, the total written after the bar;
/// `limit` draws a vertical line (a capacity) the bars are measured against. No rows and no limit: a note
/// that there is nothing to show.
struct BarChart {
  std::string id;
  model::FieldUnit unit = model::FieldUnit::count;
  std::vector<BarRow> rows;
  std::optional<Rule> limit;
  double width = 900;
  bool legend = true;
};
[[nodiscard]] std::string render(const BarChart& chart);

/// One iteration's time as a stacked bar: compute, exposed TP / DP / PP communication, optimizer, bubble,
/// each in its colour (colors:: below), in that order on every page.
[[nodiscard]] BarRow step_bar(std::string label, const model::StepShares& step);

struct Lane {
  std::string label;
  double height = 14;
  bool first_of_group = false;  ///< a gap and a rule above it (a new pipeline stage)
};
struct LaneBox {
  std::size_t lane = 0;
  double start = 0, end = 0;
  std::string color;
  std::string tip;
  bool highlight = false;  ///< on the critical path: underlined in red
};
/// A stretch of a lane a path runs along.
struct LaneSpan {
  std::size_t lane = 0;
  double from = 0, to = 0;
};
/// Boxes in horizontal lanes over a time axis (a pipeline timeline); `path` (in time order) is drawn as one
/// red line along its spans, jumping between lanes where it changes lane.
struct LaneChart {
  std::string id;
  std::vector<Lane> lanes;
  std::vector<LaneBox> boxes;
  std::vector<LaneSpan> path;
  Axis x;
  std::vector<std::pair<std::string, std::string>> legend;  ///< (name, color)
  double width = 900;

  static constexpr double kLabelWidth = 110;  ///< lane labels, left of the plot
  static constexpr double kRightMargin = 16;
  /// Pixels of the plot area across, for callers that merge boxes narrower than a pixel.
  [[nodiscard]] double plot_width() const { return width - kLabelWidth - kRightMargin; }
};
[[nodiscard]] std::string render(const LaneChart& chart);

/// A legend line: a coloured swatch and a name per entry.
[[nodiscard]] std::string legend(const std::vector<std::pair<std::string, std::string>>& entries);

/// The colours of the parts of a step and of a bill, the same on every page.
namespace colors {
inline constexpr const char* kCompute = "#4e79a7";
inline constexpr const char* kTp = "#f28e2b";
inline constexpr const char* kEp = "#edc948";
inline constexpr const char* kDp = "#b07aa1";
inline constexpr const char* kPp = "#59a14f";
inline constexpr const char* kOptimizer = "#9c755f";
inline constexpr const char* kBubble = "#bab0ac";
inline constexpr const char* kMemory = "#76b7b2";
inline constexpr const char* kFailure = "#e15759";
inline constexpr const char* kMuted = "#9aa0a6";
inline constexpr const char* kPareto = "#e15759";
/// A palette for series with no meaning of their own (teams, other keys' values).
inline constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1",
                                           "#edc948", "#76b7b2", "#ff9da7", "#9c755f", "#bab0ac"};
}  // namespace colors

}  // namespace trainsim::report
