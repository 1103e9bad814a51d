#include "models/step/step_lowering.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "models/step/asymmetry.hpp"
#include "models/step/step_plan.hpp"
#include "sim/error.hpp"
#include "sim/trace.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

using testing::dgx_a100;
StepInput gpt_on(std::int64_t nodes, int tp, int pp, std::int64_t dp, std::int64_t global_batch) {
  return testing::small_gpt_on_a100(nodes, tp, pp, dp, global_batch);
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

// The merged graph's step is the unmerged one's to the picosecond: its time and the parts the event run
// measures (the exposed data-parallel time, the bubble).
void check_same_step(const StepGraph& unmerged, const StepGraph& merged, const StepInput& in,
                     const StepPlan& plan, const StepCosts& costs) {
  const StepTiming a = run_step_graph(unmerged, in, plan, costs);
  const StepTiming b = run_step_graph(merged, in, plan, costs);
  CHECK(b.iteration_time == a.iteration_time);
  CHECK(b.time.exposed_dp_comm == a.time.exposed_dp_comm);
  CHECK(b.bubble_fraction == a.bubble_fraction);
}

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

TEST_CASE("each simulated stage gets compute, tp, pp, dp and optimizer streams, one lane each") {
  const StepInput in = gpt_on(2, 2, 2, 4, 16);
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  const StepCosts costs = step_costs(in, plan);
  const StepGraph g = lower_step(in, plan, costs);
  CHECK(g.instances == 1);
  CHECK(g.dag.lane_count() == 2 * 5);
  Lanes sink;
  (void)run_step_graph(g, in, plan, costs, &sink);
  CHECK(sink.slices == g.dag.size());
  for (const char* lane : {"stage 0 / compute", "stage 1 / tp comm", "stage 0 / pp comm", "stage 1 / dp comm",
                           "stage 0 / optimizer"}) {
    CHECK(sink.lanes.count(lane) == 1);
  }
}

TEST_CASE("the collapsed simulation equals the per-GPU simulation on a 256-GPU cluster") {
  // 32 nodes: tp 8 inside each node, pp 4, dp 8 across nodes; every GPU its own five streams and every
  // tp and dp collective a join of its members.
  const StepInput in = gpt_on(32, 8, 4, 8, 64);
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  const StepCosts costs = step_costs(in, plan);
  const StepGraph collapsed = lower_step(in, plan, costs);
  const StepGraph full = lower_step(in, plan, costs, LoweringOptions{.full_cluster = true});
  CHECK(full.instances == 64);
  CHECK(full.dag.lane_count() == 256 * 5);
  const StepTiming a = run_step_graph(collapsed, in, plan, costs);
  const StepTiming b = run_step_graph(full, in, plan, costs);
  CHECK(b.iteration_time == a.iteration_time);
}

TEST_CASE("the merged lowering gives every layout the same step, to the picosecond, with fewer tasks") {
  // LoweringOptions::merge_serial folds a stage's serial kernels and tensor-parallel collectives into one
  // task per run; each would start as the one before it ends, so nothing the run reports may move.
  struct Case {
    const char* what;
    int tp, pp, cp;
    std::int64_t dp;
    Schedule schedule;
    int virtual_stages;
    ZeroStage zero;
    bool reshard = true, tp_overlap = true, blocking_p2p = false, overlap_grad = true, straggler = false;
    double bucket_slowdown = 0;  // StepCosts::bucket_overlap_slowdown: the last backward's kernels slower
  };
  const std::vector<Case> cases{
      {"1f1b zero 1", 2, 4, 1, 2, Schedule::one_f_one_b, 1, ZeroStage::optimizer_states},
      {"gpipe", 2, 4, 1, 2, Schedule::gpipe, 1, ZeroStage::optimizer_states},
      {"interleaved", 2, 4, 1, 2, Schedule::interleaved, 2, ZeroStage::gradients},
      {"zero-bubble-h1", 2, 4, 1, 2, Schedule::zero_bubble_h1, 1, ZeroStage::optimizer_states},
      {"zero 3", 2, 2, 1, 4, Schedule::one_f_one_b, 1, ZeroStage::parameters},
      {"zero 3 weights kept", 2, 2, 1, 4, Schedule::one_f_one_b, 1, ZeroStage::parameters, false},
      {"no tp overlap", 2, 4, 1, 2, Schedule::one_f_one_b, 1, ZeroStage::none, true, false},
      {"blocking p2p", 2, 4, 1, 2, Schedule::one_f_one_b, 1, ZeroStage::optimizer_states, true, true, true},
      {"buckets after the passes", 2, 4, 1, 2, Schedule::one_f_one_b, 1, ZeroStage::none, true, true, false,
       false},
      {"context parallel", 2, 2, 2, 2, Schedule::one_f_one_b, 1, ZeroStage::optimizer_states},
      {"a straggling stage", 2, 4, 1, 2, Schedule::one_f_one_b, 1, ZeroStage::optimizer_states, true, true,
       false, true, true},
      // Only the pass that releases the buckets runs slower: its units' work differs from the same units'
      // in the other backward passes (the merged lowering keeps a unit's work per pass kind otherwise).
      {"buckets slow the last backward", 2, 4, 1, 2, Schedule::one_f_one_b, 1, ZeroStage::optimizer_states,
       true, true, false, true, false, 0.5},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    StepInput in = gpt_on(2, c.tp, c.pp, c.dp, 32);
    in.plan.cp = c.cp;
    in.plan.schedule = c.schedule;
    in.plan.virtual_stages = c.virtual_stages;
    in.plan.zero = c.zero;
    in.plan.framework.reshard_after_forward = c.reshard;
    in.plan.framework.tp_comm_overlap = c.tp_overlap;
    in.plan.framework.blocking_p2p = c.blocking_p2p;
    in.plan.overlap_grad_reduce = c.overlap_grad;
    const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
    REQUIRE(plan.feasible);
    StepCosts costs = step_costs(in, plan);
    if (c.straggler) {
      std::vector<double> slowdown(static_cast<std::size_t>(c.pp), 1.0);
      slowdown[1] = 1.3;
      slow_stages(costs, plan, slowdown);
    }
    if (c.bucket_slowdown > 0) {
      costs.bucket_overlap_slowdown = c.bucket_slowdown;
      REQUIRE(last_grads_slowdown(costs, plan, 0) > 1.0);
    }
    const StepGraph pieces = lower_step(in, plan, costs);
    const StepGraph merged = lower_step(in, plan, costs, LoweringOptions{.merge_serial = true});
    CHECK(merged.dag.size() < pieces.dag.size());
    check_same_step(pieces, merged, in, plan, costs);
  }
}

TEST_CASE("the merged routed full cluster gives the same step with a straggler, in fewer tasks") {
  // Routed, each replica's consecutive units of a pass become one task (LoweringOptions::merge_serial);
  // its flows, its straggler's slower kernels and its ZeRO-3 gathers must time exactly as unit by unit.
  for (const ZeroStage zero : {ZeroStage::optimizer_states, ZeroStage::parameters}) {
    CAPTURE(static_cast<int>(zero));
    StepInput in = gpt_on(4, 2, 4, 4, 32);
    in.plan.zero = zero;
    in.cluster.stragglers.push_back(topo::Straggler{.node = 1, .slowdown = 1.25});
    const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
    REQUIRE(plan.feasible);
    const StepCosts costs = step_costs(in, plan, FabricPricing::routed);
    LoweringOptions options{.full_cluster = true, .replica_slowdown = replica_slowdowns(in.plan, in.cluster)};
    REQUIRE(!options.replica_slowdown.empty());
    const StepGraph units = lower_step(in, plan, costs, options);
    options.merge_serial = true;
    const StepGraph merged = lower_step(in, plan, costs, options);
    // ZeRO-3 issues each unit's gather after the unit before starts: its units stay tasks of their own.
    if (zero == ZeroStage::parameters) {
      CHECK(merged.dag.size() == units.dag.size());
    } else {
      CHECK(merged.dag.size() < units.dag.size());
    }
    check_same_step(units, merged, in, plan, costs);
  }
}

TEST_CASE("a full-cluster graph beyond the limits is refused before it is built, with its estimate") {
  // GPT-3-like depth on 1,024 GPUs, closed-form full cluster (every GPU its own lanes, 64 pipelines), 1,536
  // micro-batches per replica: hundreds of millions of tasks by the estimate, past the 61M the limits allow;
  // never built.
  StepInput in = gpt_on(128, 8, 16, 8, 12288);
  in.model.layers = 96;
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  const StepCosts costs = step_costs(in, plan);
  CHECK_THROWS_WITH_AS((void)lower_step(in, plan, costs, LoweringOptions{.full_cluster = true}),
                       doctest::Contains("more than the limit of 8 GiB and 60 s of CPU (61M tasks"),
                       InputError);
  CHECK_THROWS_WITH_AS((void)lower_step(in, plan, costs, LoweringOptions{.full_cluster = true}),
                       doctest::Contains("(the lowering's estimate)"), InputError);
}

TEST_CASE("the lowering's estimate bounds the graph it builds within a factor of two") {
  // What the early refusal reads: never below the graph (a refusal is not missed), never twice it (a graph
  // that fits is not refused), on a closed-form and a routed full cluster.
  const StepInput in = gpt_on(4, 2, 4, 4, 64);
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  for (const FabricPricing pricing : {FabricPricing::shared_links, FabricPricing::routed}) {
    CAPTURE(static_cast<int>(pricing));
    const StepCosts costs = step_costs(in, plan, pricing);
    const StepGraph g =
        lower_step(in, plan, costs, LoweringOptions{.full_cluster = true, .merge_serial = true});
    CHECK(g.estimated_tasks >= g.dag.size());
    CHECK(g.estimated_tasks <= 2 * g.dag.size());
  }
}

TEST_CASE("a graph is held to its task limit even where the estimate runs low") {
  // Routed ZeRO-3: each unit's gather and reduce-scatter are lowered as their algorithm's flows over every
  // replica, more tasks than the lowering's estimate counts; the build stops at the limit anyway.
  StepInput in = gpt_on(4, 2, 2, 8, 32);
  in.plan.zero = ZeroStage::parameters;
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  const StepCosts costs = step_costs(in, plan, FabricPricing::routed);
  LoweringOptions options{.full_cluster = true};
  const StepGraph built = lower_step(in, plan, costs, options);
  const std::size_t tasks = built.dag.size();
  REQUIRE(built.estimated_tasks < tasks);
  options.max_tasks = tasks;  // at the limit: built
  CHECK(lower_step(in, plan, costs, options).dag.size() == tasks);
  options.max_tasks = (built.estimated_tasks + tasks) / 2;  // above the estimate, below the graph
  CHECK_THROWS_WITH_AS((void)lower_step(in, plan, costs, options),
                       doctest::Contains("extrapolated from its first"), InputError);
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
  CHECK(sink.peak["stage 0 / compute"] == doctest::Approx(10 + 4).scale(0));
  CHECK(sink.peak["stage 1 / compute"] == doctest::Approx(20 + 3).scale(0));
  CHECK(sink.peak["stage 3 / compute"] == doctest::Approx(40 + 1).scale(0));
}

namespace {

// Every slice of a run, for checking the graph's structure and timing.
struct Slices : sim::TraceSink {
  struct Slice {
    std::string lane, name, category;
    double start = 0, end = 0;
  };
  std::vector<Slice> all;
  void record(const sim::TraceRecord& r) override {
    all.push_back({std::string(r.lane), std::string(r.name), std::string(r.category), r.start.seconds(),
                   r.end.seconds()});
  }
  // The slices of one stage's lanes whose name starts with `prefix`, in order of start (ties: end).
  [[nodiscard]] std::vector<Slice> of(int stage, const std::string& prefix) const {
    std::vector<Slice> out;
    const std::string proc = "stage " + std::to_string(stage) + " / ";
    for (const Slice& s : all) {
      if (s.lane.starts_with(proc) && s.name.starts_with(prefix)) out.push_back(s);
    }
    std::stable_sort(out.begin(), out.end(), [](const Slice& a, const Slice& b) {
      return a.start < b.start || (a.start == b.start && a.end < b.end);
    });
    return out;
  }
};

bool on_tp_lane(const Slices::Slice& s) {
  return s.lane.ends_with("/ tp comm");
}
bool is_compute(const Slices::Slice& s) {
  return s.category == "compute";
}

}  // namespace

TEST_CASE("a forward pass holds Megatron's tensor-parallel collectives per layer, each between its kernels") {
  // Megatron-LM (Shoeybi et al. 2019, Fig. 3/4): each layer's attention and MLP block ends with the g
  // operator, an all-reduce in the forward pass — two per layer. With sequence parallelism (Korthikanti et
  // al. 2022, Fig. 5) g becomes a reduce-scatter and the f before each block an all-gather: four per layer.
  // Stage 1 of pp 4 holds layers 4..7 of 16 and neither the embedding nor the head.
  for (const bool sp : {false, true}) {
    CAPTURE(sp);
    StepInput in = gpt_on(1, 2, 4, 1, 16);
    in.plan.sequence_parallel = sp;
    in.plan.framework.tp_comm_overlap = false;  // blocking, as Megatron-LM runs them without TE's overlap
    const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
    REQUIRE(plan.feasible);
    REQUIRE(plan.stage_layers[1] == 4);
    const StepCosts costs = step_costs(in, plan);
    Slices sink;
    (void)run_step_graph(lower_step(in, plan, costs), in, plan, costs, &sink);
    const auto pass = sink.of(1, "F mb3 c0 ");
    std::map<std::string, int> per_layer;  // "L5 tp_all_reduce" -> count
    std::size_t tp = 0;
    for (const auto& s : pass) {
      if (!on_tp_lane(s)) continue;
      ++tp;
      per_layer[s.name.substr(std::string("F mb3 c0 ").size())]++;
    }
    const int layers = 4;
    CHECK(tp == static_cast<std::size_t>((sp ? 4 : 2) * layers));
    for (int l = 4; l < 8; ++l) {
      const std::string L = "L" + std::to_string(l) + " ";
      if (sp) {
        CHECK(per_layer[L + "tp_all_gather"] == 2);
        CHECK(per_layer[L + "tp_reduce_scatter"] == 2);
      } else {
        CHECK(per_layer[L + "tp_all_reduce"] == 2);
      }
    }
    // Blocking: each collective starts once the kernel before it has ended, and the kernel after it starts
    // only once it is done; nothing runs on the compute stream meanwhile.
    for (std::size_t k = 0; k < pass.size(); ++k) {
      if (!on_tp_lane(pass[k])) continue;
      REQUIRE(k > 0);
      REQUIRE(k + 1 < pass.size());
      CHECK(is_compute(pass[k - 1]));
      CHECK(pass[k - 1].end <= pass[k].start);
      CHECK(is_compute(pass[k + 1]));
      CHECK(pass[k + 1].start >= pass[k].end);
      CHECK(pass[k].end > pass[k].start);
    }
  }
}

TEST_CASE("the context-parallel ring exchange runs beside the attention kernel it hides under") {
  StepInput in = gpt_on(1, 2, 2, 1, 16);
  in.plan.cp = 2;
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  const StepCosts costs = step_costs(in, plan);
  Slices sink;
  (void)run_step_graph(lower_step(in, plan, costs), in, plan, costs, &sink);
  const auto pass = sink.of(0, "F mb0 c0 L1 ");
  int exchanges = 0;
  for (const auto& s : pass) {
    if (s.category != "cp") continue;
    ++exchanges;
    // A kernel on the compute stream starts with it (the attention), and the next piece waits for both.
    bool beside = false;
    for (const auto& t : pass) beside = beside || (is_compute(t) && t.start == s.start && t.name != s.name);
    CHECK(beside);
    for (const auto& t : pass) {
      if (is_compute(t) && t.start > s.start) CHECK(t.start >= s.end);
    }
  }
  CHECK(exchanges == 1);
}

TEST_CASE("ZeRO-3 gathers every unit's weights before its kernels and reduce-scatters its gradients") {
  StepInput in = gpt_on(1, 2, 1, 4, 16);
  in.plan.zero = ZeroStage::parameters;
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  const StepCosts costs = step_costs(in, plan);
  Slices sink;
  (void)run_step_graph(lower_step(in, plan, costs), in, plan, costs, &sink);
  std::size_t gathers = 0, reduces = 0;
  for (const auto& s : sink.all) {
    gathers += s.name.ends_with("zero3 gather") ? 1 : 0;
    reduces += s.name.ends_with("zero3 reduce-scatter") ? 1 : 0;
  }
  const auto m = static_cast<std::size_t>(plan.micro_batches);
  // Every layer, the embedding and the head, before its forward and before its backward.
  CHECK(gathers == m * 2 * (16 + 2));
  CHECK(reduces == m * (16 + 2));
  // Layer 5's forward of micro-batch 2 starts after its weights are gathered.
  const auto layer = sink.of(0, "F mb2 c0 L5 ");
  double gathered = -1, first_kernel = 1e9;
  for (const auto& s : layer) {
    if (s.name.ends_with("zero3 gather")) gathered = s.end;
    if (is_compute(s)) first_kernel = std::min(first_kernel, s.start);
  }
  REQUIRE(gathered >= 0);
  CHECK(first_kernel >= gathered);
}

TEST_CASE("gradient buckets wait for the backward of the layers they hold and overlap the rest") {
  // pp 1, dp 4, overlapped reduction: the last backward runs head, layers 15..0, embedding. A bucket holds
  // gradients of whole layers, so none can start before the first unit's backward is done; the first
  // ones start while later layers are still in backward; the last one holds the embedding's.
  const StepInput in = gpt_on(1, 2, 1, 4, 16);
  const StepPlan plan = make_step_plan(in.model, in.cluster, in.plan, in.training);
  REQUIRE(plan.feasible);
  const StepCosts costs = step_costs(in, plan);
  REQUIRE(costs.stages[0].buckets > 1);
  Slices sink;
  (void)run_step_graph(lower_step(in, plan, costs), in, plan, costs, &sink);
  const std::string last = "B mb" + std::to_string(plan.micro_batches - 1) + " c0 ";
  double head_end = 0, pass_end = 0, embedding_end = 0;
  for (const auto& s : sink.of(0, last)) {
    if (!is_compute(s)) continue;
    if (s.name.starts_with(last + "head ")) head_end = std::max(head_end, s.end);
    if (s.name.starts_with(last + "embedding ")) embedding_end = std::max(embedding_end, s.end);
    pass_end = std::max(pass_end, s.end);
  }
  // Each bucket is its latency (a busy task "... latency") then its flow (step_network.hpp); count flows.
  auto buckets = sink.of(0, "grad bucket c0 ");
  std::erase_if(buckets, [](const auto& b) { return b.name.ends_with(" latency"); });
  REQUIRE(buckets.size() == static_cast<std::size_t>(costs.stages[0].buckets));
  CHECK(buckets.front().start >= head_end);
  CHECK(buckets.front().start < pass_end);
  CHECK(buckets.back().start >= embedding_end);
  for (const auto& b : buckets) CHECK(b.start >= head_end);
}
