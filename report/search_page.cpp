// The search page of `trainsim report FILE` for `trainsim search --format csv|json -o FILE`: which layouts
// are best, and why. Headline cards, run time against cost with the search's Pareto front, the top layouts
// each with what bounds it, where each one's step goes, and the front listed.
#include <fmt/format.h>

#include <algorithm>

#include "models/report/summary.hpp"
#include "models/report/what_bounds.hpp"
#include "report/html.hpp"
#include "report/layouts.hpp"
#include "report/page.hpp"
#include "report/results.hpp"
#include "report/svg.hpp"

namespace trainsim::report {

namespace {

using model::FieldUnit;
using model::format_human;

std::string step_bars(const Results& r, const std::vector<std::size_t>& rows,
                      const std::vector<std::string>& labels) {
  BarChart chart{.id = "layout-steps", .unit = FieldUnit::seconds};
  for (std::size_t n = 0; n < rows.size(); ++n) {
    chart.rows.push_back(step_bar(labels[n], r.shares(rows[n])));
  }
  return render(chart);
}

}  // namespace

bool is_search_output(const Table& table) {
  return table.column("rank") >= 0 && table.column("on_pareto") >= 0;
}

std::string search_report_html(const std::string& source, const Table& search) {
  const Results r(search);
  const int rank = search.column("rank"), on_pareto = search.column("on_pareto"),
            budget = search.column("budget");
  std::vector<std::size_t> top, front;
  std::vector<std::string> top_labels;
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (rank >= 0 && !r.cell(i, rank).empty()) {
      top.push_back(i);
      std::string label = "#" + r.cell(i, rank);
      if (budget >= 0 && r.cell(i, budget) == "missed") label += " (misses the budget)";
      top_labels.push_back(std::move(label));
    }
    if (on_pareto >= 0 && r.cell(i, on_pareto) == "true" && r.runs(i) && r.si(i, "run_time") &&
        r.si(i, "cost_total"))
      front.push_back(i);
  }
  std::sort(front.begin(), front.end(),
            [&](std::size_t a, std::size_t b) { return *r.si(a, "run_time") < *r.si(b, "run_time"); });

  std::vector<Card> headline{{"Layouts listed", std::to_string(r.size()),
                              fmt::format("the top {} and the Pareto front", top.size())}};
  if (!top.empty()) {
    const std::size_t best = top.front();
    const model::Bound bound = model::what_bounds(r.shares(best));
    headline.push_back(
        {"Best run time",
         r.si(best, "run_time") ? format_human(FieldUnit::seconds, *r.si(best, "run_time")) : "—",
         r.layout(best)});
    headline.push_back(
        {"Its cost", r.si(best, "cost_total") ? format_human(FieldUnit::usd, *r.si(best, "cost_total")) : "—",
         fmt::format("MFU {}",
                     r.si(best, "mfu") ? format_human(FieldUnit::fraction, *r.si(best, "mfu")) : "—")});
    headline.push_back({"Bound by", bound.what, bound.why});
  }
  // The node counts the file's layouts span: with one, cost follows time and the front is one point.
  std::vector<std::string> node_counts;
  if (const int nodes = search.column("cluster.nodes"); nodes >= 0) {
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (std::find(node_counts.begin(), node_counts.end(), r.cell(i, nodes)) == node_counts.end())
        node_counts.push_back(r.cell(i, nodes));
    }
  }
  std::string spans;
  for (std::size_t i = 0; i < node_counts.size(); ++i) spans += (i ? ", " : "") + node_counts[i];
  const bool one_count = node_counts.size() <= 1;
  headline.push_back(
      {"Pareto front", std::to_string(front.size()) + (front.size() == 1 ? " layout" : " layouts"),
       one_count
           ? (front.size() == 1 ? "one node count: cost follows time" : "trading time against money")
           : fmt::format("over {} node counts ({}): trading time against money", node_counts.size(), spans)});
  std::string body = cards(headline);
  if (const std::string shared = r.shared_keys(); !shared.empty())
    body += "<p>Every layout listed has " + escape(shared) + ".</p>";
  body += section("Run time against cost",
                  one_count
                      ? "Every layout in the file; the red staircase is the search's Pareto front over every "
                        "layout it scored. With one node count every layout costs in proportion to its time "
                        "and the front is one point; `trainsim search --nodes 256,512,1024` trades time "
                        "against money."
                      : "Every layout in the file; the red staircase is the search's Pareto front over every "
                        "layout it scored, across " +
                            std::to_string(node_counts.size()) + " node counts (" + spans +
                            "): more nodes finish sooner and may cost more.",
                  time_cost_chart("pareto", r, running_rows(r), front));
  if (!top.empty()) {
    body += section(
        "The top layouts and what bounds each",
        "In the search's rank order. \"Bound by\" names what limits the layout: compute when it is "
        "85 % of the step or more, memory when the GPU is 90 % full and the layout cannot trade memory "
        "for time, else the largest loss (TP communication, the bubble, …).",
        layouts_table(r, top, "rank", top_labels) + "<h3>Where each layout's step goes</h3>" +
            step_bars(r, top, top_labels));
  }
  if (!front.empty()) body += section("The Pareto front, fastest first", "", layouts_table(r, front));
  // Titled by the scenario searched when the rows name it (`trainsim search` writes a `scenario` column),
  // else by the file.
  const int scenario = search.column("scenario");
  const std::string title =
      scenario >= 0 && r.size() > 0 && !r.cell(0, scenario).empty() ? r.cell(0, scenario) : source;
  return page("search", "Search: " + title,
              fmt::format("{} layouts from {}: the best by the search's objective and its Pareto front of "
                          "run time against cost",
                          r.size(), source),
              body);
}

}  // namespace trainsim::report
