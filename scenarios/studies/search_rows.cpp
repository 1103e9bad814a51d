#include "scenarios/studies/search_rows.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "scenarios/studies/error_band.hpp"

namespace trainsim::scenario {

namespace {

/// The layout's keys as the loader reads them (layout_settings), as labels.
model::Labels layout_keys(const Layout& layout) {
  model::Labels keys;
  for (Override& o : layout_settings(layout))
    keys.emplace_back(std::move(o.key_path), std::move(o.yaml_value));
  return keys;
}

}  // namespace

std::string same_results_words(const RankedLayout& entry) {
  std::string out;
  for (const std::string& knob : knobs_that_do_not_matter(entry)) {
    out += (out.empty() ? "" : "; ") + knob.substr(knob.find('.') + 1);
  }
  return out;
}

std::vector<model::Summary> search_rows(const SearchResult& r, const Scenario& scenario) {
  const std::string& scenario_name = scenario.name;
  std::vector<model::Summary> rows;
  std::vector<model::Labels> seen;
  const auto add = [&](const RankedLayout& entry, const std::string& rank, bool on_pareto) {
    const model::Labels keys = layout_keys(entry.layout);
    if (std::find(seen.begin(), seen.end(), keys) != seen.end()) return;
    seen.push_back(keys);
    const LayoutScore& s = entry.best();
    model::Labels labels{{"scenario", scenario_name},
                         {"rank", rank},
                         {"on_pareto", on_pareto ? "true" : "false"},
                         {"fidelity", entry.event ? "event" : "analytic"}};
    labels.insert(labels.end(), keys.begin(), keys.end());
    labels.emplace_back("budget", s.meets_budget() ? "ok" : "missed");
    labels.emplace_back("same_results_with", same_results_words(entry));
    rows.push_back(model::summarize(labels, s.step, &s.run));
    if (s.step.feasible) {
      Scenario laid_out = scenario;
      laid_out.cluster.nodes = entry.layout.nodes;
      laid_out.parallelism = entry.layout.plan;
      add_error_band(rows.back(), error_band_of(laid_out));
    }
  };
  // The front's keys once, not once per top layout.
  std::vector<model::Labels> front;
  front.reserve(r.pareto.size());
  for (const RankedLayout& p : r.pareto) front.push_back(layout_keys(p.layout));
  const auto on_front = [&](const Layout& l) {
    return std::find(front.begin(), front.end(), layout_keys(l)) != front.end();
  };
  for (std::size_t i = 0; i < r.top.size(); ++i)
    add(r.top[i], std::to_string(i + 1), on_front(r.top[i].layout));
  for (const auto& p : r.pareto) add(p, "", true);
  return rows;
}

namespace {

// The rows' columns: those of the row with the most. Rows differ only in the error band's figures, which a
// layout that is not validated lacks (its framework, style or size has too few cases).
const model::Summary& widest(const std::vector<model::Summary>& rows) {
  return *std::max_element(rows.begin(), rows.end(), [](const model::Summary& a, const model::Summary& b) {
    return a.fields.size() < b.fields.size();
  });
}

}  // namespace

std::string search_rows_csv(const std::vector<model::Summary>& rows) {
  if (rows.empty()) return "";
  const model::Summary& columns = widest(rows);
  std::string out = model::csv_header(columns) + "\n";
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < columns.fields.size(); ++c) {
      if (c > 0) line += ',';
      // A column the row lacks is an empty cell.
      if (const model::SummaryField* f = row.find(columns.fields[c].name))
        line += model::csv_row(model::Summary{{*f}});
    }
    out += line + "\n";
  }
  return out;
}

std::string search_rows_json(const std::vector<model::Summary>& rows) {
  std::string out = "[";
  const std::vector<model::SummaryField>* columns = rows.empty() ? nullptr : &widest(rows).fields;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    // A column the row lacks is null, so that every object has the same keys.
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    for (const model::SummaryField& column : *columns) {
      const model::SummaryField* f = rows[i].find(column.name);
      j[model::column_name(column)] =
          f == nullptr ? nlohmann::ordered_json(nullptr)
                       : nlohmann::ordered_json::parse(model::to_json(model::Summary{{*f}})).front();
    }
    out += (i ? ",\n " : "\n ") + j.dump();
  }
  return out + "\n]\n";
}

}  // namespace trainsim::scenario
