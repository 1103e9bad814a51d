#pragma once
// The words and files of a shared cluster's result (SPEC "Shared clusters", outputs): a table or JSON for
// the terminal, jobs.csv (a row per job), cluster.csv (the utilisation time series) and trace.json (Chrome
// trace for Perfetto: one track per node, a slice per stretch of a job on it). Every writer is a pure
// function of its inputs, so a seed gives byte-identical files. `notes` are sentences about what the
// numbers include (contention-free, memoised), printed with every summary.
#include <string>
#include <vector>

#include "models/cluster/queue_report.hpp"
#include "models/cluster/queue_spec.hpp"

namespace trainsim::model {

[[nodiscard]] std::string queue_table(const QueueSpec& spec, const QueueReport& report,
                                      const std::vector<std::string>& notes);
[[nodiscard]] std::string queue_json(const QueueSpec& spec, const QueueReport& report,
                                     const std::vector<std::string>& notes);
[[nodiscard]] std::string queue_jobs_csv(const QueueSpec& spec, const QueueReport& report);
/// The utilisation time series; under contention also the GPUs' worth of run lost to it and their price
/// per hour (the report page's contention chart).
[[nodiscard]] std::string queue_cluster_csv(const QueueSpec& spec, const QueueReport& report);
/// Under contention: a row per leaf whose uplinks two jobs ever shared, the busiest first.
[[nodiscard]] std::string queue_links_csv(const QueueReport& report);
[[nodiscard]] std::string queue_trace_json(const QueueSpec& spec, const QueueReport& report);

[[nodiscard]] std::string to_string(QueuePolicy policy);
[[nodiscard]] std::string to_string(PlacementRule rule);

}  // namespace trainsim::model
