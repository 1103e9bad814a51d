// Parameter counts against published figures. Each expected value is hand arithmetic from the published
// architecture, written out in the comment; the published rounded count is checked too.
#include "models/workload/parameters.hpp"

#include <doctest/doctest.h>

#include "sim/error.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim::model;

namespace {

// GPT-3 175B (Brown et al. 2020, Table 2.1) with the paper's own vocabulary of 50,257 rather than
// Megatron's padded 51,200: the published 174.6B count is for the unpadded one.
TransformerSpec gpt3() {
  TransformerSpec s = trainsim::testing::gpt3_175b();
  s.vocab = 50257;
  return s;
}

// Llama family: rmsnorm, rope, swiglu, no biases, untied embeddings.
using trainsim::testing::llama;

}  // namespace

TEST_CASE("GPT-3 175B has 174.6 billion parameters as Brown et al. report") {
  // Layer: 12h² + 13h = 1,812,099,072; ×96 = 173,961,510,912; embeddings 50257·12288 = 617,558,016;
  // positions 2048·12288 = 25,165,824; final layernorm 24,576. Sum 174,604,259,328.
  CHECK(parameter_count(gpt3()) == 174604259328.0);
  CHECK(parameter_count(gpt3()) / 1e9 == doctest::Approx(174.6).epsilon(0.0005));
}

TEST_CASE("Llama-2 7B has 6.74 billion parameters as Touvron et al. report") {
  // Layer: 4h² (MHA) + 3·h·11008 + 2h = 202,383,360; ×32 = 6,476,267,520; embeddings and head
  // 2·32000·4096 = 262,144,000; final norm 4096. Sum 6,738,415,616.
  const TransformerSpec s = llama(32, 4096, 32, 32, 11008, 32000);
  CHECK(parameter_count(s) == 6738415616.0);
}

TEST_CASE("Llama-3 8B, 70B and 405B have 8.03, 70.6 and 405.9 billion parameters as Meta reports") {
  // 8B: attention 2h² + 2·h·1024 = 41,943,040; MLP 3·4096·14336 = 176,160,768; norms 8192;
  // ×32 = 6,979,584,000; embeddings + head 2·128256·4096 = 1,050,673,152; final norm 4096.
  CHECK(parameter_count(trainsim::testing::llama3_8b()) == 8030261248.0);
  // 70B: attention 8192·10240 + 8192² = 150,994,944; MLP 3·8192·28672 = 704,643,072; norms 16,384;
  // ×80 = 68,452,352,000; embeddings + head 2,101,346,304; final norm 8192.
  CHECK(parameter_count(trainsim::testing::llama3_70b()) == 70553706496.0);
  // 405B: attention 16384·18432 + 16384² = 570,425,344; MLP 3·16384·53248 = 2,617,245,696; norms
  // 32,768; ×126 = 401,650,679,808; embeddings + head 4,202,692,608; final norm 16,384.
  const double n405 = parameter_count(trainsim::testing::llama3_405b());
  CHECK(n405 == 405853388800.0);
  CHECK(n405 / 1e9 == doctest::Approx(405.9).epsilon(0.0005));
}

TEST_CASE("Mixtral 8x7B counts all experts in the total and top-2 in the active parameters") {
  // Mistral AI reports 46.7B total and 12.9B active parameters. Per layer: attention 41,943,040;
  // experts 8·3·4096·14336 = 1,409,286,144; router 4096·8 = 32,768; norms 8192.
  TransformerSpec s = llama(32, 4096, 32, 8, 14336, 32000);
  s.experts = 8;
  s.top_k = 2;
  CHECK(parameter_count(s) == 46702792704.0);
  // Active: 2 of 8 experts, 352,321,536 per layer.
  CHECK(active_parameter_count(s) == 12879925248.0);
  CHECK(layer_expert_parameter_count(s) == 1409286144.0);
}

TEST_CASE("the parts of the breakdown add up to the total") {
  const ParameterBreakdown p = parameter_breakdown(gpt3());
  CHECK(p.embedding == 617558016.0);
  CHECK(p.position == 25165824.0);
  CHECK(p.lm_head == 0.0);
  CHECK(p.layer_attention == 4.0 * 12288 * 12288 + 4 * 12288);
  CHECK(p.layer_mlp == 8.0 * 12288 * 12288 + 5 * 12288);
  CHECK(p.layer_norms == 4.0 * 12288);
  CHECK(layer_parameter_count(gpt3()) == 1812099072.0);
}

TEST_CASE("pipeline stages hold embeddings first, head last, and a tied copy on the last stage") {
  const TransformerSpec s = gpt3();
  const double first = stage_parameter_count(s, 48, true, false);
  const double last = stage_parameter_count(s, 48, false, true);
  CHECK(first == 48.0 * 1812099072.0 + 617558016.0 + 25165824.0);
  CHECK(last == 48.0 * 1812099072.0 + 24576.0 + 617558016.0);
  CHECK(first + last == parameter_count(s) + 617558016.0);
  CHECK(stage_parameter_count(s, 96, true, true) == parameter_count(s));
}

TEST_CASE("a generic model counts the parameters of its layers") {
  TransformerSpec s;
  s.generic_layers = {{"conv", 1000, 1e6, 10}, {"fc", 500, 1e5, 5}};
  CHECK(parameter_count(s) == 1500.0);
  CHECK(layer_parameter_count(s, 1) == 500.0);
  CHECK(stage_parameter_count(s, 1, false, true, 1) == 500.0);
  CHECK_THROWS_AS((void)layer_parameter_count(s, 2), trainsim::InputError);
}

TEST_CASE("inconsistent specs are rejected with every problem named") {
  TransformerSpec s = gpt3();
  s.heads = 7;
  s.kv_heads = 2;
  try {
    (void)parameter_count(s);
    FAIL("expected InputError");
  } catch (const trainsim::InputError& e) {
    CHECK(e.diagnostics().size() == 2);
  }
}
