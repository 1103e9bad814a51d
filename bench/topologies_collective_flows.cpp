// Flow fidelity: one all-reduce of 1 GiB over 1,024 GPUs (128 DGX H100 nodes of 8 on a rail-optimized
// fat-tree) as each algorithm is lowered (collective_flows.hpp): ring (8 channels, one flow per ring edge:
// 8,192 flows), double binary tree (8 channels x 2 trees, ~65 k flows), hierarchical (three ring phases)
// and halving-doubling (20 rounds of 1,024 sends); and a flat ring of 1 rank per node over 128 nodes.
#include <benchmark/benchmark.h>

#include <numeric>
#include <vector>

#include "tests/support/fixtures.hpp"
#include "topologies/collective_flows.hpp"

namespace {

using trainsim::testing::dgx_h100;
namespace topo = trainsim::topo;

void all_reduce_1024(benchmark::State& state, topo::CollectiveAlgo algo) {
  const topo::ClusterSpec c = dgx_h100(128);
  const topo::ClusterGraph g = topo::ClusterGraph::build(c);
  topo::CollectiveCall call{topo::CollectiveOp::all_reduce, 1073741824.0, {}, algo};
  call.members.resize(1024);
  std::iota(call.members.begin(), call.members.end(), 0);
  for (auto _ : state) {
    const auto t = topo::simulate_collectives(g, c, std::span(&call, 1));
    state.counters["simulated_ms"] = t.front().seconds() * 1e3;
  }
}

void BM_RingAllReduce1024(benchmark::State& state) {
  all_reduce_1024(state, topo::CollectiveAlgo::ring);
}
void BM_TreeAllReduce1024(benchmark::State& state) {
  all_reduce_1024(state, topo::CollectiveAlgo::double_binary_tree);
}
void BM_HierarchicalAllReduce1024(benchmark::State& state) {
  all_reduce_1024(state, topo::CollectiveAlgo::hierarchical);
}
void BM_HalvingDoublingAllReduce1024(benchmark::State& state) {
  all_reduce_1024(state, topo::CollectiveAlgo::halving_doubling);
}

void BM_DataParallelRing128(benchmark::State& state) {
  const topo::ClusterSpec c = dgx_h100(128);
  const topo::ClusterGraph g = topo::ClusterGraph::build(c);
  topo::CollectiveCall call{topo::CollectiveOp::all_reduce, 1073741824.0, {}, topo::CollectiveAlgo::ring};
  for (std::int64_t i = 0; i < 128; ++i) call.members.push_back(i * 8);
  for (auto _ : state) {
    const auto t = topo::simulate_collectives(g, c, std::span(&call, 1));
    state.counters["simulated_ms"] = t.front().seconds() * 1e3;
  }
}

}  // namespace

BENCHMARK(BM_RingAllReduce1024)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_TreeAllReduce1024)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_HierarchicalAllReduce1024)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_HalvingDoublingAllReduce1024)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_DataParallelRing128)->Unit(benchmark::kMillisecond)->Iterations(3);
