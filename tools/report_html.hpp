#pragma once
// A self-contained HTML report (inline CSS and SVG, no scripts, no network) from the outputs of
// `trainsim run -o DIR` (summary.json, run.csv) or `trainsim sweep` (CSV or JSON Lines).
#include <string>
#include <vector>

namespace trainsim::cli {

/// A table of text cells with a header row, as read from a CSV file or JSON Lines.
struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;

  /// Index of a column, or -1.
  [[nodiscard]] int column(const std::string& name) const;
};

/// RFC 4180 CSV (quoted fields, doubled quotes, one header row). Throws InputError naming line numbers.
Table parse_csv(const std::string& text, const std::string& file_label);
/// JSON Lines: one object per line; columns in order of first appearance. Throws InputError.
Table parse_json_lines(const std::string& text, const std::string& file_label);

/// Report of one run: `summary_json` is summary.json's text; `timeline` is run.csv (may be empty).
std::string run_report_html(const std::string& title, const std::string& summary_json, const Table& timeline);
/// Report of a sweep: every row in a table, plus scatter charts of run time vs cost and of iteration time
/// vs GPUs when those columns are present; infeasible points are listed with their reason.
std::string sweep_report_html(const std::string& title, const Table& sweep);
/// A shared cluster's page from `trainsim cluster -o DIR`'s jobs.csv and cluster.csv: nodes busy, idle and
/// down over the period, jobs waiting, per-team totals (jobs, GPU-hours, cost, mean wait) and the jobs.
std::string cluster_report_html(const std::string& title, const Table& jobs, const Table& cluster);

}  // namespace trainsim::cli
