#pragma once
// Flow fidelity of collectives: the same algorithms as the closed form (collective_cost.hpp), lowered
// into transfer tasks of a sim::Dag that run as max-min fair flows over the cluster graph's routes, so
// collectives that share links slow each other down.
//
// How each algorithm is lowered, as NCCL runs it:
//  - ring (all-reduce, reduce-scatter, all-gather): across nodes with several ranks per node one ring per
//    channel (channels = min(NICs, ranks per node)); channel c enters a node at GPU c and leaves it at GPU
//    c−1, and every other node runs its ring backwards, so each crossing joins two GPUs of the same index:
//    the traffic stays on its rail (with an odd node count the ring's closing hop changes rails: as NCCL's
//    PXN does, it goes over NVLink to the local GPU on the receiver's rail and out of that GPU's NIC).
//    NCCL pipelines a ring's steps in slices, keeping every ring link busy
//    for the whole collective, so each ring edge is one flow carrying all its steps' chunks, after the
//    ring's per-step latencies (steps − 1 times the slowest edge's route latency; the flow adds its own).
//  - double binary tree (all-reduce): per channel two trees of nodes (NCCL's btree and its mirror, or its
//    shift for an odd node count), each reducing half the buffer up and broadcasting it down; inside a node
//    a chain from the channel's head GPU. Every tree edge is a body flow (all running at once: the pipeline
//    keeps every edge busy) and a last slice (at most 128 KiB, at least 64 slices per edge) that waits for
//    the slices coming into its sender, so the route latencies of the deepest chain add up as in the
//    closed form's 2·depth·α.
//  - hierarchical: intra-node reduce-scatter rings, one inter-node ring per local rank on 1/k of the data,
//    intra-node all-gather rings, each phase after the previous one.
//  - halving-doubling: log2(p) rounds of pairwise exchanges (p the largest power of two ≤ n; the others fold
//    their buffer onto a partner first and get the result back last), a rank's next round waiting for its
//    previous send and receive.
//  - all-to-all (every pair at once) and send-recv (one flow).
//  - NVLS (in-switch all-reduce on one node): every GPU pushes its buffer into the NVSwitch and receives
//    the multicast sum, so each GPU–switch link carries the buffer once each way; one flow per GPU through
//    the switch to the next GPU, sized so the links' rate is the in-switch bandwidth, after the switch's
//    latency.
// Refused (InputError, in words): broadcast and reduce.
// Protocols: the closed form's LL/LL128 run at a fraction of Simple's bandwidth and per-step latency; a
// lowering for a protocol carries bytes / bandwidth fraction (LL lines are half flags) over links whose
// latencies FabricFlows scales by the latency fraction.
// With the link rates and latencies ClusterGraph builds (a route's bottleneck and latency are the closed
// form's B and α), an uncontended ring or hierarchical collective takes the closed-form time to the tick
// (when each step is a whole number of picoseconds); trees, halving-doubling and multi-channel rings are
// within a few percent (tested for 1–16 DGX H100 nodes).
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "sim/dag.hpp"
#include "sim/flow_network.hpp"
#include "sim/time.hpp"
#include "topologies/cluster_graph.hpp"
#include "topologies/collective_cost.hpp"

namespace trainsim::topo {

/// Where a lowered collective's flows run: the flow-network links of the route between two cluster GPUs,
/// and that route's latency. FabricFlows registers a whole graph with its links' latencies (the flow
/// fidelity of `trainsim collective`); the full-cluster step (models/step/step_network.hpp) registers the
/// links its transfers use, without latency, because a step's transfer pays its closed-form latency as a
/// busy task before its flows.
class GpuPaths {
 public:
  GpuPaths() = default;
  GpuPaths(const GpuPaths&) = default;
  GpuPaths(GpuPaths&&) = default;
  GpuPaths& operator=(const GpuPaths&) = default;
  GpuPaths& operator=(GpuPaths&&) = default;
  virtual ~GpuPaths() = default;
  [[nodiscard]] virtual const ClusterGraph& graph() const = 0;
  /// Route latency between two cluster GPUs (numbers as in ClusterGraph::gpu) in this network, seconds.
  [[nodiscard]] virtual double gpu_latency_s(std::int64_t from_gpu, std::int64_t to_gpu) const = 0;
  /// The network links of the route between two cluster GPUs, valid until the next call.
  [[nodiscard]] virtual std::span<const sim::LinkId> gpu_path(std::int64_t from_gpu, std::int64_t to_gpu) = 0;
};

/// A cluster graph's links registered, in order, in a flow network: graph link i is network link base + i.
class FabricFlows final : public GpuPaths {
 public:
  /// Adds every link of `graph` to `network`, its latency times `latency_scale` (a protocol's per-step
  /// latency fraction). Both must outlive this object.
  FabricFlows(const ClusterGraph& graph, sim::FlowNetwork& network, double latency_scale = 1.0);

  [[nodiscard]] const ClusterGraph& graph() const override { return *graph_; }
  [[nodiscard]] sim::FlowNetwork& network() { return *network_; }
  [[nodiscard]] double latency_scale() const { return latency_scale_; }
  [[nodiscard]] double gpu_latency_s(std::int64_t from_gpu, std::int64_t to_gpu) const override;
  [[nodiscard]] std::span<const sim::LinkId> gpu_path(std::int64_t from_gpu, std::int64_t to_gpu) override;

 private:
  const ClusterGraph* graph_;
  sim::FlowNetwork* network_;
  sim::LinkId base_ = 0;
  double latency_scale_ = 1.0;
  std::vector<sim::LinkId> scratch_;
};

/// Entry and exit of a lowered collective: make `start` depend on what must precede it, and what follows
/// it depend on `done`.
struct LoweredCollective {
  sim::TaskId start = 0;
  sim::TaskId done = 0;
  std::size_t transfers = 0;  ///< flows it will start
};

/// The most members a lowered collective takes: 32,768 GPUs (4,096 DGX nodes) run in about 7 s and 0.7 GB.
inline constexpr std::int64_t kMaxFlowCollectiveGpus = 32768;

/// Where a lowered collective's tasks go when the caller places them (the full-cluster step): every task
/// on `lane` (the caller's stream), and no launch task (the caller pays the closed-form latency before it).
struct LoweringLane {
  sim::LaneId lane = 0;
};

/// Appends `op` of `bytes` (as collective_time counts them) over `members` (cluster GPU numbers, in ring
/// order) to `dag`, as `algo` (auto_select: what the closed form picks) with `protocol`'s bandwidth. The
/// launch cost (comm.base_latency_s, plus net_base_latency_s across nodes) and ring latencies are busy
/// tasks on the lane "<name> launch", so concurrent collectives need distinct names; with `placed`, every
/// task goes on its lane and there is no launch task. An algorithm that does not apply falls back as in
/// estimate_collective (tree to ring for other ops, hierarchical to ring on one node). This is the one
/// lowering of each algorithm: `trainsim collective --fidelity flow` and the full-cluster step both use it.
/// Throws InputError for broadcast/reduce, an empty member list, more than kMaxFlowCollectiveGpus
/// members, or GPUs outside the cluster.
LoweredCollective lower_collective(sim::Dag& dag, GpuPaths& fabric, const ClusterSpec& cluster,
                                   CollectiveOp op, double bytes, std::span<const std::int64_t> members,
                                   CollectiveAlgo algo, std::string_view name,
                                   CollectiveProtocol protocol = CollectiveProtocol::simple,
                                   std::optional<LoweringLane> placed = std::nullopt);

/// One collective for simulate_collectives.
struct CollectiveCall {
  CollectiveOp op = CollectiveOp::all_reduce;
  double bytes = 0;
  std::vector<std::int64_t> members;  ///< cluster GPU numbers, ring order
  CollectiveAlgo algo = CollectiveAlgo::ring;
  CollectiveProtocol protocol = CollectiveProtocol::simple;
};

/// Runs `calls` together from time zero on a fresh engine and flow network over `graph`, and returns each
/// one's duration (start to its last byte). The calls must share one protocol (the links' latencies are
/// scaled by it): InputError otherwise.
[[nodiscard]] std::vector<sim::Duration> simulate_collectives(const ClusterGraph& graph,
                                                              const ClusterSpec& cluster,
                                                              std::span<const CollectiveCall> calls);

}  // namespace trainsim::topo
