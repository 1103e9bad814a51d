// Megatron-LM's --moe-layer-freq and --pipeline-model-parallel-layout read as Megatron-LM reads them: the
// examples of its own help and docstrings, expanded by hand, and what trainsim's model holds of them.
#include "scenarios/importers/megatron_patterns.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/error.hpp"

using namespace trainsim;
using namespace trainsim::scenario;

namespace {

std::vector<int> repeated(std::initializer_list<std::pair<int, int>> runs) {
  std::vector<int> v;
  for (const auto& [value, count] : runs) v.insert(v.end(), static_cast<std::size_t>(count), value);
  return v;
}

}  // namespace

TEST_CASE("--moe-layer-freq: an integer N puts experts on every N-th layer from the first") {
  CHECK(moe_layer_pattern("1", 3) == std::vector<int>{1, 1, 1});
  CHECK(moe_layer_pattern("2", 6) == std::vector<int>{1, 0, 1, 0, 1, 0});
  CHECK_THROWS_WITH_AS((void)moe_layer_pattern("0", 4),
                       "--moe-layer-freq 0: an integer frequency must be 1 or more", InputError);
}

TEST_CASE("--moe-layer-freq: the list expressions of Megatron-LM's help, expanded") {
  // DeepSeek-V3's: 3 dense layers, then 58 MoE layers.
  CHECK(moe_layer_pattern("([0]*3+[1]*58)", 61) == repeated({{0, 3}, {1, 58}}));
  // The help's "([1]*3+[0]*2)*2": three expert layers, two dense, twice.
  CHECK(moe_layer_pattern("([1]*3+[0]*2)*2", 10) == std::vector<int>{1, 1, 1, 0, 0, 1, 1, 1, 0, 0});
  CHECK(moe_layer_pattern("[0, 1, 0, 1]", 4) == std::vector<int>{0, 1, 0, 1});
  CHECK_THROWS_WITH_AS((void)moe_layer_pattern("([0]*3+[1]*57)", 61),
                       "--moe-layer-freq ([0]*3+[1]*57): gives 60 layers; --num-layers is 61 (Megatron-LM "
                       "requires one entry per layer)",
                       InputError);
  CHECK_THROWS_WITH_AS((void)moe_layer_pattern("([0]*3+[2]*58)", 61),
                       doctest::Contains("a layer is 1 (experts) or 0 (dense), not 2"), InputError);
  CHECK_THROWS_WITH_AS((void)moe_layer_pattern("[1]*99999999999", 61),
                       doctest::Contains("the list grows past a million layers"), InputError);
  CHECK_THROWS_WITH_AS((void)moe_layer_pattern("([0]*3+[1]*58", 61), doctest::Contains("expected ')'"),
                       InputError);
  // Bounded time and memory: an empty list repeated any number of times stays empty (no loop over the
  // count); repeats whose copying passes a few million layers' worth, and integer patterns over more than a
  // million layers, are refused.
  CHECK(moe_layer_pattern("[1]*0*18446744073709551615+[1]", 1) == std::vector<int>{1});
  CHECK_THROWS_WITH_AS((void)moe_layer_pattern("([1]*1000000)*1*1*1*1*1*1", 1000000),
                       doctest::Contains("repeats past a million layers' worth of work"), InputError);
  CHECK_THROWS_WITH_AS((void)moe_layer_pattern("1", 2'000'000),
                       doctest::Contains("a pattern over more than a million layers is not read"),
                       InputError);
  CHECK_THROWS_WITH_AS((void)moe_layer_pattern("range(61)", 61), doctest::Contains("expected '[' or '('"),
                       InputError);
}

TEST_CASE("--moe-layer-freq as the model holds it: dense first layers, then every n-th layer MoE") {
  const MoeLayerSplit deepseek = moe_layer_split(repeated({{0, 3}, {1, 58}}));
  CHECK(deepseek.dense_layers == 3);
  CHECK(deepseek.moe_layer_step == 1);
  // Llama 4 Maverick's interleaving: layers 1, 3, 5, ... of 48.
  std::vector<int> interleaved;
  for (int i = 0; i < 24; ++i) interleaved.insert(interleaved.end(), {0, 1});
  const MoeLayerSplit maverick = moe_layer_split(interleaved);
  CHECK(maverick.dense_layers == 0);
  CHECK(maverick.moe_layer_step == 2);
  // One dense layer, then every third layer MoE: layers 3, 6, 9 (each step's last).
  const MoeLayerSplit third = moe_layer_split({0, 0, 0, 1, 0, 0, 1, 0, 0, 1});
  CHECK(third.dense_layers == 1);
  CHECK(third.moe_layer_step == 3);
  CHECK(moe_layer_split({1, 1, 1}).dense_layers == 0);
  // One MoE layer: it is its step's last, the step reaching to the end: [0, 0, 1, 0] is 1 dense layer, then
  // a step of 2 whose last layer is MoE.
  const MoeLayerSplit single = moe_layer_split({0, 0, 1, 0});
  CHECK(single.dense_layers == 1);
  CHECK(single.moe_layer_step == 2);
  // An integer frequency of 2 puts experts on layers 0, 2, 4: each step's first, which the model does not
  // hold; nor three MoE then two dense.
  for (const std::vector<int>& p :
       {std::vector<int>{1, 0, 1, 0, 1, 0}, std::vector<int>{1, 1, 1, 0, 0, 1, 1, 1, 0, 0}}) {
    CHECK_THROWS_WITH_AS((void)moe_layer_split(p),
                         doctest::Contains("this pattern of MoE and dense layers is not modelled"),
                         InputError);
  }
  CHECK_THROWS_WITH_AS((void)moe_layer_split({0, 0}), doctest::Contains("puts experts on no layer"),
                       InputError);
}

TEST_CASE("--pipeline-model-parallel-layout: decoder layers per virtual stage, as Megatron-LM unrolls it") {
  // DeepSeek-V3's recipes (Megatron-Core's MoE report, Sec. 9.2.2): 4 layers beside the embedding, 14 virtual
  // stages of 4, the last layer with the MTP module and the loss: 16 virtual stages, pp 8 x 2.
  std::vector<int> expected(15, 4);
  expected.push_back(1);
  CHECK(layout_stage_layers("Et*4|(tttt|)*14tmL", 61, 1, 8) == expected);
  // parse_str_to_list's docstring example, commas cosmetic: 3 layers, 29 virtual stages of 2, the MTP module
  // alone, the loss alone.
  std::vector<int> h100(1, 3);
  h100.insert(h100.end(), 29, 2);
  h100.insert(h100.end(), {0, 0});
  CHECK(layout_stage_layers("Ettt|(tt|)*29,m|L", 61, 1, 8) == h100);
  CHECK(layout_stage_layers("Et*3|(tt|)*29m|L", 61, 1, 4) == h100);
  CHECK(layout_stage_layers("EttttL", 4, 0, 1) == std::vector<int>{4});
  // An empty first stage: the embedding is still the first layer symbol, as Megatron-LM checks it.
  CHECK(layout_stage_layers("|Ett|ttL", 4, 0, 3) == std::vector<int>{0, 2, 2});
  CHECK_THROWS_WITH_AS((void)layout_stage_layers("tE|tL", 2, 0, 2),
                       doctest::Contains("the embedding (E) opens the first stage, once"), InputError);
  CHECK_THROWS_WITH_AS((void)layout_stage_layers("Et|tL|t", 3, 0, 3),
                       doctest::Contains("the loss (L) closes the last stage, once"), InputError);
  CHECK_THROWS_WITH_AS((void)layout_stage_layers("Et*4|tmL", 61, 1, 2),
                       doctest::Contains("holds 5 decoder layers (t); --num-layers is 61"), InputError);
  CHECK_THROWS_WITH_AS((void)layout_stage_layers("Et*4|ttL", 6, 1, 2),
                       doctest::Contains("places 0 MTP modules (m); --mtp-num-layers is 1"), InputError);
  CHECK_THROWS_WITH_AS((void)layout_stage_layers("Et|t|tL", 3, 0, 2),
                       doctest::Contains("has 3 stages, not a multiple of the 2 pipeline stages"),
                       InputError);
  CHECK_THROWS_WITH_AS((void)layout_stage_layers("Et|xL", 2, 0, 2),
                       doctest::Contains("'x' is not a layer symbol"), InputError);
  // Bounded: a repeat count or a group expanding past a million symbols, and a layout over 64 KiB, are
  // refused in time linear in the text (a 60,000-character group or count included).
  CHECK_THROWS_WITH_AS((void)layout_stage_layers("E(t|)*99999999999L", 2, 0, 2),
                       doctest::Contains("expands past a million symbols"), InputError);
  CHECK_THROWS_WITH_AS((void)layout_stage_layers("E(t)*999999t(t)*50000000|L", 2, 0, 2),
                       doctest::Contains("expands past a million symbols"), InputError);
  CHECK_THROWS_WITH_AS((void)layout_stage_layers("Et*" + std::string(60'000, '9') + "|L", 2, 0, 2),
                       doctest::Contains("expands past a million symbols"), InputError);
  CHECK(layout_stage_layers("E(" + std::string(60'000, 't') + ")*1|L", 60'000, 0, 2) ==
        std::vector<int>{60'000, 0});
  CHECK_THROWS_WITH_AS((void)layout_stage_layers("E" + std::string(60'000, '(') + "L", 0, 0, 1),
                       doctest::Contains("'(' is not a layer symbol"), InputError);
  CHECK_THROWS_WITH_AS((void)layout_stage_layers("E" + std::string(70'000, 't') + "L", 70'000, 0, 1),
                       doctest::Contains("is longer than 64 KiB"), InputError);
}
