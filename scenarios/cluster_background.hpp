#pragma once
// `cluster.background`: the share of the fabric that other jobs' traffic takes, `cluster.stragglers`: nodes
// whose kernels run slower than their peers', `cluster.variability`: how GPUs of one model differ in speed
// (SPEC.md, "cluster").
#include "scenarios/yaml_tree.hpp"
#include "topologies/cluster_spec.hpp"

namespace trainsim::scenario {

/// Reads `cluster.background: {fraction: F}` into cluster.background_fraction (0 ≤ F ≤ 0.99); errors go to
/// `diagnostics` with the key path.
void read_cluster_background(Diagnostics& diagnostics, const YamlValue& value, topo::ClusterSpec& cluster);

/// Reads `cluster.stragglers: [{node: N, slowdown: S}, ...]` (0 ≤ N < cluster.nodes, 1 ≤ S ≤ 100, each
/// node once) into cluster.stragglers; errors go to `diagnostics` at the entry they blame.
void read_cluster_stragglers(Diagnostics& diagnostics, const YamlValue& value, topo::ClusterSpec& cluster);

/// Reads `cluster.variability: {spread: S, seed: K}` (0 ≤ S ≤ 0.5, the GPU preset's `variability` when
/// absent; seed 0 by default) into cluster.variability and cluster.variability_seed.
void read_cluster_variability(Diagnostics& diagnostics, const YamlValue& value, topo::ClusterSpec& cluster);

/// Reads `cluster.degraded: [{node: N, nic: K, bandwidth: "100 Gb/s"}, ...]` (0 ≤ N < nodes, 0 ≤ K < NICs
/// per node, each NIC once) into cluster.degraded.
void read_cluster_degraded(Diagnostics& diagnostics, const YamlValue& value, topo::ClusterSpec& cluster);

}  // namespace trainsim::scenario
