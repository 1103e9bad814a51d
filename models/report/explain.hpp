#pragma once
// `trainsim explain` as data: the numbers of a layout, each with the formula and the values behind it, so
// the command only prints and tests can check lines without parsing text.
#include <string>
#include <vector>

#include "models/spec/parallel_plan.hpp"
#include "models/spec/training_spec.hpp"
#include "models/spec/transformer_spec.hpp"
#include "topologies/hardware.hpp"

namespace trainsim::model {

/// One explained quantity: "weights = 2 B · 2.76e9 params = 5.5 GB".
struct ExplainLine {
  std::string label;    ///< what it is, e.g. "weights"
  std::string formula;  ///< the formula with the numbers put in, e.g. "2 B x 2.76e9 params / 1 (zero 0)"
  double value = 0;     ///< the result in SI units (bytes, FLOPs, parameters)
  std::string unit;     ///< "B", "FLOP", "params", "" for a count
};

struct ExplainSection {
  std::string title;  ///< e.g. "memory per GPU, stage 0 (worst)"
  std::vector<ExplainLine> lines;
  std::vector<std::string> notes;  ///< free sentences: assumptions, why it does not fit
};

struct Explanation {
  std::vector<ExplainSection> sections;
  bool fits = true;
  std::string reason;         ///< estimate_memory's reason when it does not fit
  double memory_per_gpu = 0;  ///< estimate_memory's peak per GPU (the worst stage)
};

/// Builds the explanation: parameters, FLOPs per token, the attention kernel and what it saves, the
/// optimizer's costs, memory per GPU for every stage (the worst one in full), the checkpoint size.
[[nodiscard]] Explanation explain(const TransformerSpec& model, const ParallelPlan& plan,
                                  const TrainingSpec& training, const topo::GpuSpec& gpu,
                                  double memory_headroom = 0);

/// Plain-text rendering, one line per ExplainLine with human units, sections separated by a blank line.
[[nodiscard]] std::string to_text(const Explanation& explanation);

}  // namespace trainsim::model
