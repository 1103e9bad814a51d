#pragma once
// What one step's event graph may cost before the event fidelity refuses it: a memory and a CPU-time
// limit (stated in `trainsim run --help` and SPEC.md), turned into a task count by what a task was measured
// to cost. The lowering (step_lowering.hpp) refuses, before it builds, a graph whose estimated task count
// would pass either limit, and saying so with the estimate's memory and CPU time.
#include <cstddef>
#include <string>

namespace trainsim::model {

/// The most memory one step's graph may take, all of the run included (costs, routes, graph, engine,
/// flows): 8 GiB, what a laptop or a shared CI runner can give one simulation.
inline constexpr double kEventGraphMemoryLimitBytes = 8.0 * (1 << 30);
/// The most CPU time one step's simulation may take: a minute.
inline constexpr double kEventGraphCpuLimitSeconds = 60.0;

/// What a routed full-cluster task costs, all of the run included: Llama-3 405B on 16,384 H100
/// (bench_models_step's BM_Llama3_405b_16k_H100_FullCluster, 2026-12-05, load 9): 3.58M tasks and 7.3M
/// edges in 496 MB peak and 2.45 s of CPU, 138 bytes and 0.68 us a task. Tasks now take about 100 bytes and
/// 0.3–0.6 us (bench/README.md); the limit keeps these older, higher figures on purpose, so that the
/// refusal's estimate errs on the safe side and what `run --help` states holds.
inline constexpr double kEventGraphBytesPerTask = 140;
inline constexpr double kEventGraphCpuSecondsPerTask = 0.7e-6;

/// The most tasks one step's graph may hold: the fewer of the memory limit's and the CPU limit's counts at
/// the measured costs (floor(8 GiB / 140 B) = 61,356,675; 60 s / 0.7 us = 85,714,285).
[[nodiscard]] std::size_t event_graph_task_limit();

/// "about 20.1 GiB and 108 s of CPU" for `tasks` tasks at the measured costs.
[[nodiscard]] std::string event_graph_cost(std::size_t tasks);

/// "8 GiB and 60 s of CPU (61M tasks at ~140 bytes and ~0.7 us a task)": the limits as the help states them
/// (M: millions).
[[nodiscard]] std::string event_graph_limits();

}  // namespace trainsim::model
