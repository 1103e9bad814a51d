// Loading scenarios: the whole path from YAML text to checked structs (presets come from the cache after
// the first load), and the quantity parser alone.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>
#include <string>

#include "scenarios/loader.hpp"
#include "scenarios/quantity.hpp"

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void BM_LoadGpt3Example(benchmark::State& state) {
  const std::string text = read(TRAINSIM_SOURCE_DIR "/scenarios/examples/gpt3-175b-1024-a100.yaml");
  for (auto _ : state) {
    benchmark::DoNotOptimize(trainsim::scenario::load_scenario_text(text, "gpt3.yaml"));
  }
}
BENCHMARK(BM_LoadGpt3Example);

void BM_LoadSweepPoint(benchmark::State& state) {
  const std::string text = read(TRAINSIM_SOURCE_DIR "/scenarios/examples/gpt3-1.3b-sweep.yaml");
  const std::vector<trainsim::scenario::Override> point{{"cluster.nodes", "4"},
                                                        {"training.optimizer", "adafactor"}};
  for (auto _ : state) {
    benchmark::DoNotOptimize(trainsim::scenario::load_scenario_text(text, "sweep.yaml", point));
  }
}
BENCHMARK(BM_LoadSweepPoint);

void BM_ParseQuantity(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        trainsim::scenario::try_parse_quantity("200 Gb/s", trainsim::scenario::Dimension::bytes_per_s));
  }
}
BENCHMARK(BM_ParseQuantity);

}  // namespace
