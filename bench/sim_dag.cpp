// DAG executor throughput on a 1M-task graph of busy tasks (items = tasks): 64 lanes, each task after the
// previous one of its lane and after one of the neighbouring lane, like pipelined compute streams.
#include <benchmark/benchmark.h>

#include <string>

#include "sim/dag.hpp"
#include "sim/engine.hpp"

namespace {

using trainsim::sim::Dag;
using trainsim::sim::Duration;
using trainsim::sim::Engine;
using trainsim::sim::TaskId;

Dag layered_graph(std::size_t tasks, std::size_t lanes) {
  Dag dag;
  dag.reserve(tasks, 2 * tasks);
  for (std::size_t l = 0; l < lanes; ++l) dag.lane("gpu " + std::to_string(l) + " / compute");
  for (std::size_t i = 0; i < tasks; ++i) {
    const auto lane = static_cast<trainsim::sim::LaneId>(i % lanes);
    const TaskId t =
        dag.busy(lane, Duration::from_ps(1000 + static_cast<std::int64_t>(i % 7) * 100), "kernel");
    if (i >= lanes) {
      dag.depend(static_cast<TaskId>(i - lanes), t);
      dag.depend(static_cast<TaskId>(i - lanes + (i + 1) % lanes - i % lanes), t);
    }
  }
  return dag;
}

void BM_ExecuteBusyDag(benchmark::State& state) {
  const auto tasks = static_cast<std::size_t>(state.range(0));
  const Dag dag = layered_graph(tasks, 64);
  for (auto _ : state) {
    Engine e;
    const auto r = trainsim::sim::execute(dag, e);
    benchmark::DoNotOptimize(r.makespan);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(tasks));
}
BENCHMARK(BM_ExecuteBusyDag)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

void BM_BuildDag(benchmark::State& state) {
  const auto tasks = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    const Dag dag = layered_graph(tasks, 64);
    benchmark::DoNotOptimize(dag.size());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(tasks));
}
BENCHMARK(BM_BuildDag)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace
