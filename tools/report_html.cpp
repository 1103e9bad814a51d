#include "tools/report_html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <utility>

#include "models/report/summary.hpp"
#include "sim/error.hpp"

namespace trainsim::cli {

int Table::column(const std::string& name) const {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name) return static_cast<int>(i);
  }
  return -1;
}

Table parse_csv(const std::string& text, const std::string& file_label) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false;
  int line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      record.push_back(std::move(field));
      field.clear();
      records.push_back(std::move(record));
      record.clear();
      ++line;
    } else {
      field += c;
    }
  }
  if (quoted)
    throw InputError(
        {Diagnostic{.file = file_label, .line = line, .message = "unterminated quoted CSV field"}});
  if (!field.empty() || !record.empty()) {
    record.push_back(std::move(field));
    records.push_back(std::move(record));
  }
  if (records.empty())
    throw InputError({Diagnostic{.file = file_label, .message = "empty CSV: expected a header row"}});
  Table table;
  table.columns = std::move(records.front());
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() == 1 && records[r][0].empty()) continue;  // blank line
    if (records[r].size() != table.columns.size()) {
      throw InputError({Diagnostic{.file = file_label,
                                   .line = static_cast<int>(r + 1),
                                   .message = fmt::format("expected {} CSV fields, found {}",
                                                          table.columns.size(), records[r].size())}});
    }
    table.rows.push_back(std::move(records[r]));
  }
  return table;
}

Table parse_json_lines(const std::string& text, const std::string& file_label) {
  Table table;
  std::istringstream in(text);
  std::string line_text;
  int line = 0;
  std::vector<nlohmann::ordered_json> objects;
  while (std::getline(in, line_text)) {
    ++line;
    if (line_text.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(line_text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      throw InputError(
          {Diagnostic{.file = file_label, .line = line, .message = "expected one JSON object per line"}});
    }
    for (const auto& [key, value] : j.items()) {
      if (table.column(key) < 0) table.columns.push_back(key);
    }
    objects.push_back(std::move(j));
  }
  for (const auto& j : objects) {
    std::vector<std::string> row(table.columns.size());
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
      if (!j.contains(table.columns[c])) continue;
      const auto& v = j[table.columns[c]];
      row[c] = v.is_string() ? v.get<std::string>() : v.dump();
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

std::string page(const std::string& title, const std::string& body) {
  return fmt::format(R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{0}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }}
h1 {{ font-size: 1.5em; }} h2 {{ font-size: 1.15em; margin-top: 1.6em; }}
table {{ border-collapse: collapse; font-size: 0.85em; }}
td, th {{ border-bottom: 1px solid #ddd; padding: 3px 8px; text-align: right; white-space: nowrap; }}
th {{ background: #f4f4f4; }} td.l, th.l {{ text-align: left; }}
.scroll {{ overflow-x: auto; }} .legend span {{ margin-right: 1.2em; font-size: 0.85em; }}
.sw {{ display: inline-block; width: 0.8em; height: 0.8em; margin-right: 0.3em; }}
</style></head><body>
<h1>{0}</h1>
{1}
<p style="color:#888;font-size:0.8em">Generated by trainsim report.</p>
</body></html>
)",
                     escape(title), body);
}

std::optional<double> number_of(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0' || !std::isfinite(v)) return std::nullopt;
  return v;
}

/// A horizontal stacked bar of named parts, with a legend showing each part's value.
std::string stacked_bar(const std::vector<std::pair<std::string, double>>& parts, model::FieldUnit unit,
                        double scale_total = 0) {
  double total = 0;
  for (const auto& [name, v] : parts) total += std::max(v, 0.0);
  const double full = std::max(scale_total, total);
  if (full <= 0) return "<p>(nothing to show)</p>";
  const double width = 900;
  std::string svg = fmt::format(R"(<svg width="{}" height="34" role="img">)", width + 2);
  double x = 1;
  std::string legend = R"(<div class="legend">)";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const double w = std::max(parts[i].second, 0.0) / full * width;
    const char* color = kPalette[i % std::size(kPalette)];
    svg += fmt::format(
        R"(<rect x="{:.1f}" y="2" width="{:.1f}" height="30" fill="{}"><title>{}: {}</title></rect>)", x, w,
        color, escape(parts[i].first), model::format_human(unit, parts[i].second));
    x += w;
    legend += fmt::format(R"(<span><i class="sw" style="background:{}"></i>{} {}</span>)", color,
                          escape(parts[i].first), model::format_human(unit, parts[i].second));
  }
  if (scale_total > total) {
    svg += fmt::format(R"(<rect x="1" y="2" width="{:.1f}" height="30" fill="none" stroke="#333"/>)", width);
  }
  return svg + "</svg>" + legend + "</div>";
}

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;
};

/// An x-y chart with axes; `lines` joins each series' points, else draws dots.
std::string xy_chart(const std::vector<Series>& series, const std::string& x_label,
                     const std::string& y_label, bool lines, bool log_x = false) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double x0 = kInf, x1 = -kInf, y0 = 0, y1 = -kInf;
  auto tx = [log_x](double x) { return log_x ? std::log2(std::max(x, 1e-300)) : x; };
  for (const auto& s : series) {
    for (const auto& [x, y] : s.points) {
      x0 = std::min(x0, tx(x));
      x1 = std::max(x1, tx(x));
      y1 = std::max(y1, y);
      y0 = std::min(y0, y);
    }
  }
  if (!std::isfinite(x0) || !std::isfinite(y1)) return "<p>(no data)</p>";
  if (x1 == x0) x1 = x0 + 1;
  if (y1 == y0) y1 = y0 + 1;
  // The plot area in pixels: the whole chart and its left, bottom, top and right margins.
  const double width = 900, height = 320, left = 70, bottom = 40, top = 10, right = 10;
  auto px = [&](double x) { return left + (tx(x) - x0) / (x1 - x0) * (width - left - right); };
  auto py = [&](double y) { return top + (1 - (y - y0) / (y1 - y0)) * (height - top - bottom); };
  std::string svg = fmt::format(R"(<svg width="{}" height="{}" role="img" font-size="11">)", width, height);
  svg += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#333"/>)", left, height - bottom,
                     width - right, height - bottom);
  svg += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#333"/>)", left, top, left,
                     height - bottom);
  for (int i = 0; i <= 4; ++i) {
    const double yv = y0 + (y1 - y0) * i / 4.0;
    const double xv = x0 + (x1 - x0) * i / 4.0;
    svg +=
        fmt::format(R"(<text x="{}" y="{:.1f}" text-anchor="end">{:.4g}</text>)", left - 4, py(yv) + 4, yv);
    const double xlabel = log_x ? std::exp2(xv) : xv;
    svg += fmt::format(R"(<text x="{:.1f}" y="{}" text-anchor="middle">{:.4g}</text>)",
                       left + (xv - x0) / (x1 - x0) * (width - left - right), height - bottom + 16, xlabel);
  }
  svg += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">{}</text>)", (left + width) / 2, height - 4,
                     escape(x_label));
  svg += fmt::format(R"~(<text x="12" y="{}" transform="rotate(-90 12 {})" text-anchor="middle">{}</text>)~",
                     height / 2, height / 2, escape(y_label));
  std::string legend = R"(<div class="legend">)";
  for (std::size_t i = 0; i < series.size(); ++i) {
    const char* color = kPalette[i % std::size(kPalette)];
    const auto& pts = series[i].points;
    if (lines && pts.size() > 1) {
      std::string d;
      for (const auto& [x, y] : pts)
        d += fmt::format("{}{:.1f},{:.1f}", d.empty() ? "M" : " L", px(x), py(y));
      svg += fmt::format(R"(<path d="{}" fill="none" stroke="{}" stroke-width="1.5"/>)", d, color);
    } else {
      for (const auto& [x, y] : pts) {
        svg += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="{}" fill-opacity="0.7"/>)", px(x),
                           py(y), color);
      }
    }
    legend += fmt::format(R"(<span><i class="sw" style="background:{}"></i>{}</span>)", color,
                          escape(series[i].name));
  }
  return svg + "</svg>" + legend + "</div>";
}

std::string html_table(const Table& t, std::size_t max_rows) {
  std::string out = R"(<div class="scroll"><table><tr>)";
  for (const auto& c : t.columns) out += "<th class=\"l\">" + escape(c) + "</th>";
  out += "</tr>";
  for (std::size_t r = 0; r < std::min(max_rows, t.rows.size()); ++r) {
    out += "<tr>";
    for (const auto& cell : t.rows[r]) {
      out += number_of(cell) ? "<td>" + escape(cell) + "</td>" : "<td class=\"l\">" + escape(cell) + "</td>";
    }
    out += "</tr>";
  }
  out += "</table></div>";
  if (t.rows.size() > max_rows)
    out += fmt::format("<p>… {} more rows not shown.</p>", t.rows.size() - max_rows);
  return out;
}

}  // namespace

std::string run_report_html(const std::string& title, const std::string& summary_json,
                            const Table& timeline) {
  const auto j = nlohmann::ordered_json::parse(summary_json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw InputError("summary.json: expected one JSON object");
  auto num = [&j](const char* key) {
    return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
  };
  std::string body;
  body += "<h2>Where an iteration's time goes</h2>";
  body += stacked_bar({{"compute", num("compute")},
                       {"exposed TP comm", num("exposed_tp_comm")},
                       {"exposed DP comm", num("exposed_dp_comm")},
                       {"exposed PP comm", num("exposed_pp_comm")},
                       {"optimizer", num("optimizer")},
                       {"bubble", num("bubble")}},
                      model::FieldUnit::seconds);
  body += "<h2>Memory of the worst GPU (outline: capacity)</h2>";
  body += stacked_bar({{"weights", num("weights")},
                       {"grads", num("grads")},
                       {"optimizer state", num("optimizer_state")},
                       {"activations", num("activations")},
                       {"buffers", num("buffers")}},
                      model::FieldUnit::bytes, num("memory_capacity"));
  if (j.contains("cost_total")) {
    body += "<h2>The bill</h2>";
    body += stacked_bar({{"compute", num("cost_compute")},
                         {"energy", num("cost_energy")},
                         {"storage", num("cost_storage")},
                         {"network", num("cost_network")}},
                        model::FieldUnit::usd);
  }
  const int t = timeline.column("time_s");
  if (t >= 0 && !timeline.rows.empty()) {
    std::vector<Series> series;
    for (const char* c : {"cost_total_usd", "cost_compute_usd", "cost_energy_usd", "cost_storage_usd"}) {
      const int ci = timeline.column(c);
      if (ci < 0) continue;
      Series s{.name = c};
      for (const auto& row : timeline.rows) {
        auto x = number_of(row[static_cast<std::size_t>(t)]);
        auto y = number_of(row[static_cast<std::size_t>(ci)]);
        if (x && y) s.points.emplace_back(*x / 86400.0, *y);
      }
      series.push_back(std::move(s));
    }
    body += "<h2>Cumulative cost over the run</h2>" + xy_chart(series, "days", "USD", true);
    int failures = 0, checkpoints = 0;
    const int e = timeline.column("event");
    for (const auto& row : timeline.rows) {
      if (e < 0) break;
      failures += row[static_cast<std::size_t>(e)] == "failure";
      checkpoints += row[static_cast<std::size_t>(e)] == "checkpoint";
    }
    body += fmt::format("<p>Timeline: {} checkpoints and {} failures shown (run.csv).</p>", checkpoints,
                        failures);
  }
  body += "<h2>All figures</h2><table>";
  for (const auto& [key, value] : j.items()) {
    body += "<tr><td class=\"l\">" + escape(key) + "</td><td>" +
            escape(value.is_string() ? value.get<std::string>() : value.dump()) + "</td></tr>";
  }
  body += "</table>";
  return page(title, body);
}

std::string sweep_report_html(const std::string& title, const Table& sweep) {
  std::string body;
  const int feasible = sweep.column("feasible");
  const int reason = sweep.column("reason");
  std::size_t ok = 0;
  for (const auto& row : sweep.rows) ok += feasible < 0 || row[static_cast<std::size_t>(feasible)] == "true";
  body += fmt::format("<p>{} points, {} feasible.</p>", sweep.rows.size(), ok);
  auto scatter = [&](const char* xc, const char* yc, const char* xl, const char* yl, bool log_x) {
    const int xi = sweep.column(xc), yi = sweep.column(yc);
    if (xi < 0 || yi < 0) return std::string();
    Series s{.name = std::string(yc) + " vs " + xc};
    for (const auto& row : sweep.rows) {
      if (feasible >= 0 && row[static_cast<std::size_t>(feasible)] != "true") continue;
      auto x = number_of(row[static_cast<std::size_t>(xi)]);
      auto y = number_of(row[static_cast<std::size_t>(yi)]);
      if (x && y) s.points.emplace_back(*x, *y);
    }
    return xy_chart({s}, xl, yl, false, log_x);
  };
  body += "<h2>Run time vs cost (feasible points)</h2>" +
          scatter("cost_total_usd", "run_time_s", "cost_total_usd", "run_time_s", false);
  body += "<h2>Iteration time vs GPUs</h2>" +
          scatter("gpus", "iteration_time_s", "GPUs (log2)", "iteration_time_s", true);
  if (reason >= 0 && ok < sweep.rows.size()) {
    Table infeasible{.columns = sweep.columns};
    for (const auto& row : sweep.rows) {
      if (feasible >= 0 && row[static_cast<std::size_t>(feasible)] != "true") infeasible.rows.push_back(row);
    }
    body += "<h2>Infeasible points and why</h2>" + html_table(infeasible, 200);
  }
  body += "<h2>All points</h2>" + html_table(sweep, 2000);
  return page(title, body);
}

std::string cluster_report_html(const std::string& title, const Table& jobs, const Table& cluster) {
  std::string body;
  // A column's number in a row; the column is looked up once per table, not per row.
  auto column = [](const Table& t, const char* name) {
    return [c = t.column(name)](const std::vector<std::string>& row) {
      return c < 0 ? std::optional<double>() : number_of(row[static_cast<std::size_t>(c)]);
    };
  };
  // Utilisation over the period: busy, idle and down nodes, and the jobs waiting, per time-series row.
  Series busy{.name = "busy nodes"}, idle{.name = "idle nodes"}, down{.name = "down nodes"};
  Series waiting{.name = "waiting jobs"};
  double busy_sum = 0, node_sum = 0;
  const auto start = column(cluster, "start_s"), busy_nodes = column(cluster, "busy_nodes");
  const auto idle_nodes = column(cluster, "idle_nodes"), down_nodes = column(cluster, "down_nodes");
  const auto waiting_jobs = column(cluster, "waiting_jobs");
  for (const auto& row : cluster.rows) {
    const auto t = start(row), b = busy_nodes(row), i = idle_nodes(row), d = down_nodes(row);
    const auto w = waiting_jobs(row);
    if (!t || !b || !i || !d) continue;
    const double day = *t / 86400;
    busy.points.emplace_back(day, *b);
    idle.points.emplace_back(day, *i);
    down.points.emplace_back(day, *d);
    if (w) waiting.points.emplace_back(day, *w);
    busy_sum += *b;
    node_sum += *b + *i + *d;
  }
  // Per team: jobs, GPU-hours, cost and mean wait, from the job rows.
  struct TeamTotals {
    int jobs = 0;
    double gpu_hours = 0, cost = 0, wait = 0;
  };
  std::map<std::string, TeamTotals> teams;
  const int team = jobs.column("team");
  const auto gpu_hours = column(jobs, "gpu_hours"), cost = column(jobs, "cost_usd");
  const auto wait = column(jobs, "wait_s");
  for (const auto& row : jobs.rows) {
    TeamTotals& t = teams[team < 0 ? std::string("all") : row[static_cast<std::size_t>(team)]];
    ++t.jobs;
    t.gpu_hours += gpu_hours(row).value_or(0);
    t.cost += cost(row).value_or(0);
    t.wait += wait(row).value_or(0);
  }
  body += fmt::format("<p>{} jobs; mean utilisation {:.1f} % of the nodes over the period.</p>",
                      jobs.rows.size(), node_sum > 0 ? 100 * busy_sum / node_sum : 0.0);
  body += "<h2>Nodes over the period</h2>" + xy_chart({busy, idle, down}, "day", "nodes", true);
  body += "<h2>Jobs waiting</h2>" + xy_chart({waiting}, "day", "jobs", true);
  Table per_team{.columns = {"team", "jobs", "gpu_hours", "cost_usd", "mean_wait_h"}};
  for (const auto& [name, t] : teams) {
    per_team.rows.push_back({name, std::to_string(t.jobs), fmt::format("{:.0f}", t.gpu_hours),
                             fmt::format("{:.0f}", t.cost), fmt::format("{:.2f}", t.wait / t.jobs / 3600)});
  }
  body += "<h2>Teams</h2>" + html_table(per_team, 100);
  body += "<h2>Jobs</h2>" + html_table(jobs, 2000);
  return page(title, body);
}

}  // namespace trainsim::cli
