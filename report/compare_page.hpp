#pragma once
// `trainsim compare A.yaml B.yaml …`: options side by side — time, cost, $ per million tokens, the memory
// headroom each leaves against what must stay free, what bounds each (models/report/what_bounds.hpp) and the
// error band of its figures (scenarios/studies/error_band.hpp) — as a text table and as a self-contained HTML
// page (the frame of report/page.hpp, body data-report "compare").
#include <string>
#include <vector>

#include "models/report/summary.hpp"

namespace trainsim::report {

struct CompareOption {
  std::string name;            ///< the scenario's name
  std::string hardware;        ///< "512 x h100-sxm (64 dgx-h100)"
  model::Summary summary;      ///< its run's summary with the error band added
  double headroom_needed = 0;  ///< bytes that must stay free per GPU: budget.memory_headroom or the default
};

/// The figures of one option as table cells: option, hardware, iteration, run time (its band), cost (its
/// band), $ per million tokens, memory free (what must stay free), bound by.
[[nodiscard]] std::vector<std::string> compare_cells(const CompareOption& option);
[[nodiscard]] const std::vector<std::string>& compare_columns();

/// The text table `compare` prints.
[[nodiscard]] std::string compare_text(const std::vector<CompareOption>& options);

/// The HTML page: headline cards (fastest, cheapest, lowest $ per million tokens), run time against cost
/// with each option's band as error bars (chart "compare-time-cost"), each option's step as a bar (chart
/// "compare-steps"), the table, and the band's basis for each.
[[nodiscard]] std::string compare_report_html(const std::vector<CompareOption>& options);

}  // namespace trainsim::report
