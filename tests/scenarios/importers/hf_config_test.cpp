// `model: {hf_config: PATH}`: HuggingFace config.json files read into the model spec. Parameter counts are
// worked out by hand from each config (comments) and compared with the totals the model cards publish.
#include "scenarios/importers/hf_config.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "models/workload/flops.hpp"
#include "models/workload/parameters.hpp"
#include "scenarios/loader.hpp"
#include "sim/error.hpp"
#include "tests/support/temp_dir.hpp"

using namespace trainsim;
using namespace trainsim::scenario;

namespace {

const std::string configs = std::string(TRAINSIM_SOURCE_DIR) + "/models/hf_configs/";

model::TransformerSpec read(const std::string& file, const std::string& overrides = "") {
  const std::string text = "model: {hf_config: \"" + configs + file + "\"" + overrides +
                           "}\ncluster: {node: dgx-h100, nodes: 1}\ntraining: {global_batch: 8}\n";
  return load_scenario_text(text, "t.yaml").model;
}

double relative(double a, double b) {
  return a / b - 1.0;
}

}  // namespace

TEST_CASE("Qwen3-32B: heads of 128 wider than hidden / heads, 32.8B parameters") {
  const model::TransformerSpec m = read("qwen3-32b.json");
  CHECK(m.hidden == 5120);
  CHECK(m.heads == 64);
  CHECK(m.head_dim == 128);
  CHECK(m.query_width() == 8192);  // not the hidden size: Q and O projections are 5120 x 8192
  CHECK(m.kv_heads == 8);
  CHECK(m.mlp == model::Mlp::swiglu);
  CHECK(m.norm == model::Norm::rmsnorm);
  CHECK_FALSE(m.tied_embeddings);
  CHECK(m.seq_len == 40960);
  // Per layer: Q 5120·8192 + K, V 2·5120·1024 + O 8192·5120 = 94,371,840; MLP 3·5120·25600 = 393,216,000;
  // two RMSNorms 10,240, the query and key heads' norms 2·128 = 256: 487,598,336. 64 layers
  // 31,206,293,504, embedding and LM head 2·151936·5120 = 1,555,824,640, final norm 5,120.
  CHECK(m.qk_norm);
  CHECK(model::parameter_count(m) == 32'762'123'264.0);
  CHECK(std::abs(relative(model::parameter_count(m), 32.8e9)) < 0.005);
}

TEST_CASE("Qwen3-30B-A3B: 128 experts of 768, top 8; 30.5B parameters, 3.3B active") {
  const model::TransformerSpec m = read("qwen3-30b-a3b.json");
  CHECK(m.experts == 128);
  CHECK(m.top_k == 8);
  CHECK(m.expert_ffn_hidden == 768);
  // Per layer: attention 2048·(4096 + 2·512) + 4096·2048 = 18,874,368; experts 128·3·2048·768 =
  // 603,979,776; router 2048·128 = 262,144; norms 4,096 and the q/k head norms 256: 623,120,640. 48 layers
  // 29,909,790,720, plus embedding and head 2·151936·2048 = 622,329,856 and the final norm 2,048.
  CHECK(m.qk_norm);
  CHECK(model::parameter_count(m) == 30'532'122'624.0);
  CHECK(std::abs(relative(model::parameter_count(m), 30.5e9)) < 0.005);
  // Active: 120 of 128 experts idle, 603,979,776·120/128·48 = 27,179,089,920 fewer: 3,353,032,704. The card's
  // "3.3B" is rounded to one decimal, so it is checked to that rounding.
  CHECK(model::active_parameter_count(m) == doctest::Approx(3'353'032'704.0).scale(0));
  CHECK(std::abs(model::active_parameter_count(m) - 3.3e9) < 0.05e9 + 4e6);
}

TEST_CASE("Qwen3-235B-A22B: 128 experts of 1536, top 8; 235B parameters, 22B active") {
  const model::TransformerSpec m = read("qwen3-235b-a22b.json");
  CHECK((m.layers == 94 && m.hidden == 4096 && m.heads == 64 && m.kv_heads == 4 && m.head_dim == 128));
  CHECK((m.experts == 128 && m.top_k == 8 && m.expert_ffn_hidden == 1536));
  // Per layer: attention 4096·(8192 + 2·512) + 8192·4096 = 71,303,168; experts 128·3·4096·1536 =
  // 2,415,919,104; router 4096·128 = 524,288; norms 8,192 and the q/k head norms 256: 2,487,755,008. 94
  // layers 233,848,970,752, plus embedding and head 2·151936·4096 = 1,244,659,712 and the final norm 4,096.
  CHECK(m.qk_norm);
  CHECK(model::parameter_count(m) == 235'093'634'560.0);
  CHECK(std::abs(relative(model::parameter_count(m), 235e9)) < 0.005);
  // Active: 120 of 128 experts idle, 2,415,919,104·120/128·94 = 212,902,871,040 fewer.
  CHECK(model::active_parameter_count(m) == doctest::Approx(22'190'763'520.0).scale(0));
  CHECK(std::abs(model::active_parameter_count(m) - 22e9) < 0.5e9);
}

TEST_CASE("the Qwen3 MoE presets are their config.json") {
  for (const std::string name : {"qwen3-30b-a3b", "qwen3-235b-a22b"}) {
    CAPTURE(name);
    const model::TransformerSpec config = read(name + ".json");
    const model::TransformerSpec preset =
        load_scenario_text(
            "model: " + name + "\ncluster: {node: dgx-h100, nodes: 1}\ntraining: {global_batch: 8}\n",
            "t.yaml")
            .model;
    CHECK(preset.name == config.name);
    CHECK((preset.layers == config.layers && preset.hidden == config.hidden && preset.heads == config.heads));
    CHECK((preset.kv_heads == config.kv_heads && preset.head_dim == config.head_dim));
    CHECK((preset.ffn_hidden == config.ffn_hidden && preset.vocab == config.vocab));
    CHECK(preset.seq_len == config.seq_len);
    CHECK((preset.mlp == config.mlp && preset.norm == config.norm && preset.position == config.position));
    CHECK((preset.bias == config.bias && preset.tied_embeddings == config.tied_embeddings));
    CHECK((preset.qk_norm && config.qk_norm));
    CHECK((preset.experts == config.experts && preset.top_k == config.top_k));
    CHECK(preset.expert_ffn_hidden == config.expert_ffn_hidden);
    CHECK(preset.capacity_factor == config.capacity_factor);
    CHECK(preset.dropout == config.dropout);
    CHECK(model::parameter_count(preset) == model::parameter_count(config));
    CHECK(model::active_parameter_count(preset) == model::active_parameter_count(config));
  }
}

TEST_CASE("Mixtral 8x22B: 141B parameters, 39B active; Llama 3.1 405B: 405B") {
  const model::TransformerSpec mixtral = read("mixtral-8x22b.json");
  // Per layer: attention 6144·(6144 + 2·1024) + 6144·6144 = 88,080,384; experts 8·3·6144·16384 =
  // 2,415,919,104; router 49,152; norms 12,288: 2,504,060,928. 56 layers, embedding and head 2·32768·6144.
  CHECK(model::parameter_count(mixtral) == 140'630'071'296.0);
  CHECK(std::abs(relative(model::parameter_count(mixtral), 141e9)) < 0.005);
  CHECK(std::abs(relative(model::active_parameter_count(mixtral), 39e9)) < 0.005);

  const model::TransformerSpec llama = read("llama-3.1-405b.json");
  // Per layer: 16384·(16384 + 2·1024) + 16384² + 3·16384·53248 + 2·16384 = 3,187,703,808; 126 layers,
  // embedding and head 2·128256·16384, final norm 16384.
  CHECK(model::parameter_count(llama) == 405'853'388'800.0);
  CHECK(std::abs(relative(model::parameter_count(llama), 405e9)) < 0.005);
  CHECK(llama.seq_len == 131072);
}

TEST_CASE("keys beside hf_config override the config; the dump holds the model, not the path") {
  const model::TransformerSpec m = read("qwen3-32b.json", ", seq_len: 4096, layers: 8");
  CHECK(m.seq_len == 4096);
  CHECK(m.layers == 8);
  CHECK(m.head_dim == 128);
  const std::string text = "model: {hf_config: \"" + configs +
                           "qwen3-32b.json\", seq_len: 4096}\ncluster: {node: dgx-h100, nodes: 1}\n"
                           "training: {global_batch: 8}\n";
  const Scenario loaded = load_scenario_text(text, "t.yaml");
  const Scenario back = load_scenario_text(dump_scenario(loaded), "t.yaml");
  CHECK(back.model.head_dim == 128);
  CHECK(back.model.seq_len == 4096);
  CHECK(model::parameter_count(back.model) == model::parameter_count(loaded.model));
}

TEST_CASE("an architecture or a field the spec cannot hold is an error naming it") {
  CHECK_THROWS_WITH_AS((void)read("missing.json"), doctest::Contains("missing.json"), InputError);
  CHECK_THROWS_WITH_AS(
      (void)load_scenario_text("model: {preset: llama3-8b, hf_config: x.json}\ncluster: {node: dgx-h100, "
                               "nodes: 1}\ntraining: {global_batch: 8}\n",
                               "t.yaml"),
      doctest::Contains("either a preset or an hf_config"), InputError);
}

TEST_CASE("DeepSeek-V3: MLA, 256 experts of 2048 with one shared, 3 dense layers; 671B, 37.6B active") {
  model::TransformerSpec m = read("deepseek-v3.json", ", seq_len: 4096");
  // num_nextn_predict_layers: one multi-token-prediction module, a MoE layer of 11,507,286,016 and its
  // own 3 norms of 7168 and 2·7168·7168 projection: 11,610,067,968 more. The hub's 685B store the module
  // with its own copies of the embedding and the output head (2·129280·7168): 684,489,830,400.
  CHECK(m.mtp_layers == 1);
  const double module = 11'507'286'016.0 + 3.0 * 7168 + 2.0 * 7168 * 7168;
  CHECK(module == 11'610'067'968.0);
  CHECK(model::parameter_count(m) == 671'026'404'352.0 + module);
  CHECK(std::abs(relative(model::parameter_count(m) + 2.0 * 129280 * 7168, 685e9)) < 0.001);
  // The module's layer leaves 248 of its 256 routed experts idle too.
  CHECK(model::active_parameter_count(m) == 37'552'282'624.0 + module - 248.0 * 44'040'192);
  // The published 671B are the main model alone.
  m.mtp_layers = 0;
  CHECK(m.name == "deepseek-v3");
  CHECK((m.q_lora_rank == 1536 && m.kv_lora_rank == 512));
  CHECK((m.qk_nope_head_dim == 128 && m.qk_rope_head_dim == 64 && m.v_head_dim == 128));
  CHECK((m.experts == 256 && m.top_k == 8 && m.expert_ffn_hidden == 2048 && m.shared_experts == 1));
  CHECK((m.dense_layers == 3 && m.ffn_hidden == 18432));
  // Node-limited routing: n_group 8, topk_group 4.
  CHECK((m.routing_groups == 8 && m.routing_group_top_k == 4));
  // By hand (tests/models/workload/attention_projections_test.cpp): 58 MoE layers of 11,507,286,016, 3
  // dense layers of 583,483,392, embedding and LM head 2·129280·7168, final norm 7168.
  CHECK(model::parameter_count(m) == 671'026'404'352.0);
  CHECK(std::abs(relative(model::parameter_count(m), 671e9)) < 0.005);
  CHECK(model::active_parameter_count(m) == 37'552'282'624.0);
}

TEST_CASE("a DeepSeek-V3 config with experts only every other layer is refused") {
  const trainsim::testing::TempDir temp;
  const std::filesystem::path& dir = temp.path();
  std::ifstream in(configs + "deepseek-v3.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.insert(text.rfind('}'), ", \"moe_layer_freq\": 2");
  const std::filesystem::path file = dir / "deepseek-freq.json";
  std::ofstream(file) << text;
  CHECK_THROWS_WITH_AS((void)load_scenario_text("model: {hf_config: \"" + file.string() +
                                                    "\"}\ncluster: {node: dgx-h100, nodes: 1}\n"
                                                    "training: {global_batch: 8}\n",
                                                "t.yaml"),
                       doctest::Contains("field \"moe_layer_freq\""), InputError);
}

TEST_CASE("a DeepSeek-V3 config with no shared expert and no dense first layer reads as such") {
  // n_shared_experts 0 and first_k_dense_replace 0 are the HF way to say none: every layer MoE, routed only.
  const trainsim::testing::TempDir temp;
  std::ifstream in(configs + "deepseek-v3.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const std::string key : {"\"n_shared_experts\": 1", "\"first_k_dense_replace\": 3"}) {
    const std::size_t at = text.find(key);
    REQUIRE(at != std::string::npos);
    text.replace(at + key.size() - 1, 1, "0");
  }
  const std::filesystem::path file = temp.path() / "deepseek-none.json";
  std::ofstream(file) << text;
  const model::TransformerSpec m = load_scenario_text("model: {hf_config: \"" + file.string() +
                                                          "\"}\ncluster: {node: dgx-h100, nodes: 1}\n"
                                                          "training: {global_batch: 8}\n",
                                                      "t.yaml")
                                       .model;
  CHECK(m.shared_experts == 0);
  CHECK(m.dense_layers == 0);
  CHECK(m.experts == 256);
}

TEST_CASE("the FLOPs of a layer follow heads x head_dim, not the hidden size") {
  const model::TransformerSpec m = read("qwen3-32b.json", ", seq_len: 4096");
  const model::ForwardFlops f = model::forward_flops_per_sequence(m);
  // 2 FLOPs per weight per token over the layer's matrices (94,371,840 attention + 393,216,000 MLP), and
  // QKᵀ plus AV over 64 heads of 128: 4·s²·8192.
  const double s = 4096;
  CHECK(f.layer_dense == doctest::Approx(2.0 * s * (94'371'840.0 + 393'216'000.0)).scale(0));
  CHECK(f.layer_attention == doctest::Approx(4.0 * s * s * 8192.0).scale(0));
}

TEST_CASE("a field out of range or unknown to the reader is named") {
  const trainsim::testing::TempDir temp;
  const std::filesystem::path& dir = temp.path();
  auto load_config = [&](const std::string& name, const std::string& json) {
    const std::filesystem::path file = dir / name;
    std::ofstream(file) << json;
    return load_scenario_text("model: {hf_config: \"" + file.string() +
                                  "\"}\ncluster: {node: dgx-h100, nodes: 1}\ntraining: {global_batch: 8}\n",
                              "t.yaml");
  };
  const std::string llama = R"("model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
      "num_attention_heads": 32, "intermediate_size": 14336, "vocab_size": 128256,
      "max_position_embeddings": 8192)";
  CHECK(load_config("ok.json", "{" + llama + "}").model.hidden == 4096);
  CHECK_THROWS_WITH_AS((void)load_config("mla.json", "{" + llama + R"(, "kv_lora_rank": 512})"),
                       doctest::Contains("field \"kv_lora_rank\": not a field this reader knows"),
                       InputError);
  CHECK_THROWS_WITH_AS((void)load_config("neg.json", R"({"model_type": "llama", "hidden_size": -4096})"),
                       doctest::Contains("field \"hidden_size\": expected a positive integer"), InputError);
  CHECK_THROWS_WITH_AS((void)load_config("text.json", "not json"),
                       doctest::Contains("text.json:1:2: not JSON trainsim reads: syntax error"), InputError);
}
