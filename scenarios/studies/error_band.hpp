#pragma once
// Error bars from the validation data: how far trainsim's predicted iteration time has been from published
// measurements of runs like the scenario, applied to its headline figures (iteration time, run time, cost).
//
// The cases: every step case shipped under scenarios/validation (SPEC "Validation cases"), each with its
// GPU preset, the framework preset it followed, its parallel style (parallel_style) and its GPU count, and
// the ratio of its measured to its predicted iteration time (a throughput metric, mfu, TFLOP/s or tokens/s
// per GPU, inverted: measured time / predicted time = predicted throughput / measured throughput).
//
// Near the scenario: the same GPU preset, the same framework preset and the same style, and a GPU count
// within a factor of kScaleFactor of the scenario's. With at least kMinCases such cases the band is
// [r_(k) · t, r_(n+1−k) · t]: the k-th smallest and k-th largest of their n ratios, k = floor((n + 1) / 10)
// (at least 1). These are the 10th and 90th percentiles as split conformal prediction takes them (Vovk et
// al., "Algorithmic Learning in a Random World", 2005; Lei et al., arXiv:1604.04173): a further run like
// the cases falls inside with probability (n + 1 − 2k) / (n + 1), at least 80 % from n = 9 (with fewer
// cases k = 1, the cases' range: (n − 1) / (n + 1), 50 % at n = 3). Taking the percentiles of the cases
// alone (r[floor(0.1 (n − 1))] to r[ceil(0.9 (n − 1))]) holds 80 % of the cases themselves by
// construction, and a case left out of them less often (87 of 109 A100 DeepSpeed cases). With fewer than
// kMinCases, "not validated for this GPU/framework/style". Run time takes the
// iteration's band: it scales with the iteration time (what failures, checkpoints and storage add is
// priced as exactly as the rest). So does cost_total but for what is paid whatever the run takes: the
// data work, the egress and a commitment's term (cost_data, cost_network, cost_fixed), which the band
// leaves as they are.
#include <cstdint>
#include <string>
#include <vector>

#include "models/report/summary.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/studies/simulation.hpp"
#include "scenarios/studies/validation_runner.hpp"

namespace trainsim::scenario {

constexpr double kScaleFactor = 8;  ///< a case is near when its GPU count is within this factor
constexpr std::size_t kMinCases = 3;

/// One validation case as the band sees it.
struct BandCase {
  std::string file;
  std::string name;
  std::string gpu;
  std::string framework;  ///< the preset name (a case that names none: the one its layout chose)
  std::string style;
  std::int64_t gpus = 0;
  double ratio = 0;  ///< measured iteration time / predicted iteration time
};

/// The cases of `results` (run_cases's) that simulated and have an iteration-time or throughput metric.
[[nodiscard]] std::vector<BandCase> band_cases(const std::vector<CaseResult>& results);
/// Every step case under `folder` that loads, simulates and has an iteration-time or throughput metric;
/// with `gpu` and `framework` given, only those that may be runs on that GPU preset under that framework
/// (the others are passed over by a look at their text, before they are loaded). Each case is loaded once,
/// by run_cases.
[[nodiscard]] std::vector<BandCase> band_cases(const std::string& folder, const std::string& gpu = "",
                                               const std::string& framework = "");
/// The shipped cases (scenarios/validation) for a GPU preset and framework, evaluated once per process.
[[nodiscard]] const std::vector<BandCase>& shipped_band_cases(const std::string& gpu,
                                                              const std::string& framework);

struct ErrorBand {
  bool validated = false;
  double low = 1;  ///< the band is [low · predicted, high · predicted]
  double high = 1;
  std::vector<std::string> cases;  ///< names of the near cases it was taken from
  /// One line: "from 3 validation cases (h100-sxm / fsdp2 / dense 3D / 8192-16384 GPUs): measured 0.80–0.89 x
  /// predicted", or "not validated for this GPU/framework/style (gb200 / megatron-core / dense 3D / 512
  /// GPUs)".
  std::string basis;
};

/// The band for a run on `gpus` GPUs of preset `gpu`, following `framework`, in `style`, from `cases`.
[[nodiscard]] ErrorBand error_band(const std::vector<BandCase>& cases, const std::string& gpu,
                                   const std::string& framework, const std::string& style, std::int64_t gpus);
/// The band of a scenario from the shipped cases.
[[nodiscard]] ErrorBand error_band_of(const Scenario& scenario);

/// Adds the band to a summary: iteration_time_low/_high, run_time_low/_high and cost_total_low/_high
/// (its fixed part unscaled) after their figure (when the summary has it), and `error_band` (the basis) after
/// iteration_time_high. Not validated: only `error_band`.
void add_error_band(model::Summary& summary, const ErrorBand& band);

/// The summary `trainsim run` writes of a simulated scenario (and `compare`, the Python module's run):
/// its fields under run's labels and, for a feasible step, its error band. The one place they are put
/// together.
[[nodiscard]] model::Summary run_summary(const Scenario& scenario, model::Fidelity fidelity,
                                         const ScenarioResult& result);
/// The same under other labels (a sweep row's).
[[nodiscard]] model::Summary run_summary(const Scenario& scenario, const model::Labels& labels,
                                         const ScenarioResult& result);

}  // namespace trainsim::scenario
