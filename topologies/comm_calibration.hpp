#pragma once
// Collective efficiencies fitted to published nccl-tests measurements, per GPU/node type (never per case).
// Node presets cannot carry a `comm:` block yet (the preset reader does not know the key), so this table is
// the place the fitted CommEfficiency values live until it does; `trainsim collective` and `trainsim
// topology` apply it to nodes whose preset left `comm` at its defaults. Fits and their errors are in
// topologies/README.md; every entry cites the rows of published-measurements.csv it was fitted to.
#include <optional>
#include <string_view>

#include "topologies/hardware.hpp"

namespace trainsim::topo {

/// The fitted efficiencies for a node or GPU name containing "h200", "b200", "h100" or "a100"
/// (case-insensitive), or nullopt when no fit exists for that type.
[[nodiscard]] std::optional<CommEfficiency> calibrated_comm_efficiency(std::string_view node_or_gpu_name);

/// Sets node.comm from calibrated_comm_efficiency(node.name, then node.gpu.name) when the preset left it
/// at the defaults; returns whether it did.
bool apply_comm_calibration(NodeSpec& node);

}  // namespace trainsim::topo
