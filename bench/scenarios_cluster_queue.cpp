// A shared cluster at scale (targets: a 30-day, 2,048-node cluster with 10,000 jobs from `arrivals` in
// <= 10 s and <= 1 GiB; with cluster.contention a month on 256 nodes with 900 jobs <= 10 s and on 2,048
// nodes with 10,000 jobs <= 60 s and <= 2 GiB): the whole path of `trainsim cluster` without printing —
// the cluster file read, every distinct (scenario, node count) simulated once through the step model, the
// arrivals drawn, and the queue run on the event engine under EASY backfill with node failures (with
// contention, the shares per placement epoch and every share bucket's step repriced).
#include <benchmark/benchmark.h>

#include <string>

#include "models/cluster/queue_simulator.hpp"
#include "scenarios/cluster_file.hpp"
#include "scenarios/studies/cluster_queue.hpp"

namespace {

using namespace trainsim;

const std::string jobs = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/shared-cluster/";

struct Load {
  int nodes = 2048;
  std::string llm_rate = "100/d";
  std::string vision_rate = "233.3/d";
};
// About 10,000 arrivals in 30 days: 100/d of 8B runs on 8-64 nodes and 233/d of small and medium runs,
// near the cluster's capacity, so the queue stays long.
const Load kLarge;
// The same mix at an eighth of the nodes: about 900 arrivals in 30 days (9/d and 21/d).
const Load kSmall{256, "9/d", "21/d"};

std::string cluster_file(const std::string& placement, const Load& load = kLarge, bool contention = false) {
  return "cluster: {node: dgx-h100, nodes: " + std::to_string(load.nodes) +
         ", network: {topology: fat-tree, oversubscription: 2}" + (contention ? ", contention: true" : "") +
         "}\n"
         "period: \"30 d\"\n"
         "scheduler: {policy: backfill, placement: " +
         placement +
         ", quotas: {llm: 0.7, vision: 0.3}}\n"
         "arrivals:\n"
         "  - {team: llm, rate: \"" +
         load.llm_rate + "\", seed: 1, mix: [{scenario: " + jobs +
         "llm-8b.yaml, nodes: [8, 16, 32, 64]}]}\n"
         "  - {team: vision, rate: \"" +
         load.vision_rate +
         "\", seed: 2,\n"
         "     mix: [{scenario: " +
         jobs + "small.yaml, weight: 0.8, nodes: [1, 2, 4]},\n           {scenario: " + jobs +
         "medium.yaml, weight: 0.2, nodes: [8, 16, 32]}]}\n"
         "failures: {node_mtbf: \"5000 h\", repair: \"4 h\"}\n"
         "pricing: {gpu_hour: \"$2.20\"}\n";
}

void run(benchmark::State& state, const std::string& text) {
  std::size_t jobs_run = 0;
  double utilisation = 0;
  double contention_gpu_hours = 0;
  for (auto _ : state) {
    const scenario::ClusterFile file = scenario::load_cluster_text(text, jobs + "../bench-cluster.yaml");
    const scenario::ClusterStudy study = scenario::build_cluster_study(file);
    const model::QueueReport report = model::simulate_queue(study.spec);
    jobs_run = report.jobs.size();
    utilisation = report.cluster.utilisation;
    contention_gpu_hours = report.cluster.contention_gpu_hours;
    benchmark::DoNotOptimize(report.cluster.busy_gpu_hours);
  }
  state.counters["jobs"] = static_cast<double>(jobs_run);
  state.counters["utilisation"] = utilisation;
  state.counters["contention_gpu_hours"] = contention_gpu_hours;
}

void BM_Cluster30Days2048NodesFirstFit(benchmark::State& state) {
  run(state, cluster_file("first_fit"));
}
BENCHMARK(BM_Cluster30Days2048NodesFirstFit)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_Cluster30Days2048NodesLeafAware(benchmark::State& state) {
  run(state, cluster_file("leaf_aware"));
}
BENCHMARK(BM_Cluster30Days2048NodesLeafAware)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_Cluster30Days256NodesContention(benchmark::State& state) {
  run(state, cluster_file("first_fit", kSmall, true));
}
BENCHMARK(BM_Cluster30Days256NodesContention)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_Cluster30Days2048NodesContention(benchmark::State& state) {
  run(state, cluster_file("first_fit", kLarge, true));
}
BENCHMARK(BM_Cluster30Days2048NodesContention)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_Cluster30Days2048NodesContentionTopologyAware(benchmark::State& state) {
  run(state, cluster_file("topology_aware", kLarge, true));
}
BENCHMARK(BM_Cluster30Days2048NodesContentionTopologyAware)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
