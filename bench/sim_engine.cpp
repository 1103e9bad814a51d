// Event queue throughput: schedule N events at scattered times, then run them all (items = events). One
// engine serves every iteration, as in a long simulation, and one untimed round warms it first: at 100k+
// events Google Benchmark runs a single iteration per repetition, and without the warm-up that iteration
// would measure first-touch page faults of the queue's memory, not the queue.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>

#include "sim/engine.hpp"

namespace {

using trainsim::sim::Duration;
using trainsim::sim::Engine;
using trainsim::sim::Time;

void BM_ScheduleThenRun(benchmark::State& state) {
  const auto n = static_cast<std::int64_t>(state.range(0));
  std::int64_t sink = 0;
  Engine e;
  std::uint64_t x = 88172645463325252ull;  // xorshift: scattered but reproducible times
  auto round = [&] {
    const Time base = e.now();
    for (std::int64_t i = 0; i < n; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      e.at(base + Duration::from_ps(static_cast<std::int64_t>(x % 1'000'000'000)), [&sink, i] { sink += i; });
    }
    e.run();
  };
  round();  // warm-up, untimed
  for (auto _ : state) round();
  benchmark::DoNotOptimize(sink);
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_ScheduleThenRun)->RangeMultiplier(10)->Range(1'000, 1'000'000)->Unit(benchmark::kMillisecond);

// The classic "hold" model: N events pending; each one, when run, schedules its successor, until 4·N (at
// least a million) have been scheduled; then the queue drains. Items = events executed. At 1M pending this is
// the steady state the burst benchmark above is not: free slots come back scattered and are reused at once.
// As above, one engine serves every round and an untimed round warms it (first-touch page faults of a
// 64 MB slab are not the queue's cost in a long simulation).
void BM_Hold(benchmark::State& state) {
  const auto n = static_cast<std::int64_t>(state.range(0));
  const std::int64_t successors = std::max<std::int64_t>(1'000'000, 4 * n);
  Engine e;
  struct Step {
    Engine* e;
    std::int64_t* left;
    std::uint64_t x;
    void operator()() {
      if (--*left < 0) return;
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      e->after(Duration::from_ps(static_cast<std::int64_t>(x % 1'000'000)), Step{e, left, x});
    }
  };
  std::int64_t left = 0;
  auto round = [&] {
    left = successors;
    const Time base = e.now();
    for (std::int64_t i = 0; i < n; ++i)
      e.at(base + Duration::from_ps(i),
           Step{&e, &left, 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(i)});
    e.run();
  };
  round();  // warm-up, untimed
  const std::uint64_t before = e.executed();
  for (auto _ : state) round();
  state.SetItemsProcessed(static_cast<std::int64_t>(e.executed() - before));
}
BENCHMARK(BM_Hold)->Arg(1'000)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond);

}  // namespace
