#include "models/step/event_graph_limits.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace trainsim::model {

std::size_t event_graph_task_limit() {
  const double by_memory = std::floor(kEventGraphMemoryLimitBytes / kEventGraphBytesPerTask);
  const double by_cpu = std::floor(kEventGraphCpuLimitSeconds / kEventGraphCpuSecondsPerTask);
  return static_cast<std::size_t>(std::min(by_memory, by_cpu));
}

std::string event_graph_cost(std::size_t tasks) {
  const auto n = static_cast<double>(tasks);
  return fmt::format("about {:.1f} GiB and {:.0f} s of CPU", n * kEventGraphBytesPerTask / (1 << 30),
                     n * kEventGraphCpuSecondsPerTask);
}

std::string event_graph_limits() {
  return fmt::format("{:.0f} GiB and {:.0f} s of CPU ({:.0f}M tasks at ~{:.0f} bytes and ~{:.1f} us a task)",
                     kEventGraphMemoryLimitBytes / (1 << 30), kEventGraphCpuLimitSeconds,
                     static_cast<double>(event_graph_task_limit()) / 1e6, kEventGraphBytesPerTask,
                     kEventGraphCpuSecondsPerTask * 1e6);
}

}  // namespace trainsim::model
