// The event graph's limits: what --help states (8 GiB, a minute of CPU) and the task count they allow.
#include "models/step/event_graph_limits.hpp"

#include <doctest/doctest.h>

#include "models/step/step_lowering.hpp"

using namespace trainsim::model;

TEST_CASE("the event graph's limits are 8 GiB and a minute of CPU at the measured cost of a task") {
  // floor(8 · 2^30 / 140) = floor(61,356,675.66) tasks by memory; 60 / 0.7e-6 = 85,714,285 by CPU time.
  CHECK(event_graph_task_limit() == 61'356'675);
  CHECK(LoweringOptions{}.max_tasks == 61'356'675);
  CHECK(event_graph_limits() == "8 GiB and 60 s of CPU (61M tasks at ~140 bytes and ~0.7 us a task)");
  // 10M tasks: 1.4e9 bytes = 1.30 GiB, 7 s.
  CHECK(event_graph_cost(10'000'000) == "about 1.3 GiB and 7 s of CPU");
}
