// Fair-share solver cost: with N flows already active, one flow arrives and later departs (items = the
// arrival and the departure). Disjoint: every flow on its own link, so a change touches one component.
// Shared: all flows on one link (one path), so every change changes all N rates; the solver keeps them as
// one path class, so it is O(log N). Spine: every flow over its own leaf link and one shared spine link that
// is everyone's bottleneck (the leaves are 10x faster): the leaves cannot bind, so the N distinct paths are
// one class over the spine, O(log N). Narrow leaves: the same, but each leaf is its flow's narrowest link
// (half the spine's bandwidth), so every leaf can bind and the N paths stay N classes that every change
// re-solves: O(N), the solver's remaining linear case.
#include <benchmark/benchmark.h>

#include <vector>

#include "sim/engine.hpp"
#include "sim/flow_network.hpp"

namespace {

using trainsim::sim::Duration;
using trainsim::sim::Engine;
using trainsim::sim::FlowNetwork;
using trainsim::sim::LinkId;
using trainsim::sim::Time;

constexpr double kBandwidth = 1e11;  // B/s

enum class Layout { kDisjoint, kShared, kSpine, kNarrowLeaves };

void run_arrivals(benchmark::State& state, Layout layout) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Engine e;
  FlowNetwork net(e);
  std::vector<LinkId> links;
  // The spine is the bottleneck of every flow that crosses it: the leaf links are 10x faster, or, with
  // narrow leaves, half as fast (each flow's narrowest link, though the spine's share is smaller still).
  const double leaf = layout == Layout::kNarrowLeaves ? kBandwidth / 20.0 : kBandwidth;
  for (std::size_t i = 0; i <= n; ++i) links.push_back(net.add_link(leaf, Duration::zero()));
  const LinkId spine = net.add_link(kBandwidth / 10.0, Duration::zero());
  const auto path_of = [&](std::size_t i) {
    switch (layout) {
      case Layout::kDisjoint:
        return std::vector<LinkId>{links[i]};
      case Layout::kShared:
        return std::vector<LinkId>{links[0]};
      case Layout::kSpine:
      case Layout::kNarrowLeaves:
        return std::vector<LinkId>{links[i], spine};
    }
    return std::vector<LinkId>{};
  };
  // Background flows take ~1e6 simulated seconds when they share, so all n stay active for the whole
  // benchmark.
  const double bottleneck =
      layout == Layout::kSpine || layout == Layout::kNarrowLeaves ? kBandwidth / 10.0 : kBandwidth;
  const double background_bytes = 1e6 * bottleneck / static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i) net.start(path_of(i), background_bytes, nullptr);
  e.run_until(Time::from_ps(1));
  const std::vector<LinkId> probe = path_of(n);
  bool done = false;
  for (auto _ : state) {
    done = false;
    // The probe stops the engine when it is done; the re-solve its departure queued runs in the next
    // iteration, before the next arrival, so every change is counted once.
    net.start(probe, 1000.0, [&done, &e] {
      done = true;
      e.stop();
    });
    e.run();
  }
  benchmark::DoNotOptimize(done);
  state.SetItemsProcessed(state.iterations() * 2);
  state.counters["solves_per_change"] =
      benchmark::Counter(static_cast<double>(net.solves()) / 2.0, benchmark::Counter::kAvgIterations);
  state.counters["active"] = static_cast<double>(net.active_flows());
}

void BM_DisjointArrivalDeparture(benchmark::State& state) {
  run_arrivals(state, Layout::kDisjoint);
}
void BM_SharedLinkArrivalDeparture(benchmark::State& state) {
  run_arrivals(state, Layout::kShared);
}
void BM_SpineDistinctPathsArrivalDeparture(benchmark::State& state) {
  run_arrivals(state, Layout::kSpine);
}
void BM_SpineNarrowLeavesArrivalDeparture(benchmark::State& state) {
  run_arrivals(state, Layout::kNarrowLeaves);
}
BENCHMARK(BM_DisjointArrivalDeparture)->RangeMultiplier(10)->Range(10, 10'000);
BENCHMARK(BM_SharedLinkArrivalDeparture)->RangeMultiplier(10)->Range(10, 10'000);
BENCHMARK(BM_SpineDistinctPathsArrivalDeparture)->RangeMultiplier(10)->Range(10, 10'000);
BENCHMARK(BM_SpineNarrowLeavesArrivalDeparture)->RangeMultiplier(10)->Range(10, 10'000);

}  // namespace
