#pragma once
// One unit (a transformer layer, the embedding, the head, a generic layer) priced on one GPU: its forward
// and backward op lists (models/workload/layer_ops.hpp) cut into the ordered pieces both fidelities run
// (CostPiece): kernels between two collectives timed by kernel_time, each blocking tensor-, context- or
// expert-parallel collective on the communicator the placement gives, each overlappable one paired with the
// kernel it runs under. The framework's habits enter here: tp_comm_overlap's chunked matmuls,
// ep_comm_overlap's all-to-alls beside the paired micro-batch, and the eager host's launch floor.
#include <cstddef>
#include <string>
#include <vector>

#include "models/step/communicators.hpp"
#include "models/step/step_costs.hpp"

namespace trainsim::model {

/// The unit's pieces and sums. With `routed` (the routed full cluster's uncontended fabric), the context-
/// and expert-parallel collectives whose group leaves the node are priced on it and listed as flows; with
/// `shared_links` (FabricPricing::shared_links) they are priced on the links their groups cross
/// (shared_links.hpp).
[[nodiscard]] UnitCost price_unit(std::string name, const LayerOps& ops, const StepInput& in,
                                  const Communicators& comms, const topo::ClusterSpec* routed,
                                  bool shared_links = false);

/// ZeRO-3: slows the unit's kernels beside the collectives of its neighbours (beside_collectives_factor:
/// `forward_beside_s` in the forward, `backward_beside_s` in the backward), sets the host's launch floor
/// again against the slowed kernels, and sums the unit again.
void slow_unit_beside_collectives(UnitCost& unit, double forward_beside_s, double backward_beside_s,
                                  const topo::GpuSpec& gpu, const Framework& framework);

/// A virtual stage's pass costs: its runs of units, in forward order.
[[nodiscard]] PassCost pass_cost(const std::vector<UnitCost>& units, const std::vector<UnitRun>& runs);

/// A unit's pass sums (UnitCost::total) with every kernel `compute_scale` times as long — a straggler's —
/// and its collectives keeping their time: an overlapped collective then adds only what it exceeds the
/// slower kernel by.
[[nodiscard]] PassCost pass_sums(const UnitCost& unit, double compute_scale = 1.0);

}  // namespace trainsim::model
