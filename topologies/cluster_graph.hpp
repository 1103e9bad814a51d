#pragma once
// The cluster as a graph of devices joined by directed links, built from a ClusterSpec, with deterministic
// shortest-path routes. Used by the flow fidelity (collective_flows.hpp) and `trainsim topology`.
//
// What is built:
//  - inside a node: GPUs joined by an NVSwitch (one switch device, all-to-all at NVLink rate), an NVLink
//    mesh (a direct link between every pair, the GPU's NVLink rate split over its peers) or a PCIe switch;
//    NICs (nics_per_node), GPU i attached to NIC i·nics/gpus (one per GPU when nics == gpus: rail-optimized).
//  - fabrics: single_switch (every NIC on one switch); fat_tree (2-tier: leaves with radix·o/(o+1) ports
//    down and the rest up, one link to each of `up` spines; rail_optimized puts NIC r of every node on rail
//    r's leaves); fat_tree_3 (leaves and aggregation switches in pods of radix/2 leaves, aggregation switch a
//    of every pod joined to core group a); torus_2d/torus_3d (a router per node, wrap-around neighbours);
//    dragonfly (leaf routers in all-to-all groups, one global link per pair of groups).
//  - storage: one storage device reached through the fabric (from every spine, core or top router) with the
//    StorageSpec's aggregate write bandwidth split across those links.
// Link rates: NVLink links run at node.intra_bytes_per_s · comm.intra_bandwidth_fraction, NIC and fabric
// links at the NIC rate · comm.nic_bandwidth_fraction (leaf uplinks too: oversubscription comes from having
// fewer of them), so a route's bottleneck is what the closed form calls B; a degraded NIC
// (cluster.degraded) links to its switch at its own rate · comm.nic_bandwidth_fraction. Latencies: half the
// NVLink step latency on each GPU–NVSwitch link, half of comm.nic_latency_s on each GPU–NIC link,
// switch_latency on every link leaving a fabric switch — so a route's latency is the closed form's α.
// Switch-to-switch links (leaf–spine, spine–core, router–router) carry what other jobs leave: their rate
// times 1 − cluster.background_fraction (bisection stays the fabric's own).
//
// Routing: minimum-hop paths. Fat-trees route up to the spine (and core) that the destination's port on its
// leaf selects, port mod the uplinks (D-mod-K, as InfiniBand's fat-tree routing engines and ECMP spread
// over several queue pairs do): each spine's link down to a leaf carries the traffic of its own share of
// the leaf's ports, and a shift between two leaves (a ring's or a pipeline's hand-over) loads every uplink
// alike, as the closed form's leaf share assumes. Other ties
// (ECMP) are broken by a hash of the two endpoints, choosing among the
// candidate next hops in increasing device id: the same pair always takes the same path, run after run.
// Fat-trees (the large case) are routed structurally in O(hops); other fabrics by breadth-first search
// (Boost.Graph) from the destination, memoised per destination. Routes are memoised per (from, to).
// Scale: a 100,000-GPU fat-tree is ~0.25 M devices and ~1 M links (tens of MB).
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "topologies/cluster_spec.hpp"

namespace trainsim::topo {

enum class DeviceKind : std::uint8_t { gpu, nvswitch, pcie_switch, nic, leaf, spine, core, router, storage };
[[nodiscard]] std::string_view to_string(DeviceKind kind);

using DeviceId = std::uint32_t;
using LinkIndex = std::uint32_t;

struct Device {
  DeviceKind kind = DeviceKind::gpu;
  std::int64_t node =
      -1;  ///< owning node for GPUs, NVSwitches, PCIe switches, NICs and torus routers; else -1
  std::int64_t index = 0;  ///< GPU/NIC index within its node; switch number within its tier
};

struct Link {
  DeviceId from = 0;
  DeviceId to = 0;
  double bytes_per_s = 0;  ///< B/s, one direction, efficiency applied
  double latency_s = 0;    ///< s
};

class ClusterGraph {
 public:
  /// Builds the graph. Throws InputError for clusters it cannot build (no NICs for several nodes, a
  /// torus_dims product that is not the node count, a radix below 2, more than 2^25 devices and links).
  /// O(devices + links).
  static ClusterGraph build(const ClusterSpec& cluster);

  ClusterGraph(ClusterGraph&&) noexcept;
  ClusterGraph& operator=(ClusterGraph&&) noexcept;
  ~ClusterGraph();

  [[nodiscard]] std::size_t device_count() const;
  [[nodiscard]] std::size_t link_count() const;
  [[nodiscard]] std::int64_t count(DeviceKind kind) const;
  [[nodiscard]] const Device& device(DeviceId id) const;
  [[nodiscard]] const Link& link(LinkIndex index) const;
  /// GPU number g of the cluster (node g / gpus_per_node, local g % gpus_per_node).
  [[nodiscard]] DeviceId gpu(std::int64_t g) const;
  [[nodiscard]] std::int64_t gpu_count() const;
  /// The storage target; throws InputError when the cluster has no storage bandwidth.
  [[nodiscard]] DeviceId storage() const;

  /// The links from `from` to `to` in order (empty when from == to). Deterministic ECMP, memoised; the span
  /// stays valid as long as the graph. Not thread-safe (the memo is filled lazily).
  [[nodiscard]] std::span<const LinkIndex> route(DeviceId from, DeviceId to) const;
  /// Sum of link latencies and the smallest link bandwidth along route(from, to).
  [[nodiscard]] double route_latency_s(DeviceId from, DeviceId to) const;
  [[nodiscard]] double route_bottleneck_bytes_per_s(DeviceId from, DeviceId to) const;

  /// Bandwidth across the worst cut splitting the GPUs in halves, B/s one direction (the fabric's standard
  /// formula: fat-tree min(NIC, uplink) capacity / 2, torus 2·N/k_max links, dragonfly (g/2)² globals).
  [[nodiscard]] double bisection_bytes_per_s() const;
  /// Most links on a route between two GPUs (in different nodes when there are several nodes).
  [[nodiscard]] int diameter() const;
  /// Graphviz DOT of the whole graph (one edge per link pair); meant for small clusters.
  void write_dot(std::ostream& out) const;

 private:
  struct Impl;
  explicit ClusterGraph(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainsim::topo
