#pragma once
// What the sweep and search pages share: the Pareto front of run time against cost, its chart, and a
// table of layouts in human units with what bounds each.
#include <cstddef>
#include <string>
#include <vector>

#include "report/results.hpp"

namespace trainsim::report {

/// The rows that run (feasible and fit) and have a run time and a cost.
[[nodiscard]] std::vector<std::size_t> running_rows(const Results& results);

/// The Pareto front of run time against cost among `rows` (scenario::pareto_front: no other row is both
/// faster and cheaper), fastest first.
[[nodiscard]] std::vector<std::size_t> pareto_rows(const Results& results,
                                                   const std::vector<std::size_t>& rows);

/// A mark's hover text: the layout, then its run time, cost, memory against capacity and MFU.
[[nodiscard]] std::string point_tip(const Results& results, std::size_t row);

/// Run time against cost: `rows` as dots, `front` (fastest first) as a staircase of rings; each axis
/// logarithmic where its values span a decade. `id` becomes the chart's data-chart.
[[nodiscard]] std::string time_cost_chart(const std::string& id, const Results& results,
                                          const std::vector<std::size_t>& rows,
                                          const std::vector<std::size_t>& front);

/// A table of layouts: `lead` (a header, and one cell per row, e.g. the rank) when not empty, each varying
/// key, run time, cost, cost per million tokens, memory per GPU and MFU; under each, a line saying what
/// bounds it and why (what_bounds).
[[nodiscard]] std::string layouts_table(const Results& results, const std::vector<std::size_t>& rows,
                                        const std::string& lead = "",
                                        const std::vector<std::string>& lead_cells = {});

}  // namespace trainsim::report
