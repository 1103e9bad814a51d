#pragma once
// Running a sweep end to end: expand, skip what a resumed output already has, keep this shard's points,
// evaluate on threads (or over MPI ranks), write rows in point order, show progress on a terminal.
#include <cstdint>
#include <string>

#include "models/step/step_simulator.hpp"
#include "scenarios/studies/sweep.hpp"

namespace trainsim::cli {

struct SweepJob {
  std::string scenario_path;
  std::vector<scenario::Override> overrides;  ///< --set
  std::string output;                         ///< "" or "-": standard output
  scenario::RowFormat format = scenario::RowFormat::csv;
  model::Fidelity fidelity = model::Fidelity::analytic;
  int threads = 0;  ///< 0: all cores
  bool resume = false;
  scenario::Shard shard;
  bool progress = true;  ///< draw a progress bar when stderr is a terminal
  bool large = false;    ///< run a sweep past large_sweep_points (--large)
};

/// The most points a sweep runs without --large: beyond it the run takes core-hours and gigabytes.
inline constexpr std::int64_t large_sweep_points = 1'000'000;

/// Points this run had to compute (this shard's, minus those a resumed output held) and rows it wrote.
struct SweepOutcome {
  std::int64_t planned = 0;
  std::int64_t written = 0;
  [[nodiscard]] bool complete() const { return written == planned; }
  // Of the points this run computed (run_sweep only; the MPI runner leaves them 0):
  std::int64_t feasible = 0;
  std::int64_t fits = 0;
  /// The feasible point (it fits, and its run ends) of least iteration time (lowest index on a tie): a point
  /// whose failures or instability stop its run from ending is not the fastest, however short its step.
  std::int64_t fastest_point = -1;
  double fastest_iteration = 0;  ///< s
  double seconds = 0;            ///< wall clock of the sweep
};

/// Output order: rows are released in point-index order (a row is buffered until every point before it in
/// this run is written), so a finished file is sorted by `point` and resumable as a prefix.
/// Ctrl-C (SIGINT/SIGTERM) stops handing out points, writes the rows already in order and returns an
/// incomplete outcome; the output can then be resumed.
SweepOutcome run_sweep(const SweepJob& job);

/// The same sweep over MPI: rank 0 hands out chunks of point indices on request (dynamic load balancing),
/// gathers the rows and writes one output identical to run_sweep's; other ranks only evaluate. Every rank
/// must call it; the outcome is meaningful on rank 0 only. Throws InputError when trainsim was built
/// without MPI (see mpi_available()).
SweepOutcome run_sweep_mpi(const SweepJob& job);
[[nodiscard]] bool mpi_available();

}  // namespace trainsim::cli
