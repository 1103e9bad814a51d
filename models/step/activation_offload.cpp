#include "models/step/activation_offload.hpp"

#include <algorithm>

#include "models/step/unit_pricing.hpp"
#include "sim/error.hpp"

namespace trainsim::model {

OffloadCost offload_cost(double bytes, double host_bytes_per_s, double forward_s, double backward_s) {
  OffloadCost c;
  if (!(bytes > 0)) return c;
  if (!(host_bytes_per_s > 0)) {
    throw InputError(
        "parallelism.offload: the node has no host link rate (cluster.node.pcie) to copy activations over");
  }
  c.bytes = bytes;
  c.copy_s = bytes / host_bytes_per_s;
  c.forward_exposed_s = std::max(0.0, c.copy_s - forward_s);
  c.backward_exposed_s = std::max(0.0, c.copy_s - backward_s);
  return c;
}

void add_offload_waits(UnitCost& unit, const OffloadCost& cost) {
  const auto wait = [](std::vector<CostPiece>& pieces, const char* name, double s) {
    if (!(s > 0)) return;
    CostPiece piece;
    piece.name = name;
    piece.compute = s;
    pieces.push_back(std::move(piece));
  };
  wait(unit.forward, "activation_offload.d2h_wait", cost.forward_exposed_s);
  wait(unit.backward, "activation_offload.h2d_wait", cost.backward_exposed_s);
  unit.total = pass_sums(unit);
}

}  // namespace trainsim::model
