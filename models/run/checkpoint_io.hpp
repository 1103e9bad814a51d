#pragma once
// Checkpoint I/O on the modelled storage: how long one checkpoint takes to write and to restore, and how
// long training stops for it. Every node writes its share at once; the write is limited by each node's
// link to storage and by the storage system's aggregate bandwidth (max-min fair sharing of symmetric
// writers reduces to the slower of the two), plus the storage latency.
#include <cstdint>

#include "models/spec/run_spec.hpp"
#include "topologies/cluster_spec.hpp"

namespace trainsim::model {

struct CheckpointIo {
  double write_time = 0;     ///< s from the start of a write until it is durable on storage
  double stall = 0;          ///< s training stops per checkpoint (sync: copy-out + write; async: copy-out)
  double restore_time = 0;   ///< s to read a checkpoint back onto every GPU after a restart
  double copy_out_time = 0;  ///< s to copy each GPU's shard to host memory (the async stall)
};

/// Who writes a checkpoint (models/run/checkpoint_size.hpp): without ZeRO sharding only one data-parallel
/// replica writes, so fewer ranks and nodes carry all the bytes. Zero fields mean "every GPU, evenly".
struct CheckpointWriters {
  std::int64_t ranks = 0;         ///< ranks that write a part
  double bytes_per_rank_max = 0;  ///< bytes of the busiest writer
};

/// Per-node storage bandwidth in use: storage.per_node, or else all of the node's NICs, B/s.
double storage_bytes_per_s_per_node(const topo::ClusterSpec& cluster);

/// Checkpoint of `bytes` in total, written by `writers` (distributed checkpoint format, as Megatron-LM and
/// PyTorch DCP write it; writer ranks are packed onto consecutive nodes, as a replica's ranks are). The
/// copy-out stall is the busiest writer's bytes over PCIe (the node preset's, or 25 GB/s per GPU when it
/// has none). A storage bandwidth of 0 means "not limiting". Restores read the bytes onto every node.
CheckpointIo checkpoint_io(double bytes, const topo::ClusterSpec& cluster, CheckpointMode mode,
                           const CheckpointWriters& writers = {});

}  // namespace trainsim::model
