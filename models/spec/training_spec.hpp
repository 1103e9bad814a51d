#pragma once
// The scenario's `training:` block: batch, precision, optimizer, and how long the run is.
#include <cstdint>
#include <optional>

#include "models/spec/optimizer_spec.hpp"
#include "sim/enum_names.hpp"

namespace trainsim::model {

/// The learning-rate schedule (models/run/lr_schedule.hpp): cosine's length is fixed when the run starts;
/// warmup-stable-decay (WSD) can continue from any checkpoint of its stable phase and decay again.
enum class LrSchedule : std::uint8_t { cosine, wsd };

inline constexpr EnumNames<LrSchedule, 2> kLrScheduleNames{
    {{"cosine", LrSchedule::cosine}, {"wsd", LrSchedule::wsd}}};

struct TrainingSpec {
  std::int64_t global_batch = 0;          ///< sequences per optimizer step
  Precision precision = Precision::bf16;  ///< compute precision of matmuls and activations
  OptimizerSpec optimizer;
  // Run length: exactly one of tokens, steps, or epochs (with dataset_tokens) is set.
  std::optional<double> tokens;
  std::optional<std::int64_t> steps;
  std::optional<double> epochs;
  std::optional<double> dataset_tokens;
  /// Expected rollbacks to the last checkpoint per 1e12 tokens trained (loss spikes, divergences), each
  /// costing the work since that checkpoint plus a restart and restore (models/run/failures.hpp). 0: none.
  double instability = 0;
  LrSchedule schedule = LrSchedule::cosine;
  double wsd_decay_fraction = 0.2;  ///< wsd: the share of a run's tokens spent in its final decay
  bool operator==(const TrainingSpec&) const = default;
};

}  // namespace trainsim::model
