#pragma once
// MoE token dispatch that deduplicates across nodes: DeepEP's normal (training) kernels and Megatron-Core's
// HybridEP backend (its flex dispatcher, --moe-token-dispatcher-type flex). A token bound for several
// experts on one remote node crosses the network once, to the GPU of the same local index there, and is
// fanned out to its experts over NVLink (DeepEP README, "normal kernels": NVLink-to-RDMA forwarding;
// DeepSeek-V3 technical report, arXiv:2412.19437, Sec. 3.2.2). The RDMA and NVLink legs run pipelined in
// chunks, so the slower sets the time. A node here is an NVLink domain (gb200-nvl72's node is its rack).
#include <cstdint>

#include "topologies/cluster_spec.hpp"
#include "topologies/collective_cost.hpp"

namespace trainsim::topo {

/// The expected number of distinct nodes other than the sender's among a token's `copies` destinations,
/// each an expert spread evenly over `nodes` nodes and picked independently (balanced routing):
/// (nodes − 1)·(1 − (1 − 1/nodes)^copies). 0 on one node.
[[nodiscard]] double expected_remote_nodes(double copies, std::int64_t nodes);

/// Bytes one rank sends over the network in a deduplicating dispatch: `bytes` (what the plain all-to-all
/// sends per rank, every copy of every token) / `copies` × expected_remote_nodes(copies, group.nodes).
[[nodiscard]] double deduplicated_network_bytes(double bytes, double copies, const CommGroup& group);

/// The dispatch (or combine: the same bytes back) over `group`: the network leg, each rank sending
/// deduplicated_network_bytes to one GPU on each other node (every GPU of the node at once, sharing its
/// NICs), and the NVLink leg, every copy crossing the node's switch once; the slower of the two, with the
/// network leg's latency. On one node, or with one copy a token, the plain all-to-all.
[[nodiscard]] CollectiveEstimate deduplicated_all_to_all(double bytes, double copies, const CommGroup& group,
                                                         const ClusterSpec& cluster);

}  // namespace trainsim::topo
