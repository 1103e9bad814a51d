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

/// calibrated_comm_efficiency of node.name, else of node.gpu.name.
[[nodiscard]] std::optional<CommEfficiency> calibrated_comm_efficiency(const NodeSpec& node);

/// NCCL's all-to-all share of NVLink inside a node (CommEfficiency::all_to_all_bandwidth_fraction) for a
/// node or GPU name by its NVLink generation: "h100", "h200", "h800" (NVLink 4) and "b200", "gb200",
/// "b300", "gb300" (NVLink 5); nullopt for others (their all-to-all keeps the ring's fraction).
[[nodiscard]] std::optional<double> nvlink_all_to_all_fraction(std::string_view node_or_gpu_name);

/// The share of NVLink that DeepEP's and HybridEP's own kernels reach inside a node
/// (CommEfficiency::device_all_to_all_bandwidth_fraction), by NVLink generation as above: NVLink 5's from
/// HybridEP's kernel-only benchmark; nullopt for the others (the ring's fraction).
[[nodiscard]] std::optional<double> nvlink_device_all_to_all_fraction(std::string_view node_or_gpu_name);

/// When the preset left node.comm at the defaults: sets it from calibrated_comm_efficiency and, on an
/// NVSwitch or NVLink-mesh node, its all-to-all fractions from nvlink_all_to_all_fraction and
/// nvlink_device_all_to_all_fraction (each by node.name, then node.gpu.name); returns whether any applied.
bool apply_comm_calibration(NodeSpec& node);

}  // namespace trainsim::topo
