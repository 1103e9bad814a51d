#include "scenarios/studies/calibration.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "models/workload/attention_kernel.hpp"
#include "sim/error.hpp"

namespace trainsim::model {

double relative_error(double predicted, double measured) {
  TRAINSIM_CHECK(measured != 0, "relative error against a zero measurement");
  return (predicted - measured) / measured;
}

ErrorStats error_stats(const std::vector<double>& relative_errors) {
  ErrorStats s;
  double sum_abs = 0, sum = 0, sum_sq = 0;
  for (std::size_t i = 0; i < relative_errors.size(); ++i) {
    const double e = relative_errors[i];
    if (!std::isfinite(e)) {
      ++s.failures;
      continue;
    }
    ++s.count;
    sum_abs += std::abs(e);
    sum += e;
    sum_sq += e * e;
    if (s.count == 1 || std::abs(e) > std::abs(s.worst_error)) {
      s.worst_error = e;
      s.worst_index = i;
    }
  }
  if (s.count > 0) {
    const auto n = static_cast<double>(s.count);
    s.mape = sum_abs / n;
    s.mean_error = sum / n;
    s.rms_error = std::sqrt(sum_sq / n);
  }
  return s;
}

namespace {

// The bounded parameter p in [lo, hi] (or ln p in [ln lo, ln hi]) is u-space logistic: the optimiser
// moves freely in u while the value can never leave the box, which keeps the simulator away from
// nonsense such as negative efficiencies.
struct Transform {
  double lo, hi;
  bool log_scale;

  [[nodiscard]] double to_value(double u) const {
    const double t = lo + (hi - lo) / (1.0 + std::exp(-u));
    return log_scale ? std::exp(t) : t;
  }
  [[nodiscard]] double to_internal(double value) const {
    const double t = log_scale ? std::log(value) : value;
    const double f = std::clamp((t - lo) / (hi - lo), 1e-9, 1.0 - 1e-9);
    return std::log(f / (1.0 - f));
  }
};

// A residual the model cannot produce (infeasible layout, NaN) must push the fit away, not break it.
constexpr double kPenaltyResidual = 10.0;

// `expected` = 0: the first call, which establishes the number of residuals.
Eigen::VectorXd evaluate(const ResidualFunction& f, const std::vector<Transform>& tr,
                         const Eigen::VectorXd& u, std::size_t expected, int& evaluations) {
  std::vector<double> values(tr.size());
  for (std::size_t i = 0; i < tr.size(); ++i) values[i] = tr[i].to_value(u[static_cast<Eigen::Index>(i)]);
  const std::vector<double> r = f(values);
  ++evaluations;
  TRAINSIM_CHECK(expected == 0 || r.size() == expected,
                 "the residual function changed its number of residuals");
  Eigen::VectorXd out(static_cast<Eigen::Index>(r.size()));
  for (std::size_t i = 0; i < r.size(); ++i) {
    out[static_cast<Eigen::Index>(i)] = std::isfinite(r[i]) ? r[i] : kPenaltyResidual;
  }
  return out;
}

}  // namespace

FitResult fit_least_squares(const std::vector<FitParameter>& parameters, const ResidualFunction& residuals,
                            const FitOptions& options) {
  if (parameters.empty()) throw InputError("a fit needs at least one free parameter");
  std::vector<Transform> tr;
  Eigen::VectorXd u(static_cast<Eigen::Index>(parameters.size()));
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const FitParameter& p = parameters[i];
    if (!(p.lower < p.upper) || !(p.initial >= p.lower && p.initial <= p.upper)) {
      throw InputError("fit parameter " + p.name + ": need lower < upper and the initial value inside");
    }
    if (p.log_scale && !(p.lower > 0))
      throw InputError("fit parameter " + p.name + ": log scale needs lower > 0");
    Transform t{p.log_scale ? std::log(p.lower) : p.lower, p.log_scale ? std::log(p.upper) : p.upper,
                p.log_scale};
    u[static_cast<Eigen::Index>(i)] = t.to_internal(p.initial);
    tr.push_back(t);
  }

  FitResult result;
  Eigen::VectorXd r = evaluate(residuals, tr, u, 0, result.evaluations);
  const auto m = static_cast<std::size_t>(r.size());
  if (m < parameters.size()) throw InputError("a fit needs at least as many measurements as free parameters");
  double cost = 0.5 * r.squaredNorm();
  result.initial_cost = cost;
  double lambda = options.initial_damping;
  const Eigen::Index n = u.size();

  for (result.iterations = 0; result.iterations < options.max_iterations; ++result.iterations) {
    // Forward-difference Jacobian in the unbounded space.
    Eigen::MatrixXd jac(r.size(), n);
    for (Eigen::Index j = 0; j < n; ++j) {
      Eigen::VectorXd up = u;
      up[j] += options.finite_difference_step;
      jac.col(j) = (evaluate(residuals, tr, up, m, result.evaluations) - r) / options.finite_difference_step;
    }
    const Eigen::MatrixXd jtj = jac.transpose() * jac;
    const Eigen::VectorXd grad = jac.transpose() * r;
    if (grad.lpNorm<Eigen::Infinity>() < 1e-14) {
      result.converged = true;
      break;
    }
    // Marquardt damping: raise λ until a step lowers the cost (or give up when λ explodes).
    bool improved = false;
    double new_cost = cost;
    while (lambda < 1e12) {
      Eigen::MatrixXd a = jtj;
      a.diagonal() += lambda * (jtj.diagonal().array() + 1e-12).matrix();
      const Eigen::VectorXd step = a.ldlt().solve(-grad);
      const Eigen::VectorXd u_try = u + step;
      const Eigen::VectorXd r_try = evaluate(residuals, tr, u_try, m, result.evaluations);
      new_cost = 0.5 * r_try.squaredNorm();
      if (new_cost < cost) {
        u = u_try;
        r = r_try;
        lambda = std::max(lambda / 3.0, 1e-12);
        improved = true;
        break;
      }
      lambda *= 4.0;
    }
    if (!improved) {
      result.converged = true;  // no downhill step exists at any damping: a (local) minimum
      break;
    }
    const double decrease = (cost - new_cost) / std::max(cost, std::numeric_limits<double>::min());
    cost = new_cost;
    if (decrease < options.tolerance) {
      result.converged = true;
      ++result.iterations;
      break;
    }
  }
  result.final_cost = cost;
  result.values.resize(parameters.size());
  for (std::size_t i = 0; i < parameters.size(); ++i)
    result.values[i] = tr[i].to_value(u[static_cast<Eigen::Index>(i)]);
  return result;
}

std::string_view to_string(EfficiencyParam p) {
  switch (p) {
    case EfficiencyParam::matmul_peak_fraction:
      return "matmul_peak_fraction";
    case EfficiencyParam::matmul_half_flops:
      return "matmul_half_flops";
    case EfficiencyParam::memory_bandwidth_fraction:
      return "memory_bandwidth_fraction";
    case EfficiencyParam::kernel_overhead_s:
      return "kernel_overhead_s";
    case EfficiencyParam::flash2_attention_fraction:
      return "flash2_attention_fraction";
    case EfficiencyParam::flash3_attention_fraction:
      return "flash3_attention_fraction";
    case EfficiencyParam::cudnn_attention_fraction:
      return "cudnn_attention_fraction";
    case EfficiencyParam::flash_attention_half_flops:
      return "flash_attention_half_flops";
    case EfficiencyParam::elementwise_bandwidth_fraction:
      return "elementwise_bandwidth_fraction";
  }
  return "matmul_peak_fraction";
}

const std::vector<EfficiencyParam>& all_efficiency_params() {
  static const std::vector<EfficiencyParam> kAll = {
      EfficiencyParam::matmul_peak_fraction,          EfficiencyParam::matmul_half_flops,
      EfficiencyParam::memory_bandwidth_fraction,     EfficiencyParam::kernel_overhead_s,
      EfficiencyParam::flash2_attention_fraction,     EfficiencyParam::flash3_attention_fraction,
      EfficiencyParam::cudnn_attention_fraction,      EfficiencyParam::flash_attention_half_flops,
      EfficiencyParam::elementwise_bandwidth_fraction};
  return kAll;
}

EfficiencyParam parse_efficiency_param(std::string_view text) {
  if (text == "kernel_overhead") return EfficiencyParam::kernel_overhead_s;
  std::string names;
  for (EfficiencyParam p : all_efficiency_params()) {
    if (text == to_string(p)) return p;
    names += (names.empty() ? "" : ", ") + std::string(to_string(p));
  }
  throw InputError("unknown efficiency parameter '" + std::string(text) + "' (expected one of: " + names +
                   ")");
}

double get(const topo::ComputeEfficiency& e, EfficiencyParam p) {
  switch (p) {
    case EfficiencyParam::matmul_peak_fraction:
      return e.matmul_peak_fraction;
    case EfficiencyParam::matmul_half_flops:
      return e.matmul_half_flops;
    case EfficiencyParam::memory_bandwidth_fraction:
      return e.memory_bandwidth_fraction;
    case EfficiencyParam::kernel_overhead_s:
      return e.kernel_overhead_s;
    case EfficiencyParam::flash2_attention_fraction:
      return e.flash2_attention_fraction;
    case EfficiencyParam::flash3_attention_fraction:
      return e.flash3_attention_fraction;
    case EfficiencyParam::cudnn_attention_fraction:
      return e.cudnn_attention_fraction;
    case EfficiencyParam::flash_attention_half_flops:
      return e.flash_attention_half_flops;
    case EfficiencyParam::elementwise_bandwidth_fraction:
      return e.elementwise_fraction();
  }
  return 0;
}

void set(topo::ComputeEfficiency& e, EfficiencyParam p, double value) {
  switch (p) {
    case EfficiencyParam::matmul_peak_fraction:
      e.matmul_peak_fraction = value;
      return;
    case EfficiencyParam::matmul_half_flops:
      e.matmul_half_flops = value;
      return;
    case EfficiencyParam::memory_bandwidth_fraction:
      e.memory_bandwidth_fraction = value;
      return;
    case EfficiencyParam::kernel_overhead_s:
      e.kernel_overhead_s = value;
      return;
    case EfficiencyParam::flash2_attention_fraction:
      e.flash2_attention_fraction = value;
      return;
    case EfficiencyParam::flash3_attention_fraction:
      e.flash3_attention_fraction = value;
      return;
    case EfficiencyParam::cudnn_attention_fraction:
      e.cudnn_attention_fraction = value;
      return;
    case EfficiencyParam::flash_attention_half_flops:
      e.flash_attention_half_flops = value;
      return;
    case EfficiencyParam::elementwise_bandwidth_fraction:
      e.elementwise_bandwidth_fraction = value;
      return;
  }
}

FitParameter efficiency_fit_parameter(EfficiencyParam p, const topo::ComputeEfficiency& start) {
  FitParameter f{.name = std::string(to_string(p))};
  switch (p) {
    case EfficiencyParam::matmul_peak_fraction:
    case EfficiencyParam::memory_bandwidth_fraction:
    case EfficiencyParam::elementwise_bandwidth_fraction:
    case EfficiencyParam::flash2_attention_fraction:
    case EfficiencyParam::flash3_attention_fraction:
    case EfficiencyParam::cudnn_attention_fraction:
      // Fractions of a datasheet peak: below 5 % nothing sensible runs, above 100 % is impossible.
      f.lower = 0.05;
      f.upper = 1.0;
      break;
    case EfficiencyParam::matmul_half_flops:
    case EfficiencyParam::flash_attention_half_flops:
      // Work at half efficiency: from a tiny 1 MFLOP kernel to a 1 TFLOP one.
      f.lower = 1e6;
      f.upper = 1e12;
      f.log_scale = true;
      break;
    case EfficiencyParam::kernel_overhead_s:
      // Launch + tail per kernel: 10 ns (graphs, fused) to 1 ms (badly synchronised).
      f.lower = 1e-8;
      f.upper = 1e-3;
      f.log_scale = true;
      break;
  }
  // Strictly inside the box: the logistic map never reaches its ends.
  const double margin = f.log_scale ? 1.0001 : 1.0;
  const double eps = f.log_scale ? 0 : 1e-6;
  f.initial = std::clamp(get(start, p), f.lower * margin + eps, f.upper / margin - eps);
  return f;
}

std::vector<double> errors_of(const std::vector<double>& predicted, const std::vector<double>& measured) {
  std::vector<double> e(measured.size());
  for (std::size_t i = 0; i < measured.size(); ++i) {
    e[i] = (std::isfinite(predicted[i]) && predicted[i] > 0) ? relative_error(predicted[i], measured[i])
                                                             : std::numeric_limits<double>::quiet_NaN();
  }
  return e;
}

CalibrationResult calibrate_efficiency(const topo::ComputeEfficiency& start,
                                       const std::vector<EfficiencyParam>& free,
                                       const std::vector<double>& measured,
                                       const EfficiencyPredictor& predict,
                                       const CalibrationOptions& options) {
  if (free.empty()) throw InputError("calibration needs at least one free efficiency parameter");
  for (double m : measured) {
    if (!(m > 0) || !std::isfinite(m)) throw InputError("calibration needs positive, finite measurements");
  }
  CalibrationResult result;
  result.predicted_before = predict(start);
  if (result.predicted_before.size() != measured.size()) {
    throw InputError("the predictor returned " + std::to_string(result.predicted_before.size()) +
                     " predictions for " + std::to_string(measured.size()) + " measurements");
  }
  result.before = error_stats(errors_of(result.predicted_before, measured));

  std::vector<FitParameter> parameters;
  parameters.reserve(free.size());
  for (EfficiencyParam p : free) parameters.push_back(efficiency_fit_parameter(p, start));
  const auto with = [&](const std::vector<double>& values) {
    topo::ComputeEfficiency e = start;
    for (std::size_t i = 0; i < free.size(); ++i) set(e, free[i], values[i]);
    return e;
  };
  const ResidualFunction residuals = [&](const std::vector<double>& values) {
    const std::vector<double> predicted = predict(with(values));
    TRAINSIM_CHECK(predicted.size() == measured.size(), "the predictor changed its number of predictions");
    std::vector<double> r(measured.size());
    for (std::size_t i = 0; i < measured.size(); ++i) {
      r[i] =
          predicted[i] > 0 ? std::log(predicted[i] / measured[i]) : std::numeric_limits<double>::quiet_NaN();
    }
    // The pull toward the kernel-level prior (CalibrationOptions).
    const double weight = options.prior_strength * std::sqrt(static_cast<double>(measured.size()));
    for (std::size_t i = 0; i < free.size(); ++i) {
      if (weight > 0) r.push_back(weight * std::log(values[i] / parameters[i].initial));
    }
    return r;
  };
  result.fit = fit_least_squares(parameters, residuals, options.fit);
  result.efficiency = with(result.fit.values);
  for (std::size_t i = 0; i < free.size(); ++i) {
    const FitParameter& f = parameters[i];
    const double v = result.fit.values[i];
    const double lo = f.log_scale ? std::log(f.lower) : f.lower;
    const double hi = f.log_scale ? std::log(f.upper) : f.upper;
    const double x = f.log_scale ? std::log(v) : v;
    const double near = 0.01 * (hi - lo);
    result.bounds.push_back(x - lo < near   ? BoundState::at_lower
                            : hi - x < near ? BoundState::at_upper
                                            : BoundState::inside);
  }
  result.predicted_after = predict(result.efficiency);
  result.after = error_stats(errors_of(result.predicted_after, measured));
  return result;
}

EfficiencyParam attention_fraction_param(Attention kernel) {
  switch (kernel) {
    case Attention::flash2:
      return EfficiencyParam::flash2_attention_fraction;
    case Attention::flash3:
      return EfficiencyParam::flash3_attention_fraction;
    case Attention::cudnn:
      return EfficiencyParam::cudnn_attention_fraction;
    case Attention::flash:
    case Attention::standard:
      break;
  }
  throw InputError("only a fused attention kernel (flash2, flash3, cudnn) has an attention fraction");
}

double predicted_attention_tflops(const AttentionKernelPoint& point, const topo::GpuSpec& gpu) {
  const double flops = point.executed_flops();
  const AttentionVariant variant{point.kernel, point.backward, point.causal, 1};
  return attention_kernel_efficiency(flops, point.head_dim, point.seq_len, variant, gpu.efficiency,
                                     gpu.name) *
         gpu.peak.at(topo::Precision::bf16) / 1e12;
}

std::vector<KernelStageFit> fit_attention_kernel_stage(topo::GpuSpec& gpu,
                                                       const std::vector<AttentionKernelPoint>& points) {
  std::vector<KernelStageFit> fits;
  for (const Attention kernel : {Attention::flash2, Attention::flash3, Attention::cudnn}) {
    std::vector<const AttentionKernelPoint*> mine;
    for (const AttentionKernelPoint& p : points) {
      if (p.gpu == gpu.name && p.kernel == kernel) mine.push_back(&p);
    }
    if (mine.empty()) continue;
    KernelStageFit fit{
        .kernel = kernel, .points = mine.size(), .before = attention_kernel_fraction(kernel, gpu.efficiency)};
    // Predict at E = 1, then scale: the form is proportional to E.
    topo::GpuSpec unit = gpu;
    const EfficiencyParam param = attention_fraction_param(kernel);
    set(unit.efficiency, param, 1.0);
    // r = published / predicted at E = 1; the error at E is E/r - 1, so the worst error is least when the
    // extremes balance: E/r_min - 1 = 1 - E/r_max.
    double lowest = std::numeric_limits<double>::infinity();
    double highest = 0;
    for (const AttentionKernelPoint* p : mine) {
      const double ratio = p->tflops / predicted_attention_tflops(*p, unit);
      lowest = std::min(lowest, ratio);
      highest = std::max(highest, ratio);
    }
    fit.after = 2.0 / (1.0 / lowest + 1.0 / highest);
    set(gpu.efficiency, param, fit.after);
    std::vector<double> errors;
    errors.reserve(mine.size());
    for (const AttentionKernelPoint* p : mine)
      errors.push_back(relative_error(predicted_attention_tflops(*p, gpu), p->tflops));
    fit.stats = error_stats(errors);
    fits.push_back(fit);
  }
  return fits;
}

}  // namespace trainsim::model
