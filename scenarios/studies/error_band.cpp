#include "scenarios/studies/error_band.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>

#include "models/report/run_labels.hpp"
#include "scenarios/component_case.hpp"
#include "scenarios/presets.hpp"
#include "scenarios/shipped_data.hpp"
#include "scenarios/studies/validation_runner.hpp"
#include "sim/error.hpp"

namespace trainsim::scenario {

namespace {

/// measured / predicted iteration time of a case, from its iteration_time check, else a throughput check
/// inverted; 0 when it has neither.
double time_ratio(const CaseResult& r) {
  for (const MetricCheck& c : r.checks) {
    if (c.metric == "iteration_time" && c.predicted > 0 && std::isfinite(c.predicted))
      return c.measured / c.predicted;
  }
  for (const MetricCheck& c : r.checks) {
    const bool throughput = c.metric == "mfu" || c.metric == "hfu" || c.metric == "model_tflops_per_gpu" ||
                            c.metric == "hardware_tflops_per_gpu" || c.metric == "tokens_per_s_per_gpu";
    if (throughput && c.measured > 0 && c.predicted > 0 && std::isfinite(c.predicted))
      return c.predicted / c.measured;
  }
  return 0;
}

/// The value written after `key: ` on the first line of `text` that has it ("" when none), up to a comma,
/// brace or the line's end.
std::string written_value(const std::string& text, const std::string& key) {
  const std::size_t at = text.find(key + ": ");
  if (at == std::string::npos || (at > 0 && std::isalnum(static_cast<unsigned char>(text[at - 1])) != 0))
    return "";
  const std::size_t from = at + key.size() + 2;
  const std::size_t to = text.find_first_of(",}\n", from);
  std::string value = text.substr(from, to == std::string::npos ? std::string::npos : to - from);
  while (!value.empty() && value.back() == ' ') value.pop_back();
  return value;
}

/// Whether a case file may be a run on `gpu` under `framework`, from a look at its text before it is
/// loaded (loading every shipped case costs most of a second): false only when it names a node preset
/// whose GPU is another and gives no GPU of its own, or names another framework. Empty: anything.
bool may_match(const std::string& file, const std::string& gpu, const std::string& framework,
               PresetLibrary& presets) {
  if (gpu.empty() && framework.empty()) return true;
  std::ifstream in(file, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!framework.empty()) {
    const std::string named = written_value(text, "framework");
    if (!named.empty() && named.find_first_of("{[") == std::string::npos && named != framework) return false;
  }
  if (!gpu.empty() && text.find("gpu:") == std::string::npos) {
    const std::string node = written_value(text, "node");
    if (!node.empty()) {
      try {
        if (presets.node(node).gpu.name != gpu) return false;
      } catch (const InputError&) {
        return true;  // loading it says what is wrong
      }
    }
  }
  return true;
}

std::string gpus_words(std::int64_t lo, std::int64_t hi) {
  return lo == hi ? fmt::format("{} GPUs", lo) : fmt::format("{}-{} GPUs", lo, hi);
}

}  // namespace

std::vector<BandCase> band_cases(const std::vector<CaseResult>& results) {
  std::vector<BandCase> out;
  for (const CaseResult& r : results) {
    if (!r.failure.empty()) continue;  // `trainsim validate` reports it
    const double ratio = time_ratio(r);
    if (ratio <= 0) continue;
    out.push_back({.file = r.file,
                   .name = r.name,
                   .gpu = r.gpu,
                   .framework = r.framework_preset,
                   .style = r.style,
                   .gpus = r.gpus,
                   .ratio = ratio});
  }
  return out;
}

std::vector<BandCase> band_cases(const std::string& folder, const std::string& gpu,
                                 const std::string& framework) {
  std::vector<std::string> files;
  PresetLibrary presets;
  for (const std::string& file : find_case_files({folder}))
    if (!is_component_case_file(file) && may_match(file, gpu, framework, presets)) files.push_back(file);
  return band_cases(run_cases(files));
}

const std::vector<BandCase>& shipped_band_cases(const std::string& gpu, const std::string& framework) {
  // One evaluation per GPU and framework per process; sweeps ask from many threads.
  static std::mutex lock;
  static std::map<std::pair<std::string, std::string>, std::vector<BandCase>> cache;
  const std::lock_guard<std::mutex> guard(lock);
  const auto key = std::pair(gpu, framework);
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  std::vector<BandCase> cases;
  try {
    cases = band_cases(validation_suite_folder("all"), gpu, framework);
  } catch (const InputError&) {
    // no shipped validation folder: nothing is validated
  }
  return cache.emplace(key, std::move(cases)).first->second;
}

ErrorBand error_band(const std::vector<BandCase>& cases, const std::string& gpu, const std::string& framework,
                     const std::string& style, std::int64_t gpus) {
  ErrorBand band;
  std::vector<double> ratios;
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  for (const BandCase& c : cases) {
    if (c.gpu != gpu || c.framework != framework || c.style != style) continue;
    const double scale =
        static_cast<double>(std::max(c.gpus, gpus)) / static_cast<double>(std::min(c.gpus, gpus));
    if (gpus <= 0 || c.gpus <= 0 || scale > kScaleFactor) continue;
    ratios.push_back(c.ratio);
    band.cases.push_back(c.name);
    lo = lo == 0 ? c.gpus : std::min(lo, c.gpus);
    hi = std::max(hi, c.gpus);
  }
  // No commas: the line is one CSV cell that naive splitting should not break.
  const std::string what = fmt::format("{} / {} / {}", gpu, framework, style);
  if (ratios.size() < kMinCases) {
    band.basis = fmt::format(
        "not validated for this GPU/framework/style ({} / {}): {} shipped case{} within {}x of its scale; {} "
        "needed",
        what, gpus_words(gpus, gpus), ratios.size(), ratios.size() == 1 ? "" : "s", kScaleFactor, kMinCases);
    band.cases.clear();
    return band;
  }
  std::sort(ratios.begin(), ratios.end());
  // The k-th smallest and k-th largest, k = floor((n + 1) / 10) and at least 1 (1-based).
  const std::size_t k = std::max<std::size_t>(1, (ratios.size() + 1) / 10);
  band.low = ratios[k - 1];
  band.high = ratios[ratios.size() - k];
  band.validated = true;
  band.basis = fmt::format(
      "from {} validation cases ({} / {}): measured {:.2f}-{:.2f} x predicted (10th-90th percentile)",
      ratios.size(), what, gpus_words(lo, hi), band.low, band.high);
  return band;
}

ErrorBand error_band_of(const Scenario& s) {
  const std::string framework(model::to_string(s.parallelism.framework.preset));
  return error_band(shipped_band_cases(s.cluster.node.gpu.name, framework), s.cluster.node.gpu.name,
                    framework, parallel_style(s), s.cluster.total_gpus());
}

void add_error_band(model::Summary& summary, const ErrorBand& band) {
  auto& fields = summary.fields;
  const auto after = [&](const std::string& name) {
    return std::find_if(fields.begin(), fields.end(),
                        [&](const model::SummaryField& f) { return f.name == name; });
  };
  // What of cost_total does not follow the iteration time: the data work, the egress and a commitment's
  // term, paid whatever the run takes.
  double fixed_cost = 0;
  for (const char* name : {"cost_data", "cost_network", "cost_fixed"})
    fixed_cost += summary.number(name).value_or(0.0);
  for (const char* name : {"cost_total", "run_time", "iteration_time"}) {
    auto at = after(name);
    if (at == fields.end()) continue;
    const model::SummaryField base = *at;
    const double fixed = base.name == "cost_total" ? fixed_cost : 0.0;
    std::vector<model::SummaryField> added;
    if (band.validated) {
      added.push_back({.name = base.name + "_low",
                       .unit = base.unit,
                       .number = fixed + (base.number - fixed) * band.low,
                       .group = base.group});
      added.push_back({.name = base.name + "_high",
                       .unit = base.unit,
                       .number = fixed + (base.number - fixed) * band.high,
                       .group = base.group});
    }
    if (base.name == "iteration_time")
      added.push_back(
          {.name = "error_band", .unit = model::FieldUnit::text, .text = band.basis, .group = base.group});
    fields.insert(at + 1, added.begin(), added.end());
  }
}

model::Summary run_summary(const Scenario& s, model::Fidelity fidelity, const ScenarioResult& result) {
  return run_summary(s, model::run_labels(s.name, model::to_string(fidelity), s.tags), result);
}

model::Summary run_summary(const Scenario& s, const model::Labels& labels, const ScenarioResult& result) {
  model::Summary summary = model::summarize(labels, result.step, &result.run);
  if (result.step.feasible) add_error_band(summary, error_band_of(s));
  return summary;
}

}  // namespace trainsim::scenario
