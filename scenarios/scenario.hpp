#pragma once
// A scenario as plain structs: everything a YAML scenario file says, checked and with presets resolved.
// Nothing downstream of the loader sees YAML.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/spec/campaign_spec.hpp"
#include "models/spec/parallel_plan.hpp"
#include "models/spec/run_spec.hpp"
#include "models/spec/training_spec.hpp"
#include "models/spec/transformer_spec.hpp"
#include "sim/enum_names.hpp"
#include "topologies/cluster_spec.hpp"

namespace trainsim::scenario {

struct YamlValue;  // scenarios/yaml_tree.hpp

enum class SweepMode { grid, zip };

inline constexpr EnumNames<SweepMode, 2> kSweepModeNames{
    {{"grid", SweepMode::grid}, {"zip", SweepMode::zip}}};

/// One swept key: a dotted path into the scenario and the values it takes, each kept as YAML text
/// so that it is parsed and checked exactly like the same value written in place.
struct SweepAxis {
  std::string key_path;             ///< e.g. "cluster.nodes"
  std::vector<std::string> values;  ///< e.g. {"16", "32"} or {"{kind: adamw}"}
};

struct SweepSpec {
  SweepMode mode = SweepMode::grid;
  std::vector<SweepAxis> axes;  ///< in file order
  [[nodiscard]] bool empty() const { return axes.empty(); }
};

/// A validation case's `measured:` block.
struct MeasuredSpec {
  std::string source;                                  ///< citation of the published number
  std::vector<std::pair<std::string, double>> values;  ///< metric name (SPEC field name) -> measured value
  double tolerance = 0.10;                             ///< relative, default for every metric
  std::map<std::string, double> tolerance_per_metric;  ///< overrides by metric name
};

struct Scenario {
  std::string name;                                       ///< `name:` or the file's stem
  std::string source_file;                                ///< path it was loaded from ("" if built in code)
  std::vector<std::pair<std::string, std::string>> tags;  ///< in file order
  model::TransformerSpec model;
  topo::ClusterSpec cluster;
  model::ParallelPlan parallelism;
  /// A `framework:` block was written; otherwise parallelism.framework holds the preset the layout implies
  /// (scenarios/framework_choice.hpp).
  bool framework_named = false;
  /// The `framework:` block when it names no `preset:`: its flags start from the preset the layout implies,
  /// so a layout other than the scenario's reads it again (reread_unnamed_framework); null otherwise.
  std::shared_ptr<const YamlValue> unnamed_framework_block;
  /// parallelism.overlap_grad_reduce was written: it wins over the framework block's and preset's.
  bool overlap_grad_reduce_given = false;
  /// model.attention was written `flash` and is the framework's own fused kernel (choose_framework).
  bool attention_from_framework = false;
  model::TrainingSpec training;
  model::CheckpointSpec checkpoint;
  model::FailureSpec failures;
  model::PricingSpec pricing;
  model::BudgetSpec budget;
  /// The run's length from a target loss instead of training.tokens/steps/epochs.
  std::optional<model::ConvergenceSpec> convergence;
  /// Hyper-parameter trials before the run.
  std::optional<model::TuningSpec> tuning;
  /// The data work and the people on the project, priced over the campaign.
  std::optional<model::DataSpec> data;
  std::vector<model::PersonSpec> people;
  SweepSpec sweep;
  std::optional<MeasuredSpec> measured;
};

}  // namespace trainsim::scenario
