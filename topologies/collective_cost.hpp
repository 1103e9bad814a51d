#pragma once
// Closed-form (α-β) cost of collective communication on a cluster: the fast fidelity used by search,
// sweeps and the step simulator. The flow fidelity (topologies/collective_flows.hpp) lowers the same
// algorithms into engine flows; on an uncontended topology the two agree to the tick.
//
// Model. A group spans `nodes` nodes with `ranks_per_node` members on each. Each tier has a per-rank
// bandwidth B and a per-step latency α:
//   intra-node: B = node.intra_bytes_per_s · comm.intra_bandwidth_fraction, α = node.intra_latency_s
//   inter-node: B = (NIC line rate · nics_per_node / ranks sharing them) · comm.nic_bandwidth_fraction,
//               α = comm.nic_latency_s + switch hops · network.switch_latency_s, at least NCCL's
//               network step per protocol (comm.net_*_step_latency_s, nccl_latency.hpp)
// and an algorithm moving chunks in k steps costs Σ_steps (α + chunk / B) + comm.base_latency_s.
// Example: ring all-reduce of S bytes on n ranks of one uniform tier costs
//   2(n−1)·α + 2(n−1)/n · S/B (+ base latency),
// the formula the tests check. Small messages use NCCL's LL/LL128 protocols (lower bandwidth, lower
// latency); `auto_select` picks, as NCCL's tuner does, the (algorithm, protocol) with the least modelled
// time among those NCCL would enable (see select_algorithm).
#include <cstdint>
#include <optional>
#include <string_view>

#include "topologies/cluster_spec.hpp"

namespace trainsim::topo {

enum class CollectiveOp { all_reduce, reduce_scatter, all_gather, broadcast, reduce, all_to_all, send_recv };
enum class CollectiveAlgo {
  auto_select,
  ring,
  double_binary_tree,
  hierarchical,
  halving_doubling,
  in_switch
};
/// NCCL's wire protocols: LL (8-byte flag+data lines), LL128 (128-byte lines), Simple (bulk, fenced).
enum class CollectiveProtocol { ll, ll128, simple };

/// Spellings: "all-reduce" (also "all_reduce", "allreduce"), "reduce-scatter", "all-gather", "broadcast",
/// "reduce", "all-to-all" (also "alltoall"), "send-recv" (also "sendrecv", "p2p").
[[nodiscard]] std::string_view to_string(CollectiveOp op);
[[nodiscard]] std::optional<CollectiveOp> parse_collective_op(std::string_view text);
/// Spellings: "auto", "ring", "tree" (double binary tree), "hierarchical", "halving-doubling", "nvls"
/// (in-switch; also "in-switch").
[[nodiscard]] std::string_view to_string(CollectiveAlgo algo);
[[nodiscard]] std::optional<CollectiveAlgo> parse_collective_algo(std::string_view text);
[[nodiscard]] std::string_view to_string(CollectiveProtocol protocol);

/// How one communicator group sits on the cluster. Build it with topo::Placement (placement.hpp) or by
/// hand (nccl-tests style: `{.size = 32, .ranks_per_node = 8, .nodes = 4}`).
struct CommGroup {
  std::int64_t size = 1;            ///< ranks in the group
  std::int64_t ranks_per_node = 1;  ///< members on each node the group touches (the most on any one node)
  std::int64_t nodes = 1;           ///< distinct nodes spanned; size = ranks_per_node · nodes when even
  std::int64_t leaves = 1;  ///< distinct leaf (or rail) switch domains spanned; > 1: crosses the spine
  /// Groups (this one included) that have members on the same node and cross nodes at the same time, so
  /// split the node's NICs between them. 1: alone (nccl-tests); placement sets gpus_per_node /
  /// ranks_per_node, i.e. every sibling group of the axis runs at once (SPMD).
  std::int64_t groups_sharing_nics = 1;

  [[nodiscard]] bool crosses_nodes() const { return nodes > 1; }
  [[nodiscard]] bool crosses_leaf() const { return leaves > 1; }
  bool operator==(const CommGroup&) const = default;
};

/// What a protocol does to the Simple protocol's bandwidth and per-step latency (each a multiplier).
struct ProtocolScale {
  double bandwidth = 1.0;  ///< multiplies B
  double latency = 1.0;    ///< multiplies α
};
[[nodiscard]] ProtocolScale protocol_scale(CollectiveProtocol protocol, const CommEfficiency& efficiency);

/// One tier of links as a collective sees it: per-rank bandwidth and per-step latency.
struct CommTier {
  double bytes_per_s = 0;  ///< per rank per direction, B/s, efficiency applied
  double latency_s = 0;    ///< α of one algorithm step on this tier, s
};

/// A node's raw per-GPU intra-node bandwidth, B/s: its intra-node link, else the GPU's NVLink, else PCIe;
/// 0 when it has none. No efficiency applied (intra_node_tier applies it).
[[nodiscard]] double intra_node_bytes_per_s(const NodeSpec& node);
/// The intra-node tier (NVSwitch / NVLink / PCIe) for Simple-protocol bulk transfers.
[[nodiscard]] CommTier intra_node_tier(const ClusterSpec& cluster);
/// The inter-node tier for a group: the bandwidth at which the group crosses a node boundary — the node's
/// NICs (nics · line rate) split evenly between the groups_sharing_nics groups on the node, but no more than
/// the NICs next to the group's ranks_per_node GPUs (max(1, nics / gpus) each: NCCL spreads its channels over
/// them) and their PCIe links when node.pcie_bytes_per_s is set; latency counts the
/// switches crossed: 1 within a leaf, 3 across the spine (leaf–spine–leaf), 5 in a 3-tier fat-tree. The
/// leaf uplinks' share (leaf_uplink_share) is not in it: estimate_collective applies it per algorithm.
[[nodiscard]] CommTier inter_node_tier(const CommGroup& group, const ClusterSpec& cluster);

/// The share of its rate that a flow leaving its leaf switch for the spines keeps when every NIC under the
/// leaf sends at once and `leaving_fraction` of their traffic leaves the leaf: min(1, up·(1 − b) / (down ·
/// leaving_fraction)), ports from leaf_ports(cluster.network), b = cluster.background_fraction. 1 for a group
/// on one leaf, and on fabrics without leaves and spines (single switch, torus, dragonfly: their links are
/// priced in the flow fidelity). The closed form takes the leaving fraction from the algorithm: a ring (or
/// tree) over nodes in order leaves each leaf once per channel, leaves/nodes of its crossings; all-to-all
/// sends 1 − 1/leaves of its cross-node bytes off the leaf; a halving-doubling round between leaves sends all
/// of them; a send-recv pair (a pipeline's hand-over, which leaves each leaf once) keeps its rate.
[[nodiscard]] double leaf_uplink_share(const CommGroup& group, const ClusterSpec& cluster,
                                       double leaving_fraction);

/// `cluster` with nothing the fabric's links share: no oversubscription, no background traffic, no degraded
/// NIC. The closed form's price of a transfer whose flows are routed over the cluster graph, where those
/// links are simulated (models/step/step_network.hpp): it keeps every tier's rate and latency, so that a
/// route's contention is counted once, by the flows.
[[nodiscard]] ClusterSpec uncontended_fabric(const ClusterSpec& cluster);

/// The modelled time of one collective with its choices spelled out.
struct CollectiveEstimate {
  CollectiveAlgo algo = CollectiveAlgo::ring;  ///< never auto_select
  CollectiveProtocol protocol = CollectiveProtocol::simple;
  double time_s = 0;  ///< seconds; 0 for a group of one or 0 bytes
  /// The part of time_s that does not grow with the size (launch cost and every step's α): time_s −
  /// latency_s is the bandwidth term, exactly proportional to bytes for the chosen algorithm and protocol.
  double latency_s = 0;
};

/// Time of `op` on `bytes` (the size nccl-tests prints: all-reduce/broadcast/reduce: each rank's buffer;
/// all-gather: the gathered output; reduce-scatter: each rank's input; all-to-all: each rank's whole send
/// buffer; send-recv: the message) over `group`. `algo` forces an algorithm (the protocol is still chosen
/// by size); auto_select follows NCCL's choice. An algorithm that does not apply (in_switch without
/// node.in_switch_reduction or spanning nodes, hierarchical on one node) falls back to ring. Throws
/// InputError on negative bytes or an inconsistent group.
[[nodiscard]] CollectiveEstimate estimate_collective(CollectiveOp op, double bytes, const CommGroup& group,
                                                     const ClusterSpec& cluster,
                                                     CollectiveAlgo algo = CollectiveAlgo::auto_select);
/// Who moves an all-to-all's bytes inside a node. NCCL runs it as grouped sends and receives to and from
/// every peer at once (torch's all_to_all_single: Megatron-Core's all-to-all dispatcher, Ulysses,
/// torchtitan), measured at CommEfficiency::all_to_all_bandwidth_fraction of the link. DeepEP's and
/// HybridEP's kernels write to their peers' memory over NVLink themselves, with as many SMs as they are
/// given, at CommEfficiency::device_all_to_all_bandwidth_fraction (the rings' intra_bandwidth_fraction
/// where no kernel measurement sets it). Between nodes both share the NICs alike.
enum class AllToAllKernel { nccl, device_initiated };

/// Per rank per direction, B/s: what an all-to-all run by `kernel` reaches inside `node`, the raw intra-node
/// rate times the node's share for it (comm.nccl_all_to_all_fraction() for NCCL's,
/// comm.device_all_to_all_fraction() for the device-initiated kernels).
[[nodiscard]] double all_to_all_intra_bytes_per_s(const NodeSpec& node, AllToAllKernel kernel);

/// estimate_collective(CollectiveOp::all_to_all, ...) with the NVLink share run by `kernel`; the nccl
/// kernel is that estimate exactly.
[[nodiscard]] CollectiveEstimate estimate_all_to_all(double bytes, const CommGroup& group,
                                                     const ClusterSpec& cluster, AllToAllKernel kernel);
/// estimate_collective(...).time_s, seconds.
[[nodiscard]] double collective_time(CollectiveOp op, double bytes, const CommGroup& group,
                                     const ClusterSpec& cluster,
                                     CollectiveAlgo algo = CollectiveAlgo::auto_select);
/// What is wrong with naming `algo` for `op` over `group` (the fallback estimate_collective takes when it
/// does not apply): "" when it runs there, or auto_select. Commands and cases that take a named algorithm
/// refuse it rather than price ring under its name.
[[nodiscard]] std::string forced_algorithm_problem(CollectiveOp op, CollectiveAlgo algo,
                                                   const CommGroup& group, const ClusterSpec& cluster);
/// What auto_select resolves to for this call (NCCL's rule, see the file comment and README).
[[nodiscard]] CollectiveAlgo select_algorithm(CollectiveOp op, double bytes, const CommGroup& group,
                                              const ClusterSpec& cluster);

/// nccl-tests' bus-bandwidth factor (doc/PERFORMANCE.md): all-reduce 2(n−1)/n; reduce-scatter,
/// all-gather and all-to-all (n−1)/n; broadcast, reduce and send-recv 1.
[[nodiscard]] double bus_bandwidth_factor(CollectiveOp op, std::int64_t ranks);
/// algbw = bytes / time, B/s.
[[nodiscard]] double algorithm_bandwidth(double bytes, double time_s);
/// busbw = algbw · bus_bandwidth_factor, B/s.
[[nodiscard]] double bus_bandwidth(CollectiveOp op, double bytes, std::int64_t ranks, double time_s);

}  // namespace trainsim::topo
