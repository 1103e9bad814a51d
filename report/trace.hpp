#pragma once
// One iteration as `trainsim run -o DIR` records it in trace.json (sim/trace.hpp's ChromeTraceWriter):
// a process per pipeline stage ("stage 0"), a thread per stream of it ("compute", "tp comm", "pp comm",
// "dp comm", under ZeRO-3 at the event fidelity "dp reduce" (the gradients' reduce-scatters), "optimizer"),
// "X" slices with ts/dur in microseconds and "C" counters of the memory in use.
// The report draws it as a timeline with its critical path: the engine's, where the slices carry their
// place on it (args.critical_path, sim/trace.hpp's kCriticalPathArg; written by the event fidelity), else
// walked back from timestamps. The "checkpoint" threads, which follow the iteration, are not read.
#include <cstddef>
#include <string>
#include <vector>

namespace trainsim::report {

struct TraceLane {
  std::size_t process = 0;  ///< index into IterationTrace::processes
  std::string name;         ///< the thread's name ("compute")
};

struct TraceSlice {
  std::size_t lane = 0;  ///< index into IterationTrace::lanes
  std::string name;      ///< "F mb3 c0"
  std::string category;  ///< "compute", "tp", "pp", "dp", "optimizer"; may be empty
  double start = 0;      ///< seconds from the trace's start
  double end = 0;        ///< > start
  /// Its place on the critical path the engine recorded (args.critical_path: 1 for the first slice on it);
  /// 0 when it is off the path or the trace records none.
  double path_place = 0;
};

struct IterationTrace {
  std::vector<std::string> processes;  ///< in the trace's sort order
  std::vector<TraceLane> lanes;        ///< grouped by process, each group in its sort order
  std::vector<TraceSlice> slices;      ///< ordered by start; slices of zero length are left out
  std::vector<double> peak_memory;     ///< per process: the largest memory counter, bytes; 0 when none
  bool truncated = false;              ///< the writer hit its event cap (otherData.truncated)
};

/// Reads trace.json's text. Throws InputError naming `file_label` when it is not a Chrome trace object.
[[nodiscard]] IterationTrace read_trace(const std::string& json, const std::string& file_label);

/// Two instants closer than this are the same instant: the trace prints times to the nanosecond.
inline constexpr double kTraceEpsilon = 5e-9;

/// A slice on the critical path and the instant the path enters it: its start, or later where it ran beside
/// the compute before it on the path (only its tail, after that compute ended, was waited for).
struct PathStep {
  std::size_t slice = 0;  ///< index into IterationTrace::slices
  double from = 0;
};

/// The critical path in time order: the slices that carry a place on it, in that order, each entered at its
/// start or where the one before it on the path ended. A trace without places (the analytic fidelity's,
/// or one written before the engine recorded them) gets walked_path's.
[[nodiscard]] std::vector<PathStep> critical_path(const IterationTrace& trace);

/// The critical path of a trace that records when each slice ran, not what it waited for: found
/// backwards from the slice that ends last: each step goes to a slice that ends when the
/// current one starts (within kTraceEpsilon), preferring compute (communication that ends with the compute
/// beside it was hidden by it), then the same lane, then the same process, then the longest; where none
/// does (the stage sat idle), to the slice that ended last before it. A communication slice that started
/// while compute of its stage ran, and outlasted it, is entered where that compute ended, and the path goes
/// on from that compute. The chain ends at a slice with nothing before it. Empty for a trace without slices.
[[nodiscard]] std::vector<PathStep> walked_path(const IterationTrace& trace);

}  // namespace trainsim::report
