#include "models/workload/rank_tensors.hpp"

#include <doctest/doctest.h>

#include <vector>

#include "tests/support/fixtures.hpp"

using namespace trainsim::model;

namespace {

ParallelPlan pipeline_of(int pp) {
  ParallelPlan p;
  p.pp = pp;
  return p;
}

// same_rank_tensors may only claim what rank_tensors confirms: equal lists, dense and expert.
void check_claims_hold(const TransformerSpec& m, const ParallelPlan& plan, const std::vector<int>& layers) {
  for (int a = 0; a < plan.pp; ++a) {
    const RankTensors ra = rank_tensors(m, plan, a, layers);
    for (int b = 0; b < plan.pp; ++b) {
      if (!same_rank_tensors(m, plan, layers, a, b)) continue;
      const RankTensors rb = rank_tensors(m, plan, b, layers);
      CHECK(ra.dense == rb.dense);
      CHECK(ra.expert == rb.expert);
    }
  }
}

}  // namespace

TEST_CASE("the middle ranks of an even pipeline hold the same tensors, the two ends their own") {
  // GPT-3 175B on 8 ranks of 12 layers: the first adds the embedding, the last the final norm and the head.
  const TransformerSpec m = trainsim::testing::gpt3_175b();
  const ParallelPlan plan = pipeline_of(8);
  const std::vector<int> layers(8, 12);
  for (int s = 2; s < 7; ++s) CHECK(same_rank_tensors(m, plan, layers, 1, s));
  CHECK_FALSE(same_rank_tensors(m, plan, layers, 0, 1));
  CHECK_FALSE(same_rank_tensors(m, plan, layers, 6, 7));
  check_claims_hold(m, plan, layers);
}

TEST_CASE("ranks with another layer count, or another count of dense first layers, hold other tensors") {
  const TransformerSpec gpt = trainsim::testing::gpt3_175b();
  const ParallelPlan plan = pipeline_of(5);
  const std::vector<int> uneven{20, 19, 20, 20, 17};
  CHECK_FALSE(same_rank_tensors(gpt, plan, uneven, 1, 2));
  CHECK(same_rank_tensors(gpt, plan, uneven, 2, 3));
  check_claims_hold(gpt, plan, uneven);

  // A MoE model whose first 3 layers are dense: ranks of 2 layers hold 2, 1, then 0 of them.
  TransformerSpec moe = trainsim::testing::gpt(8, 512, 8, 1024);
  moe.experts = 4;
  moe.top_k = 2;
  moe.expert_ffn_hidden = 1024;
  moe.dense_layers = 3;
  const ParallelPlan four = pipeline_of(4);
  const std::vector<int> two_each(4, 2);
  CHECK_FALSE(same_rank_tensors(moe, four, two_each, 1, 2));  // one dense layer against none
  check_claims_hold(moe, four, two_each);
}

TEST_CASE("a generic model's ranks are never claimed alike: each holds layers of their own sizes") {
  TransformerSpec m;
  m.layers = 4;
  for (int i = 0; i < 4; ++i) m.generic_layers.push_back(GenericLayer{"block", 1e6 * (i + 1), 0, 0});
  const ParallelPlan plan = pipeline_of(4);
  const std::vector<int> layers(4, 1);
  CHECK_FALSE(same_rank_tensors(m, plan, layers, 1, 2));
  CHECK(same_rank_tensors(m, plan, layers, 2, 2));
}
