#pragma once
// What a fabric's shared links do to collectives that run at the same moment, without simulating them:
// the collectives are lowered as the flow fidelity lowers them (collective_flows.hpp's lower_collective),
// their transfers routed over the cluster graph, and the bytes each link carries summed. Under max-min
// fairness the first link to saturate is the one with the most bytes per unit of rate, and every flow
// through it runs at that link's rate divided among them; when the flows run at once with equal sizes (a
// ring's edges, an all-to-all's pairs, a stage's pipeline sends) the busiest link's seconds are exactly
// the slowest flow's, and otherwise (tree slices, halving-doubling rounds) a lower bound of them.
//
// The collapsed step (models/step/step_costs.hpp, FabricPricing::closed_form) prices a communicator on
// the links it really crosses with this: its closed form on the non-blocking fabric, the bandwidth term
// times fabric_slowdown of every sibling group running the same collective at once. The full-cluster
// step routes the same lowering's flows over the same graph, so both modes see the same bottleneck.
#include <span>

#include "topologies/cluster_graph.hpp"
#include "topologies/cluster_spec.hpp"
#include "topologies/collective_flows.hpp"

namespace trainsim::topo {

/// The seconds the busiest link of `graph` needs to carry every transfer of `calls` (each lowered by
/// lower_collective with its algorithm and protocol): the bytes routed over each link divided by its rate,
/// the largest. 0 when nothing crosses a link. Throws InputError as lower_collective does.
[[nodiscard]] double busiest_link_s(const ClusterGraph& graph, const ClusterSpec& cluster,
                                    std::span<const CollectiveCall> calls);

/// `cluster` on a non-blocking fabric: every NIC on one switch (single_switch), nothing shared beyond the
/// NICs (uncontended_fabric: no oversubscription, no background traffic, no degraded NIC). What its
/// collectives are limited by is the GPUs' NVLink, PCIe and NIC ports, as the closed form prices them.
[[nodiscard]] ClusterSpec non_blocking_fabric(const ClusterSpec& cluster);

/// The two graphs fabric_slowdown compares, built once for many calls: the cluster's own fabric (degraded
/// NICs left out: their slowdown is priced on its own, models/step/asymmetry.hpp) and its non-blocking one.
struct FabricGraphs {
  ClusterSpec real_cluster, ideal_cluster;
  ClusterGraph real, ideal;
  /// Builds both; InputError as ClusterGraph::build.
  explicit FabricGraphs(const ClusterSpec& cluster);
};

/// How many times as long `calls`, run together, take to move their bytes over the cluster's fabric as
/// over its non-blocking one: busiest_link_s on each, their ratio, at least 1 (1 when no byte leaves a
/// node). Tiers, oversubscription, rails, torus and dragonfly links, background traffic and ECMP's
/// collisions all enter through the routes.
[[nodiscard]] double fabric_slowdown(const FabricGraphs& graphs, std::span<const CollectiveCall> calls);

}  // namespace trainsim::topo
