#pragma once
// The pages of `trainsim report`, one self-contained HTML file each (inline CSS and SVG, no scripts, no
// network), each designed for the question its input answers:
//  - a run: what will it take? (time, bill, $/token, MFU, memory headroom, goodput; where a step's time
//    goes, the pipeline timeline, memory per stage, the bill, cost over the run);
//  - a sweep: how do time, cost and memory move with each swept key, and which points are worth it?
//  - a search: which layouts are best, and what bounds each?
//  - a shared cluster: how busy were the nodes, who waited and who paid?
#include <optional>
#include <string>

#include "report/table.hpp"
#include "report/trace.hpp"

namespace trainsim::report {

/// A run's page: `summary_json` is summary.json's text; `timeline` is run.csv (may be empty); `trace` is
/// trace.json read (absent: no timeline and memory per stage from the summary only). `source` says where
/// it came from. Throws InputError when summary.json is not one JSON object.
std::string run_report_html(const std::string& source, const std::string& summary_json, const Table& timeline,
                            const std::optional<IterationTrace>& trace);

/// A sweep's page (`trainsim sweep` CSV or JSON Lines): the swept keys on the axes (small multiples of run
/// time, cost and memory against each), the Pareto front of run time against cost drawn and listed, the
/// points that do not run grouped by reason, and every point in human units.
std::string sweep_report_html(const std::string& source, const Table& sweep);

/// A search's page (`trainsim search --format csv|json`): the Pareto front and the top layouts, each with
/// what bounds it (models/report/what_bounds.hpp) and where its step's time goes.
std::string search_report_html(const std::string& source, const Table& search);

/// Whether a table is a search's output rather than a sweep's: it has `rank` and `on_pareto` columns.
[[nodiscard]] bool is_search_output(const Table& table);

/// A shared cluster's page from `trainsim cluster -o DIR`'s jobs.csv and cluster.csv: nodes busy, idle and
/// down over the period, jobs waiting, per-team totals (jobs, GPU-hours, cost, mean and p95 wait) and the
/// jobs; under contention (the contention columns present) its total, its cost over the period and the first
/// rows of `links` (links.csv; empty when absent). `queue_json` is the folder's queue.json (`trainsim
/// cluster --format json`'s text; empty when the folder has none): with it the headline gives the idle
/// nodes' cost, the worst team's p95 wait, the GPU-hours lost to node failures, and the teams' quotas.
/// Throws InputError when it is not one JSON object.
std::string cluster_report_html(const std::string& source, const Table& jobs, const Table& cluster,
                                const Table& links = {}, const std::string& queue_json = "");

}  // namespace trainsim::report
