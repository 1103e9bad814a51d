// Fair-share solver cost: with N flows already active, one flow arrives and later departs (items = the
// arrival and the departure). Disjoint: every flow on its own link, so a change touches one component.
// Shared: all flows on one link, so every change re-solves and reschedules all N.
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

void run_arrivals(benchmark::State& state, bool shared) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Engine e;
  FlowNetwork net(e);
  std::vector<LinkId> links;
  for (std::size_t i = 0; i <= n; ++i) links.push_back(net.add_link(kBandwidth, Duration::zero()));
  // Background flows take ~1e6 simulated seconds, so all n stay active for the whole benchmark.
  const double background_bytes = 1e17 / static_cast<double>(n);
  for (std::size_t i = 0; i < n; ++i) {
    const LinkId l = shared ? links[0] : links[i];
    net.start(std::span<const LinkId>(&l, 1), background_bytes, nullptr);
  }
  e.run_until(Time::from_ps(1));
  const LinkId probe = shared ? links[0] : links[n];
  bool done = false;
  for (auto _ : state) {
    done = false;
    // The probe stops the engine when it is done; the re-solve its departure queued runs in the next
    // iteration, before the next arrival, so every change is counted once.
    net.start(std::span<const LinkId>(&probe, 1), 1000.0, [&done, &e] {
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
  run_arrivals(state, false);
}
void BM_SharedLinkArrivalDeparture(benchmark::State& state) {
  run_arrivals(state, true);
}
BENCHMARK(BM_DisjointArrivalDeparture)->RangeMultiplier(10)->Range(10, 10'000);
BENCHMARK(BM_SharedLinkArrivalDeparture)->RangeMultiplier(10)->Range(10, 10'000);

}  // namespace
