#include "models/run/checkpoint_io.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/error.hpp"

namespace trainsim::model {

namespace {
constexpr double kDefaultPcieBytesPerS = 25e9;  // PCIe 4.0 x16, one direction, achievable

double transfer_time(double bytes, double aggregate_bytes_per_s, double per_node_bytes,
                     double per_node_bytes_per_s) {
  double t = 0;
  if (aggregate_bytes_per_s > 0) t = std::max(t, bytes / aggregate_bytes_per_s);
  if (per_node_bytes_per_s > 0) t = std::max(t, per_node_bytes / per_node_bytes_per_s);
  return t;
}
}  // namespace

double storage_bytes_per_s_per_node(const topo::ClusterSpec& cluster) {
  if (cluster.storage.per_node_bytes_per_s > 0) return cluster.storage.per_node_bytes_per_s;
  return cluster.nic_bytes_per_s() * cluster.nics_per_node();
}

CheckpointIo checkpoint_io(double bytes, const topo::ClusterSpec& cluster, CheckpointMode mode,
                           const CheckpointWriters& writers) {
  TRAINSIM_CHECK(bytes >= 0, "checkpoint size must not be negative");
  TRAINSIM_CHECK(cluster.nodes > 0 && cluster.total_gpus() > 0, "cluster has no GPUs");
  CheckpointIo io;
  if (bytes == 0) return io;
  const double nodes = static_cast<double>(cluster.nodes);
  const double gpus = static_cast<double>(cluster.total_gpus());
  const double writer_ranks = writers.ranks > 0 ? std::min(static_cast<double>(writers.ranks), gpus) : gpus;
  const double writer_nodes =
      std::min(nodes, std::ceil(writer_ranks / static_cast<double>(cluster.gpus_in_use_per_node())));
  const double per_rank = writers.bytes_per_rank_max > 0 ? writers.bytes_per_rank_max : bytes / writer_ranks;
  const double per_node_link = storage_bytes_per_s_per_node(cluster);
  const double latency = cluster.storage.latency_s;
  io.write_time =
      latency + transfer_time(bytes, cluster.storage.write_bytes_per_s, bytes / writer_nodes, per_node_link);
  io.restore_time =
      latency + transfer_time(bytes, cluster.storage.read_bytes_per_s, bytes / nodes, per_node_link);
  const double pcie =
      cluster.node.pcie_bytes_per_s > 0 ? cluster.node.pcie_bytes_per_s : kDefaultPcieBytesPerS;
  io.copy_out_time = per_rank / pcie;
  io.stall = mode == CheckpointMode::sync ? io.copy_out_time + io.write_time : io.copy_out_time;
  return io;
}

}  // namespace trainsim::model
