#include "scenarios/studies/validation_runner.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <tuple>
#include <utility>

#include "models/report/summary.hpp"
#include "models/step/unit_pricing.hpp"
#include "models/workload/attention_kernel.hpp"
#include "scenarios/collective_case.hpp"
#include "scenarios/component_case.hpp"
#include "scenarios/dispatch_case.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/shipped_data.hpp"
#include "scenarios/studies/simulation.hpp"
#include "scenarios/studies/sweep.hpp"
#include "sim/csv_field.hpp"
#include "sim/error.hpp"
#include "topologies/collective_cost.hpp"
#include "topologies/placement.hpp"

namespace trainsim::scenario {

namespace fs = std::filesystem;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The folder a case sits in names its source group ("korthikanti", "vtrain-single", …).
std::string group_of(const std::string& file) {
  const fs::path parent = fs::path(file).parent_path();
  return parent.empty() ? "." : parent.filename().string();
}

std::string percent(double fraction) {
  return std::isfinite(fraction) ? fmt::format("{:+.1f}%", 100.0 * fraction) : "n/a";
}

std::string number(double x) {
  return std::isfinite(x) ? fmt::format("{:.4g}", x) : "n/a";
}

// What a case of one component (a collective, a dispatch) yields: its one check and where it comes from.
struct ComponentCheck {
  std::string name;
  std::string source;
  std::string gpu;
  std::string metric;
  double measured = 0;
  double predicted = 0;
  double tolerance = 0;
};

// The communicator group of every GPU of a component case's cluster (a collective's ranks; a dispatch's
// expert group, which load_dispatch_case_file holds to the whole cluster), placed as `trainsim collective`
// places it.
topo::CommGroup whole_cluster_group(const topo::ClusterSpec& cluster) {
  return topo::Placement({cluster.total_gpus()}, cluster).group(0, 0);
}

// A collective case (scenarios/collective_case.hpp) is predicted with the closed-form collective model on
// the node preset (which carries the collective efficiencies fitted per node type,
// topologies/comm_calibration.hpp), exactly as `trainsim collective`.
ComponentCheck collective_check(const std::string& file) {
  const CollectiveCase c = load_collective_case_file(file);
  const double t =
      topo::estimate_collective(c.op, c.bytes, whole_cluster_group(c.cluster), c.cluster, c.algo).time_s;
  return {c.name,     c.source, c.cluster.node.gpu.name,
          "busbw",    c.busbw,  topo::bus_bandwidth(c.op, c.bytes, c.cluster.total_gpus(), t),
          c.tolerance};
}

// A dispatch case (scenarios/dispatch_case.hpp) is predicted by the function the step prices its MoE
// all-to-alls with (model::expert_all_to_all_estimate, the closed form), on the expert group the placement
// gives the case's whole cluster, the dispatcher on its default SMs.
ComponentCheck dispatch_check(const std::string& file) {
  const DispatchCase c = load_dispatch_case_file(file);
  model::Framework fw;
  fw.moe_dispatcher = c.dispatcher;
  const double t = model::expert_all_to_all_estimate(c.slot_bytes(), c.routing(), fw,
                                                     whole_cluster_group(c.cluster), c.cluster)
                       .time_s;
  return {c.name, c.source, c.cluster.node.gpu.name, "time", c.time, t, c.tolerance};
}

// Runs a case of one component with `check`; a file that does not load is a failed case with the reason.
CaseResult run_component_case(CaseResult r, ComponentCheck (*check)(const std::string& file)) {
  try {
    const ComponentCheck c = check(r.file);
    r.name = c.name;
    r.source = c.source;
    r.gpu = c.gpu;
    r.checks.push_back({.metric = c.metric,
                        .measured = c.measured,
                        .predicted = c.predicted,
                        .error = model::relative_error(c.predicted, c.measured),
                        .tolerance = c.tolerance});
  } catch (const InputError& e) {
    r.failure = std::string("does not load: ") + e.what();
  }
  return r;
}

}  // namespace

bool MetricCheck::within() const {
  return std::isfinite(error) && std::abs(error) <= tolerance;
}

bool CaseResult::passed() const {
  return failure.empty() &&
         std::all_of(checks.begin(), checks.end(), [](const MetricCheck& c) { return c.within(); });
}

std::vector<std::string> find_case_files(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (const auto& entry : fs::recursive_directory_iterator(p)) {
        const fs::path& f = entry.path();
        if (entry.is_regular_file() && (f.extension() == ".yaml" || f.extension() == ".yml")) {
          files.push_back(f.string());
        }
      }
    } else if (fs::exists(p, ec)) {
      files.push_back(p);
    } else {
      throw InputError(std::vector<Diagnostic>{{.file = p, .message = "no such file or folder"}});
    }
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

std::vector<std::string> validation_case_files(std::vector<std::string> paths,
                                               const std::vector<std::string>& suites) {
  for (const std::string& suite : suites) paths.push_back(validation_suite_folder(suite));
  if (paths.empty()) paths.push_back(validation_suite_folder("all"));
  std::vector<std::string> files = find_case_files(paths);
  if (files.empty()) throw InputError("no validation cases (*.yaml) found under the given paths");
  return files;
}

std::string parallel_style(const Scenario& s) {
  if (s.model.is_moe()) return "MoE";
  if (s.parallelism.zero == model::ZeroStage::parameters) return "FSDP";
  return "dense 3D";
}

CaseResult run_case(const std::string& file, const ValidationOptions& options, PresetLibrary* presets) {
  CaseResult r{.file = file, .name = fs::path(file).stem().string(), .group = group_of(file)};
  std::vector<Override> overrides = options.overrides;
  if (const CaseSetting* told = options.settings.find(file)) {
    overrides.insert(overrides.end(), told->overrides.begin(), told->overrides.end());
    r.settings_source = told->source;
  }
  for (const Override& o : overrides) r.settings.push_back(set_text(o));
  if (const std::optional<ComponentKind> kind = component_case_kind(file)) {
    if (!overrides.empty()) {
      r.failure = "a collective or dispatch case has no scenario to set keys in (--set, --settings)";
      return r;
    }
    return run_component_case(std::move(r),
                              *kind == ComponentKind::collective ? collective_check : dispatch_check);
  }
  Scenario s;
  try {
    s = load_scenario_file(file, overrides, presets);
  } catch (const InputError& e) {
    r.failure = std::string("does not load: ") + e.what();
    return r;
  }
  r.name = s.name;
  for (const topo::GpuSpec& gpu : options.gpu_overrides) {
    if (gpu.name == s.cluster.node.gpu.name) s.cluster.node.gpu = gpu;
  }
  // The kernel that runs: `flash` is reported as the GPU's default fused kernel.
  r.attention = std::string(to_string(
      is_fused(s.model.attention) ? model::resolve_attention(s.model.attention, s.cluster.node.gpu.efficiency)
                                  : s.model.attention));
  r.gpu = s.cluster.node.gpu.name;
  r.framework_preset = std::string(model::to_string(s.parallelism.framework.preset));
  r.framework = r.framework_preset + (s.framework_named ? "" : " (unnamed)");
  r.style = parallel_style(s);
  r.gpus = s.cluster.total_gpus();
  if (!s.measured) {
    r.failure = "not a validation case: no `measured:` block";
    return r;
  }
  r.source = s.measured->source;
  for (const auto& [metric, value] : s.measured->values) {
    const auto per = s.measured->tolerance_per_metric.find(metric);
    r.checks.push_back(
        {.metric = metric,
         .measured = value,
         .predicted = kNaN,
         .error = kNaN,
         .tolerance = per != s.measured->tolerance_per_metric.end() ? per->second : s.measured->tolerance});
  }
  model::StepReport step;
  try {
    // time_unfit: a layout that does not fit is still timed, and scored; the result says it does not fit.
    step = model::simulate_step(step_input_of(s), options.fidelity, model::StepOptions{.time_unfit = true});
  } catch (const InputError& e) {
    r.failure = std::string("cannot be simulated: ") + e.what();
    return r;
  }
  if (!step.feasible) {
    r.failure = "infeasible: " + step.reason;
    return r;
  }
  r.fits = step.fits;
  if (!step.fits) r.unfit_reason = step.reason;
  const model::Summary summary = model::summarize({}, step, nullptr);
  for (MetricCheck& c : r.checks) {
    const std::optional<double> predicted = summary.number(c.metric);
    if (!predicted) {
      r.failure = "the simulator has no output named '" + c.metric + "'";
      continue;
    }
    c.predicted = *predicted;
    if (c.measured != 0) c.error = model::relative_error(c.predicted, c.measured);
  }
  return r;
}

std::vector<CaseResult> run_cases(const std::vector<std::string>& files, const ValidationOptions& options) {
  std::vector<CaseResult> results(files.size());
  std::vector<std::int64_t> indices(files.size());
  std::iota(indices.begin(), indices.end(), std::int64_t{0});
  PresetLibrary presets;
  // Each worker writes only its own slot, so the results need no lock; the ordered emit is not needed.
  run_in_order(
      indices, options.jobs,
      [&](std::int64_t k) {
        results[static_cast<std::size_t>(k)] =
            run_case(files[static_cast<std::size_t>(k)], options, &presets);
        return std::string();
      },
      [](std::int64_t, std::string&&) {});
  return results;
}

std::vector<GroupSummary> summarize_cases(const std::vector<CaseResult>& results) {
  struct Acc {
    std::vector<double> errors;
    std::vector<std::string> names;
    std::size_t outside = 0;
  };
  // (section order, by, key, metric) -> accumulated errors. std::map keeps the output order fixed.
  std::map<std::tuple<int, std::string, std::string, std::string>, Acc> acc;
  for (const CaseResult& r : results) {
    // Cases without a step (collectives) stay out of the attention and framework sections.
    std::vector<std::tuple<int, std::string, std::string>> keys = {{0, "all", "all"}, {1, "group", r.group}};
    if (!r.attention.empty()) keys.emplace_back(2, "attention", r.attention);
    if (!r.framework.empty()) keys.emplace_back(3, "framework", r.framework);
    if (!r.gpu.empty()) keys.emplace_back(4, "gpu", r.gpu);
    for (const MetricCheck& c : r.checks) {
      for (const auto& [section, by, key] : keys) {
        Acc& a = acc[{section, by, key, c.metric}];
        a.errors.push_back(r.failure.empty() ? c.error : kNaN);
        a.names.push_back(r.name);
        if (!r.failure.empty() || !c.within()) ++a.outside;
      }
    }
  }
  std::vector<GroupSummary> out;
  for (const auto& [key, a] : acc) {
    GroupSummary g{.by = std::get<1>(key),
                   .key = std::get<2>(key),
                   .metric = std::get<3>(key),
                   .cases = a.errors.size(),
                   .outside = a.outside,
                   .stats = model::error_stats(a.errors)};
    if (g.stats.count > 0) g.worst_case = a.names[g.stats.worst_index];
    out.push_back(std::move(g));
  }
  return out;
}

std::string format_validation_table(const std::vector<CaseResult>& results,
                                    const std::vector<GroupSummary>& summary, bool failures_only) {
  std::string out;
  std::size_t name_w = 4;
  std::size_t group_w = 5;
  for (const CaseResult& r : results) {
    name_w = std::max(name_w, r.name.size());
    group_w = std::max(group_w, r.group.size());
  }
  out += fmt::format("{:<{}}  {:<{}}  {:<16} {:>11} {:>11} {:>8} {:>6}  {}\n", "case", name_w, "group",
                     group_w, "metric", "measured", "predicted", "error", "tol", "status");
  std::size_t checks = 0, outside = 0, failed = 0;
  std::vector<std::string> unfit;  // names of the cases that do not fit in memory as written
  std::size_t told = 0;            // cases run with keys beyond their files
  for (const CaseResult& r : results) {
    if (!r.failure.empty()) ++failed;
    if (!r.settings.empty()) ++told;
    if (r.does_not_fit()) unfit.push_back(r.name);
    for (const MetricCheck& c : r.checks) {
      ++checks;
      if (!r.failure.empty() || !c.within()) ++outside;
    }
    if (failures_only && r.passed()) continue;
    if (!r.failure.empty()) {
      out += fmt::format("{:<{}}  {:<{}}  FAILED: {}\n", r.name, name_w, r.group, group_w, r.failure);
      continue;
    }
    for (const MetricCheck& c : r.checks) {
      out += fmt::format("{:<{}}  {:<{}}  {:<16} {:>11} {:>11} {:>8} {:>5.0f}%  {}\n", r.name, name_w,
                         r.group, group_w, c.metric, number(c.measured), number(c.predicted),
                         percent(c.error), 100.0 * c.tolerance, c.within() ? "ok" : "OUTSIDE");
    }
    if (r.does_not_fit()) {
      out +=
          fmt::format("{:<{}}  {:<{}}  does not fit: {}\n", r.name, name_w, r.group, group_w, r.unfit_reason);
    }
    if (!r.settings.empty()) {
      out += fmt::format("{:<{}}  {:<{}}  set: {}\n", r.name, name_w, r.group, group_w,
                         fmt::join(r.settings, ", "));
    }
  }
  out +=
      "\nAccuracy: MAPE = mean |predicted - measured| / measured; bias = mean signed error "
      "(> 0: predicted too high)\n";
  std::size_t key_w = 5;
  for (const GroupSummary& g : summary) key_w = std::max(key_w, g.key.size());
  out += fmt::format("{:<10} {:<{}} {:<16} {:>6} {:>7} {:>7} {:>8}  {:>7}  {}\n", "by", "key", key_w,
                     "metric", "cases", "MAPE", "bias", "worst", "outside", "worst case");
  for (const GroupSummary& g : summary) {
    out += fmt::format("{:<10} {:<{}} {:<16} {:>6} {:>6.1f}% {:>7} {:>8}  {:>7}  {}\n", g.by, g.key, key_w,
                       g.metric, g.cases, 100.0 * g.stats.mape, percent(g.stats.mean_error),
                       percent(g.stats.worst_error), g.outside, g.worst_case);
  }
  out += fmt::format("\n{} cases, {} checks: {} outside tolerance, {} cases could not be evaluated\n",
                     results.size(), checks, outside, failed);
  // Named here too: --failures-only hides the cases within tolerance, and the lines under them.
  if (unfit.size() == 1) {
    out +=
        fmt::format("1 case does not fit in memory as written ({}); its time is scored anyway\n", unfit[0]);
  } else if (unfit.size() > 1) {
    out += fmt::format("{} cases do not fit in memory as written ({}); their time is scored anyway\n",
                       unfit.size(), fmt::join(unfit, ", "));
  }
  if (told > 0) {
    out += fmt::format(
        "{} of {} cases ran with keys their files do not set (--set, --settings; listed under "
        "each case)\n",
        told, results.size());
  }
  return out;
}

std::string format_validation_csv(const std::vector<CaseResult>& results) {
  const auto num = [](double x) { return std::isfinite(x) ? fmt::format("{:.9g}", x) : std::string(); };
  std::string out =
      "case,group,attention,framework,gpu,metric,measured,predicted,error,tolerance,within,failure,file,"
      "source,fits,settings\n";
  for (const CaseResult& r : results) {
    const std::string fits = r.fits ? (*r.fits ? "true" : "false") : "";
    std::vector<MetricCheck> checks = r.checks;
    if (checks.empty()) checks.push_back({.metric = "", .measured = kNaN, .predicted = kNaN, .error = kNaN});
    for (const MetricCheck& c : checks) {
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", sim::csv_field(r.name),
                         sim::csv_field(r.group), r.attention, sim::csv_field(r.framework),
                         sim::csv_field(r.gpu), c.metric, num(c.measured), num(c.predicted), num(c.error),
                         num(c.tolerance), r.failure.empty() && c.within() ? "true" : "false",
                         sim::csv_field(r.failure), sim::csv_field(r.file), sim::csv_field(r.source), fits,
                         sim::csv_field(fmt::format("{}", fmt::join(r.settings, "; "))));
    }
  }
  return out;
}

std::string format_validation_json(const std::vector<CaseResult>& results,
                                   const std::vector<GroupSummary>& summary) {
  using nlohmann::json;
  const auto num = [](double x) { return std::isfinite(x) ? json(x) : json(nullptr); };
  json cases = json::array();
  for (const CaseResult& r : results) {
    json checks = json::array();
    for (const MetricCheck& c : r.checks) {
      checks.push_back({{"metric", c.metric},
                        {"measured", num(c.measured)},
                        {"predicted", num(c.predicted)},
                        {"error", num(c.error)},
                        {"tolerance", num(c.tolerance)},
                        {"within", r.failure.empty() && c.within()}});
    }
    cases.push_back({{"case", r.name},
                     {"file", r.file},
                     {"group", r.group},
                     {"attention", r.attention},
                     {"framework", r.framework},
                     {"gpu", r.gpu},
                     {"source", r.source},
                     {"passed", r.passed()},
                     {"failure", r.failure},
                     {"fits", r.fits ? json(*r.fits) : json(nullptr)},
                     {"unfit_reason", r.unfit_reason},
                     {"settings", r.settings},
                     {"settings_source", r.settings_source},
                     {"checks", checks}});
  }
  json groups = json::array();
  for (const GroupSummary& g : summary) {
    groups.push_back({{"by", g.by},
                      {"key", g.key},
                      {"metric", g.metric},
                      {"cases", g.cases},
                      {"outside", g.outside},
                      {"failures", g.stats.failures},
                      {"mape", num(g.stats.mape)},
                      {"bias", num(g.stats.mean_error)},
                      {"rms", num(g.stats.rms_error)},
                      {"worst_error", num(g.stats.worst_error)},
                      {"worst_case", g.worst_case}});
  }
  return json{{"cases", cases}, {"summary", groups}}.dump(2) + "\n";
}

}  // namespace trainsim::scenario
