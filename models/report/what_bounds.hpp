#pragma once
// What bounds a layout, in one line: the answer to "why is this layout this fast, and what would have to
// change?" beside each layout the search and sweep pages list, under the run page's headline, in `compare`
// and at the end of `trainsim explain`. One rule, read from the step's figures wherever they come from.
#include <functional>
#include <string>
#include <string_view>

#include "models/step/step_report.hpp"

namespace trainsim::model {

/// Where one iteration's time goes (seconds, as summary.json's compute … bubble, which add up to the
/// iteration time) and how full the worst GPU's memory is.
struct StepShares {
  double compute = 0, tp = 0, ep = 0, dp = 0, pp = 0, optimizer = 0, bubble = 0;
  double memory = 0, capacity = 0;  ///< bytes
  double mfu = 0;                   ///< fraction

  /// The iteration time: the parts above added up.
  [[nodiscard]] double total() const { return compute + tp + ep + dp + pp + optimizer + bubble; }
  /// Compute's fraction of the iteration time (what kComputeBound is compared with); total() must be > 0.
  [[nodiscard]] double compute_share() const { return compute / total(); }
  /// The worst GPU's memory over its capacity (what kMemoryBound is compared with); 0 when unknown.
  [[nodiscard]] double memory_fill() const { return capacity > 0 ? memory / capacity : 0; }
};

struct Bound {
  std::string
      what;  ///< "compute", "TP communication", "EP communication", "DP communication", "PP communication",
             ///< "optimizer", "bubble", "memory", or "unknown" when there is no step time
  std::string why;  ///< one line with the numbers
};

/// Compute share at or above which a layout is compute-bound: nothing else is worth chasing first.
inline constexpr double kComputeBound = 0.85;
/// Memory fill at or above which memory bounds a layout that is not compute-bound: the cheap fixes for
/// its losses (a smaller pipeline, fewer shards, less recomputation) all need memory it does not have.
inline constexpr double kMemoryBound = 0.90;

/// compute-bound when compute is kComputeBound of the step or more; else memory-bound when memory is
/// kMemoryBound full or more; else bound by the largest of the other parts of the step. The line names
/// the share of each figure it uses and, when memory is kMemoryBound full, says so.
[[nodiscard]] Bound what_bounds(const StepShares& step);

/// The shares as the summary's fields hold them (`compute`, `exposed_tp_comm`, `exposed_ep_comm`,
/// `exposed_dp_comm`, `exposed_pp_comm`, `optimizer`, `bubble`, `memory_per_gpu`, `memory_capacity`,
/// `mfu`), each read by `field` (models/report/summary.hpp's base names, without the unit).
[[nodiscard]] StepShares step_shares(const std::function<double(std::string_view field)>& field);
/// The shares of a simulated step.
[[nodiscard]] StepShares step_shares(const StepReport& step);

}  // namespace trainsim::model
