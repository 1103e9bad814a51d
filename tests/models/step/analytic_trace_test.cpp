// The analytic trace: the closed form's own timeline in the event trace's layout. Checked as a reader of
// trace.json would: it is JSON with a traceEvents array; every thread's slices follow one another without
// overlapping; the latest slice ends at the analytic iteration time; each stage's compute thread holds one
// slice per pass (2·m per chunk under 1F1B); the memory counter stashes and releases micro-batches so that
// its peak is the schedule's in-flight count.
#include "models/step/analytic_trace.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "models/step/step_plan.hpp"
#include "sim/trace.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::model;
using nlohmann::json;

namespace {

// The shared small GPT on DGX A100, with small gradient buckets so that every stage lays several.
StepInput gpt_on(std::int64_t nodes, int tp, int pp, std::int64_t dp, std::int64_t global_batch) {
  StepInput in = testing::small_gpt_on_a100(nodes, tp, pp, dp, global_batch);
  in.plan.bucket_bytes = 4e6;
  return in;
}

struct Slice {
  std::string name;
  double ts = 0;
  double dur = 0;
  json args;
};

// A trace as a reader sees it: thread names by (pid, tid), process names by pid, slices per thread in
// file order, counter samples per process in file order.
struct ParsedTrace {
  std::map<long long, std::string> process;
  std::map<std::pair<long long, long long>, std::string> thread;
  std::map<std::pair<long long, long long>, std::vector<Slice>> slices;
  std::map<long long, std::vector<std::pair<double, double>>> memory;  // (ts, bytes)

  [[nodiscard]] const std::vector<Slice>& of(const std::string& proc, const std::string& thread_name) const {
    static const std::vector<Slice> none;
    for (const auto& [key, name] : thread) {
      if (name == thread_name && process.at(key.first) == proc)
        return slices.count(key) ? slices.at(key) : none;
    }
    return none;
  }
  [[nodiscard]] double last_end() const {
    double end = 0;
    for (const auto& [key, list] : slices) {
      for (const Slice& x : list) end = std::max(end, x.ts + x.dur);
    }
    return end;
  }
};

ParsedTrace parse(const std::string& text) {
  const json trace = json::parse(text);  // throws on anything that is not JSON
  REQUIRE(trace.is_object());
  REQUIRE(trace.contains("traceEvents"));
  REQUIRE(trace["traceEvents"].is_array());
  ParsedTrace out;
  for (const json& e : trace["traceEvents"]) {
    const std::string ph = e.at("ph").get<std::string>();
    const auto pid = e.at("pid").get<long long>();
    if (ph == "M" && e.at("name") == "process_name") out.process[pid] = e["args"]["name"].get<std::string>();
    if (ph == "M" && e.at("name") == "thread_name") {
      out.thread[{pid, e.at("tid").get<long long>()}] = e["args"]["name"].get<std::string>();
    }
    if (ph == "X") {
      out.slices[{pid, e.at("tid").get<long long>()}].push_back(
          Slice{e.at("name").get<std::string>(), e.at("ts").get<double>(), e.at("dur").get<double>(),
                e.value("args", json::object())});
    }
    if (ph == "C" && e.at("name") == "memory_bytes") {
      out.memory[pid].emplace_back(e.at("ts").get<double>(), e["args"]["memory_bytes"].get<double>());
    }
  }
  return out;
}

// Times are written in µs with nanosecond resolution, each end rounded on its own.
constexpr double kRoundingUs = 0.002;

struct Traced {
  StepPlan plan;
  StepCosts costs;
  StepTiming timing;
  ParsedTrace trace;
  StageMemoryTrack memory;
};

Traced trace_of(const StepInput& in) {
  Traced t;
  t.plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(t.plan.feasible);
  t.costs = step_costs(in, t.plan);
  for (int s = 0; s < t.plan.pp; ++s) {  // round numbers, so the counter's arithmetic is exact
    t.memory.resident.push_back(1e9 * (s + 1));
    t.memory.per_micro_batch.push_back(1e8);
  }
  sim::ChromeTraceWriter writer;
  t.timing = trace_analytic_step(in, t.plan, t.costs, writer, &t.memory);
  t.trace = parse(writer.str());
  return t;
}

// Every slice follows the previous one of its thread (file order is by thread, then start): no overlap,
// no nesting, starts and ends non-decreasing. Every slice says it is the analytic timeline.
void check_threads_are_sequential(const ParsedTrace& trace) {
  REQUIRE_FALSE(trace.slices.empty());
  for (const auto& [key, list] : trace.slices) {
    INFO(trace.process.at(key.first) << " / " << trace.thread.at(key));
    double previous_end = 0;
    for (const Slice& x : list) {
      INFO(x.name);
      CHECK(x.dur >= 0.0);
      CHECK(x.ts + kRoundingUs >= previous_end);
      previous_end = x.ts + x.dur;
      CHECK(x.args.value("fidelity", std::string{}) == "analytic");
    }
  }
}

// Compute-thread pass slices ("F mb3 c0", "B …", "W …") of one stage, counted per kind letter and chunk.
std::map<std::pair<char, int>, int> passes_per_chunk(const ParsedTrace& trace, int stage) {
  static const std::regex pass(R"(([FBW]) mb(\d+) c(\d+))");
  std::map<std::pair<char, int>, int> n;
  for (const Slice& x : trace.of("stage " + std::to_string(stage), "compute")) {
    std::smatch match;
    if (std::regex_match(x.name, match, pass)) ++n[{match[1].str()[0], std::stoi(match[3].str())}];
  }
  return n;
}

}  // namespace

TEST_CASE("1F1B: a process per stage, 2·m pass slices on each compute thread, ending at the step time") {
  const int p = 4;
  const std::int64_t dp = 2;
  const StepInput in = gpt_on(4, 4, p, dp, 16);  // 32 GPUs; m = 16 / 2 = 8
  const Traced t = trace_of(in);
  const int m = static_cast<int>(t.plan.micro_batches);
  REQUIRE(m == 8);
  check_threads_are_sequential(t.trace);
  CHECK(std::abs(t.trace.last_end() - t.timing.iteration_time * 1e6) <= kRoundingUs);
  // The timing is analytic_step's, to the bit: tracing does not change the model.
  CHECK(t.timing.iteration_time == analytic_step(in, t.plan, t.costs).iteration_time);

  REQUIRE(t.trace.process.size() == static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) {
    INFO("stage " << s);
    const auto n = passes_per_chunk(t.trace, s);
    CHECK(n.size() == 2);  // F and B of chunk 0, nothing else
    CHECK(n.count({'F', 0}) == 1);
    CHECK(n.count({'B', 0}) == 1);
    if (n.count({'F', 0}) == 1) CHECK(n.at({'F', 0}) == m);
    if (n.count({'B', 0}) == 1) CHECK(n.at({'B', 0}) == m);
    const auto& compute = t.trace.of("stage " + std::to_string(s), "compute");
    REQUIRE(compute.size() == static_cast<std::size_t>(2 * m));  // the passes
    // The update on its own track, after the last pass, as long as step_costs prices it.
    const auto& optimizer = t.trace.of("stage " + std::to_string(s), "optimizer");
    REQUIRE(optimizer.size() == 1);
    CHECK(optimizer.front().name == "optimizer");
    CHECK(optimizer.front().ts >= compute.back().ts + compute.back().dur - kRoundingUs);
    CHECK(std::abs(optimizer.front().dur - t.costs.stages[static_cast<std::size_t>(s)].optimizer_s * 1e6) <=
          kRoundingUs);
    // Hand-overs: every forward but the last stage's sends an activation, every backward but stage 0's a
    // gradient.
    const auto& pp = t.trace.of("stage " + std::to_string(s), "pp comm");
    CHECK(pp.size() == static_cast<std::size_t>((s < p - 1 ? m : 0) + (s > 0 ? m : 0)));
    // Data parallelism (ZeRO 1): buckets, then the norm, then the updated weights' all-gather.
    const auto& dpc = t.trace.of("stage " + std::to_string(s), "dp comm");
    REQUIRE(dpc.size() >= 3);
    CHECK(dpc.front().name.rfind("grad bucket c0 ", 0) == 0);
    CHECK(dpc[dpc.size() - 2].name == "grad norm all-reduce");
    CHECK(dpc.back().name == "param all-gather");
  }
  // The stage that ends last sets the step.
  double last_end = 0;
  for (int s = 0; s < p; ++s) {
    const auto& dpc = t.trace.of("stage " + std::to_string(s), "dp comm");
    last_end = std::max(last_end, dpc.back().ts + dpc.back().dur);
  }
  CHECK(std::abs(last_end - t.timing.iteration_time * 1e6) <= kRoundingUs);
}

TEST_CASE("the memory counter stashes at each forward and releases at each backward: 1F1B holds p − s") {
  const int p = 4;
  const StepInput in = gpt_on(4, 4, p, 2, 16);
  const Traced t = trace_of(in);
  const int m = static_cast<int>(t.plan.micro_batches);
  REQUIRE(t.trace.memory.size() == static_cast<std::size_t>(p));
  for (const auto& [pid, samples] : t.trace.memory) {
    const std::string proc = t.trace.process.at(pid);
    const int s = std::stoi(proc.substr(std::string("stage ").size()));
    INFO(proc);
    const double resident = t.memory.resident[static_cast<std::size_t>(s)];
    const double one = t.memory.per_micro_batch[static_cast<std::size_t>(s)];
    REQUIRE(samples.size() == static_cast<std::size_t>(1 + 2 * m));  // the start, then every F and B
    CHECK(samples.front().first == 0.0);
    CHECK(samples.front().second == resident);
    CHECK(samples.back().second == doctest::Approx(resident).scale(0));  // every stash released
    double peak = 0;
    double previous = 0;
    for (const auto& [ts, bytes] : samples) {
      CHECK(ts >= previous);
      previous = ts;
      peak = std::max(peak, bytes);
    }
    // PipeDream-flush keeps min(p − s, m) micro-batches in flight on stage s (Narayanan et al. 2021).
    CHECK(peak == doctest::Approx(resident + std::min(p - s, m) * one).scale(0));
  }
}

TEST_CASE("interleaved: 2·m pass slices per chunk on every stage, and the last slice ends the step") {
  const int p = 4;
  StepInput in = gpt_on(4, 4, p, 2, 16);  // m = 8, a multiple of p
  in.plan.schedule = Schedule::interleaved;
  in.plan.virtual_stages = 2;
  const Traced t = trace_of(in);
  const int m = static_cast<int>(t.plan.micro_batches);
  REQUIRE(t.plan.virtual_stages == 2);
  check_threads_are_sequential(t.trace);
  CHECK(std::abs(t.trace.last_end() - t.timing.iteration_time * 1e6) <= kRoundingUs);
  for (int s = 0; s < p; ++s) {
    INFO("stage " << s);
    const auto n = passes_per_chunk(t.trace, s);
    for (int c = 0; c < 2; ++c) {
      INFO("chunk " << c);
      REQUIRE(n.count({'F', c}) == 1);
      REQUIRE(n.count({'B', c}) == 1);
      CHECK(n.at({'F', c}) + n.at({'B', c}) == 2 * m);
      CHECK(n.at({'F', c}) == m);
    }
  }
}

TEST_CASE("ZB-H1: each stage also runs m W slices; threads stay sequential and the step ends on time") {
  const int p = 4;
  StepInput in = gpt_on(4, 4, p, 2, 16);
  in.plan.schedule = Schedule::zero_bubble_h1;
  const Traced t = trace_of(in);
  const int m = static_cast<int>(t.plan.micro_batches);
  check_threads_are_sequential(t.trace);
  CHECK(std::abs(t.trace.last_end() - t.timing.iteration_time * 1e6) <= kRoundingUs);
  for (int s = 0; s < p; ++s) {
    const auto n = passes_per_chunk(t.trace, s);
    REQUIRE(n.count({'W', 0}) == 1);
    CHECK(n.at({'W', 0}) == m);
    CHECK(n.at({'F', 0}) == m);
    CHECK(n.at({'B', 0}) == m);
  }
}

TEST_CASE("ZeRO-3: each pass's gathers on dp comm, within the pass; the step still ends on time") {
  StepInput in = gpt_on(4, 4, 2, 4, 16);  // 32 GPUs: tp 4, pp 2, dp 4
  in.plan.zero = ZeroStage::parameters;
  const Traced t = trace_of(in);
  const int m = static_cast<int>(t.plan.micro_batches);
  check_threads_are_sequential(t.trace);
  CHECK(std::abs(t.trace.last_end() - t.timing.iteration_time * 1e6) <= kRoundingUs);
  for (int s = 0; s < 2; ++s) {
    INFO("stage " << s);
    const auto& dpc = t.trace.of("stage " + std::to_string(s), "dp comm");
    REQUIRE(!dpc.empty());
    const auto gathers = std::count_if(dpc.begin(), dpc.end(), [](const Slice& x) {
      return x.name.ends_with(" zero3 gather") || x.name.ends_with(" zero3 gather+reduce-scatter");
    });
    CHECK(gathers == 2 * m);  // before every forward and every backward
  }
}

TEST_CASE("without overlap_grad_reduce the buckets follow the last pass, numbered over the stage") {
  StepInput in = gpt_on(4, 4, 4, 2, 16);
  in.plan.overlap_grad_reduce = false;
  const Traced t = trace_of(in);
  check_threads_are_sequential(t.trace);
  CHECK(std::abs(t.trace.last_end() - t.timing.iteration_time * 1e6) <= kRoundingUs);
  for (int s = 0; s < 4; ++s) {
    const std::string proc = "stage " + std::to_string(s);
    const auto& compute = t.trace.of(proc, "compute");
    const Slice& last_pass = compute.back();
    const auto& dpc = t.trace.of(proc, "dp comm");
    REQUIRE(!dpc.empty());
    CHECK(dpc.front().name == "grad bucket 0");
    CHECK(dpc.front().ts + kRoundingUs >= last_pass.ts + last_pass.dur);
  }
}
