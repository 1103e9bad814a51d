#include "report/svg.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "report/page.hpp"
#include "report/table.hpp"
#include "scenarios/quantity.hpp"

namespace trainsim::report {

namespace {

using model::FieldUnit;

constexpr double kDay = 86400;
constexpr double kHour = 3600;
constexpr double kMinute = 60;
/// At most this many labelled ticks on an axis; more are thinned.
constexpr std::size_t kMaxTicks = 9;
/// Rough width of one character of an 11 px label, for deciding whether labels must be slanted.
constexpr double kCharWidth = 6.2;

/// 1, 2, 2.5 or 5 times a power of ten, the smallest not below `raw`.
double nice_step(double raw) {
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / power;
  const double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10;
  return nice * power;
}

/// Decimals that show every multiple of `step` exactly (2.5 needs one more than 2).
int decimals_for(double step) {
  int d = 0;
  while (d < 6 && std::fabs(step * std::pow(10.0, d) - std::round(step * std::pow(10.0, d))) > 1e-9) ++d;
  return d;
}

/// Candidate ticks of a logarithmic axis in SI units: round durations for time, powers of two for bytes,
/// 1-2-5 times powers of ten otherwise.
std::vector<double> log_ladder(FieldUnit unit) {
  std::vector<double> ladder;
  if (unit == FieldUnit::seconds) {
    for (double s : {1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0}) ladder.push_back(s);
    for (double m : {1.0, 2.0, 5.0, 10.0, 20.0, 30.0}) ladder.push_back(m * kMinute);
    for (double h : {1.0, 2.0, 3.0, 6.0, 12.0}) ladder.push_back(h * kHour);
    for (double p = 1; p <= 1e5; p *= 10) {
      for (double d : {1.0, 2.0, 5.0}) ladder.push_back(d * p * kDay);
    }
  } else if (unit == FieldUnit::bytes) {
    for (int k = 0; k <= 70; ++k) ladder.push_back(std::ldexp(1.0, k));
  } else {
    for (int k = -12; k <= 18; ++k) {
      for (double m : {1.0, 2.0, 5.0}) ladder.push_back(m * std::pow(10.0, k));
    }
  }
  return ladder;
}

/// Keeps at most kMaxTicks ticks, spread evenly over the ones given.
void thin(std::vector<Tick>& ticks) {
  if (ticks.size() <= kMaxTicks) return;
  const std::size_t every = (ticks.size() + kMaxTicks - 1) / kMaxTicks;
  std::vector<Tick> kept;
  for (std::size_t i = 0; i < ticks.size(); i += every) kept.push_back(std::move(ticks[i]));
  ticks = std::move(kept);
}

/// A number written briefly: integers as they are, others with three significant digits.
std::string brief(double x) {
  if (std::fabs(x) < 1e6 && x == std::round(x)) return fmt::format("{:.0f}", x);
  return fmt::format("{:.3g}", x);
}

Axis log_axis(std::string title, FieldUnit unit, double lo, double hi) {
  Axis a{.title = std::move(title), .unit = unit, .scale = Scale::log};
  const std::vector<double> ladder = log_ladder(unit);
  a.lo = lo;
  a.hi = hi;
  // The domain widens to the ladder's rungs just outside the data, so the ends are labelled values.
  for (const double r : ladder) {
    if (r <= lo * (1 + 1e-12)) a.lo = r;
  }
  for (auto it = ladder.rbegin(); it != ladder.rend(); ++it) {
    if (*it >= hi * (1 - 1e-12)) a.hi = *it;
  }
  for (const double r : ladder) {
    if (r >= a.lo * (1 - 1e-12) && r <= a.hi * (1 + 1e-12)) a.ticks.push_back({r, tick_label(unit, r)});
  }
  thin(a.ticks);
  return a;
}

}  // namespace

double Axis::fraction(double v) const {
  if (scale == Scale::log) {
    if (v <= 0 || lo <= 0) return 0;
    return (std::log(v) - std::log(lo)) / (std::log(hi) - std::log(lo));
  }
  return (v - lo) / (hi - lo);
}

std::optional<double> Axis::position(const std::string& text) const {
  for (const auto& [value, at] : positions) {
    if (value == text) return at;
  }
  return std::nullopt;
}

std::string tick_label(FieldUnit unit, double value) {
  const model::HumanScale s = model::human_scale(unit, value);
  return s.prefix + brief(value / s.divisor) + s.suffix;
}

Axis value_axis(std::string title, FieldUnit unit, const std::vector<double>& values, bool from_zero) {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (const double v : values) {
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (!std::isfinite(lo)) {
    lo = 0;
    hi = 1;
  }
  if (lo > 0 && hi / lo >= kLogAxisSpan) return log_axis(std::move(title), unit, lo, hi);
  if (from_zero) {
    lo = std::min(lo, 0.0);
    hi = std::max(hi, 0.0);
  }
  if (hi <= lo) hi = lo == 0 ? 1 : lo + std::fabs(lo) * 0.5;
  Axis a{.title = std::move(title), .unit = unit, .scale = Scale::linear};
  const model::HumanScale s = model::human_scale(unit, std::max(std::fabs(lo), std::fabs(hi)));
  double step = nice_step((hi - lo) / s.divisor / 5);
  if (unit == FieldUnit::count && step == 2.5 * std::pow(10.0, std::floor(std::log10(step))) && step < 10)
    step *= 2;  // no quarter jobs or nodes: 2.5 becomes 5
  const double first = std::floor(lo / s.divisor / step + 1e-9) * step;
  const double last = std::ceil(hi / s.divisor / step - 1e-9) * step;
  a.lo = first * s.divisor;
  a.hi = last * s.divisor;
  const int decimals = decimals_for(step);
  for (double t = first; t <= last + step * 1e-6; t += step) {
    if (std::fabs(t) < step * 1e-6) {
      // Zero reads "0 s", "0 GiB", "$0": no decimals, and no scale letter ("$0M").
      a.ticks.push_back({0.0, fmt::format("{}0{}", s.prefix, s.suffix[0] == ' ' ? s.suffix : "")});
      continue;
    }
    a.ticks.push_back({t * s.divisor, fmt::format("{}{:.{}f}{}", s.prefix, t, decimals, s.suffix)});
  }
  return a;
}

void end_at(Axis& axis, double hi) {
  if (axis.scale != Scale::linear || !(hi > axis.lo)) return;
  axis.hi = hi;
  std::erase_if(axis.ticks, [hi](const Tick& t) { return t.at > hi * (1 + 1e-9); });
}

Axis key_axis(std::string title, const std::vector<std::string>& values) {
  Axis a{.title = std::move(title), .unit = FieldUnit::count};
  // Numbers, or quantities of one dimension ("30 min" and "3 h" are both seconds).
  std::vector<double> numbers;
  for (const auto& v : values) {
    if (auto n = number_of(v)) numbers.push_back(*n);
  }
  if (numbers.size() != values.size()) {
    numbers.clear();
    using scenario::Dimension;
    for (const Dimension d :
         {Dimension::seconds, Dimension::bytes, Dimension::bytes_per_s, Dimension::flops_per_s,
          Dimension::usd_per_hour, Dimension::usd, Dimension::watts, Dimension::usd_per_kwh}) {
      std::vector<double> parsed;
      for (const auto& v : values) {
        const auto q = scenario::try_parse_quantity(v, d, scenario::Bound::non_negative);
        if (!q.ok()) break;
        parsed.push_back(q.value);
      }
      if (parsed.size() == values.size()) {
        numbers = std::move(parsed);
        break;
      }
    }
  }
  const auto [lo_it, hi_it] = std::minmax_element(numbers.begin(), numbers.end());
  if (values.size() >= 2 && numbers.size() == values.size() && *hi_it > *lo_it) {
    const double lo = *lo_it, hi = *hi_it;
    if (lo > 0 && hi / lo >= kLogAxisSpan) {
      a.scale = Scale::log;
      const double pad = std::pow(hi / lo, 0.06);
      a.lo = lo / pad;
      a.hi = hi * pad;
    } else {
      a.scale = Scale::linear;
      a.lo = lo - (hi - lo) * 0.06;
      a.hi = hi + (hi - lo) * 0.06;
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
      a.positions.emplace_back(values[i], numbers[i]);
      a.ticks.push_back({numbers[i], values[i]});
    }
    std::sort(a.ticks.begin(), a.ticks.end(), [](const Tick& x, const Tick& y) { return x.at < y.at; });
  } else {
    a.scale = Scale::category;
    a.lo = -0.5;
    a.hi = static_cast<double>(values.size()) - 0.5;
    for (std::size_t i = 0; i < values.size(); ++i) {
      a.positions.emplace_back(values[i], static_cast<double>(i));
      a.ticks.push_back({static_cast<double>(i), values[i]});
    }
  }
  thin(a.ticks);
  return a;
}

std::string legend(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out = R"(<div class="legend">)";
  for (const auto& [name, color] : entries) {
    out += fmt::format(R"(<span><i class="sw" style="background:{}"></i>{}</span>)", color, escape(name));
  }
  return out + "</div>";
}

namespace {

/// The frame of an x-y plot: where the plot area sits and how values map to pixels.
struct Frame {
  double left = 64, right = 16, top = 10, bottom = 44;
  double width = 900, height = 320;
  const Axis* x = nullptr;
  const Axis* y = nullptr;
  [[nodiscard]] double px(double v) const { return left + x->fraction(v) * (width - left - right); }
  [[nodiscard]] double py(double v) const { return top + (1 - y->fraction(v)) * (height - top - bottom); }
  [[nodiscard]] double plot_bottom() const { return height - bottom; }
};

/// Whether an x axis' labels must be slanted to not overlap, and the bottom margin they then need.
double bottom_margin(const Axis& x, double plot_width, bool& slant) {
  double longest = 0;
  for (const Tick& t : x.ticks) longest = std::max(longest, static_cast<double>(t.label.size()) * kCharWidth);
  const double slot = plot_width / static_cast<double>(std::max<std::size_t>(x.ticks.size(), 1));
  slant = longest > slot * 0.92;
  return slant ? std::min(34 + longest * 0.6, 120.0) : 44;
}

std::string axes(const Frame& f, bool slant_x) {
  std::string svg;
  const double x0 = f.left, x1 = f.width - f.right, y0 = f.top, y1 = f.plot_bottom();
  for (const Tick& t : f.y->ticks) {
    const double y = f.py(t.at);
    if (y < y0 - 0.5 || y > y1 + 0.5) continue;
    svg +=
        fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#eee"/>)", x0, y, x1, y);
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)", x0 - 5, y + 4,
                       escape(t.label));
  }
  for (const Tick& t : f.x->ticks) {
    const double x = f.px(t.at);
    if (x < x0 - 0.5 || x > x1 + 0.5) continue;
    svg += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#f2f2f2"/>)", x, y0,
                       x, y1);
    svg += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#333"/>)", x, y1, x,
                       y1 + 4);
    if (slant_x) {
      svg += fmt::format(
          R"~(<text x="{0:.1f}" y="{1:.1f}" text-anchor="end" transform="rotate(-35 {0:.1f} {1:.1f})">{2}</text>)~",
          x, y1 + 14, escape(t.label));
    } else {
      svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)", x, y1 + 16,
                         escape(t.label));
    }
  }
  svg +=
      fmt::format(R"(<path d="M{:.1f},{:.1f} V{:.1f} H{:.1f}" fill="none" stroke="#333"/>)", x0, y0, y1, x1);
  const std::string x_title = f.x->title + (f.x->scale == Scale::log ? " (log scale)" : "");
  const std::string y_title = f.y->title + (f.y->scale == Scale::log ? " (log scale)" : "");
  svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" fill="#444">{}</text>)",
                     (x0 + x1) / 2, f.height - 6, escape(x_title));
  svg += fmt::format(
      R"~(<text x="12" y="{0:.1f}" transform="rotate(-90 12 {0:.1f})" text-anchor="middle" fill="#444">{1}</text>)~",
      (y0 + y1) / 2, escape(y_title));
  return svg;
}

bool visible(const Axis& a, double v) {
  return std::isfinite(v) && (a.scale != Scale::log || v > 0);
}

std::string mark_svg(const Frame& f, const Layer& layer, const Mark& m) {
  const std::string tip = "<title>" + escape(m.tip) + "</title>";
  const double x = f.px(m.x);
  switch (layer.marker) {
    case Marker::none:
      return "";
    case Marker::tick:
      return fmt::format(
          R"(<line class="mark" x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="{3}" stroke-width="1.5">{4}</line>)",
          x, f.plot_bottom(), f.plot_bottom() - 8, layer.color, tip);
    case Marker::rule:
      return fmt::format(
          R"(<line class="mark" x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="{3}" stroke-dasharray="3 3">{4}</line>)",
          x, f.top, f.plot_bottom(), layer.color, tip);
    default:
      break;
  }
  const double y = f.py(m.y);
  const double r = layer.size;
  switch (layer.marker) {
    case Marker::dot:
      return fmt::format(
          R"(<circle class="mark" cx="{:.1f}" cy="{:.1f}" r="{}" fill="{}" fill-opacity="0.8">{}</circle>)",
          x, y, r, layer.color, tip);
    case Marker::ring:
      return fmt::format(
          R"(<circle class="mark" cx="{:.1f}" cy="{:.1f}" r="{}" fill="#fff" stroke="{}" stroke-width="1.8">{}</circle>)",
          x, y, r, layer.color, tip);
    case Marker::cross:
      return fmt::format(
          R"~(<path class="mark" d="M{0:.1f},{1:.1f} l{2},{2} m0,-{2} l-{2},{2}" transform="translate(-{3} -{3})" stroke="{4}" stroke-width="1.4">{5}</path>)~",
          x, y, 2 * r, r, layer.color, tip);
    default:
      return "";
  }
}

}  // namespace

std::string render(const XYChart& chart) {
  Frame f{.width = chart.width, .height = chart.height, .x = &chart.x, .y = &chart.y};
  // Room for the y labels: the longest tick label.
  double longest = 0;
  for (const Tick& t : chart.y.ticks)
    longest = std::max(longest, static_cast<double>(t.label.size()) * kCharWidth);
  f.left = std::max(44.0, longest + 26);
  bool slant = false;
  f.bottom = bottom_margin(chart.x, f.width - f.left - f.right, slant);
  std::string svg = fmt::format(
      R"(<svg data-chart="{0}" viewBox="0 0 {1} {2}" width="{1}" height="{2}" role="img" font-size="11">)",
      escape(chart.id), chart.width, chart.height);
  svg += axes(f, slant);
  for (const Rule& rule : chart.y_rules) {
    const double y = f.py(rule.y);
    svg += fmt::format(
        R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#c0392b" stroke-dasharray="6 3"/>)",
        f.left, y, f.width - f.right, y);
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end" fill="#c0392b">{}</text>)",
                       f.width - f.right - 2, y - 4, escape(rule.label));
  }
  std::vector<std::pair<std::string, std::string>> entries;
  for (const Layer& layer : chart.layers) {
    std::vector<const Mark*> shown;
    for (const Mark& m : layer.marks) {
      const bool needs_y = layer.marker != Marker::tick && layer.marker != Marker::rule;
      if (visible(chart.x, m.x) && (!needs_y || visible(chart.y, m.y))) shown.push_back(&m);
    }
    if ((layer.line || layer.step) && shown.size() > 1) {
      std::string d;
      for (std::size_t i = 0; i < shown.size(); ++i) {
        const double x = f.px(shown[i]->x), y = f.py(shown[i]->y);
        if (i == 0) {
          d += fmt::format("M{:.1f},{:.1f}", x, y);
        } else if (layer.step) {
          d += fmt::format(" H{:.1f} V{:.1f}", x, y);
        } else {
          d += fmt::format(" L{:.1f},{:.1f}", x, y);
        }
      }
      svg += fmt::format(
          R"(<path class="mark" d="{}" fill="none" stroke="{}" stroke-width="1.6"><title>{}</title></path>)",
          d, layer.color, escape(layer.label));
    }
    for (const Mark* m : shown) svg += mark_svg(f, layer, *m);
    if (!layer.label.empty()) entries.emplace_back(layer.label, layer.color);
  }
  svg += "</svg>";
  return chart.legend && !entries.empty() ? svg + legend(entries) : svg;
}

std::string render(const BarChart& chart) {
  constexpr double kRow = 22, kGap = 8, kTop = 8, kBottom = 40, kRight = 96;
  double longest = 0;
  for (const BarRow& row : chart.rows)
    longest = std::max(longest, static_cast<double>(row.label.size()) * kCharWidth);
  const double left = std::min(std::max(longest + 14, 50.0), 220.0);
  std::vector<double> totals;
  for (const BarRow& row : chart.rows) {
    double total = 0;
    for (const BarPart& p : row.parts) total += std::max(p.value, 0.0);
    totals.push_back(total);
  }
  std::vector<double> extent = totals;
  if (chart.limit) extent.push_back(chart.limit->y);
  if (extent.empty()) return "<p>(nothing to show)</p>";
  // Bars are lengths: a linear axis from zero whatever the spread.
  Axis x = value_axis("", chart.unit, {0.0, *std::max_element(extent.begin(), extent.end())}, true);
  if (x.scale == Scale::log) x = value_axis("", chart.unit, {0.0, x.hi}, true);
  const double height = kTop + static_cast<double>(chart.rows.size()) * (kRow + kGap) + kBottom;
  const double plot_w = chart.width - left - kRight;
  auto px = [&](double v) { return left + x.fraction(v) * plot_w; };
  std::string svg = fmt::format(
      R"(<svg data-chart="{0}" viewBox="0 0 {1} {2}" width="{1}" height="{2}" role="img" font-size="11">)",
      escape(chart.id), chart.width, height);
  const double axis_y = height - kBottom + 4;
  for (const Tick& t : x.ticks) {
    svg += fmt::format(R"(<line x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2:.1f}" stroke="#eee"/>)", px(t.at),
                       kTop, axis_y);
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)", px(t.at), axis_y + 15,
                       escape(t.label));
  }
  svg += fmt::format(R"(<line x1="{0}" y1="{1:.1f}" x2="{2:.1f}" y2="{1:.1f}" stroke="#333"/>)", left, axis_y,
                     left + plot_w);
  std::vector<std::pair<std::string, std::string>> entries;
  for (std::size_t r = 0; r < chart.rows.size(); ++r) {
    const BarRow& row = chart.rows[r];
    const double y = kTop + static_cast<double>(r) * (kRow + kGap);
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)", left - 6,
                       y + kRow / 2 + 4, escape(row.label));
    double at = 0;
    for (const BarPart& p : row.parts) {
      const double v = std::max(p.value, 0.0);
      const double share = totals[r] > 0 ? v / totals[r] : 0;
      svg += fmt::format(
          R"(<rect class="mark" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{}" fill="{}"><title>{}: {} ({:.1f} %)</title></rect>)",
          px(at), y, px(at + v) - px(at), kRow, p.color, escape(row.label + " — " + p.name),
          model::format_human(chart.unit, v), 100 * share);
      at += v;
      if (std::none_of(entries.begin(), entries.end(), [&](const auto& e) { return e.first == p.name; }))
        entries.emplace_back(p.name, p.color);
    }
    std::string total = model::format_human(chart.unit, totals[r]);
    if (chart.limit && chart.limit->y > 0)
      total += fmt::format(" ({:.0f} %)", 100 * totals[r] / chart.limit->y);
    svg +=
        fmt::format(R"(<text x="{:.1f}" y="{:.1f}">{}</text>)", px(at) + 5, y + kRow / 2 + 4, escape(total));
  }
  if (chart.limit) {
    const double lx = px(chart.limit->y);
    svg += fmt::format(
        R"(<line x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2:.1f}" stroke="#c0392b" stroke-width="1.5" stroke-dasharray="6 3"/>)",
        lx, kTop - 4, axis_y);
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" fill="#c0392b">{}</text>)", lx,
                       axis_y + 30, escape(chart.limit->label));
  }
  svg += "</svg>";
  return chart.legend && entries.size() > 1 ? svg + legend(entries) : svg;
}

std::string render(const LaneChart& chart) {
  constexpr double kLeft = LaneChart::kLabelWidth, kTop = 6, kBottom = 40, kGroupGap = 7;
  std::vector<double> lane_y;
  double y = kTop;
  for (const Lane& lane : chart.lanes) {
    if (lane.first_of_group && !lane_y.empty()) y += kGroupGap;
    lane_y.push_back(y);
    y += lane.height + 2;
  }
  const double height = y + kBottom;
  const double plot_w = chart.plot_width();
  auto px = [&](double v) { return kLeft + chart.x.fraction(v) * plot_w; };
  std::string svg = fmt::format(
      R"(<svg data-chart="{0}" viewBox="0 0 {1} {2:.0f}" width="{1}" height="{2:.0f}" role="img" font-size="11">)",
      escape(chart.id), chart.width, height);
  const double axis_y = y + 2;
  for (const Tick& t : chart.x.ticks) {
    svg += fmt::format(R"(<line x1="{0:.1f}" y1="{1}" x2="{0:.1f}" y2="{2:.1f}" stroke="#eee"/>)", px(t.at),
                       kTop, axis_y);
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)", px(t.at), axis_y + 15,
                       escape(t.label));
  }
  svg += fmt::format(R"(<line x1="{0}" y1="{1:.1f}" x2="{2:.1f}" y2="{1:.1f}" stroke="#333"/>)", kLeft,
                     axis_y, kLeft + plot_w);
  svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" fill="#444">{}</text>)",
                     kLeft + plot_w / 2, height - 6, escape(chart.x.title));
  for (std::size_t i = 0; i < chart.lanes.size(); ++i) {
    const Lane& lane = chart.lanes[i];
    if (lane.first_of_group && i > 0) {
      svg += fmt::format(R"(<line x1="4" y1="{0:.1f}" x2="{1:.1f}" y2="{0:.1f}" stroke="#ccc"/>)",
                         lane_y[i] - kGroupGap / 2 - 1, kLeft + plot_w);
    }
    // A lane's label fits its height: a thin lane (a communication stream) gets a smaller font.
    const double font = std::min(11.0, lane.height + 2);
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end" font-size="{}"{}>{}</text>)",
                       kLeft - 6, lane_y[i] + lane.height / 2 + font * 0.35, font,
                       lane.first_of_group ? R"( font-weight="bold")" : "", escape(lane.label));
  }
  for (const LaneBox& b : chart.boxes) {
    const double x0 = px(b.start), x1 = std::max(px(b.end), x0 + 0.6);
    const Lane& lane = chart.lanes[b.lane];
    svg += fmt::format(
        R"(<rect class="mark" x="{:.2f}" y="{:.1f}" width="{:.2f}" height="{}" fill="{}"><title>{}</title></rect>)",
        x0, lane_y[b.lane], x1 - x0, lane.height, b.color, escape(b.tip));
    if (b.highlight) {
      svg += fmt::format(R"(<rect x="{:.2f}" y="{:.1f}" width="{:.2f}" height="3" fill="#c0392b"/>)", x0,
                         lane_y[b.lane] + lane.height - 3, x1 - x0);
    }
  }
  if (!chart.path.empty()) {
    std::string d;
    for (const LaneSpan& span : chart.path) {
      const double mid = lane_y[span.lane] + chart.lanes[span.lane].height / 2;
      d += fmt::format("{}{:.1f},{:.1f} L{:.1f},{:.1f}", d.empty() ? "M" : " L", px(span.from), mid,
                       px(span.to), mid);
    }
    svg += fmt::format(
        R"(<path class="critical-path" d="{}" fill="none" stroke="#c0392b" stroke-width="1.4" stroke-opacity="0.9"/>)",
        d);
  }
  svg += "</svg>";
  return chart.legend.empty() ? svg : svg + legend(chart.legend);
}

BarRow step_bar(std::string label, const model::StepShares& step) {
  BarRow row{std::move(label),
             {{"compute", step.compute, colors::kCompute}, {"exposed TP comm", step.tp, colors::kTp}}};
  // A dense model has no token dispatch: its bars and legend keep the five parts it has.
  if (step.ep > 0) row.parts.push_back({"exposed EP comm", step.ep, colors::kEp});
  row.parts.insert(row.parts.end(), {{"exposed DP comm", step.dp, colors::kDp},
                                     {"exposed PP comm", step.pp, colors::kPp},
                                     {"optimizer", step.optimizer, colors::kOptimizer},
                                     {"bubble", step.bubble, colors::kBubble}});
  return row;
}

}  // namespace trainsim::report
