#pragma once
// The MoE exchange under the framework's other settings: for a Megatron-Core MoE layout with expert
// parallelism, the iteration the closed-form step gives with the flex dispatcher's backends (DeepEP,
// HybridEP) and with the all-to-all overlapped with the paired micro-batch, beside the one as written. A
// scenario that names `framework: megatron-core` alone gets the all-to-all dispatcher without the overlap,
// where runs of the same model on the same system differ by up to 2.4× with these two settings
// (docs/moe-recipes.md): the section says how much rides on them for this layout.
#include <array>
#include <optional>

#include "models/report/explain.hpp"
#include "models/step/step_simulator.hpp"

namespace trainsim::model {

/// SM counts the section prices DeepEP at (Megatron-Core's default 20; DeepEP's benchmarks run 16 to 48).
inline constexpr std::array kDeepepSmCounts{8, 12, 16, 20, 24, 32, 48, 64};

/// The section "the MoE exchange under Megatron-Core's other settings, closed form": one line per setting
/// of framework.moe_dispatcher (alltoall, deepep, hybridep) and framework.ep_comm_overlap that the layout
/// runs, each with its iteration, exposed expert-parallel exchange and, for a flex backend, its SMs, the
/// scenario's own first; then, on a GPU whose SMs' peer-copy rate is measured and an expert group inside one
/// NVLink domain, DeepEP's step at each of kDeepepSmCounts under the GPU's SMs (a line per overlap setting
/// the layout runs, the fastest step its value: more SMs copy faster and leave fewer to the kernels beside
/// the exchange). Empty (nothing to compare) for a dense model, ep 1, a framework other than megatron-core
/// and nemo, or a plan that is not a layout.
[[nodiscard]] std::optional<ExplainSection> explain_moe_settings(const StepInput& input);

}  // namespace trainsim::model
