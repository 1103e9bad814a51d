#include "models/run/checkpoint_trace.hpp"

#include <string>
#include <vector>

namespace trainsim::model {

void trace_checkpoint(sim::ChromeTraceWriter& trace, double iteration_end, const RunReport& run,
                      std::span<const sim::TraceArg> args) {
  if (run.checkpoints <= 0) return;
  const auto at = [](double seconds) { return sim::Time::zero() + sim::Duration::from_seconds(seconds); };
  const double write_start = iteration_end + run.checkpoint_copy_out_time;
  const std::vector<std::string> processes = trace.processes();  // a copy: record() appends to the original
  for (const std::string& process : processes) {
    const std::string lane = process + " / checkpoint";
    trace.record(sim::TraceRecord{lane, "checkpoint stall", "checkpoint", at(iteration_end),
                                  at(iteration_end + run.checkpoint_stall_each), args});
    trace.record(sim::TraceRecord{lane, "checkpoint write", "checkpoint", at(write_start),
                                  at(write_start + run.checkpoint_write_time), args});
  }
}

}  // namespace trainsim::model
