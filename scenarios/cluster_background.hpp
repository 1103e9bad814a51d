#pragma once
// `cluster.background`: the share of the fabric that other jobs' traffic takes (SPEC.md, "cluster").
#include "scenarios/yaml_tree.hpp"
#include "topologies/cluster_spec.hpp"

namespace trainsim::scenario {

/// Reads `cluster.background: {fraction: F}` into cluster.background_fraction (0 ≤ F ≤ 0.99); errors go to
/// `diagnostics` with the key path.
void read_cluster_background(Diagnostics& diagnostics, const YamlValue& value, topo::ClusterSpec& cluster);

}  // namespace trainsim::scenario
