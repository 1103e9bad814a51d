#pragma once
// `trainsim calibrate` as a study: a GPU preset's efficiency constants fitted to measured steps. Stage one
// (kernel level) is calibration.hpp's fit_attention_kernel_stage; this file is stage two: the measured
// steps to simulate (on which node, with which network), the hold-out split that keeps some of them out of
// the fit, the fit itself pulled toward stage one's values, each held-out set's error before and after,
// and the rule that a fit making held-out accuracy worse is not kept. The command line prints the result.
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "models/step/step_simulator.hpp"
#include "scenarios/studies/calibration.hpp"
#include "topologies/hardware.hpp"

namespace trainsim::scenario {

/// Which measured steps count, and the cluster each is simulated on.
struct MeasurementSelection {
  std::string metric = "iteration_time";  ///< SPEC output name of the measured value
  topo::NodeSpec node;                    ///< the node the GPU sits in (its gpu the one calibrated)
  std::string nic;        ///< the measured cluster's NIC line rate ("200 Gb/s"); "" keeps the node's
  int nics_per_node = 0;  ///< the measured cluster's NICs per node; 0 keeps the node's
};

/// One measured step, ready to simulate.
struct CalibrationSample {
  model::StepInput input;
  double measured = 0;
  std::string id;
};

/// The measured steps, split into the set fitted and the sets held out of the fit.
struct CalibrationSets {
  std::vector<CalibrationSample> fit;
  /// Each held-out set with its label: without `check` files, every `holdout_every`-th row of the inputs
  /// ("every 5th row of the inputs, not fitted"); then one per check file, labelled by its path.
  std::vector<std::pair<std::string, std::vector<CalibrationSample>>> held_out;
  std::size_t skipped = 0;  ///< rows of the inputs of another metric or GPU family
};

/// The node named `node_name`, or when empty the first node preset built from `gpu` (InputError when none
/// is); its GPU is replaced by `gpu`.
[[nodiscard]] topo::NodeSpec calibration_node(const std::string& node_name, const topo::GpuSpec& gpu);

/// Reads the measurement files (measurement_csv.hpp) and keeps the rows of `select.metric` measured on the
/// node's GPU family (the first word of the GPU's name: "A100-SXM4-80GB" is an "a100"; rows naming no GPU
/// are kept). Without `check` files and with `holdout_every` k > 1, every k-th row is held out when there
/// are at least 2k rows, so the result always says how the fit does on data it did not see.
[[nodiscard]] CalibrationSets calibration_sets(const std::vector<std::string>& inputs,
                                               const std::vector<std::string>& check,
                                               const MeasurementSelection& select, int holdout_every);

/// How the fit does on one held-out set.
struct HeldOutError {
  std::string label;
  model::ErrorStats before, after;
};

struct StepFitOptions {
  std::vector<model::EfficiencyParam> free;  ///< the constants fitted (at least one)
  std::string metric = "iteration_time";
  model::Fidelity fidelity = model::Fidelity::analytic;
  int jobs = 0;  ///< worker threads, 0: one per core
  double prior_strength = model::CalibrationOptions{}.prior_strength;
  bool keep_worse = false;  ///< keep a fit that makes held-out accuracy worse
};

struct StepCalibration {
  model::CalibrationResult fit;        ///< on the fit set
  topo::ComputeEfficiency fitted;      ///< the fit's values, the free ones to 4 significant digits
  topo::GpuSpec calibrated;            ///< the GPU to write: with `fitted`, or as it started when the fit is
                                       ///< not kept
  std::vector<HeldOutError> held_out;  ///< in the order of CalibrationSets::held_out
  bool held_out_worse = false;         ///< some held-out set's MAPE rose
};

/// Stage two: fits `options.free` of `gpu.efficiency` (stage one's values, the prior) to the fit set's
/// steps, then predicts each held-out set at the start and at the fit. The fit is kept unless it made
/// some held-out set's MAPE worse and keep_worse is off. InputError when the fit set has fewer
/// measurements than free parameters. `before_fit` (when given) is called once the sets are checked, before
/// the fit's simulations start.
[[nodiscard]] StepCalibration calibrate_steps(const topo::GpuSpec& gpu, const CalibrationSets& sets,
                                              const StepFitOptions& options,
                                              const std::function<void()>& before_fit = {});

}  // namespace trainsim::scenario
