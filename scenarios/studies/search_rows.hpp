#pragma once
// The rows of a layout search (`trainsim search --format csv|json`, the Python module's search): one row per
// distinct layout of the top K, in rank order, then the Pareto layouts not among them. A row's labels are
// scenario (its name), rank ("" for a Pareto-only layout), on_pareto, fidelity (of the score used), the
// layout's keys spelled as the loader reads them (layout_settings: `run S.yaml --set KEY=VALUE ...` re-runs
// it), budget ("ok"/"missed") and same_results_with (the knobs that do not change the row's answer,
// "; "-separated), then the summary's fields, with each feasible row's error band (error_band.hpp: its own
// framework, style and GPU count) after its figures, as `run` writes it.
#include <string>
#include <vector>

#include "models/report/summary.hpp"
#include "scenarios/studies/layout_search.hpp"

namespace trainsim::scenario {

/// The knobs that do not change a layout's answer (knobs_that_do_not_matter), without their block,
/// "; "-separated ("" when none): the table's and the rows' same_results_with.
[[nodiscard]] std::string same_results_words(const RankedLayout& entry);

/// The rows of `result`, a search of `scenario`.
[[nodiscard]] std::vector<model::Summary> search_rows(const SearchResult& result, const Scenario& scenario);

/// CSV: a header, then one line per row ("" when there are no rows).
[[nodiscard]] std::string search_rows_csv(const std::vector<model::Summary>& rows);
/// JSON: an array of one object per row.
[[nodiscard]] std::string search_rows_json(const std::vector<model::Summary>& rows);

}  // namespace trainsim::scenario
