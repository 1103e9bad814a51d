// `trainsim import nemo`: a NeMo 2 recipe's keys to scenario keys (the recipe's own values, NeMo's defaults
// where a key is absent), and errors at the key's place.
#include "scenarios/importers/nemo_recipe.hpp"

#include <doctest/doctest.h>

#include <string>

#include "scenarios/loader.hpp"
#include "sim/error.hpp"

using namespace trainsim;
using namespace trainsim::scenario;

namespace {

// A recipe of a model config without a preset, sized by its keys.
const std::string sized = R"(_target_: nemo.collections.llm.api.pretrain
data: {global_batch_size: 64, micro_batch_size: 2, seq_length: 4096}
model:
  _target_: nemo.collections.llm.gpt.model.base.GPTModel
  config:
    _target_: nemo.collections.llm.gpt.model.base.GPTConfig
    num_layers: 24
    hidden_size: 2048
    num_attention_heads: 16
    num_query_groups: 4
    ffn_hidden_size: 8192
    vocab_size: 32000
    gated_linear_unit: true
    normalization: RMSNorm
    add_bias_linear: false
    hidden_dropout: 0.0
    recompute_granularity: full
trainer:
  num_nodes: 2
  devices: 8
  plugins: {precision: 16-mixed, grad_reduce_in_fp32: true}
  strategy: {tensor_model_parallel_size: 2, pipeline_model_parallel_size: 2,
             virtual_pipeline_model_parallel_size: 3, sequence_parallel: true,
             ddp: {overlap_grad_reduce: true}}
)";

}  // namespace

TEST_CASE("a sized model config, its layout and precision become the scenario's keys") {
  const NemoImport imported = import_nemo_recipe(sized, "sized.yaml", {});
  CHECK(imported.left_out.empty());
  const Scenario s = load_scenario_text(imported.yaml, "sized.yaml");
  CHECK(s.model.layers == 24);
  CHECK(s.model.hidden == 2048);
  CHECK(s.model.heads == 16);
  CHECK(s.model.kv_heads == 4);
  CHECK(s.model.ffn_hidden == 8192);
  CHECK(s.model.vocab == 32000);
  CHECK(s.model.seq_len == 4096);  // data.seq_length
  CHECK(s.model.mlp == model::Mlp::swiglu);
  CHECK(s.model.norm == model::Norm::rmsnorm);
  CHECK_FALSE(s.model.bias);
  CHECK(s.model.dropout == 0.0);
  CHECK(s.cluster.nodes == 2);
  CHECK(s.parallelism.tp == 2);
  CHECK(s.parallelism.pp == 2);
  CHECK(s.parallelism.virtual_stages == 3);
  CHECK(s.parallelism.schedule == model::Schedule::interleaved);
  CHECK(s.parallelism.dp == 4);  // 16 GPUs / (tp 2 · pp 2)
  CHECK(s.parallelism.micro_batch == 2);
  CHECK(s.parallelism.sequence_parallel);
  CHECK(s.parallelism.recompute == model::Recompute::full);
  CHECK(s.parallelism.zero == model::ZeroStage::none);  // no distributed optimizer, no sharding strategy
  CHECK(s.parallelism.overlap_grad_reduce);
  CHECK(s.training.precision == topo::Precision::fp16);
  CHECK(s.training.global_batch == 64);
  CHECK(s.parallelism.framework.preset == model::FrameworkPreset::nemo);
  CHECK_FALSE(s.parallelism.framework.tp_comm_overlap);  // MegatronCommOverlapCallback absent: off
  CHECK_FALSE(s.parallelism.framework.overlap_param_gather);
  CHECK(s.parallelism.framework.grad_reduce_dtype == topo::Precision::fp32);
}

TEST_CASE("recompute_method and recompute_num_layers: uniform chunks of one layer are full recompute") {
  // Megatron's full granularity with uniform chunks of one layer recomputes every layer from its input, as
  // recompute: full prices; a block of one layer per stage keeps every other layer's activations, and is
  // refused at the key rather than priced as full recompute.
  const std::string full = "    recompute_granularity: full\n";
  const auto with = [&](const std::string& keys) {
    std::string text = sized;
    text.replace(text.find(full), full.size(), full + keys);
    return text;
  };
  const NemoImport uniform =
      import_nemo_recipe(with("    recompute_method: uniform\n    recompute_num_layers: 1\n"), "r.yaml", {});
  CHECK(load_scenario_text(uniform.yaml, "u.yaml").parallelism.recompute == model::Recompute::full);
  CHECK_THROWS_WITH_AS((void)import_nemo_recipe(
                           with("    recompute_method: block\n    recompute_num_layers: 1\n"), "r.yaml", {}),
                       doctest::Contains("model.config.recompute_method: only uniform chunks of one layer"),
                       InputError);
  CHECK_THROWS_WITH_AS(
      (void)import_nemo_recipe(with("    recompute_num_layers: 4\n"), "r.yaml", {}),
      doctest::Contains("model.config.recompute_num_layers: only uniform chunks of one layer"), InputError);
}

TEST_CASE("a model config that is neither a preset nor sized, and a bad value, are errors at their place") {
  const std::string unsized = R"(data: {global_batch_size: 8}
model:
  config:
    _target_: nemo.collections.llm.gpt.model.nemotron.Nemotron4Config15B
trainer: {devices: 8}
)";
  CHECK_THROWS_WITH_AS((void)import_nemo_recipe(unsized, "r.yaml", {}),
                       doctest::Contains("r.yaml:4:15: model.config.num_layers: missing: Nemotron4Config15B"),
                       InputError);
  // A config subclass without a preset, sized but for the keys its class sets to its own defaults (a
  // Llama 3.2 1B: SwiGLU, RMSNorm, no bias, 8 KV heads, tied embeddings, no dropout), which GPTConfig's
  // would replace: refused, naming them.
  const std::string subclass = R"(data: {global_batch_size: 8}
model:
  config:
    _target_: nemo.collections.llm.gpt.model.llama.Llama32Config1B
    num_layers: 16
    hidden_size: 2048
    num_attention_heads: 32
    vocab_size: 128256
    normalization: RMSNorm
trainer: {devices: 8}
)";
  CHECK_THROWS_WITH_AS(
      (void)import_nemo_recipe(subclass, "r.yaml", {}),
      doctest::Contains(
          "r.yaml:4:15: model.config.gated_linear_unit: missing: Llama32Config1B has no trainsim "
          "preset and sets its own defaults, which the importer does not read; give "
          "gated_linear_unit, add_bias_linear, num_query_groups, "
          "share_embeddings_and_output_weights, hidden_dropout"),
      InputError);
  const std::string bad = R"(data: {global_batch_size: 8}
model: {config: {_target_: x.Llama3Config8B}}
trainer: {devices: 8, strategy: {tensor_model_parallel_size: two}}
)";
  CHECK_THROWS_WITH_AS((void)import_nemo_recipe(bad, "r.yaml", {}),
                       doctest::Contains("trainer.strategy.tensor_model_parallel_size"), InputError);
  // Virtual pipeline stages without a pipeline: Megatron-Core refuses them, so the importer does too.
  std::string no_pipeline = sized;
  const std::string pp = "pipeline_model_parallel_size: 2";
  no_pipeline.replace(no_pipeline.find(pp), pp.size(), "pipeline_model_parallel_size: 1");
  CHECK_THROWS_WITH_AS((void)import_nemo_recipe(no_pipeline, "r.yaml", {}),
                       doctest::Contains("trainer.strategy.virtual_pipeline_model_parallel_size: needs "
                                         "pipeline_model_parallel_size above 1"),
                       InputError);
  CHECK_THROWS_WITH_AS((void)import_nemo_recipe("trainer: {devices: 8}\n", "r.yaml", {}),
                       doctest::Contains("model.config: missing"), InputError);
}
