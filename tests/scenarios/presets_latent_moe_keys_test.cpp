// The model keys of DeepSeek-style models: multi-head latent attention (q_lora_rank, kv_lora_rank,
// qk_nope_head_dim, qk_rope_head_dim, v_head_dim), shared_experts and dense_layers; read, bounded, and
// each problem placed at its key (file:line:col) as the other model keys are.
#include <doctest/doctest.h>

#include <string>

#include "models/workload/parameters.hpp"
#include "scenarios/loader.hpp"
#include "sim/error.hpp"
#include "tests/support/load_errors.hpp"

using namespace trainsim;
using namespace trainsim::scenario;
using trainsim::testing::errors_of;

namespace {

const std::string rest = "cluster: {node: dgx-h100, nodes: 1}\ntraining: {global_batch: 8}\n";

// A small MoE model with MLA, one key per line so that errors have a line each.
std::string model_with(const std::string& extra) {
  return "model:\n"
         "  layers: 4\n"
         "  hidden: 64\n"
         "  heads: 4\n"
         "  vocab: 100\n"
         "  seq_len: 32\n"
         "  experts: 8\n"
         "  top_k: 2\n" +
         extra + rest;
}

const std::string mla =
    "  q_lora_rank: 16\n  kv_lora_rank: 8\n  qk_nope_head_dim: 8\n  qk_rope_head_dim: 4\n  v_head_dim: 8\n";

}  // namespace

TEST_CASE("the MLA, shared-expert and dense-layer keys are read into the model") {
  const Scenario s =
      load_scenario_text(model_with(mla + "  shared_experts: 2\n  dense_layers: 1\n"), "t.yaml");
  CHECK(s.model.q_lora_rank == 16);
  CHECK(s.model.kv_lora_rank == 8);
  CHECK(s.model.qk_nope_head_dim == 8);
  CHECK(s.model.qk_rope_head_dim == 4);
  CHECK(s.model.v_head_dim == 8);
  CHECK(s.model.shared_experts == 2);
  CHECK(s.model.dense_layers == 1);
  CHECK(s.model.is_mla());
}

TEST_CASE("the deepseek-v3 preset loads with its published 671B parameters") {
  const Scenario s = load_scenario_text("model: deepseek-v3\n" + rest, "t.yaml");
  CHECK(s.model.dense_layers == 3);
  CHECK(s.model.shared_experts == 1);
  CHECK(model::parameter_count(s.model) / 671e9 == doctest::Approx(1.0).epsilon(0.005));
}

TEST_CASE("bad values of the new keys are errors at their line and column") {
  // Line 9 is the first key after top_k (line 8): "  <key>: value" puts the value at column 3 + len + 2.
  CHECK(errors_of(model_with("  shared_experts: -1\n")) ==
        doctest::Contains("t.yaml:9:19: model.shared_experts"));
  CHECK(errors_of(model_with("  kv_lora_rank: 1e9\n")) ==
        doctest::Contains("t.yaml:9:17: model.kv_lora_rank"));
  CHECK(errors_of(model_with("  v_head_dim: many\n")) == doctest::Contains("t.yaml:9:15: model.v_head_dim"));
  // Dense layers must leave a MoE layer: 4 of 4 is a dense model.
  CHECK(errors_of(model_with("  dense_layers: 4\n")) ==
        doctest::Contains("t.yaml:9:17: model.dense_layers: dense_layers must be fewer than layers (4)"));
  // Keys of a MoE model on a dense one.
  const std::string dense =
      "model: {layers: 4, hidden: 64, heads: 4, vocab: 100, seq_len: 32, shared_experts: 1}\n";
  CHECK(errors_of(dense + rest) ==
        doctest::Contains("model.shared_experts: shared_experts is set but experts is 0"));
  CHECK(errors_of("model: {preset: llama3-8b, expert_ffn_hidden: 2048}\n" + rest) ==
        doctest::Contains("t.yaml:1:47: model.expert_ffn_hidden: expert_ffn_hidden is set but experts is 0"));
  // MLA needs its three head widths, and its other keys need kv_lora_rank.
  CHECK(errors_of(model_with("  kv_lora_rank: 8\n  qk_nope_head_dim: 8\n")) ==
        doctest::Contains("model.qk_rope_head_dim: qk_rope_head_dim must be given"));
  CHECK(errors_of(model_with("  q_lora_rank: 16\n")) ==
        doctest::Contains("t.yaml:9:16: model.q_lora_rank: q_lora_rank needs kv_lora_rank"));
  CHECK(errors_of(model_with("  v_head_dim: 8\n")) ==
        doctest::Contains("model.v_head_dim: v_head_dim needs kv_lora_rank"));
  CHECK(errors_of(model_with(mla)).size() == 0);
}

TEST_CASE("a rule broken by a scenario's override of a preset's key is an error at the override") {
  // deepseek-v3's preset has 3 dense layers and 1 shared expert; the scenario sets only the other key of
  // each rule, so the problem is placed there (the keys after "model: {preset: deepseek-v3, " start at
  // column 30, their values after "layers: " at 38 and "experts: " at 39).
  CHECK(errors_of("model: {preset: deepseek-v3, layers: 3}\n" + rest) ==
        doctest::Contains("t.yaml:1:38: model.layers: dense_layers must be fewer than layers (3), found 3"));
  const doctest::String dense = errors_of("model: {preset: deepseek-v3, experts: 0, top_k: 0}\n" + rest);
  CHECK(dense == doctest::Contains("t.yaml:1:39: model.experts: shared_experts is set but experts is 0"));
  CHECK(dense == doctest::Contains("model.experts: dense_layers is set but experts is 0"));
  // Turning a preset's multi-head latent attention off leaves its head widths without it.
  const doctest::String no_mla = errors_of("model: {preset: deepseek-v3, kv_lora_rank: 0}\n" + rest);
  CHECK(no_mla == doctest::Contains("t.yaml:1:44: model.kv_lora_rank: qk_nope_head_dim needs kv_lora_rank"));
  CHECK(no_mla == doctest::Contains("model.kv_lora_rank: q_lora_rank needs kv_lora_rank"));
  // One layer more than the preset's dense layers leaves a MoE layer: no error.
  CHECK(errors_of("model: {preset: deepseek-v3, layers: 4}\n" + rest).size() == 0);
}

TEST_CASE("mtp_layers is read, dumped and loaded back; a negative count is an error at its place") {
  const Scenario s = load_scenario_text(model_with(mla + "  mtp_layers: 1\n"), "t.yaml");
  CHECK(s.model.mtp_layers == 1);
  CHECK(load_scenario_text(dump_scenario(s), "t.yaml").model.mtp_layers == 1);
  CHECK(
      load_scenario_text("model: {preset: deepseek-v3, mtp_layers: 1}\n" + rest, "t.yaml").model.mtp_layers ==
      1);
  CHECK_THROWS_WITH_AS((void)load_scenario_text(model_with("  mtp_layers: -1\n"), "t.yaml"),
                       doctest::Contains("t.yaml:9:15: model.mtp_layers:"), InputError);
}

TEST_CASE(
    "routing and imbalance are read, dumped and loaded back; mismatched keys are errors at their place") {
  const Scenario s = load_scenario_text(model_with("  routing: dropless\n  imbalance: 1.5\n"), "t.yaml");
  CHECK(s.model.routing == model::Routing::dropless);
  CHECK(s.model.imbalance == 1.5);
  CHECK(s.model.expert_load() == 1.5);
  const Scenario back = load_scenario_text(dump_scenario(s), "t.yaml");
  CHECK(back.model.routing == model::Routing::dropless);
  CHECK(back.model.imbalance == 1.5);
  const Scenario capped =
      load_scenario_text(model_with("  routing: capacity\n  capacity_factor: 1.25\n"), "t.yaml");
  CHECK(capped.model.expert_load() == 1.25);
  CHECK(load_scenario_text(dump_scenario(capped), "t.yaml").model.routing == model::Routing::capacity);
  CHECK(load_scenario_text(model_with(""), "t.yaml").model.routing == model::Routing::force_balanced);
  CHECK(errors_of(model_with("  routing: greedy\n")) == doctest::Contains("t.yaml:9:12: model.routing"));
  CHECK(errors_of(model_with("  routing: dropless\n  imbalance: 0.5\n")) ==
        doctest::Contains("t.yaml:10:14: model.imbalance"));
  CHECK(errors_of(model_with("  routing: dropless\n  capacity_factor: 1.2\n")) ==
        doctest::Contains("t.yaml:10:20: model.capacity_factor: dropless routing has no capacity"));
  CHECK(errors_of(model_with("  imbalance: 1.2\n")) ==
        doctest::Contains("t.yaml:9:14: model.imbalance: applies to routing: dropless only"));
  CHECK(errors_of("model: {layers: 4, hidden: 64, heads: 4, vocab: 100, seq_len: 32, routing: dropless}\n" +
                  rest) == doctest::Contains("model.routing: routes tokens to experts, but experts is 0"));
}

TEST_CASE("routing groups are read, dumped and loaded back; inconsistent ones are errors at their place") {
  // 8 experts in 4 groups, a token's 2 from 2 of them.
  const Scenario s =
      load_scenario_text(model_with("  routing_groups: 4\n  routing_group_top_k: 2\n"), "t.yaml");
  CHECK((s.model.routing_groups == 4 && s.model.routing_group_top_k == 2));
  const Scenario back = load_scenario_text(dump_scenario(s), "t.yaml");
  CHECK((back.model.routing_groups == 4 && back.model.routing_group_top_k == 2));
  CHECK(load_scenario_text(model_with(""), "t.yaml").model.routing_groups == 0);
  // The DeepSeek presets carry their configs' groups.
  CHECK(load_scenario_text("model: deepseek-v3\n" + rest, "t.yaml").model.routing_groups == 8);
  CHECK(load_scenario_text("model: deepseek-v2\n" + rest, "t.yaml").model.routing_group_top_k == 3);
  CHECK(errors_of(model_with("  routing_groups: 4\n")) ==
        doctest::Contains("t.yaml:9:19: model.routing_groups: group-limited routing needs both"));
  CHECK(errors_of(model_with("  routing_groups: 3\n  routing_group_top_k: 1\n")) ==
        doctest::Contains("t.yaml:9:19: model.routing_groups: routing_groups (3) must divide experts (8)"));
  CHECK(errors_of(model_with("  routing_groups: 4\n  routing_group_top_k: 3\n")) ==
        doctest::Contains("t.yaml:10:24: model.routing_group_top_k: routing_group_top_k (3) must be at most "
                          "routing_groups (4) and top_k (2)"));
  // Two picked groups of 8/8 = 1 expert cannot hold top_k 2.
  CHECK(errors_of(model_with("  routing_groups: 8\n  routing_group_top_k: 1\n")) ==
        doctest::Contains("model.routing_group_top_k: the routing_group_top_k (1) groups of experts / "
                          "routing_groups = 1 experts hold fewer than top_k (2)"));
  // A preset's value meets the scenario's: blamed at the key the scenario sets (deepseek-v3 picks 4 groups).
  CHECK(
      errors_of("model: {preset: deepseek-v3, routing_groups: 2}\n" + rest) ==
      doctest::Contains("model.routing_groups: routing_group_top_k (4) must be at most routing_groups (2)"));
  // A preset's groups must still divide the experts a scenario gives it: blamed at experts.
  CHECK(errors_of("model: {preset: deepseek-v3, experts: 100}\n" + rest) ==
        doctest::Contains("model.experts: routing_groups (8) must divide experts (100)"));
  CHECK(errors_of("model: {layers: 4, hidden: 64, heads: 4, vocab: 100, seq_len: 32, routing_groups: 2, "
                  "routing_group_top_k: 1}\n" +
                  rest) == doctest::Contains("but experts is 0 (a dense model)"));
}
