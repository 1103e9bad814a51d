#include "models/step/pipeline_schedule.hpp"

#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "sim/error.hpp"

using namespace trainsim::model;

namespace {
int count(const std::vector<PipelinePass>& rank, PassKind kind) {
  int n = 0;
  for (const auto& x : rank) n += x.kind == kind ? 1 : 0;
  return n;
}
}  // namespace

TEST_CASE("every schedule respects the pipeline dependencies for a range of shapes") {
  for (int p : {1, 2, 3, 4, 8}) {
    for (int m : {1, 2, 4, 8, 12, 16}) {
      CAPTURE(p);
      CAPTURE(m);
      CHECK(schedule_is_valid(pipeline_schedule(Schedule::gpipe, p, m), p, m, 1));
      CHECK(schedule_is_valid(pipeline_schedule(Schedule::one_f_one_b, p, m), p, m, 1));
      CHECK(schedule_is_valid(pipeline_schedule(Schedule::zero_bubble_h1, p, m), p, m, 1));
      for (int v : {2, 3, 4}) {
        if (p == 1 || m % p != 0) continue;
        CAPTURE(v);
        CHECK(schedule_is_valid(pipeline_schedule(Schedule::interleaved, p, m, v), p, m, v));
      }
    }
  }
}

TEST_CASE("a list that runs a backward before its forward is rejected as invalid") {
  PipelineOrder order = {{{PassKind::backward, 0, 0}, {PassKind::forward, 0, 0}}};
  CHECK_FALSE(schedule_is_valid(order, 1, 1, 1));
  PipelineOrder missing = {{{PassKind::forward, 0, 0}}};
  CHECK_FALSE(schedule_is_valid(missing, 1, 1, 1));
}

TEST_CASE("with zero communication the 1F1B bubble fraction is (p-1)/(m+p-1)") {
  // F = 1 s, B = 2 s per micro-batch: ideal time m·3, makespan (m + p − 1)·3 (Narayanan et al. 2021).
  for (int p : {2, 4, 8}) {
    for (int m : {4, 8, 16}) {
      const double t = schedule_makespan(pipeline_schedule(Schedule::one_f_one_b, p, m), p, m, 1, 1.0, 2.0);
      const double ideal = m * 3.0;
      CHECK((t - ideal) / t == doctest::Approx(double(p - 1) / (m + p - 1)).scale(0));
    }
  }
}

TEST_CASE("interleaving over v chunks divides the 1F1B bubble by v") {
  // Each chunk costs 1/v of a stage's work: bubble (p−1)·(F+B)/v against m·(F+B) of work.
  const int p = 4, m = 8;
  const double whole_bubble =
      schedule_makespan(pipeline_schedule(Schedule::one_f_one_b, p, m), p, m, 1, 1, 2) - m * 3.0;
  for (int v : {2, 4}) {
    const double t =
        schedule_makespan(pipeline_schedule(Schedule::interleaved, p, m, v), p, m, v, 1.0 / v, 2.0 / v);
    CHECK(t - m * 3.0 == doctest::Approx(whole_bubble / v).scale(0));
  }
}

TEST_CASE("GPipe and 1F1B take the same time but 1F1B stashes fewer micro-batches") {
  const int p = 4, m = 8;
  const auto gpipe = pipeline_schedule(Schedule::gpipe, p, m);
  const auto ofob = pipeline_schedule(Schedule::one_f_one_b, p, m);
  CHECK(schedule_makespan(gpipe, p, m, 1, 1, 2) ==
        doctest::Approx(schedule_makespan(ofob, p, m, 1, 1, 2)).scale(0));
  for (int s = 0; s < p; ++s) {
    CHECK(peak_in_flight(gpipe[s]) == m);
    CHECK(peak_in_flight(ofob[s]) == p - s);
  }
}

TEST_CASE("ZB-H1 keeps 1F1B's activation stash and shrinks the bubble when the backward is split") {
  const int p = 4, m = 8;
  const auto zb = pipeline_schedule(Schedule::zero_bubble_h1, p, m);
  const auto ofob = pipeline_schedule(Schedule::one_f_one_b, p, m);
  for (int s = 0; s < p; ++s) {
    CHECK(count(zb[s], PassKind::backward_weight) == m);
    CHECK(peak_in_flight(zb[s]) == peak_in_flight(ofob[s]));
  }
  // F = B = W = 1: 1F1B idles (p−1)·3; ZB-H1 idles (p−1)·(F + B − W) = (p−1) (Qi et al. 2023, §3).
  const double t_zb = schedule_makespan(zb, p, m, 1, 1.0, 2.0, 1.0);
  const double t_1f1b = schedule_makespan(ofob, p, m, 1, 1.0, 2.0);
  CHECK(t_1f1b - m * 3.0 == doctest::Approx(3.0 * (p - 1)).scale(0));
  CHECK(t_zb - m * 3.0 == doctest::Approx(1.0 * (p - 1)).scale(0));
}

TEST_CASE("schedules that cannot be built say why") {
  CHECK(schedule_constraint_error(Schedule::interleaved, 4, 6, 2) != "");
  CHECK(schedule_constraint_error(Schedule::one_f_one_b, 4, 6, 2) != "");
  CHECK(schedule_constraint_error(Schedule::interleaved, 4, 8, 2) == "");
  CHECK_THROWS_AS((void)pipeline_schedule(Schedule::gpipe, 0, 4), trainsim::InputError);
}

TEST_CASE("a hand-over delay sits on the pipeline's critical path and is reported per rank") {
  // Two ranks, one micro-batch, F = 1, B = 2, each hand-over 0.25 s: F(0) 0–1, F(1) 1.25–2.25,
  // B(1) 2.25–4.25, B(0) 4.5–6.5.
  PassTimes t{{1, 1}, {2, 2}, {}, 0.25};
  const ScheduleTimeline tl = time_schedule(pipeline_schedule(Schedule::one_f_one_b, 2, 1), 2, 1, 1, t);
  CHECK(tl.makespan == doctest::Approx(6.5).scale(0));
  CHECK(tl.rank_end[1] == doctest::Approx(4.25).scale(0));
  CHECK(tl.rank_busy[0] == doctest::Approx(3.0).scale(0));
  CHECK(tl.grads_from[0] == doctest::Approx(4.5).scale(0));
  CHECK(tl.grads_ready[0] == doctest::Approx(6.5).scale(0));
}

TEST_CASE("time_schedule_twice times one order with two sets of costs, each as time_schedule alone does") {
  // The example above with its hand-overs (rank ends 6.5 and 4.25), and without them: F(0) 0–1, F(1) 1–2,
  // B(1) 2–4, B(0) 4–6.
  PassTimes with{{1, 1}, {2, 2}, {}, 0.25};
  PassTimes without{{1, 1}, {2, 2}, {}, 0.0};
  const PipelineOrder order = pipeline_schedule(Schedule::one_f_one_b, 2, 1);
  const ScheduleTimelines both = time_schedule_twice(order, 2, 1, 1, with, without);
  CHECK(both.timeline.rank_end == std::vector<double>{6.5, 4.25});
  CHECK(both.other_rank_end == std::vector<double>{6.0, 4.0});
  CHECK(both.timeline.grads_ready == std::vector<double>{6.5, 4.25});
  // On bigger shapes, against separate replays: equal, not merely close (the same additions in the same
  // order).
  for (const Schedule kind : {Schedule::gpipe, Schedule::one_f_one_b, Schedule::zero_bubble_h1}) {
    const int p = 4, m = 8;
    PassTimes a{{1, 1.5, 1, 2}, {2, 3, 2, 4}, {0.5, 1, 0.5, 1}, 0.1};
    PassTimes b{{1.25, 1, 1, 1}, {2, 2, 2.5, 2}, {1, 0.5, 0.5, 1}, 0.0};
    const PipelineOrder o = pipeline_schedule(kind, p, m);
    const ScheduleTimeline ta = time_schedule(o, p, m, 1, a);
    const ScheduleTimelines ab = time_schedule_twice(o, p, m, 1, a, b);
    CHECK(ab.timeline.rank_end == ta.rank_end);
    CHECK(ab.timeline.rank_busy == ta.rank_busy);
    CHECK(ab.timeline.grads_from == ta.grads_from);
    CHECK(ab.timeline.grads_ready == ta.grads_ready);
    CHECK(ab.other_rank_end == time_schedule(o, p, m, 1, b).rank_end);
  }
}

TEST_CASE("asked for, time_schedule reports every pass's start and end in each rank's list order") {
  // The two-rank example above: F(0) 0–1 and B(0) 4.5–6.5 on rank 0, F(1) 1.25–2.25 and B(1) 2.25–4.25
  // on rank 1.
  const PassTimes t{{1, 1}, {2, 2}, {}, 0.25};
  const PipelineOrder order = pipeline_schedule(Schedule::one_f_one_b, 2, 1);
  PassSpans spans;
  const ScheduleTimeline tl = time_schedule(order, 2, 1, 1, t, &spans);
  REQUIRE(spans.size() == 2);
  REQUIRE(spans[0].size() == 2);
  REQUIRE(spans[1].size() == 2);
  CHECK(spans[0][0].start == 0.0);
  CHECK(spans[0][0].end == doctest::Approx(1.0).scale(0));
  CHECK(spans[1][0].start == doctest::Approx(1.25).scale(0));
  CHECK(spans[1][0].end == doctest::Approx(2.25).scale(0));
  CHECK(spans[1][1].start == doctest::Approx(2.25).scale(0));
  CHECK(spans[1][1].end == doctest::Approx(4.25).scale(0));
  CHECK(spans[0][1].start == doctest::Approx(4.5).scale(0));
  CHECK(spans[0][1].end == doctest::Approx(6.5).scale(0));
  CHECK(tl.makespan == doctest::Approx(6.5).scale(0));
}

TEST_CASE("1F1B pass spans: each lasts its cost, none overlaps on a rank, and rank 0 ends the step") {
  // F = 1, B = 2, no hand-over delay, p = 4, m = 8: rank s starts its first forward at s (the forward
  // wave), the last rank turns round at once (F mb0 then B mb0), and the step takes (m + p − 1)(F + B).
  const int p = 4;
  const int m = 8;
  const PipelineOrder order = pipeline_schedule(Schedule::one_f_one_b, p, m);
  const PassTimes t{std::vector<double>(p, 1.0), std::vector<double>(p, 2.0), {}, 0.0};
  PassSpans spans;
  const ScheduleTimeline with = time_schedule(order, p, m, 1, t, &spans);
  const ScheduleTimeline without = time_schedule(order, p, m, 1, t);
  CHECK(with.makespan == without.makespan);  // asking for spans changes nothing
  CHECK(with.rank_end == without.rank_end);
  CHECK(with.makespan == doctest::Approx((m + p - 1) * 3.0).scale(0));
  REQUIRE(spans.size() == static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) {
    const auto& rank = order[static_cast<std::size_t>(s)];
    const auto& span = spans[static_cast<std::size_t>(s)];
    REQUIRE(span.size() == rank.size());
    CHECK(span.front().start == doctest::Approx(s).scale(1e-12));  // s may be 0: a picosecond floor
    double previous_end = 0;
    for (std::size_t k = 0; k < span.size(); ++k) {
      const double cost = rank[k].kind == PassKind::forward ? 1.0 : 2.0;
      CHECK(span[k].end - span[k].start == doctest::Approx(cost).scale(0));
      CHECK(span[k].start >= previous_end);
      previous_end = span[k].end;
    }
    CHECK(span.back().end == with.rank_end[static_cast<std::size_t>(s)]);
  }
  const auto& last = spans[p - 1];
  CHECK(last[1].start == doctest::Approx(p).scale(0));  // B mb0 right after F mb0 on the last rank
  CHECK(spans[0].back().end == doctest::Approx(with.makespan).scale(0));
}

TEST_CASE("each virtual stage's last gradient-producing pass takes its extra, on the cool-down's path") {
  // Two ranks, F = 1, B = 2, no hand-over delay; the last micro-batch's backward of vs 0 takes 0.5 s more
  // and that of vs 1 0.25 s more. One micro-batch: F(0) 0–1, F(1) 1–2, B(1) 2–4.25, B(0) 4.25–6.75.
  PassTimes t{{1, 1}, {2, 2}, {}, 0.0, {0.5, 0.25}};
  ScheduleTimeline tl = time_schedule(pipeline_schedule(Schedule::one_f_one_b, 2, 1), 2, 1, 1, t);
  CHECK(tl.makespan == doctest::Approx(6.75).scale(0));
  CHECK(tl.rank_busy[1] == doctest::Approx(3.25).scale(0));
  CHECK(tl.grads_from[1] == doctest::Approx(2.0).scale(0));
  CHECK(tl.grads_ready[1] == doctest::Approx(4.25).scale(0));
  CHECK(tl.grads_ready[0] == doctest::Approx(6.75).scale(0));
  // Two micro-batches: only the second's backwards take it. Without it 1F1B ends at 2·(1 + 2) + 1 + 2 = 9
  // (the (p − 1)·(F + B) bubble); with it B(mb 1) on rank 1 ends 0.25 later and B(mb 1) on rank 0 starts
  // then and takes 2.5: 9.75.
  const ScheduleTimeline plain = time_schedule(pipeline_schedule(Schedule::one_f_one_b, 2, 2), 2, 2, 1,
                                               PassTimes{{1, 1}, {2, 2}, {}, 0.0});
  tl = time_schedule(pipeline_schedule(Schedule::one_f_one_b, 2, 2), 2, 2, 1, t);
  CHECK(plain.makespan == doctest::Approx(9.0).scale(0));
  CHECK(tl.makespan == doctest::Approx(9.75).scale(0));
  CHECK(tl.rank_busy[0] == doctest::Approx(plain.rank_busy[0] + 0.5).scale(0));
}

TEST_CASE("a recorded replay times the same order with other costs as the replay does, to the bit") {
  // Recorded on the two-rank example above (F = 1, B = 2, hand-overs 0.25), timed with F = 2, B = 3 and
  // hand-overs 0.5: F(0) 0–2, F(1) 2.5–4.5, B(1) 4.5–7.5, B(0) 8–11.
  const PipelineOrder small = pipeline_schedule(Schedule::one_f_one_b, 2, 1);
  const RecordedSchedule recorded = record_schedule(small, 2, 1, 1);
  REQUIRE(recorded.passes.size() == 4);
  const ScheduleTimeline slower = time_recorded(recorded, PassTimes{{2, 2}, {3, 3}, {}, 0.5});
  CHECK(slower.rank_end == std::vector<double>{11.0, 7.5});
  CHECK(slower.rank_busy == std::vector<double>{5.0, 5.0});
  CHECK(slower.grads_from == std::vector<double>{8.0, 4.5});
  CHECK(slower.makespan == 11.0);

  // Every schedule the replay runs pass by pass, on uneven costs (each stage its own, hand-overs, W parts,
  // the last micro-batch's extra): every figure equal, not merely close, with one set of costs and two.
  std::mt19937_64 draw(38);
  std::uniform_real_distribution<double> seconds(0.1, 3.0);
  auto uneven = [&](int nvs, bool with_extra) {
    PassTimes t;
    for (int vs = 0; vs < nvs; ++vs) {
      t.forward.push_back(seconds(draw));
      t.weight.push_back(seconds(draw) / 3);
      t.backward.push_back(t.weight.back() + seconds(draw));
      if (with_extra) t.last_grads_extra.push_back(seconds(draw) / 7);
    }
    t.p2p_s = seconds(draw) / 11;
    return t;
  };
  struct Shape {
    Schedule kind;
    int p, m, v;
  };
  for (const Shape& s : {Shape{Schedule::gpipe, 4, 6, 1}, Shape{Schedule::one_f_one_b, 5, 9, 1},
                         Shape{Schedule::one_f_one_b, 1, 3, 1}, Shape{Schedule::zero_bubble_h1, 4, 7, 1},
                         Shape{Schedule::interleaved, 4, 8, 3}, Shape{Schedule::interleaved, 2, 6, 2},
                         Shape{Schedule::zb_v, 3, 6, 2}}) {
    CAPTURE(to_string(s.kind));
    CAPTURE(s.p);
    const PipelineOrder order = pipeline_schedule(s.kind, s.p, s.m, s.v);
    const int nvs = s.p * s.v;
    const PassTimes first = uneven(nvs, true);
    const RecordedSchedule r = record_schedule(order, s.p, s.m, s.v);
    const ScheduleTimeline as_recorded = time_schedule(order, s.p, s.m, s.v, first);
    REQUIRE(!r.empty());
    CHECK(time_recorded(r, first).rank_end == as_recorded.rank_end);
    for (const bool extra : {false, true}) {
      const PassTimes a = uneven(nvs, extra);
      const PassTimes b = uneven(nvs, !extra);
      const ScheduleTimeline want = time_schedule(order, s.p, s.m, s.v, a);
      const ScheduleTimelines got = time_recorded_twice(r, a, b);
      CHECK(got.timeline.makespan == want.makespan);
      CHECK(got.timeline.rank_end == want.rank_end);
      CHECK(got.timeline.rank_busy == want.rank_busy);
      CHECK(got.timeline.grads_from == want.grads_from);
      CHECK(got.timeline.grads_ready == want.grads_ready);
      CHECK(got.other_rank_end == time_schedule(order, s.p, s.m, s.v, b).rank_end);
      const ScheduleTimeline alone = time_recorded(r, a);
      CHECK(alone.rank_end == want.rank_end);
      CHECK(alone.rank_busy == want.rank_busy);
      CHECK(alone.grads_from == want.grads_from);
      CHECK(alone.grads_ready == want.grads_ready);
    }
  }

  // DualPipeV runs its program, which is not recorded.
  CHECK(record_schedule(pipeline_schedule(Schedule::dualpipev, 2, 4, 2), 2, 4, 2).empty());
  // An order that is not the schedule's (rank 0 runs its backward before its forward) records nothing.
  PipelineOrder broken = pipeline_schedule(Schedule::one_f_one_b, 2, 1);
  std::swap(broken[0][0], broken[0][1]);
  CHECK(record_schedule(broken, 2, 1, 1).empty());
}

TEST_CASE("a pass run alone adds its alone time, in the replay and in its recording alike") {
  // 1F1B, p = 2, m = 2, F = 1, B = 2, no hand-over; alone a forward takes 0.5 more, a backward 0.25. Rank 0
  // runs F0 (alone: F1 follows), F1 + B0 (merged), B1 (alone); rank 1 F0 (alone: B0 is its own), B0 + F1,
  // B1 (alone). By hand: rank 0 F0 [0, 1.5], F1 [1.5, 2.5]; rank 1 F0 [1.5, 3], B0 [3, 5], F1 [5, 6],
  // B1 [6, 8.25]; rank 0 B0 [5, 7], B1 [8.25, 10.5]. Without the alone times the step is 9.
  const PipelineOrder o = pipeline_schedule(Schedule::one_f_one_b, 2, 2);
  PassTimes t{{1, 1}, {2, 2}, {}, 0.0};
  CHECK(time_schedule(o, 2, 2, 1, t).makespan == doctest::Approx(9.0));
  t.forward_alone = {0.5, 0.5};
  t.backward_alone = {0.25, 0.25};
  CHECK(time_schedule(o, 2, 2, 1, t).makespan == doctest::Approx(10.5));
  CHECK(time_recorded(record_schedule(o, 2, 2, 1), t).makespan == doctest::Approx(10.5));
}
