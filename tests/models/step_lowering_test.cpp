#include "models/step_lowering.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "models/step_plan.hpp"
#include "sim/trace.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

topo::ClusterSpec dgx_a100(std::int64_t nodes) {
  topo::ClusterSpec c;
  auto& n = c.node;
  n.gpu.peak.fp32 = 19.5e12;
  n.gpu.peak.bf16 = 312e12;
  n.gpu.hbm_bytes = 80.0 * (1ULL << 30);
  n.gpu.hbm_bytes_per_s = 2039e9;
  n.gpus_per_node = 8;
  n.intra_bytes_per_s = 300e9;
  n.intra_latency_s = 2e-6;
  n.nics_per_node = 8;
  n.nic_bytes_per_s = 25e9;
  c.nodes = nodes;
  return c;
}

StepInput gpt_on(std::int64_t nodes, int tp, int pp, std::int64_t dp, std::int64_t global_batch) {
  StepInput in;
  in.model.layers = 16;
  in.model.hidden = 1024;
  in.model.heads = 16;
  in.model.vocab = 51200;
  in.model.seq_len = 1024;
  in.cluster = dgx_a100(nodes);
  in.plan.tp = tp;
  in.plan.pp = pp;
  in.plan.dp = dp;
  in.plan.sequence_parallel = true;
  in.plan.zero = 1;
  in.training.global_batch = global_batch;
  return in;
}

// Records lane names and counts slices.
struct Lanes : sim::TraceSink {
  std::set<std::string> lanes;
  std::size_t slices = 0;
  void record(const sim::TraceRecord& r) override {
    lanes.insert(std::string(r.lane));
    ++slices;
  }
};

}  // namespace

TEST_CASE("without data parallelism the event run takes exactly the replayed schedule's time") {
  // dp = 1: no buckets, no gathers; what is left is the pipeline, the norm and the optimizer, and the
  // event run must reproduce time_schedule to the picosecond rounding of each task.
  const StepInput in = gpt_on(1, 2, 4, 1, 16);
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  const StepCosts costs = step_costs(in, plan);
  const StepGraph g = lower_step(in, plan, costs);
  const StepTiming e = run_step_graph(g, in, plan, costs);
  const ScheduleTimeline tl =
      time_schedule(pipeline_schedule(in.plan.schedule, 4, 16, 1), 4, 16, 1, pass_times(costs));
  double expected = 0;
  for (int s = 0; s < 4; ++s) {
    const StageCost& sc = costs.stages[static_cast<std::size_t>(s)];
    expected = std::max(expected, tl.rank_end[static_cast<std::size_t>(s)] + sc.grad_norm_s + sc.optimizer_s);
  }
  CHECK(e.iteration_time == doctest::Approx(expected).epsilon(1e-9));
}

TEST_CASE("each simulated stage gets compute, tp, pp and dp streams, one lane each") {
  const StepInput in = gpt_on(2, 2, 2, 4, 16);
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  const StepCosts costs = step_costs(in, plan);
  const StepGraph g = lower_step(in, plan, costs);
  CHECK(g.instances == 1);
  CHECK(g.dag.lane_count() == 8);
  Lanes sink;
  (void)run_step_graph(g, in, plan, costs, &sink);
  CHECK(sink.slices == g.dag.size());
  for (const char* lane :
       {"stage 0 / compute", "stage 1 / tp comm", "stage 0 / pp comm", "stage 1 / dp comm"}) {
    CHECK(sink.lanes.count(lane) == 1);
  }
}

TEST_CASE("the collapsed simulation equals the per-GPU simulation on a 256-GPU cluster") {
  // 32 nodes: tp 8 inside each node, pp 4, dp 8 across nodes; every GPU its own four streams and every
  // tp and dp collective a join of its members.
  const StepInput in = gpt_on(32, 8, 4, 8, 64);
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  const StepCosts costs = step_costs(in, plan);
  const StepGraph collapsed = lower_step(in, plan, costs);
  const StepGraph full = lower_step(in, plan, costs, true);
  CHECK(full.instances == 64);
  CHECK(full.dag.lane_count() == 256 * 4);
  const StepTiming a = run_step_graph(collapsed, in, plan, costs);
  const StepTiming b = run_step_graph(full, in, plan, costs);
  CHECK(b.iteration_time == a.iteration_time);
}

TEST_CASE("the memory counter of a 1F1B stage peaks at p - s stashed micro-batches") {
  const StepInput in = gpt_on(1, 2, 4, 1, 16);
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  const StepCosts costs = step_costs(in, plan);
  struct Peaks : sim::TraceSink {
    std::map<std::string, double> peak;
    void record(const sim::TraceRecord&) override {}
    void counter(std::string_view lane, std::string_view, sim::Time, double value) override {
      double& p = peak[std::string(lane)];
      p = std::max(p, value);
    }
  } sink;
  const StageMemoryTrack track{{10, 20, 30, 40}, {1, 1, 1, 1}};
  (void)run_step_graph(lower_step(in, plan, costs), in, plan, costs, &sink, &track);
  CHECK(sink.peak["stage 0 / compute"] == doctest::Approx(10 + 4));
  CHECK(sink.peak["stage 1 / compute"] == doctest::Approx(20 + 3));
  CHECK(sink.peak["stage 3 / compute"] == doctest::Approx(40 + 1));
}
