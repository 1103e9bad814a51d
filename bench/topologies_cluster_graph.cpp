// Building a rail-optimized fat-tree of N GPUs (8 per node, 8x400 Gb/s NICs, 64-port switches) and routing a
// ring over all of its GPUs (N routes), at 1k, 16k and 100k GPUs.
#include <benchmark/benchmark.h>

#include "tests/support/fixtures.hpp"
#include "topologies/cluster_graph.hpp"

namespace {

// DGX H100 nodes (the shared fixture), 3 switch tiers beyond 16k GPUs.
trainsim::topo::ClusterSpec fat_tree(std::int64_t gpus) {
  trainsim::topo::ClusterSpec c = trainsim::testing::dgx_h100(gpus / 8);
  c.network.topology =
      gpus > 16384 ? trainsim::topo::FabricTopology::fat_tree_3 : trainsim::topo::FabricTopology::fat_tree;
  return c;
}

void BM_BuildAndRouteRing(benchmark::State& state) {
  const trainsim::topo::ClusterSpec c = fat_tree(state.range(0));
  std::size_t hops = 0;
  for (auto _ : state) {
    const trainsim::topo::ClusterGraph g = trainsim::topo::ClusterGraph::build(c);
    const std::int64_t n = g.gpu_count();
    for (std::int64_t i = 0; i < n; ++i) hops += g.route(g.gpu(i), g.gpu((i + 1) % n)).size();
    benchmark::DoNotOptimize(hops);
    state.counters["devices"] = static_cast<double>(g.device_count());
    state.counters["links"] = static_cast<double>(g.link_count());
  }
}

}  // namespace

BENCHMARK(BM_BuildAndRouteRing)
    ->Arg(1024)
    ->Arg(16384)
    ->Arg(100000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
