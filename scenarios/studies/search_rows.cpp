#include "scenarios/studies/search_rows.hpp"

#include <algorithm>
#include <utility>

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

std::vector<model::Summary> search_rows(const SearchResult& r, const std::string& scenario_name) {
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

std::string search_rows_csv(const std::vector<model::Summary>& rows) {
  std::string out;
  if (!rows.empty()) out = model::csv_header(rows.front()) + "\n";
  for (const auto& row : rows) out += model::csv_row(row) + "\n";
  return out;
}

std::string search_rows_json(const std::vector<model::Summary>& rows) {
  std::string out = "[";
  for (std::size_t i = 0; i < rows.size(); ++i) out += (i ? ",\n " : "\n ") + model::to_json(rows[i]);
  return out + "\n]\n";
}

}  // namespace trainsim::scenario
