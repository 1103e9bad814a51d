#pragma once
// How many tokens an optimizer needs to reach a target loss, relative to AdamW: its "speedup" s, so that
// it needs D_AdamW / s tokens, where D_AdamW is what the loss law asks for (Hoffmann et al. 2022 fitted
// runs trained with AdamW). Each value comes from a cited source; where no source gives a ratio the value
// is 1.0 and says so ("no source: 1.0"). Two bases are kept per optimizer:
//  - optimistic: the largest speedup a source reports for it, e.g. Moonlight's ~2x for Muon (Liu et al.
//    2025, "Muon is Scalable for LLM Training", arXiv:2502.16982: "Muon achieves ~2x computational
//    efficiency compared to AdamW with compute optimal training");
//  - fair-tuned: the speedup under equal hyper-parameter tuning of every optimizer, e.g. Wen et al. 2025
//    ("Fantastic Pretraining Optimizers and Where to Find Them", arXiv:2509.02046: matrix-based optimizers
//    such as Muon and Soap, "decreasing from 1.4x over AdamW for 0.1B parameter models to merely 1.1x for
//    1.2B parameter models").
// Pure functions; no I/O.
#include <string>
#include <string_view>
#include <vector>

#include "models/spec/campaign_spec.hpp"
#include "models/spec/optimizer_spec.hpp"

namespace trainsim::model {

/// One source's speedup over AdamW for an optimizer at a model size.
struct EfficiencySource {
  std::string_view basis;  ///< "optimistic" or "fair-tuned"
  std::string citation;    ///< the source and what it reports; "no source: 1.0" when none gives a ratio
  double speedup = 1;      ///< tokens to the target = the law's tokens / speedup
  bool sourced = false;    ///< false: no source gives a ratio, 1.0 stands in
};

/// The optimistic and the fair-tuned source for `kind` at `params` parameters, in that order.
[[nodiscard]] std::vector<EfficiencySource> efficiency_sources(OptimizerKind kind, double params);

/// Wen et al. 2025's fair-tuned speedup of matrix-preconditioned optimizers (Muon, Soap) over AdamW at
/// `params` parameters: 1.4 at 0.1B and below, 1.1 at 1.2B and above, linear in log(params) between (the
/// paper gives the two end points; the interpolation is this model's, and it does not extrapolate past
/// 1.2B, where the paper expects the gain to shrink further).
[[nodiscard]] double matrix_preconditioner_fair_speedup(double params);

/// The speedup a run uses and the range across the sources.
struct OptimizerEfficiency {
  double speedup = 1;  ///< the chosen one
  double low = 1;      ///< the smallest across the sources (and the given number)
  double high = 1;     ///< the largest
  std::string source;  ///< where the chosen one comes from
};

/// The speedup `spec` chooses for `kind` at `params`: the optimistic or fair-tuned source, or the given
/// number (then the sources still bound the range, widened to include it).
[[nodiscard]] OptimizerEfficiency optimizer_efficiency(const OptimizerEfficiencySpec& spec,
                                                       OptimizerKind kind, double params);

}  // namespace trainsim::model
