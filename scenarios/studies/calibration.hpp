#pragma once
// Fitting the simulator's efficiency parameters to measurements, and the error statistics used to judge
// any prediction against a measurement (`trainsim calibrate`, `trainsim validate`).
//
// The fit is bounded non-linear least squares (Levenberg–Marquardt with a finite-difference Jacobian,
// Eigen inside the .cpp). Residuals are relative in log space, r_i = ln(predicted_i / measured_i), so a
// 10 % miss on a 1 s step weighs the same as on a 100 s step, and over- and under-prediction by the same
// factor weigh the same. Parameters are fitted in a transformed space that keeps them inside their bounds
// (logistic map of the value, or of its logarithm for scale parameters spanning decades).
//
// Honesty rules: parameters are per GPU type, never per case; fit on one set of measurements
// and report the error on another (CalibrationResult keeps both before/after predictions so callers can
// report held-out error with the same statistics).
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/studies/kernel_measurements.hpp"
#include "topologies/hardware.hpp"

namespace trainsim::model {

// ---- error statistics ---------------------------------------------------------------------------------

/// Signed relative error (predicted - measured) / measured. Requires measured != 0 (checked).
[[nodiscard]] double relative_error(double predicted, double measured);
/// relative_error of each prediction against its measurement; NaN where the prediction is missing, not
/// finite or not positive (an infeasible step), which error_stats counts as a failure.
[[nodiscard]] std::vector<double> errors_of(const std::vector<double>& predicted,
                                            const std::vector<double>& measured);

/// Summary of many relative errors. Non-finite errors count as failures and stay out of the means.
struct ErrorStats {
  std::size_t count = 0;        ///< finite errors summarised
  std::size_t failures = 0;     ///< predictions that were missing / infeasible / non-finite
  double mape = 0;              ///< mean |error|, as a fraction (0.05 = 5 %)
  double mean_error = 0;        ///< mean signed error (bias): > 0 means the simulator predicts too high
  double rms_error = 0;         ///< root mean square of the errors
  double worst_error = 0;       ///< the signed error of largest magnitude
  std::size_t worst_index = 0;  ///< index (into the input) of that error
};

/// Statistics of signed relative errors (as from relative_error). Empty input gives all zeros.
[[nodiscard]] ErrorStats error_stats(const std::vector<double>& relative_errors);

// ---- generic bounded least squares ---------------------------------------------------------------------

/// One free parameter of a fit, with the box it must stay in (lower < initial < upper).
struct FitParameter {
  std::string name;
  double initial = 0;
  double lower = 0;
  double upper = 0;
  bool log_scale = false;  ///< fit ln(value): for positive scale parameters spanning decades
};

struct FitOptions {
  int max_iterations = 100;
  double tolerance = 1e-10;              ///< stop when the relative decrease of the cost is below this
  double initial_damping = 1e-3;         ///< Levenberg–Marquardt λ at the start (scaled by diag(JᵀJ))
  double finite_difference_step = 1e-5;  ///< step in the transformed (unbounded) space
};

struct FitResult {
  std::vector<double> values;  ///< fitted parameter values, in the order given
  double initial_cost = 0;     ///< ½·Σ r² at the initial values
  double final_cost = 0;       ///< ½·Σ r² at the fitted values
  int iterations = 0;
  int evaluations = 0;     ///< calls of the residual function
  bool converged = false;  ///< stopped on tolerance, not on max_iterations
};

/// Maps parameter values to residuals. Must return the same number of residuals on every call; a
/// non-finite residual is replaced by a large penalty (the point is treated as a bad prediction).
using ResidualFunction = std::function<std::vector<double>(const std::vector<double>& values)>;

/// Minimises ½·Σ residuals(values)² over the parameters' boxes. Throws InputError when a parameter's
/// bounds are empty or its initial value is outside them, or when there are fewer residuals than
/// parameters. Deterministic.
[[nodiscard]] FitResult fit_least_squares(const std::vector<FitParameter>& parameters,
                                          const ResidualFunction& residuals, const FitOptions& options = {});

// ---- the GPU efficiency parameters (topo::ComputeEfficiency) --------------------------------------------

/// The fields of topo::ComputeEfficiency that calibration may fit.
enum class EfficiencyParam {
  matmul_peak_fraction,
  matmul_half_flops,
  memory_bandwidth_fraction,
  kernel_overhead_s,
  flash2_attention_fraction,
  flash3_attention_fraction,
  cudnn_attention_fraction,
  flash_attention_half_flops,
  /// The element-wise kernels' share (0 in a preset: as memory_bandwidth_fraction, which then fits both).
  elementwise_bandwidth_fraction,
};

/// The field's name as in presets and on the command line ("matmul_peak_fraction", "kernel_overhead_s").
[[nodiscard]] std::string_view to_string(EfficiencyParam p);
/// Inverse of to_string; also accepts "kernel_overhead". InputError (with the list) on anything else.
[[nodiscard]] EfficiencyParam parse_efficiency_param(std::string_view text);
/// Every parameter, in declaration order.
[[nodiscard]] const std::vector<EfficiencyParam>& all_efficiency_params();

[[nodiscard]] double get(const topo::ComputeEfficiency& e, EfficiencyParam p);
void set(topo::ComputeEfficiency& e, EfficiencyParam p, double value);

/// The physically sensible box of a parameter (fractions in (0.05, 1); sizes and overheads over decades),
/// starting from `start`'s value (clamped into the box).
[[nodiscard]] FitParameter efficiency_fit_parameter(EfficiencyParam p, const topo::ComputeEfficiency& start);

/// Predicts every sample for a candidate efficiency. Returns one value per sample (same order, same count
/// on every call); a sample that cannot be predicted (infeasible layout) is NaN or <= 0. Typically runs
/// model::simulate_step for each sample with the GPU's efficiency replaced.
using EfficiencyPredictor = std::function<std::vector<double>(const topo::ComputeEfficiency&)>;

/// The step-level stage of a staged calibration. Stage one is kernel level: the GPU preset's constants are
/// fitted to kernel benchmarks (GEMM sweeps, attention kernels; each cited in its preset) and enter here as
/// `start`, the prior. Stage two fits them to whole steps, pulled back toward that prior: each free
/// parameter v adds the residual prior_strength · sqrt(N) · ln(v / v_prior) to the N step residuals, so
/// moving a parameter by 10 % costs as much as a 10 % · prior_strength miss on every step. prior_strength
/// 0 is an unregularised fit.
struct CalibrationOptions {
  double prior_strength = 0.3;
  FitOptions fit;
};

/// Where a fitted parameter ended up relative to its box.
enum class BoundState { inside, at_lower, at_upper };

struct CalibrationResult {
  topo::ComputeEfficiency efficiency;  ///< start with the free parameters replaced by fitted values
  FitResult fit;
  std::vector<BoundState> bounds;        ///< per free parameter: within 1 % of the box's end counts as at it
  std::vector<double> predicted_before;  ///< per sample, at `start`
  std::vector<double> predicted_after;   ///< per sample, at `efficiency`
  ErrorStats before;                     ///< relative errors vs measured at `start`
  ErrorStats after;                      ///< … and after the fit
};

/// Fits the `free` parameters of `start` so that predict(efficiency) matches `measured` (all > 0) in the
/// least-squares sense on log ratios. Other fields keep their values from `start`. Throws InputError when
/// `free` is empty, when sizes disagree, or when a measurement is not positive.
[[nodiscard]] CalibrationResult calibrate_efficiency(const topo::ComputeEfficiency& start,
                                                     const std::vector<EfficiencyParam>& free,
                                                     const std::vector<double>& measured,
                                                     const EfficiencyPredictor& predict,
                                                     const CalibrationOptions& options = {});

// ---- stage one: kernel level ----------------------------------------------------------------------------

/// The efficiency parameter holding a fused kernel's E_gpu (flash2 | flash3 | cudnn; InputError otherwise).
[[nodiscard]] EfficiencyParam attention_fraction_param(Attention kernel);

/// What the kernel stage fitted for one fused attention kernel on one GPU.
struct KernelStageFit {
  Attention kernel = Attention::flash2;
  std::size_t points = 0;
  double before = 0;  ///< E_gpu before (the preset's value)
  double after = 0;   ///< E_gpu fitted
  ErrorStats stats;   ///< relative errors of the points at the fitted value
};

/// Fits gpu.efficiency.<kernel>_attention_fraction of every fused kernel that has points on `gpu` (by
/// preset name; standard-attention and other GPUs' points are ignored) to the published throughputs,
/// minimising the worst relative error (the kernel-level contract is a bound on every point's error, not
/// a mean). The model is proportional to E_gpu, so the fit is closed form: with r = published / predicted
/// at E = 1, E = 2 / (1/r_min + 1/r_max), which balances the extreme errors. The kernels' shapes
/// (models/workload/attention_kernel.hpp) stay fixed. Returns one entry per kernel fitted.
std::vector<KernelStageFit> fit_attention_kernel_stage(topo::GpuSpec& gpu,
                                                       const std::vector<AttentionKernelPoint>& points);

/// The published point's throughput as predicted with `gpu`'s constants, TFLOP/s.
[[nodiscard]] double predicted_attention_tflops(const AttentionKernelPoint& point, const topo::GpuSpec& gpu);

}  // namespace trainsim::model
