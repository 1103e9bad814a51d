#include "models/run/checkpoint_trace.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

using namespace trainsim;

namespace {

struct Slice {
  std::string process, thread, name;
  double ts_us = 0, dur_us = 0;
};

std::vector<Slice> checkpoint_slices(const sim::ChromeTraceWriter& writer) {
  const auto j = nlohmann::json::parse(writer.str());
  std::map<long long, std::string> processes;
  std::map<std::pair<long long, long long>, std::string> threads;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "M") continue;
    if (e["name"] == "process_name") processes[e["pid"]] = e["args"]["name"];
    if (e["name"] == "thread_name") threads[{e["pid"], e["tid"]}] = e["args"]["name"];
  }
  std::vector<Slice> out;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X" || e.value("cat", std::string{}) != "checkpoint") continue;
    out.push_back({processes[e["pid"]], threads[{e["pid"], e["tid"]}], e["name"], e["ts"], e["dur"]});
  }
  return out;
}

/// A two-stage step's trace that ends at 10 s.
sim::ChromeTraceWriter two_stages() {
  sim::ChromeTraceWriter w;
  for (const char* lane : {"stage 0 / compute", "stage 1 / compute"})
    w.record({lane,
              "F mb0 c0",
              "compute",
              sim::Time::zero(),
              sim::Time::zero() + sim::Duration::from_seconds(10),
              {}});
  return w;
}

/// A run of `checkpoints` checkpoints: a 2 s copy to host memory, a 30 s write, training stopped `stall`.
model::RunReport checkpointing(std::int64_t checkpoints, double stall) {
  model::RunReport run;
  run.checkpoints = checkpoints;
  run.checkpoint_copy_out_time = 2;
  run.checkpoint_write_time = 30;
  run.checkpoint_stall_each = stall;
  return run;
}

}  // namespace

TEST_CASE("a synchronous checkpoint: training stops for the copy and the write, drawn on every stage") {
  sim::ChromeTraceWriter w = two_stages();
  model::trace_checkpoint(w, 10, checkpointing(4, 2 + 30));  // sync: the copy, then the write
  const std::vector<Slice> s = checkpoint_slices(w);
  REQUIRE(s.size() == 4);  // two per stage
  for (const Slice& x : s) {
    CAPTURE(x.process);
    CHECK(x.thread == "checkpoint");  // the write nests inside the stall: one thread
    if (x.name == "checkpoint stall") {
      CHECK(x.ts_us == 10e6);
      CHECK(x.dur_us == 32e6);
    } else {
      CHECK(x.name == "checkpoint write");
      CHECK(x.ts_us == 12e6);  // after the 2 s copy
      CHECK(x.dur_us == 30e6);
    }
  }
  CHECK(s[0].process != s[2].process);
}

TEST_CASE("an asynchronous checkpoint: the write runs on after the short stall") {
  sim::ChromeTraceWriter w = two_stages();
  model::trace_checkpoint(w, 10, checkpointing(1, 2));  // async: the copy alone
  for (const Slice& x : checkpoint_slices(w)) {
    if (x.name == "checkpoint stall") CHECK(x.dur_us == 2e6);
    if (x.name == "checkpoint write") {
      CHECK(x.ts_us == 12e6);
      CHECK(x.dur_us == 30e6);
    }
  }
}

TEST_CASE("no checkpoints, no track") {
  sim::ChromeTraceWriter w = two_stages();
  model::trace_checkpoint(w, 10, checkpointing(0, 2));  // sized, but never written
  CHECK(checkpoint_slices(w).empty());
}
