// The run page of `trainsim report DIR`: headline figures, then where a step's time goes, the pipeline
// timeline of one iteration with its critical path, memory per stage against capacity, the bill by
// category, cost over the run with checkpoints and failures, and every figure in human units.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "models/report/column_reading.hpp"
#include "models/report/summary.hpp"
#include "models/report/what_bounds.hpp"
#include "report/html.hpp"
#include "report/page.hpp"
#include "report/svg.hpp"
#include "sim/error.hpp"
#include "sim/json_input.hpp"

namespace trainsim::report {

namespace {

using model::FieldUnit;
using model::format_human;

/// summary.json's fields, asked for by field name ("iteration_time"): found under the field's column name
/// ("iteration_time_s") or the names of files written before it carried its unit (model::columns_read),
/// in SI units.
class Figures {
 public:
  explicit Figures(nlohmann::ordered_json j) : j_(std::move(j)) {}
  [[nodiscard]] std::optional<double> get(const char* key) const {
    for (const model::ColumnReading& r : model::columns_read(key)) {
      const auto it = j_.find(r.column);
      if (it != j_.end()) return it->is_number() ? std::optional(it->get<double>() * r.to_si) : std::nullopt;
    }
    return std::nullopt;
  }
  [[nodiscard]] double or_zero(const char* key) const { return get(key).value_or(0); }
  [[nodiscard]] std::string human(const char* key, FieldUnit unit) const {
    const auto v = get(key);
    return v ? format_human(unit, *v) : std::string("—");
  }
  [[nodiscard]] std::string text(const char* key) const {
    const auto it = find(key);
    return it != j_.end() && it->is_string() ? it->get<std::string>() : std::string();
  }
  /// A true/false field; nullopt when absent.
  [[nodiscard]] std::optional<bool> flag(const char* key) const {
    const auto it = find(key);
    return it != j_.end() && it->is_boolean() ? std::optional(it->get<bool>()) : std::nullopt;
  }
  [[nodiscard]] const nlohmann::ordered_json& json() const { return j_; }

 private:
  [[nodiscard]] nlohmann::ordered_json::const_iterator find(const char* key) const {
    for (const model::ColumnReading& r : model::columns_read(key)) {
      if (const auto it = j_.find(r.column); it != j_.end()) return it;
    }
    return j_.end();
  }
  nlohmann::ordered_json j_;
};

model::StepShares shares_of(const Figures& f) {
  return model::step_shares([&](std::string_view field) { return f.or_zero(std::string(field).c_str()); });
}

std::string headline(const Figures& f) {
  const bool run = f.get("run_time").has_value();
  const std::string no_run = "the run was not simulated";
  Card time{"Time to train", f.human("run_time", FieldUnit::seconds), no_run};
  if (run) {
    time.detail = fmt::format("{} steps of {}; {} of it training", f.human("steps", FieldUnit::count),
                              f.human("iteration_time", FieldUnit::seconds),
                              f.human("training_time", FieldUnit::seconds));
  }
  Card bill{"Bill", f.human("cost_total", FieldUnit::usd), no_run};
  if (const auto total = f.get("cost_total"); total && *total > 0) {
    bill.detail =
        fmt::format("{:.0f} % compute; {} wasted on failures, stalls and bubbles{}",
                    100 * f.or_zero("cost_compute") / *total, f.human("cost_wasted", FieldUnit::usd),
                    f.or_zero("cost_fixed_idle") > 0 ? " and an idle commitment" : "");
  }
  // The error band from the validation data (scenarios/studies/error_band.hpp), when the run has one; its
  // fields are added after the summary, so they are asked for under their column names.
  if (f.get("run_time_low_s") && f.get("run_time_high_s")) {
    time.detail += fmt::format("; likely {} to {}", f.human("run_time_low_s", FieldUnit::seconds),
                               f.human("run_time_high_s", FieldUnit::seconds));
  }
  if (f.get("cost_total_low_usd") && f.get("cost_total_high_usd")) {
    bill.detail += fmt::format("; likely {} to {}", f.human("cost_total_low_usd", FieldUnit::usd),
                               f.human("cost_total_high_usd", FieldUnit::usd));
  }
  Card per_token{"Cost per million tokens", "—", no_run};
  if (const auto cpt = f.get("cost_per_token")) {
    per_token.value = format_human(FieldUnit::usd, *cpt * 1e6);
    per_token.detail = fmt::format("{} tokens", f.human("tokens", FieldUnit::count));
  }
  Card mfu{
      "MFU", f.human("mfu", FieldUnit::fraction),
      fmt::format("{} per GPU; bubble {} of the step", f.human("model_tflops_per_gpu", FieldUnit::tflops),
                  f.human("bubble_fraction", FieldUnit::fraction))};
  Card headroom{"Memory headroom", "—", "no memory figures"};
  if (const auto cap = f.get("memory_capacity"), used = f.get("memory_per_gpu"); cap && used) {
    const double free = *cap - *used;
    headroom.value =
        free >= 0 ? format_human(FieldUnit::bytes, free) : "over by " + format_human(FieldUnit::bytes, -free);
    headroom.detail =
        fmt::format("{} of {} in use on the fullest GPU ({:.0f} %)", format_human(FieldUnit::bytes, *used),
                    format_human(FieldUnit::bytes, *cap), *cap > 0 ? 100 * *used / *cap : 0.0);
  }
  Card goodput{"Goodput", f.human("goodput", FieldUnit::fraction), no_run};
  if (run) {
    goodput.detail = fmt::format("{:.1f} failures expected; {} of work lost", f.or_zero("failures_expected"),
                                 f.human("lost_work", FieldUnit::seconds));
  }
  std::string out = cards({time, bill, per_token, mfu, headroom, goodput});
  const model::Bound bound = model::what_bounds(shares_of(f));
  out += fmt::format(R"(<p><b>Bound by {}:</b> {}.</p>)", escape(bound.what), escape(bound.why));
  if (const std::string band = f.text("error_band"); !band.empty())
    out += "<p><b>Error band:</b> " + escape(band) + ".</p>";
  return out;
}

/// Warnings a reader must not miss: an infeasible plan, a plan that does not fit, a missed budget.
std::string alerts(const Figures& f) {
  std::string out;
  auto alert = [&](const std::string& text) {
    out += R"(<p style="background:#fdecea;border-left:4px solid #c0392b;padding:6px 10px">)" + escape(text) +
           "</p>";
  };
  switch (model::read_verdict(f.flag("feasible"), f.flag("fits"), f.or_zero("memory_per_gpu"))) {
    case model::Verdict::infeasible:
      alert("Infeasible: " + f.text("reason"));
      break;
    case model::Verdict::does_not_fit:
      alert("Does not fit in memory: " + f.text("reason"));
      break;
    case model::Verdict::runs:
      break;
  }
  if (!f.text("budget_violations").empty()) alert("Budget missed: " + f.text("budget_violations"));
  return out;
}

std::string step_time(const Figures& f) {
  BarChart chart{
      .id = "step-time", .unit = FieldUnit::seconds, .rows = {step_bar("one iteration", shares_of(f))}};
  return section(
      "Where a step's time goes",
      fmt::format("The slowest pipeline stage's iteration of {}: compute, the communication that is not "
                  "hidden behind it, the optimizer, and the pipeline bubble.",
                  f.human("iteration_time", FieldUnit::seconds)),
      render(chart));
}

const char* slice_color(const TraceSlice& s) {
  if (s.category == "compute") return s.name.rfind('F', 0) == 0 ? "#86a9d3" : colors::kCompute;
  if (s.category == "tp") return colors::kTp;
  if (s.category == "dp") return colors::kDp;
  if (s.category == "pp") return colors::kPp;
  if (s.category == "optimizer") return colors::kOptimizer;
  return colors::kMuted;
}

std::string pipeline_timeline(const IterationTrace& trace) {
  if (trace.slices.empty())
    return section("Pipeline timeline of one iteration", "trace.json holds no slices.", "");
  double end = 0;
  for (const TraceSlice& s : trace.slices) end = std::max(end, s.end);
  LaneChart chart{.id = "pipeline-timeline",
                  .x = value_axis("time within the iteration", FieldUnit::seconds, {0.0, end})};
  end_at(chart.x, end);  // the axis ends where the iteration does
  for (std::size_t i = 0; i < trace.lanes.size(); ++i) {
    const TraceLane& lane = trace.lanes[i];
    const bool first = i == 0 || trace.lanes[i - 1].process != lane.process;
    // A stage's first lane (its compute stream, drawn thick) carries the stage's name; the others their own.
    std::string label = lane.name;
    if (first) label = trace.processes[lane.process] + (lane.name == "compute" ? "" : " " + lane.name);
    chart.lanes.push_back(
        {.label = label, .height = lane.name == "compute" ? 16.0 : 8.0, .first_of_group = first});
  }
  // Slices narrower than a pixel, back to back on one lane, are drawn as one box: a layer-detail trace has
  // far more slices than the chart has pixels.
  const double plot_seconds_per_px = (chart.x.hi - chart.x.lo) / chart.plot_width();
  const std::vector<PathStep> path = critical_path(trace);
  // A box is underlined when the path runs along most of it (a transfer whose tail only was waited for is
  // not).
  std::vector<bool> on_path(trace.slices.size(), false);
  for (const PathStep& p : path) {
    const TraceSlice& s = trace.slices[p.slice];
    on_path[p.slice] = s.end - p.from >= 0.5 * (s.end - s.start);
  }
  std::vector<std::size_t> open(trace.lanes.size(), SIZE_MAX);  // each lane's box still growing
  std::vector<std::size_t> merged(trace.lanes.size(), 0);
  for (std::size_t i = 0; i < trace.slices.size(); ++i) {
    const TraceSlice& s = trace.slices[i];
    const std::string where = trace.processes[trace.lanes[s.lane].process] + " · " + trace.lanes[s.lane].name;
    std::size_t& o = open[s.lane];
    if (o != SIZE_MAX) {
      LaneBox& b = chart.boxes[o];
      const bool tiny =
          b.end - b.start < 1.5 * plot_seconds_per_px && s.end - s.start < 1.5 * plot_seconds_per_px;
      if (tiny && s.start - b.end < 0.5 * plot_seconds_per_px && b.color == slice_color(s)) {
        b.end = std::max(b.end, s.end);
        b.highlight = b.highlight || on_path[i];
        ++merged[s.lane];
        b.tip = fmt::format("{}: {} slices ({} …), {}", where, merged[s.lane] + 1, s.category,
                            format_human(FieldUnit::seconds, b.end - b.start));
        continue;
      }
    }
    merged[s.lane] = 0;
    o = chart.boxes.size();
    chart.boxes.push_back({.lane = s.lane,
                           .start = s.start,
                           .end = s.end,
                           .color = slice_color(s),
                           .tip = fmt::format("{}: {} ({}), {} from {}", where, s.name, s.category,
                                              format_human(FieldUnit::seconds, s.end - s.start),
                                              format_human(FieldUnit::seconds, s.start)),
                           .highlight = on_path[i]});
  }
  for (const PathStep& p : path) {
    chart.path.push_back({trace.slices[p.slice].lane, p.from, trace.slices[p.slice].end});
  }
  chart.legend = {{"forward", "#86a9d3"},      {"backward", colors::kCompute},
                  {"TP comm", colors::kTp},    {"PP comm", colors::kPp},
                  {"DP comm", colors::kDp},    {"optimizer", colors::kOptimizer},
                  {"critical path", "#c0392b"}};
  // Time along the critical path by kind (each slice from where the path enters it), and the time it waits.
  std::map<std::string, double> on;
  double busy = 0;
  for (const PathStep& p : path) {
    const TraceSlice& s = trace.slices[p.slice];
    on[s.category.empty() ? "other" : s.category] += s.end - p.from;
    busy += s.end - p.from;
  }
  std::string along;
  for (const auto& [kind, seconds] : on)
    along +=
        fmt::format("{}{} {}", along.empty() ? "" : ", ", kind, format_human(FieldUnit::seconds, seconds));
  const double idle = trace.slices[path.back().slice].end - busy;
  std::string intro = fmt::format(
      "One iteration from trace.json: a row per pipeline stage (compute thick, its communication streams "
      "thin). "
      "The red line is the critical path, the chain of back-to-back slices that ends last and so sets the "
      "iteration's length: {}{}.",
      along, idle > kTraceEpsilon ? ", waiting " + format_human(FieldUnit::seconds, idle) : "");
  if (trace.truncated) intro += " The trace hit its event cap: later slices are missing.";
  return section("Pipeline timeline of one iteration", intro, render(chart));
}

std::string memory(const Figures& f, const std::optional<IterationTrace>& trace) {
  const double capacity = f.or_zero("memory_capacity");
  const Rule cap{capacity, "capacity " + format_human(FieldUnit::bytes, capacity)};
  std::string content;
  if (trace &&
      std::any_of(trace->peak_memory.begin(), trace->peak_memory.end(), [](double m) { return m > 0; })) {
    BarChart stages{.id = "memory-per-stage", .unit = FieldUnit::bytes, .limit = cap, .legend = false};
    for (std::size_t p = 0; p < trace->processes.size(); ++p) {
      if (trace->peak_memory[p] > 0)
        stages.rows.push_back(
            {trace->processes[p], {{"peak in use", trace->peak_memory[p], colors::kMemory}}});
    }
    content += "<h3>Peak memory of each stage's GPUs (trace.json)</h3>" + render(stages);
  }
  BarChart parts{.id = "memory-breakdown",
                 .unit = FieldUnit::bytes,
                 .rows = {{"fullest GPU",
                           {{"weights", f.or_zero("weights"), colors::kCompute},
                            {"grads", f.or_zero("grads"), colors::kTp},
                            {"optimizer state", f.or_zero("optimizer_state"), colors::kOptimizer},
                            {"activations", f.or_zero("activations"), colors::kPp},
                            {"buffers", f.or_zero("buffers"), colors::kBubble}}}},
                 .limit = cap};
  content += "<h3>What fills the fullest GPU</h3>" + render(parts);
  return section(
      "Memory per stage against capacity",
      "Each stage holds its own layers' weights, gradients and optimizer state, and the activations of the "
      "micro-batches it has in flight; the dashed line is the GPU's capacity.",
      content);
}

std::string bill(const Figures& f) {
  if (!f.get("cost_total")) return "";
  BarChart chart{.id = "bill", .unit = FieldUnit::usd, .legend = false};
  const std::pair<const char*, const char*> categories[] = {{"cost_compute", "compute (GPU-hours)"},
                                                            {"cost_energy", "energy"},
                                                            {"cost_storage", "storage"},
                                                            {"cost_network", "network"},
                                                            {"cost_tuning", "tuning"},
                                                            {"cost_data", "data"},
                                                            {"cost_people", "people"},
                                                            {"cost_fixed", "committed, used"}};
  std::size_t color = 0;
  // A commitment's term is two lines: what the campaign used of it, and what it left idle (still paid).
  const double idle = f.or_zero("cost_fixed_idle");
  for (const auto& [key, label] : categories) {
    if (const auto v = f.get(key)) {
      const bool fixed = std::string_view(key) == "cost_fixed";
      chart.rows.push_back({label, {{label, fixed ? *v - idle : *v, colors::kPalette[color]}}});
      if (fixed)
        chart.rows.push_back({"committed, idle", {{"committed, idle", idle, colors::kPalette[color + 1]}}});
    }
    ++color;
  }
  std::string intro =
      fmt::format("{} in all; {} of it paid for work lost to failures, checkpoint stalls and bubbles{}.",
                  f.human("cost_total", FieldUnit::usd), f.human("cost_wasted", FieldUnit::usd),
                  idle > 0 ? fmt::format(", and for the commitment's {} idle GPU-hours ({})",
                                         f.human("committed_idle_gpu_hours", FieldUnit::count),
                                         format_human(FieldUnit::usd, idle))
                           : "");
  if (const auto spot = f.get("spot_cost_total")) {
    intro += fmt::format(" On spot capacity the whole bill would be {}, the run taking {}.",
                         format_human(FieldUnit::usd, *spot), f.human("spot_run_time", FieldUnit::seconds));
  }
  return section("The bill by category", intro, render(chart));
}

std::string cost_over_time(const Table& timeline) {
  const int t = timeline.column("time_s"), c = timeline.column("cost_total_usd"),
            e = timeline.column("event");
  if (t < 0 || c < 0 || timeline.rows.empty()) return "";
  Layer cost{.label = "cumulative cost", .color = colors::kCompute, .marker = Marker::none, .line = true};
  Layer checkpoints{.color = colors::kMuted, .marker = Marker::tick};
  Layer failures{.color = colors::kFailure, .marker = Marker::rule};
  Layer end{.color = colors::kCompute, .marker = Marker::dot, .size = 4};
  std::vector<double> xs, ys;
  for (const auto& row : timeline.rows) {
    const auto x = number_of(row[static_cast<std::size_t>(t)]),
               y = number_of(row[static_cast<std::size_t>(c)]);
    if (!x || !y) continue;
    xs.push_back(*x);
    ys.push_back(*y);
    cost.marks.push_back({*x, *y, ""});
    const std::string event = e >= 0 ? row[static_cast<std::size_t>(e)] : "";
    const std::string tip =
        fmt::format("{} at {}: {} spent so far", event, format_human(FieldUnit::seconds, *x),
                    format_human(FieldUnit::usd, *y));
    if (event == "checkpoint") checkpoints.marks.push_back({*x, *y, tip});
    if (event == "failure") failures.marks.push_back({*x, *y, tip});
    if (event == "end") end.marks.push_back({*x, *y, tip});
  }
  checkpoints.label = fmt::format("checkpoint ({})", checkpoints.marks.size());
  failures.label = fmt::format("failure ({})", failures.marks.size());
  XYChart chart{.id = "cumulative-cost",
                .x = value_axis("time since the start", FieldUnit::seconds, xs, true),
                .y = value_axis("cost so far", FieldUnit::usd, ys, true),
                .layers = {cost, checkpoints, failures, end}};
  // Time from zero: a run is read from its start, however long.
  if (chart.x.scale == Scale::log)
    chart.x = value_axis("time since the start", FieldUnit::seconds, {0.0, chart.x.hi}, true);
  if (chart.y.scale == Scale::log)
    chart.y = value_axis("cost so far", FieldUnit::usd, {0.0, chart.y.hi}, true);
  return section(
      "Cost over the run",
      "From run.csv: the bill as it grows, a grey tick at each checkpoint and a dashed red line at each "
      "failure (the restart repeats the work since the last checkpoint).",
      render(chart));
}

std::string all_figures(const Figures& f) {
  std::string out =
      R"(<div class="scroll"><table><tr><th>figure</th><th>value</th><th>as written (SI)</th></tr>)";
  std::string group;
  for (const auto& [key, value] : f.json().items()) {
    if (value.is_string() && value.get<std::string>().empty()) continue;
    const model::SummaryField* schema = model::schema_of_any_column(key);
    const std::string g = schema != nullptr ? schema->group : "labels";
    if (g != group) {
      group = g;
      out += fmt::format(
          R"(<tr><th colspan="3" style="text-align:left;background:#fff;padding-top:10px">{}</th></tr>)",
          escape(model::group_title(group)));
    }
    std::string label = schema != nullptr ? schema->name : key;  // the unit is in the value shown
    std::replace(label.begin(), label.end(), '_', ' ');
    std::string shown, raw;
    if (value.is_number()) {
      shown = format_human(schema != nullptr ? schema->unit : FieldUnit::count, value.get<double>());
      raw = value.dump();
    } else if (value.is_boolean()) {
      shown = value.get<bool>() ? "yes" : "no";
    } else {
      shown = value.is_string() ? value.get<std::string>() : value.dump();
    }
    out +=
        fmt::format(R"(<tr><td>{}</td><td class="{}">{}</td><td class="n" style="color:#888">{}</td></tr>)",
                    escape(label), value.is_number() ? "n" : "wrap", escape(shown), escape(raw));
  }
  return section("Every figure", "summary.json in human units; the last column is the file's own value.",
                 out + "</table></div>");
}

}  // namespace

std::string run_report_html(const std::string& source, const std::string& summary_json, const Table& timeline,
                            const std::optional<IterationTrace>& trace) {
  auto j = sim::parse_json_input(summary_json, "summary.json");
  if (!j.is_object()) throw InputError("summary.json: expected one JSON object");
  const Figures f(std::move(j));
  const std::string scenario = f.text("scenario");
  std::string body = alerts(f) + headline(f) + step_time(f);
  if (trace) body += pipeline_timeline(*trace);
  body += memory(f, trace) + bill(f) + cost_over_time(timeline) + all_figures(f);
  std::string subtitle = fmt::format("{} GPUs, {} fidelity; from {}", f.human("gpus", FieldUnit::count),
                                     f.text("fidelity").empty() ? "event" : f.text("fidelity"), source);
  return page("run", "Run: " + (scenario.empty() ? std::string("(unnamed)") : scenario), subtitle, body);
}

}  // namespace trainsim::report
