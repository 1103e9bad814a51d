#include "report/trace.hpp"

#include <doctest/doctest.h>

#include "sim/error.hpp"

using namespace trainsim;

namespace {

// Two pipeline stages, two micro-batches, times in microseconds (as trace.json writes them). Stage 1 is
// named first but sorts second. Stage 0 runs F0 [0,100] and F1 [100,200] and sends each activation
// [100,110], [200,210]; stage 1 runs F0 [110,210], F1 [210,310], B1 [310,510], B0 [510,710] and sends the
// gradients [510,520], [710,720]; stage 0 runs B1 [520,720] and B0 [720,920]. A zero-length marker is left
// out. Memory counters: stage 0 peaks at 9 GB, stage 1 at 4 GB.
const char* const kTrace = R"({"traceEvents":[
{"name":"process_name","ph":"M","pid":2,"args":{"name":"stage 1"}},
{"name":"process_sort_index","ph":"M","pid":2,"args":{"sort_index":2}},
{"name":"process_name","ph":"M","pid":1,"args":{"name":"stage 0"}},
{"name":"process_sort_index","ph":"M","pid":1,"args":{"sort_index":1}},
{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"compute"}},
{"name":"thread_sort_index","ph":"M","pid":1,"tid":1,"args":{"sort_index":1}},
{"name":"thread_name","ph":"M","pid":1,"tid":2,"args":{"name":"pp comm"}},
{"name":"thread_sort_index","ph":"M","pid":1,"tid":2,"args":{"sort_index":2}},
{"name":"thread_name","ph":"M","pid":2,"tid":3,"args":{"name":"compute"}},
{"name":"thread_sort_index","ph":"M","pid":2,"tid":3,"args":{"sort_index":3}},
{"name":"thread_name","ph":"M","pid":2,"tid":4,"args":{"name":"pp comm"}},
{"name":"thread_sort_index","ph":"M","pid":2,"tid":4,"args":{"sort_index":4}},
{"name":"F mb0","cat":"compute","ph":"X","ts":0,"dur":100,"pid":1,"tid":1},
{"name":"F mb1","cat":"compute","ph":"X","ts":100,"dur":100,"pid":1,"tid":1},
{"name":"send F0","cat":"pp","ph":"X","ts":100,"dur":10,"pid":1,"tid":2},
{"name":"send F1","cat":"pp","ph":"X","ts":200,"dur":10,"pid":1,"tid":2},
{"name":"F mb0","cat":"compute","ph":"X","ts":110,"dur":100,"pid":2,"tid":3},
{"name":"F mb1","cat":"compute","ph":"X","ts":210,"dur":100,"pid":2,"tid":3},
{"name":"B mb1","cat":"compute","ph":"X","ts":310,"dur":200,"pid":2,"tid":3},
{"name":"B mb0","cat":"compute","ph":"X","ts":510,"dur":200,"pid":2,"tid":3},
{"name":"send B1","cat":"pp","ph":"X","ts":510,"dur":10,"pid":2,"tid":4},
{"name":"send B0","cat":"pp","ph":"X","ts":710,"dur":10,"pid":2,"tid":4},
{"name":"B mb1","cat":"compute","ph":"X","ts":520,"dur":200,"pid":1,"tid":1},
{"name":"B mb0","cat":"compute","ph":"X","ts":720,"dur":200,"pid":1,"tid":1},
{"name":"grads reduced","ph":"X","ts":920,"dur":0,"pid":1,"tid":1},
{"name":"memory_bytes","ph":"C","ts":0,"pid":1,"args":{"memory_bytes":5e9}},
{"name":"memory_bytes","ph":"C","ts":200,"pid":1,"args":{"memory_bytes":9e9}},
{"name":"memory_bytes","ph":"C","ts":920,"pid":1,"args":{"memory_bytes":7e9}},
{"name":"memory_bytes","ph":"C","ts":310,"pid":2,"args":{"memory_bytes":4e9}}
],"otherData":{"truncated":false}})";

}  // namespace

TEST_CASE("a trace is read as stages in their sort order, lanes, slices in seconds and peak memory") {
  const report::IterationTrace t = report::read_trace(kTrace, "trace.json");
  CHECK(t.processes == std::vector<std::string>{"stage 0", "stage 1"});
  REQUIRE(t.lanes.size() == 4);
  CHECK(t.lanes[0].process == 0);
  CHECK(t.lanes[0].name == "compute");
  CHECK(t.lanes[3].process == 1);
  CHECK(t.lanes[3].name == "pp comm");
  CHECK(t.slices.size() == 12);  // the zero-length marker is left out
  CHECK(t.slices.back().end == doctest::Approx(920e-6));
  CHECK(t.peak_memory == std::vector<double>{9e9, 4e9});
  CHECK_FALSE(t.truncated);
}

TEST_CASE("without recorded places the critical path walks back through the slices that end as each starts") {
  const report::IterationTrace t = report::read_trace(kTrace, "trace.json");
  // By hand, backwards from stage 0's B0 [720,920]: its own B1 ends at 720 (stage 1's send B0 also does;
  // compute wins); B1 starts at 520 when stage 1's send B1 ends; that starts at 510 when stage 1's B1 ends
  // (same stage); B1 starts at 310 after F1, F1 at 210 after F0 (compute, before stage 0's send F1);
  // F0 at 110 after stage 0's send F0, which starts at 100 when stage 0's F0 ends; F0 starts at 0.
  std::vector<std::string> walked;
  double busy = 0;
  for (const report::PathStep& p : report::critical_path(t)) {
    const auto& s = t.slices[p.slice];
    walked.push_back(t.processes[t.lanes[s.lane].process] + " " + s.name);
    busy += s.end - s.start;
  }
  CHECK(walked == std::vector<std::string>{"stage 0 F mb0", "stage 0 send F0", "stage 1 F mb0",
                                           "stage 1 F mb1", "stage 1 B mb1", "stage 1 send B1",
                                           "stage 0 B mb1", "stage 0 B mb0"});
  CHECK(busy == doctest::Approx(920e-6));  // back to back: no idle time on the path
}

TEST_CASE("communication hidden behind compute stays off the path; exposed communication is on it") {
  // One stage: compute a [0,100] with a transfer [60,100] beside it, then b [100,150] with a transfer
  // [120,150] beside it (both hidden: each ends with the compute it ran beside); then c [180,200] waits for a
  // transfer [150,180] (exposed). That transfer follows both b and the hidden one; the path goes through b.
  const report::IterationTrace t = report::read_trace(R"({"traceEvents":[
{"name":"a","cat":"compute","ph":"X","ts":0,"dur":100,"pid":1,"tid":1},
{"name":"b","cat":"compute","ph":"X","ts":100,"dur":50,"pid":1,"tid":1},
{"name":"c","cat":"compute","ph":"X","ts":180,"dur":20,"pid":1,"tid":1},
{"name":"hidden","cat":"tp","ph":"X","ts":60,"dur":40,"pid":1,"tid":2},
{"name":"hidden too","cat":"tp","ph":"X","ts":120,"dur":30,"pid":1,"tid":2},
{"name":"exposed","cat":"tp","ph":"X","ts":150,"dur":30,"pid":1,"tid":2}]})",
                                                      "trace.json");
  std::vector<std::string> walked;
  for (const report::PathStep& p : report::critical_path(t)) walked.push_back(t.slices[p.slice].name);
  CHECK(walked == std::vector<std::string>{"a", "b", "exposed", "c"});
}

TEST_CASE("a transfer that outlasts the compute it ran beside is entered where that compute ended") {
  // Compute q [0,100]; a transfer [10,102] begins beside it and ends 2 after it; compute b [102,150] waits
  // for the transfer. The path: q whole, the transfer's last 2, b whole (100 + 2 + 48 = 150, no wait).
  const report::IterationTrace t = report::read_trace(R"({"traceEvents":[
{"name":"q","cat":"compute","ph":"X","ts":0,"dur":100,"pid":1,"tid":1},
{"name":"b","cat":"compute","ph":"X","ts":102,"dur":48,"pid":1,"tid":1},
{"name":"transfer","cat":"tp","ph":"X","ts":10,"dur":92,"pid":1,"tid":2}]})",
                                                      "trace.json");
  const auto path = report::critical_path(t);
  REQUIRE(path.size() == 3);
  CHECK(t.slices[path[0].slice].name == "q");
  CHECK(t.slices[path[1].slice].name == "transfer");
  CHECK(path[1].from == doctest::Approx(100e-6));
  CHECK(t.slices[path[2].slice].name == "b");
  CHECK(path[2].from == doctest::Approx(102e-6));
}

TEST_CASE("where nothing ends as a slice starts, the path steps back over the idle gap") {
  const report::IterationTrace t = report::read_trace(R"({"traceEvents":[
{"name":"a","ph":"X","ts":0,"dur":100,"pid":1,"tid":1},
{"name":"b","ph":"X","ts":150,"dur":50,"pid":1,"tid":1}]})",
                                                      "trace.json");
  CHECK(report::critical_path(t).size() == 2);
  CHECK(report::critical_path(report::IterationTrace{}).empty());
}

TEST_CASE("a file that is not a Chrome trace is an error naming it") {
  CHECK_THROWS_WITH_AS(report::read_trace("[1, 2]", "run/trace.json"),
                       doctest::Contains("run/trace.json: expected a Chrome trace"), InputError);
  CHECK_THROWS_AS(report::read_trace(R"({"traceEvents": [1]})", "t.json"), InputError);
  CHECK_THROWS_AS(report::read_trace("{\"traceEvents\": [", "t.json"), InputError);
}

TEST_CASE("a trace that records the engine's critical path is read, not walked") {
  // Compute a [0,100]; a transfer [0,100] on another lane ends with it; compute c [100,150] waited for
  // the transfer (the engine says so: places 1 and 2), not for a. The walk would prefer a (compute), and
  // would stop at a; the recorded path is transfer then c, c entered at its start.
  const report::IterationTrace t = report::read_trace(R"({"traceEvents":[
{"name":"a","cat":"compute","ph":"X","ts":0,"dur":100,"pid":1,"tid":1},
{"name":"c","cat":"compute","ph":"X","ts":100,"dur":50,"pid":1,"tid":1,"args":{"critical_path":2}},
{"name":"transfer","cat":"dp","ph":"X","ts":0,"dur":100,"pid":1,"tid":2,"args":{"bytes":5,"critical_path":1}}]})",
                                                      "trace.json");
  std::vector<std::string> walked;
  for (const report::PathStep& p : report::walked_path(t)) walked.push_back(t.slices[p.slice].name);
  CHECK(walked == std::vector<std::string>{"a", "c"});
  const auto path = report::critical_path(t);
  REQUIRE(path.size() == 2);
  CHECK(t.slices[path[0].slice].name == "transfer");
  CHECK(path[0].from == doctest::Approx(0));
  CHECK(t.slices[path[1].slice].name == "c");
  CHECK(path[1].from == doctest::Approx(100e-6));
  CHECK(t.slices[path[1].slice].path_place == 2);
  CHECK(t.slices[0].path_place == 0);  // a: off the path
}
