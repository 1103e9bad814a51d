// The sweep page of `trainsim report FILE`: what the sweep answers ("cost for 64 … 2,048 nodes",
// "AdamW or 8-bit Adam", "checkpoint every 30 min or 3 h") is how run time, cost and memory move with each
// swept key, and which points are worth having. So: headline cards, the Pareto front of run time against
// cost (drawn and listed), a row of small multiples per swept key, the points that do not run with their
// reasons, and every point in human units.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "models/report/summary.hpp"
#include "report/html.hpp"
#include "report/layouts.hpp"
#include "report/page.hpp"
#include "report/results.hpp"
#include "report/svg.hpp"

namespace trainsim::report {

namespace {

using model::FieldUnit;
using model::format_human;

/// Keys drawn on one axis: one swept key, or all of them when they move together (`mode: zip`, e.g. a GPU
/// type and its node count), which a grid of separate axes would show as unrelated.
struct KeyGroup {
  std::vector<std::size_t> keys;
  std::string title;
};

std::string group_value(const Results& r, std::size_t row, const KeyGroup& g) {
  std::string out;
  for (const std::size_t k : g.keys) out += (out.empty() ? "" : " · ") + r.key_value(row, k);
  return out;
}

std::vector<KeyGroup> key_groups(const Results& r) {
  const std::size_t n = r.keys().size();
  std::set<std::string> combos;
  std::vector<std::set<std::string>> distinct(n);
  for (std::size_t i = 0; i < r.size(); ++i) {
    std::string combo;
    for (std::size_t k = 0; k < n; ++k) {
      distinct[k].insert(r.key_value(i, k));
      combo += r.key_value(i, k) + '\x1f';
    }
    combos.insert(combo);
  }
  const bool together = n > 1 && std::all_of(distinct.begin(), distinct.end(),
                                             [&](const auto& d) { return d.size() == combos.size(); });
  std::vector<KeyGroup> groups;
  if (together) {
    KeyGroup g;
    for (std::size_t k = 0; k < n; ++k) {
      g.keys.push_back(k);
      g.title += (g.title.empty() ? "" : " · ") + r.key_name(k);
    }
    groups.push_back(std::move(g));
  } else {
    for (std::size_t k = 0; k < n; ++k) groups.push_back({{k}, r.key_name(k)});
  }
  return groups;
}

struct Metric {
  const char* field;
  const char* title;
  FieldUnit unit;
};

/// One small multiple: `metric` against the group's values. One point per value: a line through them.
/// Several (other keys vary): every point as a faint dot and a line through the lowest at each value.
std::string panel(const Results& r, const KeyGroup& g, const Axis& x, const Metric& m, bool several) {
  const bool memory = std::string(m.field) == "memory_per_gpu";
  Layer dots{.label = several ? "a point" : "", .color = "#a9bdd6", .marker = Marker::dot, .size = 2.5};
  Layer misfits{.label = "does not fit", .color = colors::kMuted, .marker = Marker::cross, .size = 3};
  // A line joins values along a numeric axis; categories ("adamw", "dgx-h100 · 64") have no order to join.
  Layer best{.label = several ? "lowest over the other keys" : "",
             .color = colors::kCompute,
             .marker = Marker::dot,
             .line = x.scale != Scale::category,
             .size = x.scale != Scale::category ? 3.0 : 4.0};
  std::map<double, std::pair<double, std::size_t>> lowest;  // x -> (value, row)
  std::vector<double> ys;
  double capacity = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    const auto v = r.si(i, m.field);
    const auto at = x.position(group_value(r, i, g));
    if (!v || !at || !r.built(i)) continue;
    if (!r.runs(i)) {
      if (!memory) continue;  // a point that cannot run has no time or cost worth drawing
      misfits.marks.push_back({*at, *v, "does not fit: " + point_tip(r, i)});
      ys.push_back(*v);
      continue;
    }
    ys.push_back(*v);
    capacity = std::max(capacity, r.si(i, "memory_capacity").value_or(0));
    dots.marks.push_back({*at, *v, point_tip(r, i)});
    auto [it, fresh] = lowest.try_emplace(*at, *v, i);
    if (!fresh && *v < it->second.first) it->second = {*v, i};
  }
  for (const auto& [at, low] : lowest) {
    best.marks.push_back(
        {at, low.first,
         fmt::format("{}{}: {}\n{}", several ? "lowest at " : "", group_value(r, low.second, g),
                     format_human(m.unit, low.first), point_tip(r, low.second))});
  }
  XYChart chart{.id = fmt::format("sweep-{}-{}", g.title, m.field),
                .x = x,
                .y = value_axis(m.title, m.unit, ys, memory),
                .width = 306,
                .height = 230,
                .legend = false};
  if (memory && capacity > 0) {
    ys.push_back(capacity);
    chart.y = value_axis(m.title, m.unit, ys, true);
    chart.y_rules.push_back({capacity, "capacity"});
  }
  chart.x.title = g.title;
  if (several) chart.layers.push_back(dots);
  chart.layers.push_back(best);
  if (memory) chart.layers.push_back(misfits);
  return fmt::format(R"(<div class="panel"><h3>{}</h3>{}</div>)", escape(m.title), render(chart));
}

std::string small_multiples(const Results& r) {
  const std::vector<KeyGroup> groups = key_groups(r);
  if (groups.empty() || r.size() == 0) return "";
  std::vector<Metric> metrics;
  if (!running_rows(r).empty()) {
    metrics = {{"run_time", "run time", FieldUnit::seconds}, {"cost_total", "cost", FieldUnit::usd}};
  } else {
    metrics = {{"iteration_time", "iteration time", FieldUnit::seconds}};
  }
  metrics.push_back({"memory_per_gpu", "memory per GPU", FieldUnit::bytes});
  std::string out;
  for (const KeyGroup& g : groups) {
    std::vector<std::string> values;
    for (std::size_t i = 0; i < r.size(); ++i) {
      std::string v = group_value(r, i, g);
      if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(std::move(v));
    }
    const Axis x = key_axis(g.title, values);
    const bool several = values.size() < r.size();
    out += fmt::format("<h3>Against {}</h3><div class=\"grid\">", escape(g.title));
    for (const Metric& m : metrics) out += panel(r, g, x, m, several);
    out += "</div>";
  }
  const char* heading = groups.size() > 1     ? "Each swept key"
                        : r.keys().size() > 1 ? "The swept keys, which move together"
                                              : "The swept key";
  return section(
      heading,
      "Each panel puts a swept key on the x axis. Where other keys vary too, every point is a pale dot and "
      "the line joins the lowest value at each x over the other keys' values; points that do not fit in "
      "memory appear only against memory (grey crosses). Hover over a mark for its point.",
      legend({{"lowest (the line)", colors::kCompute},
              {"a point", "#a9bdd6"},
              {"does not fit", colors::kMuted},
              {"capacity", "#c0392b"}}) +
          out);
}

/// A reason with its numbers taken out ("the cluster's 64 GPUs" and "… 128 GPUs" read alike), so that
/// points failing for one reason are counted together.
std::string reason_pattern(const std::string& reason) {
  std::string out;
  for (const char c : reason) {
    if (c >= '0' && c <= '9') {
      if (out.empty() || out.back() != '#') out += '#';
    } else {
      out += c;
    }
  }
  return out;
}

std::string not_running(const Results& r) {
  Table misfit;
  for (std::size_t k = 0; k < r.keys().size(); ++k) misfit.columns.push_back(r.short_key_name(k));
  misfit.columns.insert(misfit.columns.end(), {"needs per GPU", "capacity", "why"});
  std::map<std::string, std::vector<std::size_t>> infeasible;  // reason's pattern -> rows
  std::vector<std::string> reasons_in_order;
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (!r.built(i)) {
      const std::string reason = reason_pattern(r.reason(i).empty() ? "(no reason given)" : r.reason(i));
      if (!infeasible.contains(reason)) reasons_in_order.push_back(reason);
      infeasible[reason].push_back(i);
    } else if (!r.runs(i)) {
      std::vector<std::string> cells;
      for (std::size_t k = 0; k < r.keys().size(); ++k) cells.push_back(r.key_value(i, k));
      const auto need = r.si(i, "memory_per_gpu"), cap = r.si(i, "memory_capacity");
      cells.push_back(need ? format_human(FieldUnit::bytes, *need) : "—");
      cells.push_back(cap ? format_human(FieldUnit::bytes, *cap) : "—");
      cells.push_back(r.reason(i));
      misfit.rows.push_back(std::move(cells));
    }
  }
  if (misfit.rows.empty() && infeasible.empty()) return "";
  std::string content;
  if (!infeasible.empty()) {
    Table t{.columns = {"why it cannot be built (the first point's words)", "points", "for example"}};
    for (const std::string& pattern : reasons_in_order) {
      const auto& rows = infeasible[pattern];
      const std::string reason = r.reason(rows.front());
      std::string examples;
      for (std::size_t n = 0; n < std::min<std::size_t>(rows.size(), 2); ++n)
        examples += (examples.empty() ? "" : "; ") + r.layout(rows[n]);
      t.rows.push_back({reason, std::to_string(rows.size()), examples});
    }
    std::size_t points = 0;
    for (const auto& [reason, rows] : infeasible) points += rows.size();
    content += fmt::format("<h3>Infeasible: {} point{}</h3>", points, points == 1 ? "" : "s");
    content += html_table(t, 100);
  }
  if (!misfit.rows.empty()) {
    content += fmt::format("<h3>Do not fit in memory: {} point{}</h3>", misfit.rows.size(),
                           misfit.rows.size() == 1 ? "" : "s") +
               html_table(misfit, 100);
  }
  return section(
      "Points that do not run",
      "Left out of the charts of time and cost: points that cannot be built (grouped by reason), and "
      "points that build but need more memory than a GPU has.",
      content);
}

std::string all_points(const Results& r) {
  Table t;
  for (std::size_t k = 0; k < r.keys().size(); ++k) t.columns.push_back(r.short_key_name(k));
  t.columns.insert(t.columns.end(),
                   {"status", "iteration", "run time", "cost", "memory per GPU", "MFU", "goodput"});
  auto human = [&](std::size_t i, const char* field, FieldUnit unit) {
    const auto v = r.si(i, field);
    return v ? format_human(unit, *v) : std::string("—");
  };
  for (std::size_t i = 0; i < r.size(); ++i) {
    std::vector<std::string> cells;
    for (std::size_t k = 0; k < r.keys().size(); ++k) cells.push_back(r.key_value(i, k));
    cells.emplace_back(!r.built(i) ? "infeasible" : !r.runs(i) ? "does not fit" : "runs");
    for (std::string c :
         {human(i, "iteration_time", FieldUnit::seconds), human(i, "run_time", FieldUnit::seconds),
          human(i, "cost_total", FieldUnit::usd), human(i, "memory_per_gpu", FieldUnit::bytes),
          human(i, "mfu", FieldUnit::fraction), human(i, "goodput", FieldUnit::fraction)})
      cells.push_back(std::move(c));
    t.rows.push_back(std::move(cells));
  }
  return section("Every point", "In the sweep's order; the file itself has every column.",
                 html_table(t, 1000));
}

}  // namespace

std::string sweep_report_html(const std::string& source, const Table& sweep) {
  const Results r(sweep);
  const std::vector<std::size_t> running = running_rows(r);
  const std::vector<std::size_t> front = pareto_rows(r, running);
  std::size_t infeasible = 0, misfits = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    infeasible += !r.built(i);
    misfits += r.built(i) && !r.runs(i);
  }
  std::vector<Card> headline{
      {"Points", std::to_string(r.size()),
       fmt::format("{} run; {} do not fit; {} infeasible", running.size(), misfits, infeasible)}};
  std::string body;
  if (!running.empty()) {
    auto by = [&](const char* field) {
      return *std::min_element(running.begin(), running.end(), [&](std::size_t a, std::size_t b) {
        return *r.si(a, field) < *r.si(b, field);
      });
    };
    const std::size_t fastest = by("run_time"), cheapest = by("cost_total");
    headline.push_back(
        {"Fastest", format_human(FieldUnit::seconds, *r.si(fastest, "run_time")),
         r.layout(fastest) + " · " + format_human(FieldUnit::usd, *r.si(fastest, "cost_total"))});
    headline.push_back(
        {"Cheapest", format_human(FieldUnit::usd, *r.si(cheapest, "cost_total")),
         r.layout(cheapest) + " · " + format_human(FieldUnit::seconds, *r.si(cheapest, "run_time"))});
    headline.push_back({"Pareto front",
                        std::to_string(front.size()) + (front.size() == 1 ? " point" : " points"),
                        "the points nothing else beats on both time and cost"});
  }
  body += cards(headline);
  if (!running.empty()) {
    body += section(
        "Run time against cost",
        "Every point that runs; the red staircase is the Pareto front, the points no other point beats on "
        "both time and cost. Any other point costs more, takes longer, or both. Hover for the layout.",
        time_cost_chart("pareto", r, running, front) + "<h3>The Pareto front, fastest first</h3>" +
            layouts_table(r, front));
  }
  body += small_multiples(r) + not_running(r) + all_points(r);
  std::string keys;
  for (std::size_t k = 0; k < r.keys().size(); ++k) keys += (keys.empty() ? "" : ", ") + r.key_name(k);
  const int scenario = sweep.column("scenario");
  const std::string name =
      scenario >= 0 && !sweep.rows.empty() ? sweep.rows.front()[static_cast<std::size_t>(scenario)] : source;
  return page("sweep", "Sweep: " + name,
              fmt::format("{} points over {}; from {}", r.size(),
                          keys.empty() ? std::string("no swept key") : keys, source),
              body);
}

}  // namespace trainsim::report
