#pragma once
// The checkpoint track of a step's trace (trace.json): the checkpoint that closes a segment of training,
// drawn after the traced iteration, on a thread "checkpoint" of every process the trace holds (every GPU
// writes its shard). Two slices, category "checkpoint", from the run model (checkpoint_io.hpp):
//  - "checkpoint stall": training stopped, from the iteration's end for RunReport::checkpoint_stall_each
//    (sync: copy-out + write; async: copy-out, and any wait for the previous write to finish);
//  - "checkpoint write": to durable storage, from the end of the copy-out for checkpoint_write_time.
// Nothing is drawn when the run writes no checkpoint.
#include <span>

#include "models/run/run_report.hpp"
#include "sim/trace.hpp"

namespace trainsim::model {

/// Records the two slices (see the file comment) on each of `trace`'s processes, from `iteration_end`
/// seconds; every slice carries `args`.
void trace_checkpoint(sim::ChromeTraceWriter& trace, double iteration_end, const RunReport& run,
                      std::span<const sim::TraceArg> args = {});

}  // namespace trainsim::model
