// Busiest-link load of lowered collectives (the reasoning: the header).
#include "topologies/fabric_load.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "sim/dag.hpp"

namespace trainsim::topo {

namespace {

/// Routes of a cluster graph as the flow lowering asks for them, a graph link's index as its link id: no
/// flow network is built, the lowered transfers' paths are only read.
class GraphRoutes final : public GpuPaths {
 public:
  explicit GraphRoutes(const ClusterGraph& graph) : graph_(&graph) {}
  [[nodiscard]] const ClusterGraph& graph() const override { return *graph_; }
  /// Latencies do not load links: none (saves a second route per ring edge).
  [[nodiscard]] double gpu_latency_s(std::int64_t /*from_gpu*/, std::int64_t /*to_gpu*/) const override {
    return 0.0;
  }
  [[nodiscard]] std::span<const sim::LinkId> gpu_path(std::int64_t from_gpu, std::int64_t to_gpu) override {
    const std::span<const LinkIndex> route = graph_->route(graph_->gpu(from_gpu), graph_->gpu(to_gpu));
    scratch_.assign(route.begin(), route.end());
    return scratch_;
  }

 private:
  const ClusterGraph* graph_;
  std::vector<sim::LinkId> scratch_;
};

}  // namespace

double busiest_link_s(const ClusterGraph& graph, const ClusterSpec& cluster,
                      std::span<const CollectiveCall> calls) {
  GraphRoutes routes(graph);
  sim::Dag dag;
  const sim::LaneId lane = dag.lane("load");
  for (const CollectiveCall& call : calls) {
    static_cast<void>(lower_collective(dag, routes, cluster, call.op, call.bytes, call.members, call.algo,
                                       "load", call.protocol, LoweringLane{lane}));
  }
  std::vector<double> bytes(graph.link_count(), 0.0);
  for (sim::TaskId t = 0; t < dag.size(); ++t) {
    if (dag.kind(t) != sim::TaskKind::transfer) continue;
    const double b = dag.bytes(t);
    for (sim::LinkId l : dag.path(t)) bytes[l] += b;
  }
  double busiest = 0;
  for (std::size_t l = 0; l < bytes.size(); ++l) {
    if (bytes[l] > 0)
      busiest = std::max(busiest, bytes[l] / graph.link(static_cast<LinkIndex>(l)).bytes_per_s);
  }
  return busiest;
}

ClusterSpec non_blocking_fabric(const ClusterSpec& cluster) {
  ClusterSpec out = uncontended_fabric(cluster);
  out.network.topology = FabricTopology::single_switch;
  out.network.torus_dims.clear();
  out.storage = StorageSpec{};
  return out;
}

namespace {
ClusterSpec without_degraded_nics(const ClusterSpec& cluster) {
  ClusterSpec out = cluster;
  out.degraded.clear();
  out.storage = StorageSpec{};
  return out;
}
}  // namespace

FabricGraphs::FabricGraphs(const ClusterSpec& cluster)
    : real_cluster(without_degraded_nics(cluster)),
      ideal_cluster(non_blocking_fabric(cluster)),
      real(ClusterGraph::build(real_cluster)),
      ideal(ClusterGraph::build(ideal_cluster)) {}

double fabric_slowdown(const FabricGraphs& graphs, std::span<const CollectiveCall> calls) {
  const double ideal = busiest_link_s(graphs.ideal, graphs.ideal_cluster, calls);
  if (!(ideal > 0)) return 1.0;
  return std::max(1.0, busiest_link_s(graphs.real, graphs.real_cluster, calls) / ideal);
}

}  // namespace trainsim::topo
