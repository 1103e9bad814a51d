// `trainsim calibrate M.csv... --gpu NAME [-o preset.yaml]`: fit a GPU's kernel-time efficiency parameters
// (topo::ComputeEfficiency) to measured step times by least squares, report the error before and after on
// the fitted set and on held-out files (--check), and write the calibrated GPU preset.
//
// CSV formats: scenarios/studies/measurement_csv.hpp (vTrain ground truth, or trainsim's
// published-measurements columns). Each measured configuration is simulated on the GPU's node preset (--node,
// or the first node preset built from that GPU), with --nic / --nics-per-node overriding the node's network
// when the measurements came from a differently cabled cluster (vTrain: 4 x 200 Gb/s per node).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "models/report/summary.hpp"
#include "models/step/step_simulator.hpp"
#include "scenarios/gpu_preset_fields.hpp"
#include "scenarios/presets.hpp"
#include "scenarios/quantity.hpp"
#include "scenarios/studies/calibration.hpp"
#include "scenarios/studies/measurement_csv.hpp"
#include "scenarios/studies/sweep.hpp"
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

std::string lower_alnum_token(const std::string& s) {
  std::string t;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) break;
    t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return t;
}

// A row measured on another GPU family (V100 rows in a file that also has A100 rows) is not evidence
// about this GPU. Families compare by the first token: "A100-SXM4-80GB" and "a100-sxm4-40gb" -> "a100".
// vTrain rows name no GPU (the data set is A100 only) and are kept.
bool same_family(const std::string& gpu_type, const std::string& preset) {
  return gpu_type.empty() || lower_alnum_token(gpu_type) == lower_alnum_token(preset);
}

topo::NodeSpec node_for(const CalibrateArgs& a, const topo::GpuSpec& gpu) {
  if (!a.node.empty()) return scenario::node_preset(a.node);
  for (const std::string& name : scenario::node_preset_names()) {
    topo::NodeSpec n = scenario::node_preset(name);
    if (n.gpu.name == gpu.name) return n;
  }
  throw InputError("no node preset is built from GPU '" + gpu.name + "': name one with --node");
}

struct Sample {
  model::StepInput input;
  double measured = 0;
  std::string id;
};

std::vector<Sample> samples_from(const std::vector<std::string>& files, const CalibrateArgs& a,
                                 const topo::NodeSpec& node, std::size_t& skipped) {
  std::vector<Sample> out;
  for (const std::string& f : files) {
    for (model::Measurement& m : model::read_measurements_csv(f)) {
      if (m.metric != a.metric || !same_family(m.gpu_type, node.gpu.name)) {
        ++skipped;
        continue;
      }
      topo::ClusterSpec cluster;
      cluster.node = node;
      const std::int64_t per = node.gpus_per_node;
      cluster.nodes = (m.gpus + per - 1) / per;
      if (m.gpus < per) cluster.gpus_per_node = static_cast<int>(m.gpus);
      if (!a.nic.empty()) {
        cluster.network.nic_bytes_per_s = scenario::parse_quantity(a.nic, scenario::Dimension::bytes_per_s);
      }
      cluster.network.nics_per_node = a.nics_per_node;
      out.push_back({.input = {.model = m.model, .cluster = cluster, .plan = m.plan, .training = m.training},
                     .measured = m.value,
                     .id = m.id});
    }
  }
  return out;
}

model::EfficiencyPredictor predictor_for(const std::vector<Sample>& samples, const std::string& metric,
                                         model::Fidelity fidelity, int jobs) {
  return [&samples, metric, fidelity, jobs](const topo::ComputeEfficiency& e) {
    std::vector<double> predicted(samples.size(), std::numeric_limits<double>::quiet_NaN());
    std::vector<std::int64_t> indices(samples.size());
    std::iota(indices.begin(), indices.end(), std::int64_t{0});
    scenario::run_in_order(
        indices, jobs,
        [&](std::int64_t k) {
          const auto i = static_cast<std::size_t>(k);
          model::StepInput in = samples[i].input;
          in.cluster.node.gpu.efficiency = e;
          const model::StepReport r = model::simulate_step(in, fidelity);
          if (r.feasible) {
            predicted[i] = model::summarize({}, r, nullptr).number(metric).value_or(predicted[i]);
          }
          return std::string();
        },
        [](std::int64_t, std::string&&) {});
    return predicted;
  };
}

std::vector<double> measured_of(const std::vector<Sample>& samples) {
  std::vector<double> m;
  m.reserve(samples.size());
  for (const Sample& s : samples) m.push_back(s.measured);
  return m;
}

std::vector<double> errors(const std::vector<double>& predicted, const std::vector<double>& measured) {
  std::vector<double> e;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    e.push_back(std::isfinite(predicted[i]) && predicted[i] > 0
                    ? model::relative_error(predicted[i], measured[i])
                    : std::numeric_limits<double>::quiet_NaN());
  }
  return e;
}

std::string stats_line(const model::ErrorStats& s) {
  return fmt::format("MAPE {:.2f}%, bias {:+.2f}%, worst {:+.1f}% ({} points, {} not predicted)",
                     100 * s.mape, 100 * s.mean_error, 100 * s.worst_error, s.count, s.failures);
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// Fitted values are rounded to 4 significant digits: more would claim a precision the data do not have.
double round4(double x) {
  return std::stod(fmt::format("{:.4g}", x));
}

void calibrate(const CalibrateArgs& a, int& exit_code) {
  const bool gpu_is_file = a.gpu.find('/') != std::string::npos || a.gpu.ends_with(".yaml");
  topo::GpuSpec gpu = gpu_is_file ? scenario::load_gpu_preset_file(a.gpu) : scenario::gpu_preset(a.gpu);
  // Stage one: kernel-level constants from kernel benchmarks; they are the prior of the step stage.
  std::vector<std::string> kernel_notes;
  if (!a.kernels.empty()) {
    const auto fits = model::fit_attention_kernel_stage(gpu, model::read_attention_kernel_points(a.kernels));
    if (fits.empty())
      std::cout << "stage 1 (kernels, " << a.kernels << "): no fused-attention point on " << gpu.name << "\n";
    for (const model::KernelStageFit& f : fits) {
      const std::string param(model::to_string(model::attention_fraction_param(f.kernel)));
      const std::string line =
          fmt::format("stage 1 (kernels, {}): {} {:.4g} -> {:.4g} from {} points; {}", a.kernels, param,
                      f.before, f.after, f.points, stats_line(f.stats));
      std::cout << line << "\n";
      kernel_notes.push_back(line);
    }
  }
  topo::NodeSpec node = node_for(a, gpu);
  node.gpu = gpu;
  const model::Fidelity fidelity = model::parse_fidelity(a.fidelity);

  std::vector<model::EfficiencyParam> free;
  std::stringstream list(a.fit);
  for (std::string item; std::getline(list, item, ',');) {
    if (!item.empty()) free.push_back(model::parse_efficiency_param(item));
  }

  std::size_t skipped = 0;
  std::vector<Sample> fit_set = samples_from(a.inputs, a, node, skipped);
  // Without held-out files, a deterministic split of the inputs is held out, so that the output always
  // says how the fit does on data it did not see.
  std::vector<Sample> split_set;
  if (a.check.empty() && a.holdout_every > 1 &&
      fit_set.size() >= 2 * static_cast<std::size_t>(a.holdout_every)) {
    std::vector<Sample> kept;
    for (std::size_t i = 0; i < fit_set.size(); ++i) {
      (i % static_cast<std::size_t>(a.holdout_every) == static_cast<std::size_t>(a.holdout_every) - 1
           ? split_set
           : kept)
          .push_back(std::move(fit_set[i]));
    }
    fit_set = std::move(kept);
  }
  if (fit_set.size() < free.size()) {
    throw InputError(
        fmt::format("{} usable measurements of {} on {} for {} free parameters: need at least as many",
                    fit_set.size(), a.metric, gpu.name, free.size()));
  }
  std::cerr << fmt::format(
      "calibrating {} on node {}: {} measurements of {} from {} ({} rows skipped: other "
      "metrics or GPUs)\n",
      gpu.name, node.name, fit_set.size(), a.metric, join(a.inputs), skipped);
  const model::CalibrationResult r = model::calibrate_efficiency(
      gpu.efficiency, free, measured_of(fit_set), predictor_for(fit_set, a.metric, fidelity, a.jobs),
      model::CalibrationOptions{.prior_strength = a.prior_strength});

  topo::GpuSpec calibrated = gpu;
  calibrated.efficiency = r.efficiency;
  for (model::EfficiencyParam p : free)
    model::set(calibrated.efficiency, p, round4(model::get(r.efficiency, p)));

  std::vector<std::string> notes = {
      fmt::format("GPU preset {} calibrated by `trainsim calibrate` ({} fidelity, node {}).", gpu.name,
                  a.fidelity, node.name),
      fmt::format("Fitted ({}) to {} measurements of {} from: {}, pulled toward the preset's kernel-level "
                  "values with prior strength {}.",
                  a.fit, fit_set.size(), a.metric, join(a.inputs), a.prior_strength),
      "Fit set, before: " + stats_line(r.before), "Fit set, after:  " + stats_line(r.after)};
  notes.insert(notes.begin() + 1, kernel_notes.begin(), kernel_notes.end());
  std::cout << "fit set (" << join(a.inputs) << ")\n  before: " << stats_line(r.before)
            << "\n  after:  " << stats_line(r.after) << "\n";
  // Each held-out file is reported on its own: sources differ in regime, and a pooled number would hide it.
  std::vector<std::pair<std::string, std::vector<Sample>>> held_out;
  if (!split_set.empty()) {
    held_out.emplace_back(fmt::format("every {}th row of the inputs, not fitted", a.holdout_every),
                          std::move(split_set));
  }
  for (const std::string& file : a.check) {
    std::size_t skipped_check = 0;
    held_out.emplace_back(file, samples_from({file}, a, node, skipped_check));
  }
  bool held_out_worse = false;
  for (const auto& [file, check_set] : held_out) {
    const std::vector<double> measured = measured_of(check_set);
    const auto predict = predictor_for(check_set, a.metric, fidelity, a.jobs);
    const model::ErrorStats before = model::error_stats(errors(predict(gpu.efficiency), measured));
    const model::ErrorStats after = model::error_stats(errors(predict(calibrated.efficiency), measured));
    std::cout << "held out (" << file << ")\n  before: " << stats_line(before)
              << "\n  after:  " << stats_line(after) << "\n";
    notes.push_back("Held out (" + file + "), before: " + stats_line(before));
    notes.push_back("Held out, after: " + stats_line(after));
    held_out_worse = held_out_worse || after.mape > before.mape;
  }
  std::cout << "fitted:";
  for (std::size_t i = 0; i < free.size(); ++i) {
    const model::EfficiencyParam p = free[i];
    std::cout << fmt::format(" {}={:.4g} (prior {:.4g})", model::to_string(p),
                             model::get(calibrated.efficiency, p), model::get(gpu.efficiency, p));
  }
  std::cout << (r.fit.converged ? "" : " (not converged: iteration limit)") << "\n";
  for (std::size_t i = 0; i < free.size(); ++i) {
    if (r.bounds[i] == model::BoundState::inside) continue;
    const std::string where = r.bounds[i] == model::BoundState::at_lower ? "lower" : "upper";
    const std::string line = fmt::format(
        "{} sits at its {} bound: the data push it outside the physical box, "
        "so another term of the model is off",
        model::to_string(free[i]), where);
    std::cout << "warning: " << line << "\n";
    notes.push_back("Warning: " + line + ".");
  }
  // The step fit is accepted only when it does not make held-out accuracy worse; otherwise the preset
  // written keeps the kernel-level values it started from (unless --keep-worse).
  if (held_out_worse) {
    const std::string line =
        a.keep_worse
            ? "the fit made held-out accuracy worse; written anyway (--keep-worse)"
            : "the fit made held-out accuracy worse: the preset written keeps the kernel-level values";
    std::cout << "warning: " << line << "\n";
    notes.push_back("Warning: " + line + ".");
    if (!a.keep_worse) calibrated.efficiency = gpu.efficiency;
  }
  // What these constants were checked against is now the fit's data, not the base preset's.
  calibrated.validation = "fitted by trainsim calibrate to " + join(a.inputs);
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
