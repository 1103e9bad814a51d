#pragma once
// The scenario's `training:` block: batch, precision, optimizer, and how long the run is.
#include <cstdint>
#include <optional>

#include "models/spec/optimizer_spec.hpp"

namespace trainsim::model {

struct TrainingSpec {
  std::int64_t global_batch = 0;          ///< sequences per optimizer step
  Precision precision = Precision::bf16;  ///< compute precision of matmuls and activations
  OptimizerSpec optimizer;
  // Run length: exactly one of tokens, steps, or epochs (with dataset_tokens) is set.
  std::optional<double> tokens;
  std::optional<std::int64_t> steps;
  std::optional<double> epochs;
  std::optional<double> dataset_tokens;
};

}  // namespace trainsim::model
