#pragma once
// `trainsim explain`'s memory headroom section: what must stay free on each GPU for the job to run
// (budget.memory_headroom, or the default `search` applies, models/step/memory_headroom.hpp), each part with
// its source, and whether the layout leaves it free.
#include <optional>

#include "models/report/explain.hpp"
#include "models/step/memory_headroom.hpp"

namespace trainsim::model {

/// `given_fraction`: the scenario's budget.memory_headroom as a fraction of HBM, none when it gives none
/// (then the default is explained and checked). `memory_per_gpu`: the layout's peak.
[[nodiscard]] ExplainSection explain_headroom(std::optional<double> given_fraction, double memory_per_gpu,
                                              double hbm_bytes);

}  // namespace trainsim::model
