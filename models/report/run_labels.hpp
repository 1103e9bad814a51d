#pragma once
// The text labels `trainsim run` puts first in its summary (the table and summary.json): `scenario`, then
// `fidelity`, then one field per tag under the tag's own key (`team`, not `tags.team`). A tag therefore
// shares one namespace with the built-in fields, and tag_column_clash() is the rule that keeps every name
// to one column: the scenario reader refuses a tag it names, at the tag. (Sweep rows and run.csv write a
// tag as `tags.<key>`, which no built-in column is called.)
#include <optional>
#include <string>

#include "models/report/summary.hpp"

namespace trainsim::model {

/// `scenario`, `fidelity`, then each tag as (key, value), in the scenario's order.
[[nodiscard]] Labels run_labels(const std::string& scenario, const std::string& fidelity, const Labels& tags);

/// The built-in column of a run's summary that a tag called `key` would share its name with: the labels
/// `scenario` and `fidelity`, any field summarize() can write under its name or its column name
/// (`iteration_time` or `iteration_time_s`), and the budget alerts' `budget_alert_<k>_…` fields. The
/// column is returned as summary.json names it; nullopt when `key` clashes with none.
[[nodiscard]] std::optional<std::string> tag_column_clash(const std::string& key);

}  // namespace trainsim::model
