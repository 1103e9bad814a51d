// `trainsim list models|gpus|clusters|optimizers|regions|frameworks`: the shipped presets (and those on
// TRAINSIM_PATH) with their key numbers; the framework presets are built in, each with its source.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "models/spec/framework.hpp"
#include "models/workload/optimizer.hpp"
#include "models/workload/parameters.hpp"
#include "scenarios/presets.hpp"
#include "scenarios/studies/calibration.hpp"
#include "scenarios/studies/validation_runner.hpp"
#include "tools/command.hpp"

namespace trainsim::cli {
namespace {

constexpr double kGib = 1024.0 * 1024 * 1024;

void list_models() {
  std::cout << fmt::format("{:<16} {:>6} {:>6} {:>6} {:>4} {:>6} {:>7} {:>6} {:>8} {:>10}\n", "model",
                           "layers", "hidden", "heads", "kv", "ffn", "vocab", "seq", "experts", "params");
  for (const auto& name : scenario::model_preset_names()) {
    const model::TransformerSpec m = scenario::model_preset(name);
    std::cout << fmt::format(
        "{:<16} {:>6} {:>6} {:>6} {:>4} {:>6} {:>7} {:>6} {:>8} {:>9.4g}B\n", name, m.layers, m.hidden,
        m.heads, m.kv_heads_or_heads(), m.ffn_hidden_or_default(), m.vocab, m.seq_len,
        m.experts > 0 ? fmt::format("{}x top{}", m.experts, m.top_k) : "-", model::parameter_count(m) / 1e9);
  }
}

// What the validation cases say about one GPU preset. A check is one metric of one case (a case may check
// several: iteration_time, mfu, hfu); a case that could not run counts as a failed check of each metric.
struct GpuValidation {
  std::vector<double> errors;  ///< every check's signed error; NaN for a case that could not run
  std::string by;              ///< "suite N @ MAPE%" per suite (its metrics pooled), ", "-joined
};

constexpr const char* kValidatedByHeader = "validated by (suite checks @ MAPE)";

// `validated`: whether any validation case runs on the preset (the shipped suites, what `trainsim validate`
// runs with no path, plus `--cases`), with its checks, their MAPE and the suites they come from. Computed
// here from the cases, so the column cannot drift from `validate` (the shipped set runs in well under a
// second at the analytic fidelity).
std::map<std::string, GpuValidation> validation_by_gpu(const std::vector<std::string>& extra_cases) {
  const std::vector<scenario::CaseResult> results =
      scenario::run_cases(scenario::validation_case_files(extra_cases, {"all"}));
  // (gpu, suite) -> errors; std::map keeps the suites in name order.
  std::map<std::pair<std::string, std::string>, std::vector<double>> errors;
  for (const scenario::CaseResult& r : results)
    for (const scenario::MetricCheck& c : r.checks)
      errors[{r.gpu, r.group}].push_back(r.failure.empty() ? c.error
                                                           : std::numeric_limits<double>::quiet_NaN());
  std::map<std::string, GpuValidation> out;
  for (const auto& [key, errs] : errors) {
    const auto& [gpu, suite] = key;
    GpuValidation& v = out[gpu];
    const model::ErrorStats stats = model::error_stats(errs);
    v.errors.insert(v.errors.end(), errs.begin(), errs.end());
    v.by += fmt::format("{}{} {} @ {:.1f}%{}", v.by.empty() ? "" : ", ", suite, errs.size(), stats.mape * 100,
                        stats.failures > 0 ? fmt::format(" ({} could not run)", stats.failures) : "");
  }
  return out;
}

void list_gpus(const std::vector<std::string>& extra_cases) {
  const std::map<std::string, GpuValidation> validation = validation_by_gpu(extra_cases);
  std::size_t by_w = std::string(kValidatedByHeader).size();
  for (const auto& [gpu, v] : validation) by_w = std::max(by_w, v.by.size());
  std::cout << fmt::format("{:<16} {:>12} {:>11} {:>8} {:>10} {:>12} {:>6} {:>9} {:>6} {:>6}  {:<{}}\n",
                           "gpu", "bf16 TFLOP/s", "fp8 TFLOP/s", "HBM GiB", "HBM TB/s", "NVLink GB/s",
                           "TDP W", "validated", "checks", "MAPE", kValidatedByHeader, by_w);
  for (const auto& name : scenario::gpu_preset_names()) {
    const topo::GpuSpec g = scenario::gpu_preset(name);
    const auto it = validation.find(name);
    const bool validated = it != validation.end() && !it->second.errors.empty();
    std::cout << fmt::format(
        "{:<16} {:>12.1f} {:>11.1f} {:>8.1f} {:>10.2f} {:>12.0f} {:>6.0f} {:>9} {:>6} {:>6}  {:<{}}\n", name,
        g.peak.bf16 / 1e12, g.peak.fp8 / 1e12, g.hbm_bytes / kGib, g.hbm_bytes_per_s / 1e12,
        g.nvlink_bytes_per_s / 1e9, g.tdp_w, validated ? "yes" : "no",
        validated ? it->second.errors.size() : 0,
        validated ? fmt::format("{:.1f}%", model::error_stats(it->second.errors).mape * 100) : "-",
        validated ? it->second.by : std::string("not validated"), by_w);
  }
}

std::string fabric_name(topo::IntraNodeFabric f) {
  switch (f) {
    case topo::IntraNodeFabric::nvswitch:
      return "nvswitch";
    case topo::IntraNodeFabric::nvlink_mesh:
      return "nvlink-mesh";
    case topo::IntraNodeFabric::pcie:
      return "pcie";
  }
  return "?";
}

void list_clusters() {
  std::cout << fmt::format("{:<16} {:<16} {:>9} {:<12} {:>12} {:<16}\n", "node", "gpu", "GPUs/node", "fabric",
                           "intra GB/s", "NICs");
  for (const auto& name : scenario::node_preset_names()) {
    const topo::NodeSpec n = scenario::node_preset(name);
    std::cout << fmt::format("{:<16} {:<16} {:>9} {:<12} {:>12.0f} {:<16}\n", name, n.gpu.name,
                             n.gpus_per_node, fabric_name(n.fabric), n.intra_bytes_per_s / 1e9,
                             fmt::format("{} x {:.0f} Gb/s", n.nics_per_node, n.nic_bytes_per_s * 8 / 1e9));
  }
}

void list_optimizers() {
  std::cout << fmt::format("{:<14} {:>18} {:>19}  {}\n", "optimizer", "state B/param", "+ master B/param",
                           "description (bf16 training, defaults)");
  for (const model::OptimizerInfo& info : model::all_optimizers()) {
    model::OptimizerSpec spec;
    spec.kind = info.kind;
    if (info.kind == model::OptimizerKind::adam8bit) spec.state_precision = topo::Precision::int8;
    const model::OptimizerCost cost = model::optimizer_cost_per_param(spec, topo::Precision::bf16);
    std::cout << fmt::format("{:<14} {:>18.3g} {:>19.3g}  {}\n", info.name, cost.state_bytes_per_param(),
                             cost.params > 0 ? cost.master_bytes / cost.params : 0.0, info.description);
  }
}

// One line per region and its prices; the sources and dates are in the file, whose path ends the line.
void list_regions() {
  auto cell = [](const std::optional<model::CitedNumber>& n, const char* format) {
    return n ? fmt::format(fmt::runtime(format), n->value) : std::string("-");
  };
  std::cout << fmt::format("{:<10} {:<78} {:>13} {:>9} {:>10} {:>10}  {}\n", "region", "GPU-hour",
                           "storage/GB-mo", "egress/GB", "energy/kWh", "gCO2/kWh", "file (sources, dates)");
  for (const auto& name : scenario::region_preset_names()) {
    const model::RegionPrices r = scenario::region_preset(name);
    std::string gpus;
    for (const auto& [gpu, price] : r.gpu_hour_usd)
      gpus += fmt::format("{}{} ${:.2f}", gpus.empty() ? "" : ", ", gpu, price.value);
    std::cout << fmt::format("{:<10} {:<78} {:>13} {:>9} {:>10} {:>10}  {}\n", name, gpus,
                             cell(r.storage_usd_per_gb_month, "${:.3f}"),
                             cell(r.egress_usd_per_gb, "${:.3f}"), cell(r.energy_usd_per_kwh, "${:.4f}"),
                             cell(r.carbon_g_per_kwh, "{:.0f}"),
                             scenario::preset_file(scenario::PresetKind::region, name));
  }
}

// One block per framework preset: its name and flags (framework_flags), what `attention: flash` runs under
// it, and where the flags come from. A scenario that names none takes the one its layout implies (SPEC.md,
// framework).
void list_frameworks() {
  for (const auto& entry : model::kFrameworkPresetNames) {
    const model::FrameworkPreset preset = entry.value;
    const auto kernel = model::preset_fused_attention(preset);
    std::cout << fmt::format(
        "{}\n  attention flash: {}\n  source: {}\n\n",
        model::framework_flags(model::framework_preset(preset), model::preset_overlaps_grad_reduce(preset)),
        kernel ? fmt::format("{} where the GPU runs it, else the GPU's default kernel",
                             model::to_string(*kernel))
               : std::string("the GPU's default kernel"),
        model::preset_citation(preset));
  }
}

}  // namespace

void add_list_command(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("list", "list the presets shipped (and found on TRAINSIM_PATH)");
  static std::string what;
  sub->add_option("what", what, "models | gpus | clusters | optimizers | regions | frameworks")
      ->required()
      ->check(CLI::IsMember({"models", "gpus", "clusters", "nodes", "optimizers", "regions", "frameworks"}));
  static std::vector<std::string> cases;
  sub->add_option(
      "--cases", cases,
      "gpus: validation case files or folders (as `trainsim validate` takes) run with the shipped "
      "cases to fill the validated, cases, MAPE and validated-by columns");
  sub->callback([&exit_code] {
    if (what == "models") list_models();
    if (what == "gpus") list_gpus(cases);
    if (what == "clusters" || what == "nodes") list_clusters();
    if (what == "optimizers") list_optimizers();
    if (what == "regions") list_regions();
    if (what == "frameworks") list_frameworks();
    exit_code = exit_ok;
  });
}

}  // namespace trainsim::cli
