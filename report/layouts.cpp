#include "report/layouts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "models/report/summary.hpp"
#include "models/report/what_bounds.hpp"
#include "report/page.hpp"
#include "report/svg.hpp"
#include "scenarios/studies/layout_search.hpp"

namespace trainsim::report {

namespace {

using model::FieldUnit;
using model::format_human;

/// Layouts listed at most in one table.
constexpr std::size_t kMaxLayoutRows = 200;

std::string human(const Results& r, std::size_t row, const char* field, FieldUnit unit) {
  const auto v = r.si(row, field);
  return v ? format_human(unit, *v) : std::string("—");
}

}  // namespace

std::vector<std::size_t> running_rows(const Results& results) {
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (results.runs(i) && results.si(i, "run_time") && results.si(i, "cost_total")) rows.push_back(i);
  }
  return rows;
}

std::vector<std::size_t> pareto_rows(const Results& results, const std::vector<std::size_t>& rows) {
  std::vector<std::pair<double, double>> points;
  points.reserve(rows.size());
  for (const std::size_t i : rows)
    points.emplace_back(*results.si(i, "run_time"), *results.si(i, "cost_total"));
  std::vector<std::size_t> front;
  for (const std::size_t k : scenario::pareto_front(points)) front.push_back(rows[k]);
  return front;  // pareto_front orders by the first coordinate: fastest first
}

std::string point_tip(const Results& results, std::size_t row) {
  std::string tip = results.layout(row);
  tip += fmt::format("\nrun time {}, cost {}", human(results, row, "run_time", FieldUnit::seconds),
                     human(results, row, "cost_total", FieldUnit::usd));
  tip += fmt::format("\nmemory {} of {}, MFU {}", human(results, row, "memory_per_gpu", FieldUnit::bytes),
                     human(results, row, "memory_capacity", FieldUnit::bytes),
                     human(results, row, "mfu", FieldUnit::fraction));
  return tip;
}

std::string time_cost_chart(const std::string& id, const Results& results,
                            const std::vector<std::size_t>& rows, const std::vector<std::size_t>& front) {
  std::vector<double> xs, ys;
  Layer points{.label = "layouts that run", .color = colors::kCompute, .marker = Marker::dot, .size = 3};
  for (const std::size_t i : rows) {
    const double cost = *results.si(i, "cost_total"), time = *results.si(i, "run_time");
    xs.push_back(cost);
    ys.push_back(time);
    points.marks.push_back({cost, time, point_tip(results, i)});
  }
  Layer pareto{.label = "Pareto front (nothing is both faster and cheaper)",
               .color = colors::kPareto,
               .marker = Marker::ring,
               .step = true,
               .size = 5};
  // The staircase runs from the cheapest to the fastest: each step holds its cost until a faster point.
  for (auto it = front.rbegin(); it != front.rend(); ++it) {
    pareto.marks.push_back({*results.si(*it, "cost_total"), *results.si(*it, "run_time"),
                            "Pareto front: " + point_tip(results, *it)});
  }
  XYChart chart{.id = id,
                .x = value_axis("cost of the run", FieldUnit::usd, xs, false),
                .y = value_axis("run time", FieldUnit::seconds, ys, false),
                .layers = {points, pareto},
                .height = 340};
  return render(chart);
}

std::string layouts_table(const Results& results, const std::vector<std::size_t>& rows,
                          const std::string& lead, const std::vector<std::string>& lead_cells) {
  std::vector<std::string> header;
  if (!lead.empty()) header.push_back(lead);
  for (const std::size_t k : results.varying_keys()) header.push_back(results.short_key_name(k));
  for (const char* c : {"run time", "cost", "$ per M tokens", "memory per GPU", "MFU"})
    header.emplace_back(c);
  std::string out = R"(<div class="scroll"><table class="layouts"><tr>)";
  for (const auto& h : header) out += "<th>" + escape(h) + "</th>";
  out += "</tr>";
  for (std::size_t n = 0; n < std::min<std::size_t>(rows.size(), kMaxLayoutRows); ++n) {
    const std::size_t i = rows[n];
    out += "<tr>";
    if (!lead.empty()) out += "<td>" + escape(n < lead_cells.size() ? lead_cells[n] : "") + "</td>";
    for (const std::size_t k : results.varying_keys()) {
      const std::string& v = results.key_value(i, k);
      out += (number_of(v) ? R"(<td class="n">)" : "<td>") + escape(v) + "</td>";
    }
    const auto per_token = results.si(i, "cost_per_token");
    for (const std::string& c :
         {human(results, i, "run_time", FieldUnit::seconds), human(results, i, "cost_total", FieldUnit::usd),
          per_token ? format_human(FieldUnit::usd, *per_token * 1e6) : std::string("—"),
          human(results, i, "memory_per_gpu", FieldUnit::bytes),
          human(results, i, "mfu", FieldUnit::fraction)})
      out += R"(<td class="n">)" + escape(c) + "</td>";
    // What bounds the layout, on a line of its own under it: the sentence is longer than the figures.
    const model::Bound bound = model::what_bounds(results.shares(i));
    out += fmt::format(R"(</tr><tr class="why"><td colspan="{}">bound by <b>{}</b>: {}</td></tr>)",
                       header.size(), escape(bound.what), escape(bound.why));
  }
  out += "</table></div>";
  if (rows.size() > kMaxLayoutRows)
    out += fmt::format("<p>… {} more not shown.</p>", rows.size() - kMaxLayoutRows);
  return out;
}

}  // namespace trainsim::report
