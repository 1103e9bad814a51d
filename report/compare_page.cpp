#include "report/compare_page.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/report/what_bounds.hpp"
#include "report/page.hpp"
#include "report/svg.hpp"

namespace trainsim::report {

namespace {

using model::FieldUnit;
using model::format_human;

double num(const CompareOption& o, const std::string& name) {
  return o.summary.number(name).value_or(0.0);
}

std::string text(const CompareOption& o, const std::string& name) {
  const model::SummaryField* f = o.summary.find(name);
  return f != nullptr ? f->text : "";
}

/// Built, fits and has a run: the options the charts and cards compare.
bool runs(const CompareOption& o) {
  return num(o, "feasible") != 0 && num(o, "fits") != 0 && o.summary.number("run_time").has_value();
}

bool banded(const CompareOption& o) {
  return o.summary.number("run_time_low").has_value();
}

std::string band_cells(const CompareOption& o, const std::string& field, FieldUnit unit) {
  if (!banded(o)) return "not validated";
  return format_human(unit, num(o, field + "_low")) + "-" + format_human(unit, num(o, field + "_high"));
}

model::StepShares shares(const CompareOption& o) {
  return model::step_shares([&](std::string_view field) { return num(o, std::string(field)); });
}

std::string memory_cell(const CompareOption& o) {
  const double free = num(o, "memory_capacity") - num(o, "memory_per_gpu");
  const std::string need = format_human(FieldUnit::bytes, o.headroom_needed);
  if (free < 0) return "over by " + format_human(FieldUnit::bytes, -free);
  return format_human(FieldUnit::bytes, free) + (free >= o.headroom_needed ? " (" : " (short of ") + need +
         ")";
}

std::size_t best_by(const std::vector<CompareOption>& options, const std::string& field) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < options.size(); ++i) {
    if (num(options[i], field) < num(options[best], field)) best = i;
  }
  return best;
}

}  // namespace

const std::vector<std::string>& compare_columns() {
  static const std::vector<std::string> kColumns = {"option",
                                                    "hardware",
                                                    "iteration",
                                                    "run time (band)",
                                                    "cost (band)",
                                                    "$/M tokens",
                                                    "memory free (needed)",
                                                    "bound by"};
  return kColumns;
}

std::vector<std::string> compare_cells(const CompareOption& o) {
  if (!runs(o)) {
    return {o.name, o.hardware, "does not run: " + text(o, "reason"), "", "", "", "", ""};
  }
  return {o.name,
          o.hardware,
          format_human(FieldUnit::seconds, num(o, "iteration_time")),
          format_human(FieldUnit::seconds, num(o, "run_time")) + " (" +
              band_cells(o, "run_time", FieldUnit::seconds) + ")",
          format_human(FieldUnit::usd, num(o, "cost_total")) + " (" +
              band_cells(o, "cost_total", FieldUnit::usd) + ")",
          fmt::format("${:.2f}", num(o, "cost_per_token") * 1e6),
          memory_cell(o),
          model::what_bounds(shares(o)).what};
}

std::string compare_text(const std::vector<CompareOption>& options) {
  std::vector<std::vector<std::string>> rows{compare_columns()};
  for (const CompareOption& o : options) rows.push_back(compare_cells(o));
  std::vector<std::size_t> width(compare_columns().size(), 0);
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) line += fmt::format("{:<{}}  ", row[c], width[c]);
    out += line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
  }
  out += "\nerror bands (run time and cost take the iteration's):\n";
  for (const CompareOption& o : options) out += "  " + o.name + ": " + text(o, "error_band") + "\n";
  return out;
}

std::string compare_report_html(const std::vector<CompareOption>& options) {
  std::vector<CompareOption> running;
  for (const CompareOption& o : options) {
    if (runs(o)) running.push_back(o);
  }
  std::vector<Card> headline;
  if (!running.empty()) {
    const CompareOption& fast = running[best_by(running, "run_time")];
    const CompareOption& cheap = running[best_by(running, "cost_total")];
    const CompareOption& per_token = running[best_by(running, "cost_per_token")];
    headline.push_back({"Fastest", fast.name,
                        format_human(FieldUnit::seconds, num(fast, "run_time")) + ", band " +
                            band_cells(fast, "run_time", FieldUnit::seconds)});
    headline.push_back({"Cheapest", cheap.name,
                        format_human(FieldUnit::usd, num(cheap, "cost_total")) + ", band " +
                            band_cells(cheap, "cost_total", FieldUnit::usd)});
    headline.push_back({"Lowest $ per million tokens", per_token.name,
                        fmt::format("${:.2f} per million tokens", num(per_token, "cost_per_token") * 1e6)});
  }
  std::string body = cards(headline);

  // Run time against cost, each option a dot with its band as error bars.
  std::vector<double> xs, ys;
  for (const CompareOption& o : running) {
    for (const char* suffix : {"", "_low", "_high"}) {
      if (const auto x = o.summary.number(std::string("run_time") + suffix)) xs.push_back(*x);
      if (const auto y = o.summary.number(std::string("cost_total") + suffix)) ys.push_back(*y);
    }
  }
  XYChart chart{.id = "compare-time-cost",
                .x = value_axis("run time", FieldUnit::seconds, xs, false),
                .y = value_axis("cost", FieldUnit::usd, ys, false)};
  for (std::size_t i = 0; i < running.size(); ++i) {
    const CompareOption& o = running[i];
    const std::string color = colors::kPalette[i % std::size(colors::kPalette)];
    const double x = num(o, "run_time"), y = num(o, "cost_total");
    if (banded(o)) {
      chart.layers.push_back({.color = color,
                              .marker = Marker::none,
                              .line = true,
                              .marks = {{num(o, "run_time_low"), y, ""}, {num(o, "run_time_high"), y, ""}}});
      chart.layers.push_back(
          {.color = color,
           .marker = Marker::none,
           .line = true,
           .marks = {{x, num(o, "cost_total_low"), ""}, {x, num(o, "cost_total_high"), ""}}});
    }
    chart.layers.push_back(
        {.label = o.name,
         .color = color,
         .marker = Marker::dot,
         .size = 5,
         .marks = {{x, y,
                    fmt::format("{}: {}, {} ({})", o.name, format_human(FieldUnit::seconds, x),
                                format_human(FieldUnit::usd, y), text(o, "error_band"))}}});
  }
  body +=
      section("Run time against cost",
              "Each option at its predicted run time and cost; the bars beside it are its error band, where "
              "the validation data has cases near it (the table says which do not). A band need not hold the "
              "prediction: where trainsim was too fast on runs like it, the band lies beyond it.",
              render(chart));

  BarChart steps{.id = "compare-steps", .unit = FieldUnit::seconds};
  for (const CompareOption& o : running) steps.rows.push_back(step_bar(o.name, shares(o)));
  body += section("Where one iteration goes", "Each option's step: compute, exposed communication, bubble.",
                  render(steps));

  Table table;
  table.columns = compare_columns();
  for (const CompareOption& o : options) table.rows.push_back(compare_cells(o));
  body +=
      section("Side by side",
              "Memory free is HBM less the fullest GPU's peak, against what must stay free for the job to "
              "run (budget.memory_headroom, or the default `trainsim explain` itemises).",
              html_table(table, options.size()));

  std::string bounds = "<ul>";
  for (const CompareOption& o : running) {
    const model::Bound b = model::what_bounds(shares(o));
    bounds += fmt::format("<li><b>{}</b>: bound by {}: {}. Error band: {}.</li>", escape(o.name),
                          escape(b.what), escape(b.why), escape(text(o, "error_band")));
  }
  body += section("What bounds each, and how sure the figures are", "", bounds + "</ul>");

  std::string names;
  for (std::size_t i = 0; i < options.size(); ++i) names += (i ? " vs " : "") + options[i].name;
  return page("compare", "Compare: " + names,
              fmt::format("{} options, simulated side by side", options.size()), body);
}

}  // namespace trainsim::report
