// The shared-cluster page of `trainsim report DIR` for `trainsim cluster -o DIR`: how busy the nodes were
// over the period, how many jobs waited, what each team ran, waited and paid, and the jobs; under
// contention also what neighbours on the fabric cost over the period and the busiest links.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "models/report/summary.hpp"
#include "report/html.hpp"
#include "report/page.hpp"
#include "report/results.hpp"
#include "report/svg.hpp"
#include "sim/error.hpp"
#include "sim/json_input.hpp"

namespace trainsim::report {

namespace {

using model::FieldUnit;
using model::format_human;

/// A column's number in a row; the column is looked up once per table, not per row.
auto column(const Table& t, const char* name) {
  return [c = t.column(name)](const std::vector<std::string>& row) {
    return c < 0 ? std::optional<double>() : number_of(row[static_cast<std::size_t>(c)]);
  };
}

/// A CSV table with its column names and cells in human units.
Table in_human_units(const Table& t) {
  Table out;
  for (const std::string& c : t.columns) out.columns.push_back(human_column(c));
  for (const auto& row : t.rows) {
    std::vector<std::string> cells;
    for (std::size_t c = 0; c < row.size(); ++c) cells.push_back(human_cell(t.columns[c], row[c]));
    out.rows.push_back(std::move(cells));
  }
  return out;
}

/// A number of queue.json (0 when absent or not a number).
double number_in(const nlohmann::ordered_json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

/// Each team's quota and p95 wait, as the queue computed them (queue.json's `teams`).
std::map<std::string, std::pair<double, double>> team_quota_p95(const nlohmann::ordered_json& queue) {
  std::map<std::string, std::pair<double, double>> out;
  if (const auto teams_json = queue.find("teams"); teams_json != queue.end() && teams_json->is_array()) {
    for (const auto& t : *teams_json) {
      if (!t.is_object() || !t.contains("team") || !t["team"].is_string()) continue;
      out[t["team"].get<std::string>()] = {number_in(t, "quota"), number_in(t, "p95_wait_s")};
    }
  }
  return out;
}

/// Utilisation over the period from cluster.csv: busy, idle and down nodes, the jobs waiting and the
/// contention's cost, per time-series row.
struct NodeSeries {
  Layer busy{.label = "busy nodes", .color = colors::kCompute, .marker = Marker::none, .line = true};
  Layer idle{.label = "idle nodes", .color = colors::kTp, .marker = Marker::none, .line = true};
  Layer down{.label = "down nodes", .color = colors::kFailure, .marker = Marker::none, .line = true};
  Layer waiting{.label = "jobs waiting", .color = colors::kDp, .marker = Marker::none, .line = true};
  Layer contention{.label = "contention", .color = colors::kFailure, .marker = Marker::none, .line = true};
  std::vector<double> times, nodes, waits, contention_costs;
  double utilisation = 0;  ///< busy share of the nodes over the period
};

NodeSeries node_series(const Table& cluster) {
  NodeSeries s;
  double busy_sum = 0, node_sum = 0;
  const auto start = column(cluster, "start_s"), busy_nodes = column(cluster, "busy_nodes");
  const auto idle_nodes = column(cluster, "idle_nodes"), down_nodes = column(cluster, "down_nodes");
  const auto waiting_jobs = column(cluster, "waiting_jobs");
  const auto contention_cost = column(cluster, "contention_cost_usd_per_h");
  for (const auto& row : cluster.rows) {
    const auto t = start(row), b = busy_nodes(row), i = idle_nodes(row), d = down_nodes(row);
    const auto w = waiting_jobs(row);
    if (!t || !b || !i || !d) continue;
    s.times.push_back(*t);
    s.nodes.insert(s.nodes.end(), {*b, *i, *d});
    s.busy.marks.push_back({*t, *b, ""});
    s.idle.marks.push_back({*t, *i, ""});
    s.down.marks.push_back({*t, *d, ""});
    if (w) {
      s.waiting.marks.push_back({*t, *w, ""});
      s.waits.push_back(*w);
    }
    if (const auto c = contention_cost(row)) {
      s.contention.marks.push_back({*t, *c, ""});
      s.contention_costs.push_back(*c);
    }
    busy_sum += *b;
    node_sum += *b + *i + *d;
  }
  s.utilisation = node_sum > 0 ? busy_sum / node_sum : 0.0;
  return s;
}

/// The charts of the nodes, the jobs waiting and the contention's cost over the period; "" without rows.
std::string node_charts(const NodeSeries& s) {
  if (s.times.empty()) return "";
  XYChart nodes_chart{.id = "cluster-nodes",
                      .x = value_axis("time since the start", FieldUnit::seconds, {0.0, s.times.back()}),
                      .y = value_axis("nodes", FieldUnit::count, s.nodes),
                      .layers = {s.busy, s.idle, s.down},
                      .height = 280};
  end_at(nodes_chart.x, s.times.back());
  std::string out = section("Nodes over the period", "Hourly means from cluster.csv.", render(nodes_chart));
  XYChart wait_chart{.id = "cluster-waiting",
                     .x = nodes_chart.x,
                     .y = value_axis("jobs", FieldUnit::count, s.waits),
                     .layers = {s.waiting},
                     .height = 200};
  out += section("Jobs waiting", "", render(wait_chart));
  if (!s.contention_costs.empty()) {
    XYChart contention_chart{.id = "cluster-contention",
                             .x = nodes_chart.x,
                             .y = value_axis("$ per hour", FieldUnit::usd, s.contention_costs),
                             .layers = {s.contention},
                             .height = 200};
    out += section("Contention over the period",
                   "What the GPU-hours that neighbours on the fabric added cost, per hour (cluster.csv).",
                   render(contention_chart));
  }
  return out;
}

/// Per team and over all jobs: jobs, GPU-hours, cost, waits and contention, from jobs.csv.
struct TeamTotals {
  int jobs = 0;
  double gpu_hours = 0, cost = 0, wait = 0;
};
struct JobTotals {
  std::map<std::string, TeamTotals> teams;
  double cost = 0, gpu_hours = 0, wait = 0, contention = 0;
};

JobTotals job_totals(const Table& jobs) {
  JobTotals all;
  const int team = jobs.column("team");
  const auto gpu_hours = column(jobs, "gpu_hours"), cost = column(jobs, "cost_usd"),
             wait = column(jobs, "wait_s"), job_contention = column(jobs, "contention_cost_usd");
  for (const auto& row : jobs.rows) {
    TeamTotals& t = all.teams[team < 0 ? std::string("all") : row[static_cast<std::size_t>(team)]];
    ++t.jobs;
    t.gpu_hours += gpu_hours(row).value_or(0);
    t.cost += cost(row).value_or(0);
    t.wait += wait(row).value_or(0);
    all.gpu_hours += gpu_hours(row).value_or(0);
    all.cost += cost(row).value_or(0);
    all.wait += wait(row).value_or(0);
    all.contention += job_contention(row).value_or(0);
  }
  return all;
}

/// The headline cards: jobs, utilisation, GPU-hours, idle cost, the worst p95 wait, the jobs' cost, the
/// mean wait and the failures (those of queue.json's `cluster` when it has them).
std::vector<Card> headline_cards(const Table& jobs, const JobTotals& all, double utilisation,
                                 const nlohmann::ordered_json& totals,
                                 const std::map<std::string, std::pair<double, double>>& quota_p95) {
  const double jobs_n = static_cast<double>(jobs.rows.size());
  std::vector<Card> headline{
      {"Jobs", std::to_string(jobs.rows.size()), fmt::format("{} teams", all.teams.size())},
      {"Utilisation", format_human(FieldUnit::fraction, utilisation),
       "busy share of the nodes over the period"},
      {"GPU-hours", format_human(FieldUnit::count, all.gpu_hours), "run by the jobs"}};
  if (!totals.empty()) {
    headline.push_back({"Idle cost", format_human(FieldUnit::usd, number_in(totals, "idle_cost_usd")),
                        fmt::format("{} idle GPU-hours, paid for",
                                    format_human(FieldUnit::count, number_in(totals, "idle_gpu_hours")))});
  }
  const std::string mean_wait = format_human(FieldUnit::seconds, jobs_n > 0 ? all.wait / jobs_n : 0.0);
  if (!quota_p95.empty()) {
    // The worst team's p95 wait, with every job's mean wait beside it.
    const auto worst = std::max_element(quota_p95.begin(), quota_p95.end(), [](const auto& a, const auto& b) {
      return a.second.second < b.second.second;
    });
    headline.push_back({"p95 wait", format_human(FieldUnit::seconds, worst->second.second),
                        "worst team: " + worst->first + "; mean wait " + mean_wait});
  }
  headline.push_back({"Cost of the jobs", format_human(FieldUnit::usd, all.cost), "their GPU-hours priced"});
  if (quota_p95.empty()) headline.push_back({"Mean wait", mean_wait, "from submission to start"});
  if (!totals.empty()) {
    headline.push_back(
        {"Failures", format_human(FieldUnit::count, number_in(totals, "node_failures")),
         fmt::format("node failures; {} GPU-hours of work lost",
                     format_human(FieldUnit::count, number_in(totals, "lost_gpu_hours_failures")))});
  }
  return headline;
}

/// The teams' section: a bar of each team's cost and a table of its jobs, GPU-hours, cost and waits (with
/// its p95 wait and quota when the queue had quotas).
std::string team_section(const JobTotals& all,
                         const std::map<std::string, std::pair<double, double>>& quota_p95) {
  const bool quotas = !quota_p95.empty();
  Table per_team{.columns = {"team", "jobs", "GPU-hours", "cost", "mean wait"}};
  if (quotas) per_team.columns.insert(per_team.columns.end(), {"p95 wait", "quota"});
  BarChart team_bars{.id = "cluster-teams", .unit = FieldUnit::usd, .legend = false};
  std::size_t color = 0;
  for (const auto& [name, t] : all.teams) {
    per_team.rows.push_back({name, std::to_string(t.jobs), format_human(FieldUnit::count, t.gpu_hours),
                             format_human(FieldUnit::usd, t.cost),
                             format_human(FieldUnit::seconds, t.wait / t.jobs)});
    if (quotas) {
      const auto q = quota_p95.find(name);
      const double quota = q == quota_p95.end() ? 0.0 : q->second.first;
      per_team.rows.back().push_back(
          q == quota_p95.end() ? "-" : format_human(FieldUnit::seconds, q->second.second));
      per_team.rows.back().push_back(quota > 0 ? format_human(FieldUnit::fraction, quota) : "-");
    }
    team_bars.rows.push_back(
        {name, {{"cost", t.cost, colors::kPalette[color++ % std::size(colors::kPalette)]}}});
  }
  return section("Teams",
                 quotas ? "What each team's jobs cost, with their GPU-hours, waits and quota of the nodes."
                        : "What each team's jobs cost, with their GPU-hours and mean wait.",
                 render(team_bars) + html_table(per_team, 100));
}

}  // namespace

std::string cluster_report_html(const std::string& source, const Table& jobs, const Table& cluster,
                                const Table& links, const std::string& queue_json) {
  nlohmann::ordered_json queue;
  if (!queue_json.empty()) {
    queue = sim::parse_json_input(queue_json, "queue.json");
    if (!queue.is_object()) throw InputError("queue.json: expected one JSON object");
  }
  const nlohmann::ordered_json no_object = nlohmann::ordered_json::object();
  const auto cluster_json = queue.find("cluster");
  const nlohmann::ordered_json& totals =
      cluster_json != queue.end() && cluster_json->is_object() ? *cluster_json : no_object;
  const auto quota_p95 = team_quota_p95(queue);
  const NodeSeries series = node_series(cluster);
  const JobTotals all = job_totals(jobs);
  std::string body = cards(headline_cards(jobs, all, series.utilisation, totals, quota_p95));
  if (jobs.column("contention_cost_usd") >= 0) {
    body += cards({{"Contention", format_human(FieldUnit::usd, all.contention),
                    "run time neighbours on the fabric added, priced"}});
  }
  body += fmt::format("<p>{} jobs; mean utilisation {:.1f} % of the nodes over the period.</p>",
                      jobs.rows.size(), 100 * series.utilisation);
  body += node_charts(series);
  if (!links.rows.empty()) {
    body += section("Busiest links",
                    "The leaves whose uplinks running jobs shared, by the contention GPU-hours they set "
                    "(links.csv).",
                    html_table(in_human_units(links), 10));
  }
  body += team_section(all, quota_p95);
  body += section("Jobs", "jobs.csv in human units.", html_table(in_human_units(jobs), 2000));
  return page("cluster", "Shared cluster: " + source,
              fmt::format("{} jobs over {}", jobs.rows.size(),
                          series.times.empty() ? std::string("the period")
                                               : format_human(FieldUnit::seconds, series.times.back())),
              body);
}

}  // namespace trainsim::report
