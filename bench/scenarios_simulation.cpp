// One estimate in-process, as `trainsim.run(path, fidelity="analytic")` (tools/python) and `trainsim run`
// pay it without a process start: the scenario file read and loaded (its presets parsed once, then from the
// loader's cache), the step at the analytic fidelity, the run model, and summary.json's text. The Python
// call adds only argument and JSON conversion; bench/python_vs_cli.py measures that call against the
// command line as a subprocess.
#include <benchmark/benchmark.h>

#include <string>

#include "models/report/run_labels.hpp"
#include "models/report/summary.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/studies/simulation.hpp"

namespace {

using namespace trainsim;

const std::string example = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/llama3-8b-64-h100.yaml";

std::string summary_json(const scenario::Scenario& s) {
  const scenario::ScenarioResult r = scenario::simulate_scenario(s, model::Fidelity::analytic);
  return model::to_json(model::summarize(model::run_labels(s.name, "analytic", s.tags), r.step, &r.run), 2);
}

void BM_RunExampleAnalytic(benchmark::State& state) {
  scenario::PresetLibrary presets;  // as the Python module keeps one: presets parsed once
  for (auto _ : state)
    benchmark::DoNotOptimize(summary_json(scenario::load_scenario_file(example, {}, &presets)));
}
BENCHMARK(BM_RunExampleAnalytic)->Unit(benchmark::kMicrosecond);

// The same without loading: what an estimate costs once the scenario is in memory.
void BM_SimulateLoadedAnalytic(benchmark::State& state) {
  const scenario::Scenario s = scenario::load_scenario_file(example);
  for (auto _ : state) benchmark::DoNotOptimize(summary_json(s));
}
BENCHMARK(BM_SimulateLoadedAnalytic)->Unit(benchmark::kMicrosecond);

}  // namespace
