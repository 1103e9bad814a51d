#pragma once
// Flow fidelity of collectives: the same algorithm steps as the closed form (collective_cost.hpp), lowered
// into transfer tasks of a sim::Dag that run as max-min fair flows over the cluster graph's routes, so
// collectives that share links slow each other down.
//
// Each step is one flow per sending rank, from it to its peer, of the step's chunk; a rank's next send
// starts when its previous send is done and the chunk it was waiting for has arrived (ring semantics, no
// global barrier). A flow lasts its route's latency plus chunk / its fair-share rate. With the link rates and
// latencies ClusterGraph builds (a route's bottleneck and latency are the closed form's B and α), an
// uncontended collective takes exactly the closed-form time — the permanent agreement test — provided each
// step's time is a whole number of picoseconds (the closed form sums doubles, the engine sums ticks).
//
// Lowered: ring all-reduce / reduce-scatter / all-gather (across nodes with several ranks per node, as
// NCCL does, one ring per channel — channels = min(NICs, ranks per node), each rotated so that it leaves
// every node through a different NIC), hierarchical all-reduce / reduce-scatter / all-gather, all-to-all
// (every pair at once) and send-recv. Tree, halving-doubling and NVLS requests are lowered as rings, and
// broadcast/reduce are not lowered yet (InputError): use the closed form for them. Flows use the Simple
// protocol (the closed form's small-message protocols are a latency model, not a different data path).
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "sim/dag.hpp"
#include "sim/flow_network.hpp"
#include "sim/time.hpp"
#include "topologies/cluster_graph.hpp"
#include "topologies/collective_cost.hpp"

namespace trainsim::topo {

/// A cluster graph's links registered, in order, in a flow network: graph link i is network link base + i.
class FabricFlows {
 public:
  /// Adds every link of `graph` to `network`. Both must outlive this object.
  FabricFlows(const ClusterGraph& graph, sim::FlowNetwork& network);

  [[nodiscard]] const ClusterGraph& graph() const { return *graph_; }
  [[nodiscard]] sim::FlowNetwork& network() { return *network_; }
  /// The network links of the route between two cluster GPUs (numbers as in ClusterGraph::gpu), valid until
  /// the next call.
  [[nodiscard]] std::span<const sim::LinkId> gpu_path(std::int64_t from_gpu, std::int64_t to_gpu);

 private:
  const ClusterGraph* graph_;
  sim::FlowNetwork* network_;
  sim::LinkId base_ = 0;
  std::vector<sim::LinkId> scratch_;
};

/// Entry and exit of a lowered collective: make `start` depend on what must precede it, and what follows
/// it depend on `done`.
struct LoweredCollective {
  sim::TaskId start = 0;
  sim::TaskId done = 0;
  std::size_t transfers = 0;  ///< flows it will start
};

/// Appends `op` of `bytes` (as collective_time counts them) over `members` (cluster GPU numbers, in ring
/// order) to `dag`. The launch cost (comm.base_latency_s, plus net_base_latency_s across nodes) is a busy
/// task on the lane "<name> launch", so concurrent collectives need distinct names. Throws InputError for
/// broadcast/reduce, an empty member list, or GPUs outside the cluster.
LoweredCollective lower_collective(sim::Dag& dag, FabricFlows& fabric, const ClusterSpec& cluster,
                                   CollectiveOp op, double bytes, std::span<const std::int64_t> members,
                                   CollectiveAlgo algo, std::string_view name);

/// One collective for simulate_collectives.
struct CollectiveCall {
  CollectiveOp op = CollectiveOp::all_reduce;
  double bytes = 0;
  std::vector<std::int64_t> members;  ///< cluster GPU numbers, ring order
  CollectiveAlgo algo = CollectiveAlgo::ring;
};

/// Runs `calls` together from time zero on a fresh engine and flow network over `graph`, and returns each
/// one's duration (start to its last byte).
[[nodiscard]] std::vector<sim::Duration> simulate_collectives(const ClusterGraph& graph,
                                                              const ClusterSpec& cluster,
                                                              std::span<const CollectiveCall> calls);

}  // namespace trainsim::topo
