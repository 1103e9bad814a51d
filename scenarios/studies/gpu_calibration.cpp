#include "scenarios/studies/gpu_calibration.hpp"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <limits>
#include <numeric>

#include "models/report/summary.hpp"
#include "scenarios/presets.hpp"
#include "scenarios/quantity.hpp"
#include "scenarios/studies/measurement_csv.hpp"
#include "scenarios/studies/sweep.hpp"
#include "sim/error.hpp"

namespace trainsim::scenario {

namespace {

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

std::vector<CalibrationSample> samples_from(const std::vector<std::string>& files,
                                            const MeasurementSelection& select, std::size_t& skipped) {
  std::vector<CalibrationSample> out;
  const topo::NodeSpec& node = select.node;
  for (const std::string& f : files) {
    for (model::Measurement& m : model::read_measurements_csv(f)) {
      if (m.metric != select.metric || !same_family(m.gpu_type, node.gpu.name)) {
        ++skipped;
        continue;
      }
      topo::ClusterSpec cluster;
      cluster.node = node;
      const std::int64_t per = node.gpus_per_node;
      cluster.nodes = (m.gpus + per - 1) / per;
      if (m.gpus < per) cluster.gpus_per_node = static_cast<int>(m.gpus);
      if (!select.nic.empty())
        cluster.network.nic_bytes_per_s = parse_quantity(select.nic, Dimension::bytes_per_s);
      cluster.network.nics_per_node = select.nics_per_node;
      out.push_back({.input = {.model = m.model, .cluster = cluster, .plan = m.plan, .training = m.training},
                     .measured = m.value,
                     .id = m.id});
    }
  }
  return out;
}

model::EfficiencyPredictor predictor_for(const std::vector<CalibrationSample>& samples,
                                         const std::string& metric, model::Fidelity fidelity, int jobs) {
  return [&samples, metric, fidelity, jobs](const topo::ComputeEfficiency& e) {
    std::vector<double> predicted(samples.size(), std::numeric_limits<double>::quiet_NaN());
    std::vector<std::int64_t> indices(samples.size());
    std::iota(indices.begin(), indices.end(), std::int64_t{0});
    run_in_order(
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

std::vector<double> measured_of(const std::vector<CalibrationSample>& samples) {
  std::vector<double> m;
  m.reserve(samples.size());
  for (const CalibrationSample& s : samples) m.push_back(s.measured);
  return m;
}

// Fitted values are rounded to 4 significant digits: more would claim a precision the data do not have.
double round4(double x) {
  return std::stod(fmt::format("{:.4g}", x));
}

}  // namespace

topo::NodeSpec calibration_node(const std::string& node_name, const topo::GpuSpec& gpu) {
  const auto with_gpu = [&gpu](topo::NodeSpec n) {
    n.gpu = gpu;
    return n;
  };
  if (!node_name.empty()) return with_gpu(node_preset(node_name));
  for (const std::string& name : node_preset_names()) {
    topo::NodeSpec n = node_preset(name);
    if (n.gpu.name == gpu.name) return with_gpu(std::move(n));
  }
  throw InputError("no node preset is built from GPU '" + gpu.name + "': name one with --node");
}

CalibrationSets calibration_sets(const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& check, const MeasurementSelection& select,
                                 int holdout_every) {
  CalibrationSets sets;
  sets.fit = samples_from(inputs, select, sets.skipped);
  const auto k = static_cast<std::size_t>(std::max(holdout_every, 0));
  if (check.empty() && k > 1 && sets.fit.size() >= 2 * k) {
    std::vector<CalibrationSample> kept, split;
    for (std::size_t i = 0; i < sets.fit.size(); ++i)
      (i % k == k - 1 ? split : kept).push_back(std::move(sets.fit[i]));
    sets.fit = std::move(kept);
    sets.held_out.emplace_back(fmt::format("every {}th row of the inputs, not fitted", holdout_every),
                               std::move(split));
  }
  for (const std::string& file : check) {
    std::size_t skipped_check = 0;
    sets.held_out.emplace_back(file, samples_from({file}, select, skipped_check));
  }
  return sets;
}

StepCalibration calibrate_steps(const topo::GpuSpec& gpu, const CalibrationSets& sets,
                                const StepFitOptions& options, const std::function<void()>& before_fit) {
  if (sets.fit.size() < options.free.size()) {
    throw InputError(
        fmt::format("{} usable measurements of {} on {} for {} free parameters: need at least as many",
                    sets.fit.size(), options.metric, gpu.name, options.free.size()));
  }
  if (before_fit) before_fit();
  StepCalibration out;
  out.fit =
      model::calibrate_efficiency(gpu.efficiency, options.free, measured_of(sets.fit),
                                  predictor_for(sets.fit, options.metric, options.fidelity, options.jobs),
                                  model::CalibrationOptions{.prior_strength = options.prior_strength});
  out.fitted = out.fit.efficiency;
  for (model::EfficiencyParam p : options.free)
    model::set(out.fitted, p, round4(model::get(out.fit.efficiency, p)));
  // Each held-out set is judged on its own: sources differ in regime, and a pooled number would hide it.
  for (const auto& [label, samples] : sets.held_out) {
    const std::vector<double> measured = measured_of(samples);
    const auto predict = predictor_for(samples, options.metric, options.fidelity, options.jobs);
    HeldOutError& e = out.held_out.emplace_back(HeldOutError{.label = label});
    e.before = model::error_stats(model::errors_of(predict(gpu.efficiency), measured));
    e.after = model::error_stats(model::errors_of(predict(out.fitted), measured));
    out.held_out_worse = out.held_out_worse || e.after.mape > e.before.mape;
  }
  // The step fit is accepted only when it does not make held-out accuracy worse; otherwise the GPU keeps
  // the kernel-level values it started from.
  out.calibrated = gpu;
  if (!out.held_out_worse || options.keep_worse) out.calibrated.efficiency = out.fitted;
  return out;
}

}  // namespace trainsim::scenario
