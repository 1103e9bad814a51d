#include "models/step/merged_passes.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

using namespace trainsim::model;

namespace {

int alone(const PipelineOrder& o, int rank, PassKind kind, int chunks = 1) {
  int n = 0;
  for (int c = 0; c < chunks; ++c) n += alone_passes(o, rank, c, kind);
  return n;
}

}  // namespace

TEST_CASE("without a pipeline the first forward and the last backward run alone") {
  // Megatron-Core's combined_1f1b_schedule_for_no_pipelining, 4 micro-batches: F0 alone, then B0+F1,
  // B1+F2, B2+F3, then B3 alone.
  const PipelineOrder one = pipeline_schedule(Schedule::one_f_one_b, 1, 4);
  CHECK(one.merged[0] == std::vector<bool>{false, true, true, true, true, true, true, false});
  // One micro-batch: its forward and its backward, each alone (they are the same micro-batch's).
  const PipelineOrder single = pipeline_schedule(Schedule::one_f_one_b, 1, 1);
  CHECK(single.merged[0] == std::vector<bool>{false, false});
  CHECK(alone(single, 0, PassKind::forward) == 1);
  CHECK(alone(single, 0, PassKind::backward) == 1);
}

TEST_CASE("interleaved: every rank's warm-up holds one forward more, run alone, as Megatron-Core's") {
  // get_pp_rank_microbatches with overlap_moe_expert_parallel_comm: 2(p − s − 1) + (v − 1)·p warm-up
  // forwards plus one, on every rank, and as many cool-down backwards. p = 2, v = 2, m = 4 (8 passes of
  // each kind a rank): rank 0 4 + 1 = 5 alone, rank 1 2 + 1 = 3; the other 3 and 5 forwards each merged
  // with a backward.
  const PipelineOrder iv = pipeline_schedule(Schedule::interleaved, 2, 4, 2);
  CHECK(alone(iv, 0, PassKind::forward, 2) == 5);
  CHECK(alone(iv, 0, PassKind::backward, 2) == 5);
  CHECK(alone(iv, 1, PassKind::forward, 2) == 3);
  CHECK(alone(iv, 1, PassKind::backward, 2) == 3);
  // The alone forwards are the first ones, the alone backwards the last ones.
  const std::vector<PipelinePass>& rank1 = iv[1];
  for (std::size_t i = 0, f = 0; i < rank1.size(); ++i) {
    if (rank1[i].kind == PassKind::forward) CHECK(runs_alone(iv, 1, i) == (f++ < 3));
  }
  // p = 2, v = 2, m = 2 = p: the order warms up with every forward on both ranks (interleaved_rank's
  // m = p case), so W + 1 reaches the 4 forwards (are_all_microbatches_in_warmup): nothing merged.
  const PipelineOrder all_warm = pipeline_schedule(Schedule::interleaved, 2, 2, 2);
  for (int s = 0; s < 2; ++s) {
    CHECK(alone(all_warm, s, PassKind::forward, 2) == 4);
    CHECK(alone(all_warm, s, PassKind::backward, 2) == 4);
  }
}

TEST_CASE("other pipelines pair neighbours of other micro-batches, W passes skipped") {
  // 1F1B, p = 4, m = 8: rank s warms up with p − s − 1 forwards, alone, and cools down with as many
  // backwards; the last rank's first forward feeds the backward after it, so it runs alone too, and its
  // last backward.
  const PipelineOrder o = pipeline_schedule(Schedule::one_f_one_b, 4, 8);
  for (int s = 0; s < 4; ++s) {
    CHECK(alone(o, s, PassKind::forward) == std::max(3 - s, 1));
    CHECK(alone(o, s, PassKind::backward) == std::max(3 - s, 1));
  }
  // ZB-H1 runs 1F1B's forwards and backwards in 1F1B's order with W passes between: the same pairs.
  const PipelineOrder zb = pipeline_schedule(Schedule::zero_bubble_h1, 4, 8);
  for (int s = 0; s < 4; ++s) {
    CHECK(alone(zb, s, PassKind::forward) == std::max(3 - s, 1));
    CHECK(alone(zb, s, PassKind::backward) == std::max(3 - s, 1));
    CHECK(alone(zb, s, PassKind::backward_weight) == 0);
  }
  // 1F1B, p = 4, m = 2: the warm-up of ranks 0 and 1, min(p − s − 1, m) = 2, holds both forwards (all in
  // warm-up): nothing merged, 2 alone; rank 2 (F0, then F1 + B0, B1) and rank 3 (F0, B0 + F1, B1): 1.
  const PipelineOrder few = pipeline_schedule(Schedule::one_f_one_b, 4, 2);
  const int want[] = {2, 2, 1, 1};
  for (int s = 0; s < 4; ++s) {
    CHECK(alone(few, s, PassKind::forward) == want[s]);
    CHECK(alone(few, s, PassKind::backward) == want[s]);
  }
}

TEST_CASE("DualPipeV merges exactly its F&B steps") {
  // p = 2, m = 4, rank 0 (deepseek-ai/DualPipe dualpipev.py's steps): its F&B steps are the main loop's
  // m − 2p + r + 1 = 1 step of two F&B and step 6's p − r − 1 = 1, three F&B of its 8 forwards and 8
  // backwards: 5 of each alone.
  const PipelineOrder dv = pipeline_schedule(Schedule::dualpipev, 2, 4, 2);
  CHECK(alone(dv, 0, PassKind::forward, 2) == 5);
  CHECK(alone(dv, 0, PassKind::backward, 2) == 5);
}

TEST_CASE("a hand-built order runs every pass merged") {
  PipelineOrder o(1);
  o[0] = {{PassKind::forward, 0, 0}, {PassKind::backward, 0, 0}};
  CHECK_FALSE(runs_alone(o, 0, 0));
  CHECK(alone(o, 0, PassKind::forward) == 0);
  CHECK(alone(o, 0, PassKind::backward) == 0);
}
