// Sweep and search throughput (targets: analytic sweep >= 1,000 points/s per core; search of every
// layout of GPT-3 175B on 4,096 GPUs in <= 10 s on 2 cores). A point is the whole per-point path of
// `trainsim sweep`: the scenario re-parsed with the point's overrides, the analytic step, the run model and
// the CSV row.
#include <benchmark/benchmark.h>

#include <numeric>
#include <thread>

#include "scenarios/loader.hpp"
#include "scenarios/studies/layout_search.hpp"
#include "scenarios/studies/sweep.hpp"

namespace {

using namespace trainsim;

const std::string example = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/gpt3-175b-sweep.yaml";

void BM_SweepPointAnalyticOneCore(benchmark::State& state) {
  const scenario::SweepTable table(example, model::Fidelity::analytic, scenario::RowFormat::csv);
  std::int64_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(table.row(i));
    i = (i + 1) % table.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SweepPointAnalyticOneCore)->Unit(benchmark::kMicrosecond);

void BM_SweepAnalyticThreads(benchmark::State& state) {
  const scenario::SweepTable table(example, model::Fidelity::analytic, scenario::RowFormat::csv);
  std::vector<std::int64_t> points(static_cast<std::size_t>(table.size()));
  std::iota(points.begin(), points.end(), std::int64_t{0});
  const int threads = static_cast<int>(state.range(0));
  for (auto _ : state) {
    std::size_t bytes = 0;
    scenario::run_in_order(
        points, threads, [&](std::int64_t p) { return table.row(p); },
        [&](std::int64_t, std::string&& row) { bytes += row.size(); });
    benchmark::DoNotOptimize(bytes);
  }
  state.SetItemsProcessed(state.iterations() * table.size());
  state.counters["threads"] = threads;
}
BENCHMARK(BM_SweepAnalyticThreads)
    ->Arg(1)
    ->Arg(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_SearchGpt3_175bOn4096Gpus(benchmark::State& state) {
  const scenario::Scenario s = scenario::load_scenario_file(example, {{"cluster.nodes", "512"}});
  scenario::SearchOptions options;
  options.top_k = 10;
  options.threads = 2;
  std::int64_t layouts = 0;
  for (auto _ : state) {
    const scenario::SearchResult r = scenario::search_layouts(s, options);
    layouts = r.enumerated;
    benchmark::DoNotOptimize(r.top.data());
  }
  state.counters["layouts"] = static_cast<double>(layouts);
  state.SetItemsProcessed(state.iterations() * layouts);
}
BENCHMARK(BM_SearchGpt3_175bOn4096Gpus)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

}  // namespace
