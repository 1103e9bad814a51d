#pragma once
// Running validation cases (SPEC "Validation cases": a scenario with a `measured:` block) and judging the
// predictions: per case and metric the predicted and measured values, the signed relative error and
// whether it is within the case's tolerance; then MAPE, bias and worst case per metric and per group
// (the folder a case sits in — one folder per published source — and the attention kernel assumed).
//
// Cases run in parallel on a fixed pool of threads; results come back in file order whatever the
// thread count, so output is deterministic. A case that fails to load or whose layout is infeasible is a
// failed case (with the reason), never an exception. A case whose layout does not fit in its GPUs' memory
// as written is not a failure: its time is scored (what the layout would take; the cases are published
// measurements), and the result says that it does not fit and why, in every format.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/step/step_simulator.hpp"
#include "scenarios/case_settings.hpp"
#include "scenarios/presets.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/studies/calibration.hpp"
#include "topologies/hardware.hpp"

namespace trainsim::scenario {

/// "MoE" (a mixture-of-experts model), "FSDP" (ZeRO-3: parameters sharded) or "dense 3D" (tensor,
/// pipeline and data parallelism with ZeRO 0–2, data parallelism alone included).
[[nodiscard]] std::string parallel_style(const Scenario& scenario);

/// One measured metric of one case, against its prediction.
struct MetricCheck {
  std::string metric;                 ///< SPEC output name (iteration_time, mfu, …)
  double measured = 0;                ///< SI
  double predicted = 0;               ///< SI; NaN when the simulator did not produce it
  double error = 0;                   ///< signed relative error; NaN when predicted is NaN
  double tolerance = 0;               ///< relative
  [[nodiscard]] bool within() const;  ///< |error| <= tolerance (false when error is NaN)
};

struct CaseResult {
  std::string file;       ///< path as given / found
  std::string name;       ///< scenario name
  std::string group;      ///< the case's folder name (e.g. "korthikanti", "vtrain-single")
  std::string attention;  ///< the attention kernel priced (cudnn, flash2, flash3, standard); "" without one
  /// The framework preset the step followed, with " (unnamed)" when the case names none (the layout chose
  /// it); "" for cases without a step (collectives).
  std::string framework;
  std::string framework_preset;  ///< the preset's name alone ("" for cases without a step)
  std::string style;             ///< parallel_style of the case ("" for cases without a step)
  std::int64_t gpus = 0;         ///< the case's GPUs (0 when it does not load)
  std::string gpu;               ///< the GPU preset of the case's node ("" when it does not load)
  std::string source;            ///< the `measured.source` citation
  std::string failure;           ///< non-empty: could not be evaluated (load error, infeasible layout, …)
  /// Whether the step's layout fits in its GPUs' memory as written (StepReport::fits); nullopt for cases
  /// without a step (collectives, MoE dispatches) and for those that fail before their memory is known.
  std::optional<bool> fits;
  std::string unfit_reason;  ///< when fits is false: StepReport::reason (the stage, GiB needed of GiB, parts)
  /// What the case ran with beyond its file: `--set`, then its settings entry, each "key.path=value";
  /// empty when it ran as written.
  std::vector<std::string> settings;
  std::string settings_source;  ///< the settings entry's `source` ("" without one)
  std::vector<MetricCheck> checks;
  [[nodiscard]] bool passed() const;  ///< no failure and every check within tolerance (fitting or not)
  [[nodiscard]] bool does_not_fit() const { return fits.has_value() && !*fits; }
};

struct ValidationOptions {
  model::Fidelity fidelity = model::Fidelity::analytic;
  int jobs = 0;  ///< worker threads; 0 = hardware concurrency
  /// GPUs that replace, by name, the GPU of every case's node (e.g. a preset written by `trainsim
  /// calibrate`, checked before it is installed).
  std::vector<topo::GpuSpec> gpu_overrides;
  /// Overrides of every scenario case's tree before it is read (`validate --set`); a collective or
  /// dispatch case, which has no scenario, fails with them rather than run without them.
  std::vector<Override> overrides;
  /// Per-case overrides (`validate --settings FILE`), applied after `overrides`.
  CaseSettings settings;
};

/// Expands paths into case files: a file is taken as is; a folder is searched recursively for *.yaml.
/// Sorted, de-duplicated. Throws InputError for a path that does not exist.
[[nodiscard]] std::vector<std::string> find_case_files(const std::vector<std::string>& paths);

/// The cases `trainsim validate PATH... --suite NAME...` runs: the paths, then each suite's folder
/// (validation_suite_folder), or the suite "all" when both are empty, expanded by find_case_files. Throws
/// InputError when no case is found.
[[nodiscard]] std::vector<std::string> validation_case_files(std::vector<std::string> paths,
                                                             const std::vector<std::string>& suites);

/// Evaluates one case file (never throws for bad cases: the failure is recorded in the result); its
/// presets resolved in `presets`, or in a library of its own when null.
[[nodiscard]] CaseResult run_case(const std::string& file, const ValidationOptions& options = {},
                                  PresetLibrary* presets = nullptr);

/// Evaluates every file in parallel, the presets read once for all; results in the order of `files`.
[[nodiscard]] std::vector<CaseResult> run_cases(const std::vector<std::string>& files,
                                                const ValidationOptions& options = {});

/// Error statistics of one metric over one group of cases.
struct GroupSummary {
  std::string by;   ///< "all" | "group" | "attention" | "framework" | "gpu"
  std::string key;  ///< the group's value ("all", "korthikanti", "flash", …)
  std::string metric;
  std::size_t cases = 0;    ///< checks of this metric in the group (failed cases included)
  std::size_t outside = 0;  ///< checks outside tolerance (incl. failures)
  model::ErrorStats stats;
  std::string worst_case;  ///< name of the case with the largest |error|
};

/// Statistics per metric: overall, then per group (folder), then per attention kernel, then per framework;
/// ordered by (by, key, metric) within each section.
[[nodiscard]] std::vector<GroupSummary> summarize_cases(const std::vector<CaseResult>& results);

/// Renderings for `trainsim validate --format table|csv|json`. The table and JSON include the summary. Each
/// marks the cases that do not fit in memory as written: the table with a line under the case and a count
/// after the summary, the CSV with its last column `fits` (true / false; empty without a step), the JSON
/// with `fits` (null without a step) and `unfit_reason` per case.
[[nodiscard]] std::string format_validation_table(const std::vector<CaseResult>& results,
                                                  const std::vector<GroupSummary>& summary,
                                                  bool failures_only = false);
[[nodiscard]] std::string format_validation_csv(const std::vector<CaseResult>& results);
[[nodiscard]] std::string format_validation_json(const std::vector<CaseResult>& results,
                                                 const std::vector<GroupSummary>& summary);

}  // namespace trainsim::scenario
