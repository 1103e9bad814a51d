// Flow fidelity: one all-reduce of 1 GiB over 1,024 GPUs (128 nodes of 8 on a rail-optimized fat-tree),
// hierarchical (7+254+7 steps, ~278k flows) and as a flat ring of 1 rank per node over 128 nodes (254 steps).
#include <benchmark/benchmark.h>

#include <numeric>
#include <vector>

#include "tests/support/fixtures.hpp"
#include "topologies/collective_flows.hpp"

namespace {

using trainsim::testing::dgx_h100;

void BM_HierarchicalAllReduce1024(benchmark::State& state) {
  const trainsim::topo::ClusterSpec c = dgx_h100(128);
  const trainsim::topo::ClusterGraph g = trainsim::topo::ClusterGraph::build(c);
  trainsim::topo::CollectiveCall call{trainsim::topo::CollectiveOp::all_reduce,
                                      1073741824.0,
                                      {},
                                      trainsim::topo::CollectiveAlgo::hierarchical};
  call.members.resize(1024);
  std::iota(call.members.begin(), call.members.end(), 0);
  for (auto _ : state) {
    const auto t = trainsim::topo::simulate_collectives(g, c, std::span(&call, 1));
    state.counters["simulated_ms"] = t.front().seconds() * 1e3;
  }
}

void BM_DataParallelRing128(benchmark::State& state) {
  const trainsim::topo::ClusterSpec c = dgx_h100(128);
  const trainsim::topo::ClusterGraph g = trainsim::topo::ClusterGraph::build(c);
  trainsim::topo::CollectiveCall call{
      trainsim::topo::CollectiveOp::all_reduce, 1073741824.0, {}, trainsim::topo::CollectiveAlgo::ring};
  for (std::int64_t i = 0; i < 128; ++i) call.members.push_back(i * 8);
  for (auto _ : state) {
    const auto t = trainsim::topo::simulate_collectives(g, c, std::span(&call, 1));
    state.counters["simulated_ms"] = t.front().seconds() * 1e3;
  }
}

}  // namespace

BENCHMARK(BM_HierarchicalAllReduce1024)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_DataParallelRing128)->Unit(benchmark::kMillisecond)->Iterations(3);
