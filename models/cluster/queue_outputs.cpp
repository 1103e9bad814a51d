#include "models/cluster/queue_outputs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "sim/csv_field.hpp"
#include "sim/trace.hpp"

namespace trainsim::model {

namespace {

constexpr double kHour = 3600;

double cluster_gpu_hours(const QueueClusterResult& c) {
  return static_cast<double>(c.nodes) * c.gpus_per_node * c.period / kHour;
}

/// One job's fields, in order, under the names jobs.csv and the JSON output both use (the unit in the
/// name); times not reached (never started, not finished) are null. The contention columns only under
/// contention.
nlohmann::ordered_json job_row(const QueueJob& q, const std::string& team, const QueueJobResult& r,
                               bool contention) {
  using Json = nlohmann::ordered_json;
  Json row = {{"job", q.name},
              {"scenario", q.scenario},
              {"team", team},
              {"nodes", q.nodes},
              {"priority", q.priority},
              {"submit_s", q.submit},
              {"start_s", r.started ? Json(r.first_start) : Json(nullptr)},
              {"end_s", r.finished ? Json(r.end) : Json(nullptr)},
              {"finished", r.finished},
              {"wait_s", r.wait},
              {"run_time_s", r.run_time},
              {"gpu_hours", r.gpu_hours},
              {"cost_usd", r.cost},
              {"preemptions", r.preemptions},
              {"restarts", r.restarts},
              {"lost_work_s", r.lost_work}};
  if (contention) {
    row["contention_slowdown"] = r.contention_slowdown;
    row["contention_gpu_hours"] = r.contention_gpu_hours;
    row["contention_cost_usd"] = r.contention_cost;
  }
  return row;
}

std::string link_name(std::int64_t leaf) {
  return fmt::format("leaf {} uplinks", leaf);
}

/// One leaf's uplinks under the names links.csv and the JSON output both use.
nlohmann::ordered_json link_row(const QueueLinkResult& l) {
  return {{"link", link_name(l.leaf)},
          {"leaf", l.leaf},
          {"shared_hours", l.shared_s / kHour},
          {"most_jobs", l.most_jobs},
          {"contention_gpu_hours", l.contention_gpu_hours}};
}

/// A JSON value as a CSV cell: null empty, numbers as the shortest decimal that reads back, text quoted
/// when needed.
std::string csv_cell(const nlohmann::ordered_json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return sim::csv_field(v.get<std::string>());
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());
  return v.dump();  // integers, true, false
}

/// A row object as one CSV line: its column names (`header`) or its cells.
std::string csv_line(const nlohmann::ordered_json& row, bool header) {
  std::string line;
  for (const auto& [column, value] : row.items())
    line += (line.empty() ? "" : ",") + (header ? column : csv_cell(value));
  return line + "\n";
}

}  // namespace

std::string to_string(QueuePolicy policy) {
  return std::string(name_in(kQueuePolicyNames, policy));
}

std::string to_string(PlacementRule rule) {
  return std::string(name_in(kPlacementRuleNames, rule));
}

std::string queue_table(const QueueSpec& spec, const QueueReport& report,
                        const std::vector<std::string>& notes) {
  const QueueClusterResult& c = report.cluster;
  std::string s;
  s += fmt::format("shared cluster: {} nodes x {} GPUs, {:.1f} days, policy {}, placement {}{}\n", c.nodes,
                   c.gpus_per_node, c.period / 86400, to_string(spec.policy), to_string(spec.placement),
                   spec.preemption ? ", preemption" : "");
  std::size_t finished = 0;
  std::size_t started = 0;
  for (const QueueJobResult& j : report.jobs) {
    finished += j.finished ? 1 : 0;
    started += j.started ? 1 : 0;
  }
  s += fmt::format("jobs: {} submitted, {} started, {} finished within the period\n", report.jobs.size(),
                   started, finished);
  s += fmt::format("utilisation          {:8.1f} %\n", 100 * c.utilisation);
  s += fmt::format("GPU-hours  busy      {:12.0f}  ${:.0f}\n", c.busy_gpu_hours, c.busy_cost);
  s += fmt::format("           idle      {:12.0f}  ${:.0f}\n", c.idle_gpu_hours, c.idle_cost);
  s += fmt::format("           down      {:12.0f}  ({} node failures)\n", c.down_gpu_hours, c.node_failures);
  s += fmt::format("           total     {:12.0f}  (nodes x GPUs x period)\n", cluster_gpu_hours(c));
  s += fmt::format("lost to failures     {:12.0f}  GPU-hours\n", c.lost_gpu_hours_failures);
  s += fmt::format("lost to preemption   {:12.0f}  GPU-hours\n", c.lost_gpu_hours_preemption);
  s += fmt::format(
      "fragmentation        {:12.0f}  GPU-hours free while a job fitting in total could not be "
      "placed\n",
      c.fragmentation_gpu_hours);
  if (spec.contention) {
    s += fmt::format("contention           {:12.0f}  GPU-hours  ${:.0f}, {:.1f} h with a job slowed\n",
                     c.contention_gpu_hours, c.contention_cost, c.contention_hours);
  }
  s += fmt::format("\n{:<16} {:>6} {:>8} {:>12} {:>14} {:>7} {:>6} {:>14} {:>14}", "team", "jobs", "done",
                   "GPU-hours", "cost", "share", "quota", "mean wait h", "p95 wait h");
  s += spec.contention ? fmt::format(" {:>14}\n", "contention $") : "\n";
  for (const QueueTeamResult& t : report.teams) {
    s += fmt::format("{:<16} {:>6} {:>8} {:>12.0f} {:>14.0f} {:>6.1f}% {:>6} {:>14.2f} {:>14.2f}", t.team,
                     t.jobs, t.finished, t.gpu_hours, t.cost, 100 * t.share,
                     t.quota > 0 ? fmt::format("{:.0f}%", 100 * t.quota) : "-", t.mean_wait / kHour,
                     t.p95_wait / kHour);
    s += spec.contention ? fmt::format(" {:>14.0f}\n", t.contention_cost) : "\n";
  }
  if (spec.contention && !report.links.empty()) {
    s += fmt::format("\n{:<16} {:>12} {:>10} {:>18}\n", "busiest links", "shared h", "most jobs",
                     "contention GPU-h");
    for (std::size_t i = 0; i < std::min<std::size_t>(report.links.size(), 5); ++i) {
      const QueueLinkResult& l = report.links[i];
      s += fmt::format("{:<16} {:>12.1f} {:>10} {:>18.0f}\n", link_name(l.leaf), l.shared_s / kHour,
                       l.most_jobs, l.contention_gpu_hours);
    }
  }
  for (const std::string& n : notes) s += "note: " + n + "\n";
  return s;
}

std::string queue_json(const QueueSpec& spec, const QueueReport& report,
                       const std::vector<std::string>& notes) {
  using Json = nlohmann::ordered_json;
  const QueueClusterResult& c = report.cluster;
  Json j;
  j["policy"] = to_string(spec.policy);
  j["placement"] = to_string(spec.placement);
  j["preemption"] = spec.preemption;
  j["nodes"] = c.nodes;
  j["gpus_per_node"] = c.gpus_per_node;
  j["period_s"] = c.period;
  Json& cl = j["cluster"];
  cl["utilisation"] = c.utilisation;
  cl["busy_gpu_hours"] = c.busy_gpu_hours;
  cl["idle_gpu_hours"] = c.idle_gpu_hours;
  cl["down_gpu_hours"] = c.down_gpu_hours;
  cl["total_gpu_hours"] = cluster_gpu_hours(c);
  cl["busy_cost_usd"] = c.busy_cost;
  cl["idle_cost_usd"] = c.idle_cost;
  cl["fragmentation_gpu_hours"] = c.fragmentation_gpu_hours;
  cl["lost_gpu_hours_failures"] = c.lost_gpu_hours_failures;
  cl["lost_gpu_hours_preemption"] = c.lost_gpu_hours_preemption;
  if (spec.contention) {
    cl["contention_gpu_hours"] = c.contention_gpu_hours;
    cl["contention_cost_usd"] = c.contention_cost;
    cl["contention_hours"] = c.contention_hours;
  }
  cl["node_failures"] = c.node_failures;
  cl["events"] = c.events;
  Json teams = Json::array();
  for (const QueueTeamResult& t : report.teams) {
    Json team = {
        {"team", t.team},          {"jobs", t.jobs},   {"finished", t.finished}, {"gpu_hours", t.gpu_hours},
        {"cost_usd", t.cost},      {"share", t.share}, {"quota", t.quota},       {"mean_wait_s", t.mean_wait},
        {"p95_wait_s", t.p95_wait}};
    if (spec.contention) {
      team["contention_gpu_hours"] = t.contention_gpu_hours;
      team["contention_cost_usd"] = t.contention_cost;
    }
    teams.push_back(team);
  }
  j["teams"] = teams;
  Json jobs = Json::array();
  for (std::size_t i = 0; i < report.jobs.size(); ++i) {
    const QueueJob& q = spec.jobs[i];
    jobs.push_back(job_row(q, spec.teams[q.team], report.jobs[i], spec.contention));
  }
  j["jobs"] = jobs;
  if (spec.contention) {
    Json links = Json::array();
    for (const QueueLinkResult& l : report.links) links.push_back(link_row(l));
    j["links"] = links;
  }
  j["notes"] = notes;
  return j.dump(2) + "\n";
}

std::string queue_jobs_csv(const QueueSpec& spec, const QueueReport& report) {
  std::string s = csv_line(job_row(QueueJob{}, "", QueueJobResult{}, spec.contention), true);
  for (std::size_t i = 0; i < report.jobs.size(); ++i) {
    const QueueJob& q = spec.jobs[i];
    s += csv_line(job_row(q, spec.teams[q.team], report.jobs[i], spec.contention), false);
  }
  return s;
}

std::string queue_cluster_csv(const QueueSpec& spec, const QueueReport& report) {
  const double nodes = static_cast<double>(report.cluster.nodes);
  std::string s = "start_s,busy_nodes,idle_nodes,down_nodes,utilisation,waiting_jobs";
  s += spec.contention ? ",contention_gpus,contention_cost_usd_per_h\n" : "\n";
  for (const QueueSample& row : report.samples) {
    s += fmt::format("{},{},{},{},{},{}", row.start, row.busy, row.idle, row.down, row.busy / nodes,
                     row.waiting);
    s += spec.contention
             ? fmt::format(",{},{}\n", row.contention_gpus, row.contention_gpus * spec.gpu_hour_usd)
             : "\n";
  }
  return s;
}

std::string queue_links_csv(const QueueReport& report) {
  std::string s = csv_line(link_row(QueueLinkResult{}), true);
  for (const QueueLinkResult& l : report.links) s += csv_line(link_row(l), false);
  return s;
}

std::string queue_trace_json(const QueueSpec& spec, const QueueReport& report) {
  // Segments per node, so tracks appear in node order (the writer numbers lanes by first appearance).
  std::vector<std::vector<std::size_t>> on_node(static_cast<std::size_t>(report.cluster.nodes));
  for (std::size_t i = 0; i < report.segments.size(); ++i)
    for (const std::int32_t n : report.segments[i].nodes) on_node[static_cast<std::size_t>(n)].push_back(i);
  sim::ChromeTraceWriter trace(std::size_t{1} << 26);
  const int width = static_cast<int>(std::to_string(report.cluster.nodes).size());
  for (std::size_t n = 0; n < on_node.size(); ++n) {
    const std::string lane = fmt::format("cluster / node {:0{}}", n, width);
    for (const std::size_t i : on_node[n]) {
      const QueueSegment& seg = report.segments[i];
      const QueueJob& q = spec.jobs[static_cast<std::size_t>(seg.job)];
      const sim::TraceArg args[] = {{"scenario", 0, q.scenario},
                                    {"team", 0, spec.teams[q.team]},
                                    {"nodes", static_cast<double>(q.nodes), {}}};
      trace.record({lane, q.name, spec.teams[q.team],
                    sim::Time::zero() + sim::Duration::from_seconds(seg.start),
                    sim::Time::zero() + sim::Duration::from_seconds(seg.end), args});
    }
  }
  for (const QueueSample& row : report.samples) {
    trace.counter("cluster", "busy nodes", sim::Time::zero() + sim::Duration::from_seconds(row.start),
                  row.busy);
  }
  trace.add_metadata("note", spec.contention ? "contention: jobs share the leaf uplinks they cross"
                                             : "contention-free: jobs do not share fabric links");
  return trace.str();
}

}  // namespace trainsim::model
