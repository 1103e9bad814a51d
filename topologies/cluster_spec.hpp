#pragma once
// The scenario's `cluster:` block as plain data: which nodes, how many, how they are networked, and the
// storage they checkpoint to. Units are SI doubles (bytes, seconds, B/s).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/enum_names.hpp"
#include "topologies/hardware.hpp"

namespace trainsim::topo {

enum class FabricTopology { single_switch, fat_tree, fat_tree_3, torus_2d, torus_3d, dragonfly };

inline constexpr EnumNames<FabricTopology, 6> kFabricTopologyNames{
    {{"single-switch", FabricTopology::single_switch},
     {"fat-tree", FabricTopology::fat_tree},
     {"fat-tree-3", FabricTopology::fat_tree_3},
     {"torus-2d", FabricTopology::torus_2d},
     {"torus-3d", FabricTopology::torus_3d},
     {"dragonfly", FabricTopology::dragonfly}}};

constexpr std::string_view to_string(FabricTopology t) {
  return name_in(kFabricTopologyNames, t);
}

struct NetworkSpec {
  FabricTopology topology = FabricTopology::fat_tree;
  double nic_bytes_per_s = 0;     ///< 0: the node preset's NIC speed
  int nics_per_node = 0;          ///< 0: the node preset's NIC count
  double oversubscription = 1.0;  ///< leaf down/up bandwidth ratio (2 means 2:1)
  bool rail_optimized = true;     ///< GPU i of every node on rail switch i
  double switch_latency_s = 600e-9;
  int switch_radix = 64;        ///< ports per switch (fat-tree sizing)
  std::vector<int> torus_dims;  ///< for torus_2d / torus_3d; empty = as square as possible
  bool operator==(const NetworkSpec&) const = default;
};

/// A fat-tree leaf's ports at the network's oversubscription o: ⌊radix·o/(o+1)⌋ down to NICs and the rest
/// up to spines, each at least 1 (ClusterGraph builds them so, placement counts nodes per leaf from them).
struct LeafPorts {
  std::int64_t down = 1;
  std::int64_t up = 1;
};
[[nodiscard]] inline LeafPorts leaf_ports(const NetworkSpec& network) {
  const double o = std::max(network.oversubscription, 1.0);
  const auto radix = static_cast<std::int64_t>(std::max(network.switch_radix, 2));
  LeafPorts p;
  p.down = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(std::floor(static_cast<double>(radix) * o / (o + 1))));
  p.up = std::max<std::int64_t>(1, radix - p.down);
  return p;
}

struct StorageSpec {
  double write_bytes_per_s = 0;     ///< aggregate write bandwidth of the file system / object store
  double read_bytes_per_s = 0;      ///< aggregate read bandwidth
  double per_node_bytes_per_s = 0;  ///< each node's link to storage (0: its NICs)
  double latency_s = 1e-3;
  bool operator==(const StorageSpec&) const = default;
};

/// A node whose kernels run `slowdown` times as long as its peers' (thermal throttling, a bad part): the
/// replica and pipeline stage its GPUs hold hold back the synchronous step.
struct Straggler {
  std::int64_t node = 0;  ///< 0-based node index, rank r on node r / gpus per node
  double slowdown = 1;    ///< >= 1
  bool operator==(const Straggler&) const = default;
};

/// A NIC running below its rated bandwidth (a bad cable, a link trained down): the rings through it run at
/// its pace.
struct DegradedNic {
  std::int64_t node = 0;   ///< 0-based node index
  int nic = 0;             ///< 0-based NIC index on the node (ClusterSpec::nic_of_gpu says whose)
  double bytes_per_s = 0;  ///< what it carries, one direction, > 0
  bool operator==(const DegradedNic&) const = default;
};

struct ClusterSpec {
  NodeSpec node;
  std::int64_t nodes = 1;
  int gpus_per_node = 0;  ///< GPUs in use per node; 0: all of the node preset's
  NetworkSpec network;
  StorageSpec storage;
  /// Share of every switch-to-switch link (leaf–spine, spine–core, torus and dragonfly router links) that
  /// other jobs' traffic takes, 0 ≤ fraction < 1 (`cluster.background.fraction`); NIC links stay whole.
  double background_fraction = 0;
  std::vector<Straggler> stragglers;  ///< `cluster.stragglers`, one entry per node at the most
  std::vector<DegradedNic> degraded;  ///< `cluster.degraded`, one entry per NIC at the most
  /// `cluster.variability.spread`: σ of a GPU's kernel time over the mean GPU's
  /// (models/step/gpu_variability.hpp); negative: the GPU preset's `variability`.
  double variability = -1;
  std::uint64_t variability_seed = 0;  ///< `cluster.variability.seed`: the full cluster's draws

  [[nodiscard]] int gpus_in_use_per_node() const {
    return gpus_per_node > 0 ? gpus_per_node : node.gpus_per_node;
  }
  [[nodiscard]] std::int64_t total_gpus() const { return nodes * gpus_in_use_per_node(); }
  /// What is wrong with gpus_per_node: more GPUs than the node preset has. Empty when nothing is.
  [[nodiscard]] std::string gpus_per_node_problem() const {
    if (node.gpus_per_node <= 0 || gpus_per_node <= node.gpus_per_node) return {};
    return "the node " + node.name + " has " + std::to_string(node.gpus_per_node) + " GPUs; found " +
           std::to_string(gpus_per_node);
  }
  [[nodiscard]] double nic_bytes_per_s() const {
    return network.nic_bytes_per_s > 0 ? network.nic_bytes_per_s : node.nic_bytes_per_s;
  }
  [[nodiscard]] int nics_per_node() const {
    return network.nics_per_node > 0 ? network.nics_per_node : node.nics_per_node;
  }
  /// The NIC a node's GPU `local` (0-based on its node) sends through: local · nics / GPUs per node, the
  /// rail of its block of GPUs.
  [[nodiscard]] std::int64_t nic_of_gpu(std::int64_t local) const {
    return local * nics_per_node() / gpus_in_use_per_node();
  }
  bool operator==(const ClusterSpec&) const = default;
};

}  // namespace trainsim::topo
