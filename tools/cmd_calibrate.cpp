// `trainsim calibrate M.csv... --gpu NAME [-o preset.yaml]`: fit a GPU's kernel-time efficiency parameters
// (topo::ComputeEfficiency) to measured step times by least squares, report the error before and after on
// the fitted set and on held-out files (--check), and write the calibrated GPU preset. The two stages and
// the hold-out split are scenarios/studies/gpu_calibration.hpp's; this file parses, prints and writes.
//
// CSV formats: scenarios/studies/measurement_csv.hpp (vTrain ground truth, or trainsim's
// published-measurements columns). Each measured configuration is simulated on the GPU's node preset (--node,
// or the first node preset built from that GPU), with --nic / --nics-per-node overriding the node's network
// when the measurements came from a differently cabled cluster (vTrain: 4 x 200 Gb/s per node).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "scenarios/gpu_preset_fields.hpp"
#include "scenarios/presets.hpp"
#include "scenarios/studies/calibration.hpp"
#include "scenarios/studies/gpu_calibration.hpp"
#include "scenarios/studies/kernel_measurements.hpp"
#include "sim/error.hpp"
#include "sim/output_files.hpp"
#include "tools/command.hpp"

namespace trainsim::cli {

namespace {

struct CalibrateArgs {
  std::vector<std::string> inputs;
  std::vector<std::string> check;
  std::string gpu;
  std::string node;
  std::string nic;
  int nics_per_node = 0;
  std::string fit = "matmul_peak_fraction,matmul_half_flops,memory_bandwidth_fraction,kernel_overhead_s";
  std::string metric = "iteration_time";
  std::string fidelity = "analytic";
  int jobs = 0;
  std::string output;
  double prior_strength = model::CalibrationOptions{}.prior_strength;
  int holdout_every = 5;    ///< without --check: every k-th measurement is held out of the fit (0: none)
  bool keep_worse = false;  ///< write the fit even when it makes held-out accuracy worse
  std::string kernels;      ///< stage one: kernel benchmarks (attention-*.csv file or folder) fitted first
};

std::string stats_line(const model::ErrorStats& s) {
  return fmt::format("MAPE {:.2f}%, bias {:+.2f}%, worst {:+.1f}% ({} points, {} not predicted)",
                     100 * s.mape, 100 * s.mean_error, 100 * s.worst_error, s.count, s.failures);
}

// Stage one: kernel-level constants from kernel benchmarks, fitted into `gpu`; they are the prior of the
// step stage. Prints a line per kernel fitted and returns those lines, for the preset's notes.
std::vector<std::string> kernel_stage(topo::GpuSpec& gpu, const std::string& kernels) {
  std::vector<std::string> lines;
  if (kernels.empty()) return lines;
  const auto fits = model::fit_attention_kernel_stage(gpu, model::read_attention_kernel_points(kernels));
  if (fits.empty())
    std::cout << "stage 1 (kernels, " << kernels << "): no fused-attention point on " << gpu.name << "\n";
  for (const model::KernelStageFit& f : fits) {
    const std::string param(model::to_string(model::attention_fraction_param(f.kernel)));
    const std::string line = fmt::format("stage 1 (kernels, {}): {} {:.4g} -> {:.4g} from {} points; {}",
                                         kernels, param, f.before, f.after, f.points, stats_line(f.stats));
    std::cout << line << "\n";
    lines.push_back(line);
  }
  return lines;
}

// Prints what the step stage fitted and where each parameter ended; returns the warnings' lines.
std::vector<std::string> print_fitted(const topo::GpuSpec& gpu, const scenario::StepCalibration& c,
                                      const std::vector<model::EfficiencyParam>& free) {
  std::cout << "fitted:";
  for (const model::EfficiencyParam p : free) {
    std::cout << fmt::format(" {}={:.4g} (prior {:.4g})", model::to_string(p), model::get(c.fitted, p),
                             model::get(gpu.efficiency, p));
  }
  std::cout << (c.fit.fit.converged ? "" : " (not converged: iteration limit)") << "\n";
  std::vector<std::string> notes;
  for (std::size_t i = 0; i < free.size(); ++i) {
    if (c.fit.bounds[i] == model::BoundState::inside) continue;
    const std::string where = c.fit.bounds[i] == model::BoundState::at_lower ? "lower" : "upper";
    const std::string line = fmt::format(
        "{} sits at its {} bound: the data push it outside the physical box, "
        "so another term of the model is off",
        model::to_string(free[i]), where);
    std::cout << "warning: " << line << "\n";
    notes.push_back("Warning: " + line + ".");
  }
  return notes;
}

void calibrate(const CalibrateArgs& a, int& exit_code) {
  const bool gpu_is_file = a.gpu.find('/') != std::string::npos || a.gpu.ends_with(".yaml");
  topo::GpuSpec gpu = gpu_is_file ? scenario::load_gpu_preset_file(a.gpu) : scenario::gpu_preset(a.gpu);
  const std::vector<std::string> kernel_notes = kernel_stage(gpu, a.kernels);
  const scenario::MeasurementSelection select{.metric = a.metric,
                                              .node = scenario::calibration_node(a.node, gpu),
                                              .nic = a.nic,
                                              .nics_per_node = a.nics_per_node};
  scenario::StepFitOptions options{.metric = a.metric,
                                   .fidelity = model::parse_fidelity(a.fidelity),
                                   .jobs = a.jobs,
                                   .prior_strength = a.prior_strength,
                                   .keep_worse = a.keep_worse};
  std::stringstream list(a.fit);
  for (std::string item; std::getline(list, item, ',');) {
    if (!item.empty()) options.free.push_back(model::parse_efficiency_param(item));
  }

  const scenario::CalibrationSets sets =
      scenario::calibration_sets(a.inputs, a.check, select, a.holdout_every);
  const std::string inputs = fmt::format("{}", fmt::join(a.inputs, ", "));
  const scenario::StepCalibration c = scenario::calibrate_steps(gpu, sets, options, [&] {
    std::cerr << fmt::format(
        "calibrating {} on node {}: {} measurements of {} from {} ({} rows skipped: other "
        "metrics or GPUs)\n",
        gpu.name, select.node.name, sets.fit.size(), a.metric, inputs, sets.skipped);
  });

  std::vector<std::string> notes = {
      fmt::format("GPU preset {} calibrated by `trainsim calibrate` ({} fidelity, node {}).", gpu.name,
                  a.fidelity, select.node.name),
      fmt::format("Fitted ({}) to {} measurements of {} from: {}, pulled toward the preset's kernel-level "
                  "values with prior strength {}.",
                  a.fit, sets.fit.size(), a.metric, inputs, a.prior_strength),
      "Fit set, before: " + stats_line(c.fit.before), "Fit set, after:  " + stats_line(c.fit.after)};
  notes.insert(notes.begin() + 1, kernel_notes.begin(), kernel_notes.end());
  std::cout << "fit set (" << inputs << ")\n  before: " << stats_line(c.fit.before)
            << "\n  after:  " << stats_line(c.fit.after) << "\n";
  for (const scenario::HeldOutError& e : c.held_out) {
    std::cout << "held out (" << e.label << ")\n  before: " << stats_line(e.before)
              << "\n  after:  " << stats_line(e.after) << "\n";
    notes.push_back("Held out (" + e.label + "), before: " + stats_line(e.before));
    notes.push_back("Held out, after: " + stats_line(e.after));
  }
  for (std::string& line : print_fitted(gpu, c, options.free)) notes.push_back(std::move(line));
  if (c.held_out_worse) {
    const std::string line =
        a.keep_worse
            ? "the fit made held-out accuracy worse; written anyway (--keep-worse)"
            : "the fit made held-out accuracy worse: the preset written keeps the kernel-level values";
    std::cout << "warning: " << line << "\n";
    notes.push_back("Warning: " + line + ".");
  }
  topo::GpuSpec calibrated = c.calibrated;
  // What these constants were checked against is now the fit's data, not the base preset's.
  calibrated.validation = "fitted by trainsim calibrate to " + inputs;
  const std::string yaml = scenario::gpu_to_block_yaml(calibrated, notes);
  if (a.output.empty()) {
    std::cout << "\n" << yaml;
  } else {
    sim::write_file_atomically(a.output, yaml);
    std::cout << "wrote " << a.output << "\n";
  }
  exit_code = exit_ok;
}

}  // namespace

void add_calibrate_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CalibrateArgs>();
  auto* sub = app.add_subcommand("calibrate",
                                 "fit a GPU's kernel-time efficiency parameters to measured step times "
                                 "(least squares on log ratios) and "
                                 "write a calibrated GPU preset");
  sub->add_option(
         "inputs", args->inputs,
         "CSV files of measurements to fit: vTrain ground-truth columns (# GPUs, global batch, micro "
         "batch, hidden size, attention heads, # layers, sequence length, tensor/data/pipeline "
         "parallelism, iteration time (ms)) or trainsim's published-measurements columns (id, source, "
         "model_name, …, metric, value, notes)")
      ->required();
  sub->add_option("--gpu", args->gpu, "GPU preset name (or preset file) to calibrate")->required();
  sub->add_option("--node", args->node, "node preset to simulate on (default: the first built from the GPU)");
  sub->add_option("--nic", args->nic, "NIC line rate of the measured cluster, e.g. \"200 Gb/s\"");
  sub->add_option("--nics-per-node", args->nics_per_node, "NICs per node of the measured cluster")
      ->check(CLI::PositiveNumber);
  sub->add_option("--check", args->check,
                  "held-out CSV file: report the error on it, do not fit to it (repeat for several)")
      ->allow_extra_args(false);
  sub->add_option("--fit", args->fit, "comma-separated efficiency parameters to fit")->capture_default_str();
  sub->add_option("--metric", args->metric, "measured metric to fit (SPEC output name)")
      ->capture_default_str();
  sub->add_option("--fidelity", args->fidelity, "analytic or event")
      ->check(CLI::IsMember({"analytic", "event"}))
      ->capture_default_str();
  sub->add_option("-j,--jobs", args->jobs, "worker threads (0: one per core)")->check(CLI::Range(0, 4096));
  sub->add_option("--prior-strength", args->prior_strength,
                  "pull of the fit toward the preset's kernel-level values (0: unregularised; 1: a 10 % move "
                  "costs as much as a 10 % miss on every step)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--holdout-every", args->holdout_every,
                  "without --check, hold every k-th measurement out of the fit and report it (0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option(
      "--kernels", args->kernels,
      "stage 1: fit the GPU's fused-attention fractions to kernel benchmarks first (an attention-*.csv "
      "file or a folder of them, e.g. scenarios/validation/kernels); the step stage starts from them");
  sub->add_flag(
      "--keep-worse", args->keep_worse,
      "write the fitted values even when they make held-out accuracy worse (default: keep the preset's)");
  sub->add_option("-o,--output", args->output, "write the calibrated GPU preset here (default: stdout)");
  sub->callback([args, &exit_code] { calibrate(*args, exit_code); });
}

}  // namespace trainsim::cli
