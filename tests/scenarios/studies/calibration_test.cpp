#include "scenarios/studies/calibration.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "sim/error.hpp"

using namespace trainsim::model;
using trainsim::topo::ComputeEfficiency;

TEST_CASE("relative error is signed and relative to the measurement") {
  CHECK(relative_error(110.0, 100.0) == doctest::Approx(0.10).scale(0));
  CHECK(relative_error(90.0, 100.0) == doctest::Approx(-0.10).scale(0));
}

TEST_CASE("error statistics give MAPE, bias, RMS and the worst case, and count failures apart") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // |e| = 0.1, 0.2, 0.3 -> MAPE 0.2; signed sum 0.1 - 0.2 + 0.3 = 0.2 -> bias 0.2/3;
  // RMS = sqrt((0.01 + 0.04 + 0.09) / 3) = sqrt(0.14/3).
  const ErrorStats s = error_stats({0.1, -0.2, nan, 0.3});
  CHECK(s.count == 3);
  CHECK(s.failures == 1);
  CHECK(s.mape == doctest::Approx(0.2).scale(0));
  CHECK(s.mean_error == doctest::Approx(0.2 / 3).scale(0));
  CHECK(s.rms_error == doctest::Approx(std::sqrt(0.14 / 3)).scale(0));
  CHECK(s.worst_error == doctest::Approx(0.3).scale(0));
  CHECK(s.worst_index == 3);
}

TEST_CASE("error statistics of nothing are zero") {
  const ErrorStats s = error_stats({});
  CHECK(s.count == 0);
  CHECK(s.mape == 0);
}

TEST_CASE("least squares recovers the parameters of an exponential decay from exact data") {
  // y = a·exp(-b·x) with a = 3, b = 0.7, sampled at x = 0..9.
  std::vector<double> x, y;
  for (int i = 0; i < 10; ++i) {
    x.push_back(i);
    y.push_back(3.0 * std::exp(-0.7 * i));
  }
  const ResidualFunction residuals = [&](const std::vector<double>& v) {
    std::vector<double> r;
    for (std::size_t i = 0; i < x.size(); ++i) r.push_back(v[0] * std::exp(-v[1] * x[i]) - y[i]);
    return r;
  };
  const FitResult fit = fit_least_squares({{.name = "a", .initial = 1.0, .lower = 0.1, .upper = 10.0},
                                           {.name = "b", .initial = 0.2, .lower = 0.01, .upper = 5.0}},
                                          residuals);
  CHECK(fit.converged);
  CHECK(fit.values[0] == doctest::Approx(3.0).epsilon(1e-5));
  CHECK(fit.values[1] == doctest::Approx(0.7).epsilon(1e-5));
  CHECK(fit.final_cost < 1e-12);
  CHECK(fit.final_cost < fit.initial_cost);
}

TEST_CASE("a bounded parameter stays inside its box even when the data pull it outside") {
  // Data say a = 2, the box says a <= 1: the fit must end at the bound, not beyond it.
  const ResidualFunction residuals = [](const std::vector<double>& v) {
    return std::vector<double>{v[0] - 2.0, v[0] - 2.0};
  };
  const FitResult fit =
      fit_least_squares({{.name = "a", .initial = 0.5, .lower = 0.1, .upper = 1.0}}, residuals);
  CHECK(fit.values[0] <= 1.0);
  CHECK(fit.values[0] > 0.99);
}

TEST_CASE("a fit refuses an initial value outside its bounds and too few residuals") {
  const ResidualFunction one = [](const std::vector<double>& v) { return std::vector<double>{v[0]}; };
  CHECK_THROWS_AS((void)fit_least_squares({{.name = "a", .initial = 5, .lower = 0, .upper = 1}}, one),
                  trainsim::InputError);
  CHECK_THROWS_AS((void)fit_least_squares({{.name = "a", .initial = 0.5, .lower = 0, .upper = 1},
                                           {.name = "b", .initial = 0.5, .lower = 0, .upper = 1}},
                                          one),
                  trainsim::InputError);
}

namespace {

// A synthetic roofline of the kind kernel_time uses (documented there): per kernel of work W FLOPs and
// B bytes, t = max(W / (P·f·W/(W+h)), B / (M·m)) + o, with peak P, matmul fraction f, half-work h,
// bandwidth M, bandwidth fraction m, and overhead o. A "step" is a sum of such kernels.
struct Kernel {
  double flops, bytes;
};

double synthetic_step_time(const std::vector<Kernel>& kernels, const ComputeEfficiency& e) {
  const double peak = 312e12, hbm = 2.0e12;
  double t = 0;
  for (const Kernel& k : kernels) {
    const double eff = e.matmul_peak_fraction * k.flops / (k.flops + e.matmul_half_flops);
    t +=
        std::max(k.flops / (peak * eff), k.bytes / (hbm * e.memory_bandwidth_fraction)) + e.kernel_overhead_s;
  }
  return t;
}

}  // namespace

TEST_CASE("calibration recovers known efficiency parameters from synthetic step times") {
  // Steps of different sizes, mixing large and small GEMMs with memory-bound kernels, so that every
  // parameter is identifiable: big GEMMs pin the peak fraction, small ones the half-work size, streaming
  // kernels the bandwidth fraction and many tiny kernels the overhead.
  std::vector<std::vector<Kernel>> steps;
  for (double scale : {0.05, 0.2, 1.0, 4.0, 16.0, 64.0}) {
    std::vector<Kernel> k;
    for (int i = 0; i < 20; ++i) k.push_back({scale * 1e11, scale * 1e8});  // compute-bound GEMMs
    for (int i = 0; i < 30; ++i) k.push_back({scale * 1e5, scale * 5e7});   // memory-bound
    for (int i = 0; i < 10 * static_cast<int>(1 + 8 / scale); ++i) k.push_back({1e3, 1e3});  // launch-bound
    steps.push_back(k);
  }
  const ComputeEfficiency truth{.matmul_peak_fraction = 0.72,
                                .matmul_half_flops = 3.0e9,
                                .memory_bandwidth_fraction = 0.81,
                                .kernel_overhead_s = 6.0e-6};
  std::vector<double> measured;
  for (const auto& s : steps) measured.push_back(synthetic_step_time(s, truth));

  const EfficiencyPredictor predict = [&](const ComputeEfficiency& e) {
    std::vector<double> p;
    for (const auto& s : steps) p.push_back(synthetic_step_time(s, e));
    return p;
  };
  const ComputeEfficiency start{};  // the uncalibrated defaults
  const CalibrationResult r =
      calibrate_efficiency(start,
                           {EfficiencyParam::matmul_peak_fraction, EfficiencyParam::matmul_half_flops,
                            EfficiencyParam::memory_bandwidth_fraction, EfficiencyParam::kernel_overhead_s},
                           measured, predict, CalibrationOptions{.prior_strength = 0});
  CHECK(r.efficiency.matmul_peak_fraction == doctest::Approx(0.72).epsilon(1e-3));
  CHECK(r.efficiency.matmul_half_flops == doctest::Approx(3.0e9).epsilon(1e-3));
  CHECK(r.efficiency.memory_bandwidth_fraction == doctest::Approx(0.81).epsilon(1e-3));
  CHECK(r.efficiency.kernel_overhead_s == doctest::Approx(6.0e-6).epsilon(1e-3));
  CHECK(r.after.mape < 1e-5);
  CHECK(r.before.mape > 0.01);
  // Parameters not set free keep their start values.
  CHECK(r.efficiency.flash2_attention_fraction == start.flash2_attention_fraction);
}

TEST_CASE("calibration treats an infeasible prediction as a failure, not a crash") {
  const EfficiencyPredictor predict = [](const ComputeEfficiency& e) {
    return std::vector<double>{1.0 / e.matmul_peak_fraction, std::numeric_limits<double>::quiet_NaN(),
                               2.0 / e.matmul_peak_fraction};
  };
  const CalibrationResult r =
      calibrate_efficiency(ComputeEfficiency{}, {EfficiencyParam::matmul_peak_fraction}, {2.0, 1.0, 4.0},
                           predict, CalibrationOptions{.prior_strength = 0});
  CHECK(r.efficiency.matmul_peak_fraction == doctest::Approx(0.5).epsilon(1e-4));
  CHECK(r.after.failures == 1);
  CHECK(r.after.count == 2);
}

TEST_CASE("efficiency parameter names round-trip and unknown names are refused with the list") {
  for (EfficiencyParam p : all_efficiency_params()) CHECK(parse_efficiency_param(to_string(p)) == p);
  CHECK(parse_efficiency_param("kernel_overhead") == EfficiencyParam::kernel_overhead_s);
  CHECK_THROWS_WITH_AS((void)parse_efficiency_param("matmul_fraction"),
                       doctest::Contains("matmul_peak_fraction"), trainsim::InputError);
}

TEST_CASE("the element-wise share starts from the library roof when unset and is written as its own key") {
  ComputeEfficiency e;
  e.memory_bandwidth_fraction = 0.7;
  CHECK(get(e, EfficiencyParam::elementwise_bandwidth_fraction) == 0.7);  // unset: as the roof
  set(e, EfficiencyParam::elementwise_bandwidth_fraction, 0.33);
  CHECK(e.elementwise_bandwidth_fraction == 0.33);
  CHECK(e.memory_bandwidth_fraction == 0.7);  // the GEMMs' and attention's roof untouched
  CHECK(parse_efficiency_param("elementwise_bandwidth_fraction") ==
        EfficiencyParam::elementwise_bandwidth_fraction);
}

TEST_CASE("the step stage is pulled toward the kernel-level prior by exactly its stated weight") {
  // Two steps whose time is 1 / matmul_peak_fraction; they want 0.5, the prior (start) is 0.8. The cost
  // ½·[2·ln(0.5/v)² + (k·sqrt(2)·ln(v/0.8))²] is least at ln v = (ln 0.5 + k²·ln 0.8) / (1 + k²).
  const EfficiencyPredictor predict = [](const ComputeEfficiency& e) {
    return std::vector<double>{1.0 / e.matmul_peak_fraction, 1.0 / e.matmul_peak_fraction};
  };
  const ComputeEfficiency start{.matmul_peak_fraction = 0.8};
  for (const double k : {0.0, 0.5, 1.0, 3.0}) {
    const CalibrationResult r =
        calibrate_efficiency(start, {EfficiencyParam::matmul_peak_fraction}, {2.0, 2.0}, predict,
                             CalibrationOptions{.prior_strength = k});
    const double expected = std::exp((std::log(0.5) + k * k * std::log(0.8)) / (1 + k * k));
    INFO("prior strength " << k);
    CHECK(r.efficiency.matmul_peak_fraction == doctest::Approx(expected).epsilon(1e-4));
    CHECK(r.bounds.at(0) == BoundState::inside);
  }
}

TEST_CASE("a parameter the data drive to its box's end is reported as at the bound") {
  // Steps that want a peak fraction of 2 (impossible): the fit stops at the upper end, 1.
  const EfficiencyPredictor predict = [](const ComputeEfficiency& e) {
    return std::vector<double>{1.0 / e.matmul_peak_fraction, 2.0 / e.matmul_peak_fraction};
  };
  const CalibrationResult r =
      calibrate_efficiency(ComputeEfficiency{}, {EfficiencyParam::matmul_peak_fraction}, {0.5, 1.0}, predict,
                           CalibrationOptions{.prior_strength = 0});
  CHECK(r.bounds.at(0) == BoundState::at_upper);
}
