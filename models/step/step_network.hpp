#pragma once
// The links a step's data-parallel and pipeline traffic share in the event fidelity, so that a gradient
// bucket and a pipeline send leaving one GPU at the same time slow each other down (max-min fair,
// sim::FlowNetwork), instead of each taking its closed-form time as if alone. Collapsed, each simulated GPU
// has four ports (network and NVLink, in and out) and a transfer runs as its size-independent latency then a
// flow of the rest at its closed-form rate; in the full cluster the transfers are routed over the cluster
// graph. Why the ports are what they are, and what this leaves out: models/step/README.md.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "models/step/analytic_step.hpp"
#include "sim/dag.hpp"
#include "sim/flow_network.hpp"
#include "topologies/cluster_graph.hpp"
#include "topologies/cluster_spec.hpp"
#include "topologies/collective_flows.hpp"

namespace trainsim::model {

/// Which ports a transfer uses.
enum class Fabric : std::uint8_t { network, nvlink };

/// A GPU's communication stream: transfers of one stream run one at a time, in the order they are added.
/// ZeRO-3's gradient reduce-scatters have their own (FSDP issues them on a stream apart from the gathers).
enum class Stream : std::uint8_t { data_parallel, reduce_scatter, pipeline };

/// The first and last task of one lowered transfer: make `first` depend on what precedes it, and what
/// follows it depend on `last`.
struct LoweredTransfer {
  sim::TaskId first = 0;
  sim::TaskId last = 0;
};

/// How the lowering numbers its simulated GPUs: copy i of the pipeline (i = data-parallel replica ·
/// instances/replicas + model-parallel rank), pipeline rank s → GPU i·stages + s.
struct StepLayout {
  int instances = 1;  ///< simulated copies of the pipeline (1 when collapsed)
  int stages = 1;     ///< pipeline ranks
  int replicas = 1;   ///< data-parallel replicas among the instances (1 when collapsed)
};

/// The cluster graph a full-cluster step's transfers are routed over, and where each GPU sits in it: with
/// r model-parallel ranks (tp·cp·ep) per simulated instance, gpus[(i·r + k)·stages + s] is the cluster GPU
/// (topo::ClusterGraph::gpu's number) of rank k = tp index + tp·(cp index + cp·ep index) of simulated
/// instance i's pipeline rank s (step_costs.hpp's full_cluster_gpus, whose instances are the data-parallel
/// replicas). Empty: no routes, the ports alone.
struct FabricRoutes {
  std::shared_ptr<const topo::ClusterGraph> graph;
  std::vector<std::int64_t> gpus;
  int tp = 1, cp = 1, ep = 1;  ///< the model-parallel ranks' shape (ep: its own axis, 1 when folded)
  int shard = 0;               ///< replicas per sharding group (HSDP's shard_group; 0: all of them)
  int expert_tp = 0;           ///< ranks splitting one expert (ParallelPlan::expert_tensor_parallel; 0: tp)
  int folded_ep = 1;  ///< folded: ep over (tp/expert_tp) × cp × the sharding part; 1 on its own axis
};

class StepNetwork final : public topo::GpuPaths {
 public:
  /// Ports for the GPUs of `layout` on `cluster`'s nodes, for the transfers priced in `costs` (their
  /// closed-form times and where their ends sit: StepCosts::stage_node, dp_crosses_nodes). `contention`
  /// false: every transfer is one busy task of its closed-form time, as if alone, to measure what
  /// contention adds (the closed form still shares a GPU's port between ZeRO-3's gathers and reductions:
  /// analytic_step.hpp). With `routes`, network transfers run over the graph's routes
  /// (see the file comment; `costs` then priced with FabricPricing::routed).
  StepNetwork(const topo::ClusterSpec& cluster, const StepCosts& costs, StepLayout layout,
              bool contention = true, FabricRoutes routes = {});
  /// Ports for `gpus` GPUs, no layout (for lower() alone).
  StepNetwork(const topo::ClusterSpec& cluster, int gpus, bool contention = true);
  StepNetwork() = default;  ///< no GPUs, no links
  /// Drops what the routed lowerings kept of the Dag they went into (its task ids, for repeating): called
  /// once the graph is built, since the Dag then moves and nothing is lowered into it again.
  void forget_lowered();

  /// GPU (instance, stage)'s data-parallel collective of closed-form time `seconds`, `latency_s` of it
  /// size-independent: lower() from its out port to its ring successor's in port (the next replica; itself
  /// when collapsed), after the previous transfer of that GPU's `stream`. Routed: one flow per
  /// model-parallel rank of the instance, each over the route to the same rank of the next replica, then a
  /// join (the instance goes on when all its ranks' rings are done); step_lowering sends every routed
  /// data-parallel collective with a bandwidth term through routed_collective instead.
  LoweredTransfer dp_collective(sim::Dag& dag, sim::LaneId lane, int instance, int stage, double seconds,
                                double latency_s, std::string_view name, std::string_view category,
                                Stream stream = Stream::data_parallel);
  /// GPU (instance, from_stage)'s hand-over to pipeline rank to_stage (costs.p2p_s): lower() between the
  /// two GPUs, over the network when the placement puts them on different nodes, after the previous send of
  /// that GPU. Routed: one flow per model-parallel rank, each to the same rank of stage to_stage.
  LoweredTransfer pp_send(sim::Dag& dag, sim::LaneId lane, int instance, int from_stage, int to_stage,
                          std::string_view name, std::string_view category);

  /// Later transfers of GPU (instance, stage)'s `stream` start after `task` too (the completion of a
  /// collective all of whose members' transfers must be done: step_lowering's rings).
  void after(int instance, int stage, Stream stream, sim::TaskId task);
  /// Chains `t` after the previous transfer of GPU (instance, stage)'s `stream` and makes it the last.
  LoweredTransfer chain(sim::Dag& dag, int instance, int stage, Stream stream, LoweredTransfer t);

  /// Routed: `flows` over the cluster GPUs `members` (in ring order), lowered by topo::lower_collective
  /// onto `lane` after `after`, its flows over the graph's links without latency (see the file comment); a
  /// send_recv is every member's send to its ring successor. Returns the task that ends when all are done.
  sim::TaskId routed_collective(sim::Dag& dag, sim::LaneId lane, sim::TaskId after,
                                const RoutedCollective& flows, std::span<const std::int64_t> members,
                                std::string_view name);
  /// Routed: the groups of data-parallel ranks `over` spans on pipeline rank `stage`, each in cluster order:
  /// per tensor-parallel index every replica's ranks of that index (gradient), or those of one sharding
  /// group (shard); per model-parallel rank the same rank of one replica in every sharding group (replicas);
  /// the GPUs holding the same expert shard (expert_gradient: Communicators::expert_grad's groups), or those
  /// of them in one sharding group (expert_shard).
  [[nodiscard]] std::vector<std::vector<std::int64_t>> data_parallel_groups(int stage, DataGroup over) const;
  /// Routed: instance `instance`'s groups of `group` (cp, ep, or expert_tp_ep: tp × ep) on pipeline rank
  /// `stage`, each in rank order.
  [[nodiscard]] std::vector<std::vector<std::int64_t>> model_groups(int instance, int stage,
                                                                    CommGroup group) const;

  // topo::GpuPaths: the graph's links as they are first used, without latency.
  [[nodiscard]] const topo::ClusterGraph& graph() const override;
  [[nodiscard]] double gpu_latency_s(std::int64_t from_gpu, std::int64_t to_gpu) const override;
  [[nodiscard]] std::span<const sim::LinkId> gpu_path(std::int64_t from_gpu, std::int64_t to_gpu) override;

  /// Appends one collective or send of closed-form time `seconds`, `latency_s` of it size-independent,
  /// from GPU `from` to GPU `to` over `fabric` (see the file comment): a busy task of latency_s on `lane`,
  /// then a transfer (on `lane` in the trace). Falls back to one busy task of `seconds` when there is no
  /// bandwidth term, no such ports (a fabric of zero rate), or contention is off.
  LoweredTransfer lower(sim::Dag& dag, sim::LaneId lane, int from, int to, Fabric fabric, double seconds,
                        double latency_s, std::string_view name, std::string_view category);

  /// Adds the ports used so far to `network`, in order, so that the transfers' link ids are valid there
  /// (unnamed there: link_name names them).
  /// Precondition: `network` has no links yet (InputError otherwise).
  void install(sim::FlowNetwork& network) const;

  [[nodiscard]] std::size_t link_count() const { return links_.size(); }
  [[nodiscard]] double link_bandwidth(sim::LinkId link) const { return links_.at(link).bytes_per_s; }
  [[nodiscard]] std::string link_name(sim::LinkId link) const;
  /// Bytes per second of one GPU's port of `fabric` (0 when the cluster has no such fabric).
  [[nodiscard]] double port_bandwidth(Fabric fabric) const {
    return fabric == Fabric::network ? network_bytes_per_s_ : nvlink_bytes_per_s_;
  }
  [[nodiscard]] bool contention() const { return contention_; }
  /// Whether network transfers run over the cluster graph's routes.
  [[nodiscard]] bool routed() const { return routes_.graph != nullptr; }

 private:
  // A link's rate and what it is, named only when asked (link_name): a large cluster's step uses about a
  // million graph links, and nothing on the way to its answer reads their names.
  struct LinkSpec {
    double bytes_per_s;
    std::int64_t port;               // gpu · kPorts + port; -1 for a graph link
    topo::LinkIndex graph_link = 0;  // the graph's link, when port is -1
  };
  enum Port : std::uint8_t { network_out, network_in, nvlink_out, nvlink_in, kPorts };
  sim::LinkId port(int gpu, Port which);
  // The flow-network link of the graph's link `index`, added on first use.
  sim::LinkId graph_link(topo::LinkIndex index);
  // Routed: a busy task of `latency` seconds, then one flow of `bytes` per model-parallel rank from simulated
  // GPU `from`'s rank k to `to`'s over the graph's route, then a join.
  LoweredTransfer lower_routed(sim::Dag& dag, sim::LaneId lane, int from, int to, double latency,
                               double bytes, std::string_view name, std::string_view category);
  // Chains `t` after the previous transfer of (gpu, stream) and makes it the last.
  LoweredTransfer in_order(sim::Dag& dag, int gpu, Stream stream, LoweredTransfer t);
  // The cluster GPU of model-parallel rank k of simulated instance `instance`'s pipeline rank `stage`.
  [[nodiscard]] std::int64_t cluster_gpu(int instance, int k, int stage) const;
  static constexpr std::size_t kStreams = 3;

  double network_bytes_per_s_ = 0;
  double nvlink_bytes_per_s_ = 0;
  bool contention_ = true;
  int gpus_ = 0;
  std::vector<sim::LinkId> ports_;  ///< gpu · kPorts + port → link id, kNone until first used
  std::vector<LinkSpec> links_;
  StepLayout layout_;
  double p2p_s_ = 0, p2p_latency_s_ = 0;
  Fabric dp_fabric_ = Fabric::nvlink;
  std::vector<std::int64_t> stage_node_;
  std::vector<sim::TaskId> last_;  ///< gpu · kStreams + stream → its last transfer task + 1; 0: none
  std::string scratch_;
  FabricRoutes routes_;
  int model_ranks_ = 1;                   ///< cluster GPUs per simulated GPU when routed
  std::vector<sim::LinkId> graph_links_;  ///< graph link index → flow-network link, kNone until first used
  std::vector<sim::LinkId> path_;         ///< the path being lowered
  topo::ClusterSpec cluster_;             ///< routed: the cluster its collectives are lowered on

  // The Dag the routed lowerings below went into: lowered_ and sends_ hold its task ids, so every call
  // that reads them must pass the same Dag (bind checks it; TRAINSIM_CHECK otherwise). The tasks they name
  // are copied later (sim::Dag::repeat, transfer_like), so they must not change once lowered: nothing
  // extends them (step_lowering's serial() extends only compute tasks, none of which these name).
  const sim::Dag* dag_ = nullptr;
  void bind(const sim::Dag& dag);

  // A routed collective as topo::lower_collective first lowered it (routed_collective): its tasks
  // [first, end) and dependencies [edge_first, edge_end), all among them, under `name`. A later call with the
  // same lane, op, bytes, algorithm, protocol and members lowers the same tasks again (the lowering reads
  // nothing else: the cluster and the paths are fixed, and a graph link keeps the id it got first), so it
  // is repeated with sim::Dag::repeat instead: a step's gradient buckets on one stage are one collective,
  // lowered once and repeated.
  struct LoweredOnce {
    topo::CollectiveOp op;
    topo::CollectiveAlgo algo;
    topo::CollectiveProtocol protocol;
    double bytes;
    std::vector<std::int64_t> members;
    sim::TaskId first, end, start, done;
    std::size_t edge_first, edge_end;
    std::string name;
  };
  std::unordered_map<sim::LaneId, std::vector<LoweredOnce>> lowered_;  ///< by the lane they were placed on
  /// Routed sends: simulated GPU pair (from · gpus_ + to) → the first of its per-rank flows, whose paths
  /// later sends between the two share (sim::Dag::transfer_like).
  std::unordered_map<std::int64_t, sim::TaskId> sends_;
};

}  // namespace trainsim::model
