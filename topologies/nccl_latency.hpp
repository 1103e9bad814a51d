#pragma once
// NCCL's latency terms (src/graph/tuning.cc, ncclTopoTuneModel, NVIDIA/nccl 5067397c) that the collective
// models take over: how a ring's steps split between the links inside and between nodes, the per-step
// network overhead of a ring that crosses nodes, the tree's network latency against the ring's, and NCCL's
// network step latency per protocol as the least a step between nodes costs (CommEfficiency's
// net_*_step_latency_s). The per-step latencies inside a node are the cluster's (node.intra_latency_s), so
// that the nccl-tests fits keep their meaning; between nodes a fabric slower than NCCL's constant (NIC and
// switch hops, collective_cost.hpp) pays its own.
#include <cstdint>

#include "topologies/collective_cost.hpp"

namespace trainsim::topo {

/// The depth of NCCL's binary tree over `nodes` nodes (log2i: the floor of log2, 0 for one node).
[[nodiscard]] std::int64_t tree_levels(std::int64_t nodes);

/// NCCL's per-step network overhead of a ring that crosses nodes (getNetOverhead: 1 us on x86 hosts, 3x on
/// Simple): even its steps inside a node cost no less, because every step of an inter-node ring launches a
/// network operation through the proxy.
[[nodiscard]] double ring_net_overhead_s(CollectiveProtocol protocol);

/// NCCL's network latency of a tree step over a ring's, per protocol (hwLatencies[NET]: kNcclTreeNetLatencyUs
/// over kNcclRingNetLatencyUs, hardware.hpp). NCCL also prices a ring whose every step crosses nodes (one
/// rank per node) at the tree's network latency: nothing inside a node hides it.
[[nodiscard]] double tree_network_latency_factor(CollectiveProtocol protocol);

/// The latency of one ring step between nodes on `protocol`: NCCL's network step (CommEfficiency's
/// net_*_step_latency_s, hwLatencies[NET][RING]) or the fabric's own `fabric_step_s` (its NIC and switch
/// hops, the protocol's latency fraction applied), whichever is larger.
[[nodiscard]] double network_step_s(double fabric_step_s, CollectiveProtocol protocol,
                                    const CommEfficiency& efficiency);

/// NCCL's latency of `steps` pipelined steps of a ring over `ranks` ranks on `nodes` nodes: steps / (ranks −
/// 1) · (nodes − 1) of them cross a node boundary and pay network_step_s(`inter_step_s`) (times
/// tree_network_latency_factor when ranks == nodes), the others `intra_step_s`, but no less than
/// ring_net_overhead_s when the ring crosses nodes. Step latencies are the protocol's (ProtocolScale::latency
/// applied). The one rule for both fidelities' rings (collective_cost.cpp, collective_flows.cpp), so that
/// they agree.
[[nodiscard]] double ring_latency_s(double steps, std::int64_t ranks, std::int64_t nodes, double intra_step_s,
                                    double inter_step_s, CollectiveProtocol protocol,
                                    const CommEfficiency& efficiency);

}  // namespace trainsim::topo
