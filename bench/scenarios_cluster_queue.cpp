// A shared cluster at scale (target: a 30-day, 2,048-node cluster with 10,000 jobs from `arrivals` in
// <= 10 s and <= 1 GiB): the whole path of `trainsim cluster` without printing — the cluster file read,
// every distinct (scenario, node count) simulated once through the step model, the arrivals drawn, and
// the queue run on the event engine under EASY backfill with node failures.
#include <benchmark/benchmark.h>

#include <string>

#include "models/cluster/queue_simulator.hpp"
#include "scenarios/cluster_file.hpp"
#include "scenarios/studies/cluster_queue.hpp"

namespace {

using namespace trainsim;

const std::string jobs = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/shared-cluster/";

// About 10,000 arrivals in 30 days: 100/d of 8B runs on 8-64 nodes and 233/d of small and medium runs,
// near the cluster's capacity, so the queue stays long.
std::string cluster_file(const std::string& placement) {
  return "cluster: {node: dgx-h100, nodes: 2048, network: {topology: fat-tree, oversubscription: 2}}\n"
         "period: \"30 d\"\n"
         "scheduler: {policy: backfill, placement: " +
         placement +
         ", quotas: {llm: 0.7, vision: 0.3}}\n"
         "arrivals:\n"
         "  - {team: llm, rate: \"100/d\", seed: 1, mix: [{scenario: " +
         jobs +
         "llm-8b.yaml, nodes: [8, 16, 32, 64]}]}\n"
         "  - {team: vision, rate: \"233.3/d\", seed: 2,\n"
         "     mix: [{scenario: " +
         jobs + "small.yaml, weight: 0.8, nodes: [1, 2, 4]},\n           {scenario: " + jobs +
         "medium.yaml, weight: 0.2, nodes: [8, 16, 32]}]}\n"
         "failures: {node_mtbf: \"5000 h\", repair: \"4 h\"}\n"
         "pricing: {gpu_hour: \"$2.20\"}\n";
}

void run(benchmark::State& state, const std::string& placement) {
  const std::string text = cluster_file(placement);
  std::size_t jobs_run = 0;
  double utilisation = 0;
  for (auto _ : state) {
    const scenario::ClusterFile file = scenario::load_cluster_text(text, jobs + "../bench-cluster.yaml");
    const scenario::ClusterStudy study = scenario::build_cluster_study(file);
    const model::QueueReport report = model::simulate_queue(study.spec);
    jobs_run = report.jobs.size();
    utilisation = report.cluster.utilisation;
    benchmark::DoNotOptimize(report.cluster.busy_gpu_hours);
  }
  state.counters["jobs"] = static_cast<double>(jobs_run);
  state.counters["utilisation"] = utilisation;
}

void BM_Cluster30Days2048NodesFirstFit(benchmark::State& state) {
  run(state, "first_fit");
}
BENCHMARK(BM_Cluster30Days2048NodesFirstFit)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_Cluster30Days2048NodesLeafAware(benchmark::State& state) {
  run(state, "leaf_aware");
}
BENCHMARK(BM_Cluster30Days2048NodesLeafAware)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
