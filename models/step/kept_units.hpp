#pragma once
// The transformer's units (unit_pricing.hpp) priced once for every step that prices them alike. A search
// prices tens of thousands of layouts, and those that differ only in what the units do not read — the
// pipeline (pp, schedule, virtual stages, layer split), the data-parallel degree, ZeRO and its sharding
// group, the gradient buckets — have the same units. The calling thread keeps the units of its last few
// steps with everything they were priced from: the model, the cluster, the training, the plan less those
// fields, and the groups their collectives run over as the placement puts them (Communicators::unit_groups:
// tp, cp, ep, the expert groups, the cp ring's pairs; they carry what pp and dp change about where those
// groups run). A step whose inputs equal a kept one's takes copies of its units: equal inputs, so equal
// units, and a step priced alone (`run`) gets what a search gets. Closed-form pricing only (the analytic
// fidelity): the shared-links and routed pricings read the whole placement.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "models/step/communicators.hpp"
#include "models/step/step_costs.hpp"
#include "models/step/step_simulator.hpp"

namespace trainsim::model {

/// A transformer's units: a layer of each kind (a MoE model's dense first layers or not, a sliding window
/// or not: layer_slot), the embedding, the head, the multi-token-prediction module.
enum class UnitSlot : std::uint8_t {
  layer,
  windowed_layer,
  dense_layer,
  dense_windowed_layer,
  embedding,
  head,
  mtp
};
inline constexpr std::size_t kUnitSlots = 7;

/// The slot of a transformer layer: dense (a MoE model's dense first layers) or not, windowed (sliding-window
/// attention) or not. Its value, 0 to 3, also numbers the layer kinds.
[[nodiscard]] constexpr UnitSlot layer_slot(bool dense, bool windowed) {
  if (dense) return windowed ? UnitSlot::dense_windowed_layer : UnitSlot::dense_layer;
  return windowed ? UnitSlot::windowed_layer : UnitSlot::layer;
}

/// The units priced so far for one step's inputs, by slot (empty: not priced yet).
using KeptUnitCosts = std::array<std::optional<UnitCost>, kUnitSlots>;

/// The plan as the units see it: `plan` with the fields they do not read set to fixed values.
[[nodiscard]] ParallelPlan units_plan(ParallelPlan plan);

/// The calling thread's units for a step of `in` placed as `comms`: those kept for equal inputs, else a new
/// empty set kept for them (the oldest of the thread's few dropped). The reference stands until the next
/// call on this thread.
[[nodiscard]] KeptUnitCosts& kept_units(const StepInput& in, const Communicators& comms);

}  // namespace trainsim::model
