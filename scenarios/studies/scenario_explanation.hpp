#pragma once
// `trainsim explain` of a loaded scenario as data: the memory and parameter breakdown of its layout, the
// time of one iteration on the critical stage, and the convergence and tuning sections when the scenario
// has those blocks, each line with its formula. The command line prints it; the Python module returns it.
#include <string>

#include "models/report/explain.hpp"
#include "scenarios/scenario.hpp"

namespace trainsim::scenario {

/// What `trainsim explain` shows beyond its default sections.
struct ExplainExtras {
  bool ops = false;  ///< --ops: one layer's ops, each alone (models/report/explain_ops.hpp), after the time
};

/// Every section `trainsim explain` shows for `scenario`, in the order it shows them.
[[nodiscard]] model::Explanation explain_scenario(const Scenario& scenario, ExplainExtras extras = {});

/// The explanation as the JSON of `trainsim explain --json`: {"fits", "reason", "sections": [{"title",
/// "lines": [{"label", "formula", "value", "unit"}], "notes"}]}; `indent` < 0: one line.
[[nodiscard]] std::string explanation_json(const model::Explanation& explanation, int indent = -1);

}  // namespace trainsim::scenario
