// DualPipe and DualPipeV (DeepSeek-V3 Technical Report, arXiv:2412.19437, Sec. 3.2.1 and Table 2;
// deepseek-ai/DualPipe): the V-shaped chunk map, DeepSeek's program replayed, its bubble and its memory.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "models/step/memory.hpp"
#include "models/step/pipeline_schedule.hpp"
#include "models/step/step_plan.hpp"
#include "models/workload/activation_memory.hpp"
#include "models/workload/parameters.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim::model;

namespace {

int count(const std::vector<PipelinePass>& rank, PassKind kind) {
  return static_cast<int>(
      std::count_if(rank.begin(), rank.end(), [&](const auto& x) { return x.kind == kind; }));
}

// Uniform costs per chunk: forward f, whole backward b (of which w is the weight gradients).
PassTimes uniform(int d, double f, double b, double w) {
  const auto n = static_cast<std::size_t>(2 * d);
  return PassTimes{std::vector<double>(n, f), std::vector<double>(n, b), std::vector<double>(n, w), 0.0};
}

}  // namespace

TEST_CASE("the V shape: chunk 0 runs down the ranks and chunk 1 back up, one rule and its inverse") {
  // DualPipeV on 4 ranks: rank 0 holds virtual stages 0 and 7, rank 3 holds 3 and 4.
  CHECK(virtual_stage_of(Schedule::dualpipev, 0, 0, 4) == 0);
  CHECK(virtual_stage_of(Schedule::dualpipev, 1, 0, 4) == 7);
  CHECK(virtual_stage_of(Schedule::dualpipev, 0, 3, 4) == 3);
  CHECK(virtual_stage_of(Schedule::dualpipev, 1, 3, 4) == 4);
  CHECK(virtual_stage_of(Schedule::interleaved, 1, 0, 4) == 4);  // looped: chunk·p + rank
  for (Schedule kind : {Schedule::dualpipev, Schedule::interleaved}) {
    for (int vs = 0; vs < 8; ++vs) {
      const int rank = rank_of_virtual_stage(kind, vs, 4);
      CHECK((virtual_stage_of(kind, 0, rank, 4) == vs || virtual_stage_of(kind, 1, rank, 4) == vs));
    }
  }
  // 16 layers on 4 ranks: 8 virtual stages of 2; rank 0 holds the first two layers and the last two.
  ParallelPlan plan;
  plan.pp = 4;
  plan.schedule = Schedule::dualpipev;
  const LayerSplit split = split_pipeline_layers(16, plan, 0);
  REQUIRE(split.reason.empty());
  CHECK(split.chunk_layers == std::vector<int>(8, 2));
  CHECK(split.stage_layers == std::vector<int>(4, 4));
}

TEST_CASE("DeepSeek's DualPipeV program runs every pass once and never deadlocks") {
  for (int d : {1, 2, 3, 4, 8}) {
    for (int m : {2 * d, 2 * d + 1, 3 * d, 20}) {
      if (m < 2 * d) continue;
      CAPTURE(d);
      CAPTURE(m);
      const PipelineOrder order = pipeline_schedule(Schedule::dualpipev, d, m, 2);
      CHECK(schedule_is_valid(order, d, m, 2));
      for (const auto& rank : order) {
        CHECK(count(rank, PassKind::forward) == 2 * m);
        CHECK(count(rank, PassKind::backward) == 2 * m);
        CHECK(count(rank, PassKind::backward_weight) == 2 * m);
      }
    }
  }
  CHECK(schedule_constraint_error(Schedule::dualpipev, 4, 7, 2) ==
        "DualPipeV needs at least 2·pp micro-batches (DualPipe: 2·pp, an even count)");
}

TEST_CASE("DualPipe's bubble is DeepSeek-V3 Table 2's (PP/2 - 1)(F&B + B - 3W) on a hand-built schedule") {
  // DualPipe on PP ranks runs as DualPipeV on PP/2 ranks with half the micro-batches (the cut-in-half of
  // the DualPipe README): PP = 8 stages, 20 micro-batches in two directions -> 4 ranks, 10 micro-batches.
  // Per chunk, by hand: F = 1, B (whole backward) = 2 of which W = 1; an F&B step runs a forward and a
  // whole backward back to back, F&B = F + B = 3 (nothing overlapped in these costs). Table 2: every rank
  // idles (8/2 - 1)(3 + 2 - 3) = 6, over the 10 · 2 chunks · (F + B) = 60 it computes.
  struct Case {
    int stages, micro_batches;
    double bubble;
  };
  for (const Case c : {Case{8, 20, 6.0}, Case{4, 8, 2.0}, Case{16, 64, 14.0}}) {
    CAPTURE(c.stages);
    const double f = 1.0, b = 2.0, w = 1.0, fb = f + b;
    REQUIRE(c.bubble == (c.stages / 2.0 - 1.0) * (fb + b - 3.0 * w));
    const int d = c.stages / 2;
    const int m = c.micro_batches / 2;
    const ScheduleTimeline tl =
        time_schedule(pipeline_schedule(Schedule::dualpipev, d, m, 2), d, m, 2, uniform(d, f, b, w));
    for (int s = 0; s < d; ++s) {
      CAPTURE(s);
      CHECK(tl.rank_busy[static_cast<std::size_t>(s)] == doctest::Approx(2.0 * m * (f + b)));
      CHECK(tl.makespan - tl.rank_busy[static_cast<std::size_t>(s)] == doctest::Approx(c.bubble));
    }
  }
}

TEST_CASE("a DualPipeV rank holds PP + 1 chunks' activations at its peak, Table 2's count") {
  for (int d : {2, 4, 8}) {
    const int m = 4 * d;
    const PipelineOrder order = pipeline_schedule(Schedule::dualpipev, d, m, 2);
    for (int s = 0; s < d; ++s) {
      CAPTURE(s);
      CHECK(peak_in_flight(order[static_cast<std::size_t>(s)]) == 2 * d + 1);
      // The memory model's count, in micro-batches of the rank's two chunks.
      CHECK(micro_batches_in_flight(Schedule::dualpipev, d, s, 2, m) == doctest::Approx((2.0 * d + 1) / 2));
    }
    CHECK(micro_batches_in_flight(Schedule::dualpipe, 2 * d, 0, 1, 2 * m) ==
          doctest::Approx((2.0 * d + 1) / 2));
  }
}

TEST_CASE("DualPipe holds two copies of the parameters: twice 1F1B's on the same ranks") {
  // GPT-3 175B, 96 layers on 8 ranks: 1F1B holds 12 layers per rank; DualPipe holds stage r and stage
  // 7 - r, 24 layers. A middle rank (no embedding, no head) holds exactly twice the parameters.
  const TransformerSpec model = trainsim::testing::gpt3_175b();
  ParallelPlan plan{.pp = 8, .micro_batch = 1};
  TrainingSpec training;
  training.global_batch = 32;
  const MemoryEstimate one_f_one_b =
      estimate_memory(model, plan, training, trainsim::testing::a100_sxm4_80gb());
  plan.schedule = Schedule::dualpipe;
  const MemoryEstimate dual = estimate_memory(model, plan, training, trainsim::testing::a100_sxm4_80gb());
  REQUIRE(dual.stages.size() == 8);
  const StageMemory& mid = dual.stages[3];
  CHECK(mid.layers == 24);
  CHECK(one_f_one_b.stages[3].layers == 12);
  CHECK(mid.params == doctest::Approx(2 * stage_parameter_count(model, 12, false, false)));
  CHECK(mid.params == doctest::Approx(2 * one_f_one_b.stages[3].params));
  CHECK(mid.memory.weights == doctest::Approx(2 * one_f_one_b.stages[3].memory.weights));
  // Activations: PP + 1 = 9 stages' worth (4.5 micro-batches of its 24 layers) against 1F1B's 8 - 3 = 5
  // micro-batches of 12 layers on the same rank.
  CHECK(mid.in_flight_micro_batches == doctest::Approx(4.5));
  CHECK(mid.memory.activations / one_f_one_b.stages[3].memory.activations ==
        doctest::Approx(4.5 * 24 / (5 * 12)));
}

TEST_CASE("the step times DualPipe on P ranks as DualPipeV on P/2 with half the micro-batches") {
  const TransformerSpec model = trainsim::testing::gpt3_175b();
  ParallelPlan plan{.pp = 8, .micro_batch = 1};
  plan.schedule = Schedule::dualpipe;
  TrainingSpec training;
  training.global_batch = 32;
  const StepPlan step = make_step_plan(model, trainsim::testing::round_number_cluster(1, 8), plan, training);
  REQUIRE(step.feasible);
  CHECK(step.schedule == Schedule::dualpipev);
  CHECK(step.pp == 4);
  CHECK(step.virtual_stages == 2);
  CHECK(step.micro_batches == 16);
  CHECK(step.chunk_layers == std::vector<int>(8, 12));
  CHECK(step.stage_layers == std::vector<int>(4, 24));
  plan.pp = 7;  // two directions meet in the middle: an even pp
  const StepPlan odd = make_step_plan(model, trainsim::testing::round_number_cluster(1, 7), plan, training);
  CHECK_FALSE(odd.feasible);
  CHECK(odd.reason.find("dualpipe needs an even pp") != std::string::npos);
  plan.pp = 8;
  training.global_batch = 8;  // fewer than 2·pp micro-batches
  const StepPlan short_batch =
      make_step_plan(model, trainsim::testing::round_number_cluster(1, 8), plan, training);
  CHECK_FALSE(short_batch.feasible);
  CHECK(short_batch.reason.find("at least 2·pp = 16") != std::string::npos);
}

TEST_CASE("ZB-V (Qi et al. 2024, V-ZB): valid for any micro-batch count, 1F1B's activations") {
  for (int p : {1, 2, 3, 4, 8}) {
    for (int m : {1, 2, 3, 5, 8, 16}) {
      CAPTURE(p);
      CAPTURE(m);
      const PipelineOrder order = pipeline_schedule(Schedule::zb_v, p, m, 2);
      CHECK(schedule_is_valid(order, p, m, 2));
      if (m < 2 * p - 1) continue;
      // Rank 0 runs 2p - 1 forwards of chunk 0 and one of chunk 1 before its first backward: 2p chunks,
      // p micro-batches of its layers, as 1F1B's first rank.
      for (int s = 0; s < p; ++s) CHECK(peak_in_flight(order[static_cast<std::size_t>(s)]) == 2 * p);
      CHECK(micro_batches_in_flight(Schedule::zb_v, p, 0, 2, m) == doctest::Approx(p));
    }
  }
}

TEST_CASE("ZB-V has no bubble after each rank's first pass when F = B = W (Qi et al. 2024)") {
  // Per chunk F = 1, B (whole backward) = 2 of which W = 1: input gradient, weight gradient and forward
  // each 1, the paper's T_F = T_B = T_W. Each rank then computes without a gap from its first pass to its
  // last: its only idle time is the wait for the first micro-batch to reach it, (p - 1)·F on rank p - 1.
  for (int p : {2, 4, 8}) {
    CAPTURE(p);
    const int m = 2 * p;
    PassSpans spans;
    const ScheduleTimeline tl =
        time_schedule(pipeline_schedule(Schedule::zb_v, p, m, 2), p, m, 2, uniform(p, 1.0, 2.0, 1.0), &spans);
    for (int s = 0; s < p; ++s) {
      CAPTURE(s);
      const auto si = static_cast<std::size_t>(s);
      CHECK(tl.rank_busy[si] == doctest::Approx(2.0 * m * 3.0));
      CHECK(tl.rank_end[si] - spans[si].front().start == doctest::Approx(tl.rank_busy[si]));
    }
    CHECK(spans[static_cast<std::size_t>(p - 1)].front().start == doctest::Approx(p - 1.0));
    CHECK(tl.makespan == doctest::Approx(p - 1.0 + 2.0 * m * 3.0));
  }
}
