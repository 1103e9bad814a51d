#include "sim/trace.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/dag.hpp"

using trainsim::sim::ChromeTraceWriter;
using trainsim::sim::CsvTraceWriter;
using trainsim::sim::Dag;
using trainsim::sim::Duration;
using trainsim::sim::Engine;
using trainsim::sim::FilteredSink;
using trainsim::sim::FlowNetwork;
using trainsim::sim::LinkId;
using trainsim::sim::Time;
using trainsim::sim::TraceArg;
using trainsim::sim::TraceRecord;

namespace {
TraceRecord slice(std::string_view lane, std::string_view name, std::int64_t start_ps, std::int64_t end_ps) {
  return TraceRecord{
      .lane = lane, .name = name, .start = Time::from_ps(start_ps), .end = Time::from_ps(end_ps)};
}

// A small step-like graph: compute on two GPUs, gradients over a shared link, an update after both.
std::string trace_of_small_step() {
  Engine e;
  FlowNetwork net(e);
  const LinkId l = net.add_link(1e9, Duration::from_ps(1'000'000));
  Dag dag;
  std::vector<trainsim::sim::TaskId> sends;
  const std::vector<LinkId> path{l};
  for (int g = 0; g < 2; ++g) {
    const std::string gpu = "gpu " + std::to_string(g);
    const auto fwd =
        dag.busy(dag.lane(gpu + " / compute"), Duration::from_ps(3'000'000 + g), "forward", "compute");
    const auto send = dag.transfer(dag.lane(gpu + " / dp comm"), path, 1e6, "grads", "comm");
    dag.depend(fwd, send);
    sends.push_back(send);
  }
  const auto update =
      dag.busy(dag.lane("gpu 0 / compute"), Duration::from_ps(500'000), "update", "optimizer");
  for (auto s : sends) dag.depend(s, update);
  ChromeTraceWriter writer;
  trainsim::sim::execute(dag, e, &net, &writer);
  return writer.str();
}
}  // namespace

TEST_CASE("two runs of the same DAG give byte-identical Chrome traces") {
  const std::string first = trace_of_small_step();
  CHECK(first == trace_of_small_step());
  CHECK(first.find("\"grads\"") != std::string::npos);
}

TEST_CASE("the Chrome trace parses as JSON with complete events and named processes and threads") {
  const auto j = nlohmann::json::parse(trace_of_small_step());
  REQUIRE(j.contains("traceEvents"));
  REQUIRE(j.contains("otherData"));
  CHECK(j["otherData"]["truncated"] == false);
  std::set<std::string> processes;
  std::set<std::string> threads;
  int slices = 0;
  for (const auto& ev : j["traceEvents"]) {
    const std::string ph = ev["ph"];
    CHECK(ev["pid"].get<std::int64_t>() > 0);
    if (ph == "X") {
      ++slices;
      CHECK(ev.contains("name"));
      CHECK(ev["ts"].is_number());
      CHECK(ev["dur"].get<double>() >= 0.0);
      CHECK(ev["tid"].get<std::int64_t>() > 0);
    } else if (ph == "M" && ev["name"] == "process_name") {
      processes.insert(ev["args"]["name"].get<std::string>());
    } else if (ph == "M" && ev["name"] == "thread_name") {
      threads.insert(ev["args"]["name"].get<std::string>());
    }
  }
  CHECK(slices == 5);
  CHECK(processes == std::set<std::string>{"gpu 0", "gpu 1"});
  CHECK(threads == std::set<std::string>{"compute", "dp comm"});
}

TEST_CASE("Chrome timestamps are microseconds with exact nanosecond digits") {
  ChromeTraceWriter w;
  w.record(slice("gpu 0 / compute", "k", 1'234'567, 3'000'000));  // 1.234567 us rounds to 1.235 us
  const std::string text = w.str();
  CHECK(text.find("\"ts\":1.235,\"dur\":1.765") != std::string::npos);
  const auto j = nlohmann::json::parse(text);
  CHECK(j["traceEvents"].back()["ts"].get<double>() == doctest::Approx(1.235).scale(0));
}

TEST_CASE("overlapping slices of one lane go to separate threads and nested ones stay together") {
  ChromeTraceWriter w;
  w.record(slice("gpu 0 / comm", "outer", 0, 100));
  w.record(slice("gpu 0 / comm", "inner", 10, 20));
  w.record(slice("gpu 0 / comm", "crossing", 50, 150));
  const auto j = nlohmann::json::parse(w.str());
  std::map<std::string, std::int64_t> tid;
  std::set<std::string> thread_names;
  for (const auto& ev : j["traceEvents"]) {
    if (ev["ph"] == "X") tid[ev["name"]] = ev["tid"];
    if (ev["ph"] == "M" && ev["name"] == "thread_name")
      thread_names.insert(ev["args"]["name"].get<std::string>());
  }
  CHECK(tid["outer"] == tid["inner"]);
  CHECK(tid["crossing"] != tid["outer"]);
  CHECK(thread_names == std::set<std::string>{"comm", "comm #2"});
}

TEST_CASE("the Chrome writer stops at its event cap and says so") {
  ChromeTraceWriter w(2);
  for (int i = 0; i < 3; ++i) w.record(slice("l", "s", i, i + 1));
  w.add_metadata("scenario", "tiny");
  CHECK(w.recorded() == 2);
  CHECK(w.dropped() == 1);
  const auto j = nlohmann::json::parse(w.str());
  CHECK(j["otherData"]["truncated"] == true);
  CHECK(j["otherData"]["dropped_events"] == 1);
  CHECK(j["otherData"]["scenario"] == "tiny");
}

TEST_CASE("names are escaped, args and counters are written, non-finite numbers become null") {
  ChromeTraceWriter w;
  const std::vector<TraceArg> args{{.key = "bytes", .number = 1e6},
                                   {.key = "bad", .number = 1.0 / 0.0},
                                   {.key = "op", .text = "all_reduce"}};
  TraceRecord r = slice("gpu 0 / comm", "say \"hi\"\n\\", 0, 5);
  r.args = args;
  w.record(r);
  w.counter("gpu 0 / memory", "memory_bytes", Time::from_ps(2000), 42.0);
  const auto j = nlohmann::json::parse(w.str());
  bool saw_slice = false;
  bool saw_counter = false;
  for (const auto& ev : j["traceEvents"]) {
    if (ev["ph"] == "X") {
      saw_slice = true;
      CHECK(ev["name"] == "say \"hi\"\n\\");
      CHECK(ev["args"]["bytes"] == 1e6);
      CHECK(ev["args"]["bad"].is_null());
      CHECK(ev["args"]["op"] == "all_reduce");
    }
    if (ev["ph"] == "C") {
      saw_counter = true;
      CHECK(ev["args"]["memory_bytes"] == 42.0);
      CHECK(ev["ts"].get<double>() == doctest::Approx(0.002).scale(0));
    }
  }
  CHECK(saw_slice);
  CHECK(saw_counter);
}

TEST_CASE("the CSV writer has a header row, quotes when needed and writes seconds") {
  std::ostringstream out;
  CsvTraceWriter w(out);
  TraceRecord r = slice("gpu 1 / compute", "matmul, big", 1'500'000'000'000, 2'000'000'000'000);
  r.category = "compute";
  w.record(r);
  CHECK(out.str() == "lane,name,category,start_s,end_s\ngpu 1 / compute,\"matmul, big\",compute,1.5,2\n");
}

TEST_CASE("a filtered sink keeps only the chosen lanes") {
  std::ostringstream out;
  CsvTraceWriter csv(out);
  FilteredSink only_gpu0(csv, FilteredSink::lanes_starting_with({"gpu 0 /"}));
  only_gpu0.record(slice("gpu 0 / compute", "a", 0, 1));
  only_gpu0.record(slice("gpu 10 / compute", "b", 0, 1));
  CHECK(out.str() == "lane,name,category,start_s,end_s\ngpu 0 / compute,a,,0,1e-12\n");
}

TEST_CASE("a tee sends every slice to each sink and a filter bounds a DAG's trace to chosen ranks") {
  Dag dag;
  for (int g = 0; g < 4; ++g)
    dag.busy(dag.lane("gpu " + std::to_string(g) + " / compute"), Duration::from_ps(5), "k");
  std::ostringstream all_csv;
  std::ostringstream rank0_csv;
  CsvTraceWriter all(all_csv);
  CsvTraceWriter rank0(rank0_csv);
  FilteredSink only_rank0(rank0, FilteredSink::lanes_starting_with({"gpu 0 /"}));
  trainsim::sim::TeeSink both({&all, &only_rank0});
  Engine e;
  trainsim::sim::execute(dag, e, nullptr, &both);
  const std::string everything = all_csv.str();
  CHECK(std::count(everything.begin(), everything.end(), '\n') == 5);  // header + 4 slices
  CHECK(rank0_csv.str() == "lane,name,category,start_s,end_s\ngpu 0 / compute,k,,0,5e-12\n");
}
