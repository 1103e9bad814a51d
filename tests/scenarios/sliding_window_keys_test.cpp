// Sliding-window layers and attention sinks in a scenario: the model keys (sliding_window, layer_types,
// attention_sinks), the gpt-oss presets with their published parameter counts, and the same models read
// from OpenAI's config.json. Parameter counts are worked out by hand below.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "models/workload/parameters.hpp"
#include "scenarios/loader.hpp"
#include "sim/error.hpp"
#include "tests/support/load_errors.hpp"
#include "tests/support/temp_dir.hpp"

using namespace trainsim;
using namespace trainsim::scenario;
using trainsim::testing::errors_of;

namespace {

const std::string rest = "cluster: {node: dgx-h100, nodes: 1}\ntraining: {global_batch: 8}\n";

std::string model_with(const std::string& extra) {
  return "model:\n"
         "  layers: 4\n"
         "  hidden: 64\n"
         "  heads: 4\n"
         "  vocab: 100\n"
         "  seq_len: 32\n" +
         extra + rest;
}

model::TransformerSpec load_model(const std::string& model) {
  return load_scenario_text("model: " + model + "\n" + rest, "t.yaml").model;
}

// gpt-oss per layer, by hand from the config: attention Q 2880·4096 + K, V 2·2880·512 + O 4096·2880 =
// 26,542,080, biases 4096 + 2·512 + 2880 = 8,000, sinks 64: 26,550,144; one expert gate, up, down 3·2880²
// = 24,883,200 with biases 2·2880 + 2880: 24,891,840; router 2880·E (its E biases are not modelled); two
// RMSNorms 5,760. Embedding and LM head 201088·2880 = 579,133,440 each, final norm 2,880.
constexpr double kAttention = 26'550'144.0;
constexpr double kExpert = 24'891'840.0;
constexpr double kTable = 579'133'440.0;

double gpt_oss_total(double layers, double experts) {
  return layers * (kAttention + experts * kExpert + 2880.0 * experts + 5760.0) + 2.0 * kTable + 2880.0;
}

// Active: 4 experts of E. The model card's active counts leave out the input embedding table (a lookup).
double gpt_oss_active_without_embedding(double layers, double experts) {
  return layers * (kAttention + 4.0 * kExpert + 2880.0 * experts + 5760.0) + kTable + 2880.0;
}

}  // namespace

TEST_CASE("gpt-oss-120b: 116.8B parameters, 5.1B active, windows on the even layers") {
  const model::TransformerSpec m = load_model("gpt-oss-120b");
  CHECK(m.sliding_window == 128);
  CHECK(m.is_windowed(0));
  CHECK_FALSE(m.is_windowed(1));
  CHECK(m.is_windowed(34));
  CHECK(m.windowed_layer_count() == 18);
  CHECK(m.attention_sinks);
  CHECK(m.swiglu_limit == 7.0);  // config.json swiglu_limit
  CHECK(m.query_width() == 4096);
  CHECK(model::parameter_count(m) == gpt_oss_total(36, 128));  // 116,829,152,064
  CHECK(model::parameter_count(m) / 116.8e9 == doctest::Approx(1.0).epsilon(0.01));
  const double active = model::active_parameter_count(m) - kTable;  // 5,132,844,864
  CHECK(active == gpt_oss_active_without_embedding(36, 128));
  CHECK(active / 5.1e9 == doctest::Approx(1.0).epsilon(0.01));
}

TEST_CASE("gpt-oss-20b: 20.9B parameters, 3.6B active") {
  const model::TransformerSpec m = load_model("gpt-oss-20b");
  CHECK(m.windowed_layer_count() == 12);
  CHECK(model::parameter_count(m) == gpt_oss_total(24, 32));  // 20,914,756,416
  CHECK(model::parameter_count(m) / 20.9e9 == doctest::Approx(1.0).epsilon(0.01));
  const double active = model::active_parameter_count(m) - kTable;  // 3,608,306,496
  CHECK(active == gpt_oss_active_without_embedding(24, 32));
  CHECK(active / 3.6e9 == doctest::Approx(1.0).epsilon(0.01));
}

TEST_CASE("OpenAI's config.json reads to the preset's shape") {
  const std::string configs = std::string(TRAINSIM_SOURCE_DIR) + "/models/hf_configs/";
  for (const std::string size : {"120b", "20b"}) {
    CAPTURE(size);
    const model::TransformerSpec hf = load_model("{hf_config: \"" + configs + "gpt-oss-" + size + ".json\"}");
    const model::TransformerSpec preset = load_model("gpt-oss-" + size);
    CHECK(hf.seq_len == 131072);  // max_position_embeddings; the preset trains at 4096
    CHECK(hf.window_layers.size() == static_cast<std::size_t>(hf.layers));
    CHECK(hf.windowed_layer_count() == preset.windowed_layer_count());
    for (std::int64_t l = 0; l < hf.layers; ++l) CHECK(hf.is_windowed(l) == preset.is_windowed(l));
    CHECK(hf.attention_sinks);
    CHECK(hf.bias);
    CHECK(hf.swiglu_limit == preset.swiglu_limit);
    CHECK(model::parameter_count(hf) == model::parameter_count(preset));
    CHECK(model::active_parameter_count(hf) == model::active_parameter_count(preset));
  }
}

TEST_CASE("the window keys dump and load back") {
  const Scenario s = load_scenario_text("model: gpt-oss-20b\n" + rest, "t.yaml");
  const Scenario back = load_scenario_text(dump_scenario(s), "dump.yaml");
  CHECK(back.model.sliding_window == 128);
  CHECK(back.model.window_layers == std::vector<bool>{true, false});
  CHECK(back.model.attention_sinks);
  CHECK(back.model.swiglu_limit == 7.0);
}

TEST_CASE("bad window keys are errors at their line and column") {
  // Line 7 is the first key after seq_len.
  CHECK(errors_of(model_with("  sliding_window: -3\n")) ==
        doctest::Contains("t.yaml:7:19: model.sliding_window"));
  CHECK(errors_of(model_with("  sliding_window: 8\n  layer_types: [sliding, full_attention]\n")) ==
        doctest::Contains("t.yaml:8:17: model.layer_types[0]"));
  CHECK(errors_of(model_with("  layer_types: [sliding_attention, full_attention]\n")) ==
        doctest::Contains("sliding_window is not set"));
  CHECK(errors_of(model_with("  sliding_window: 8\n  layer_types: [sliding_attention, full_attention, "
                             "full_attention]\n")) == doctest::Contains("divides the layers"));
  CHECK(errors_of(model_with("  sliding_window: 8\n  causal: false\n")) ==
        doctest::Contains("causal mask only"));
  // The clamp belongs to a SwiGLU: model_with's model has the default gelu MLP.
  CHECK(errors_of(model_with("  swiglu_limit: 7\n")) == doctest::Contains("model.swiglu_limit"));
  CHECK(errors_of(model_with("  swiglu_limit: 7\n")) == doctest::Contains("mlp is gelu"));
  CHECK(errors_of(model_with("  mlp: swiglu\n  swiglu_limit: -1\n")) ==
        doctest::Contains("model.swiglu_limit"));
  // Ring attention under a window is not modelled: cp > 1 is refused at parallelism.cp.
  CHECK(errors_of("model: gpt-oss-20b\ncluster: {node: dgx-h100, nodes: 1}\nparallelism: {cp: 2}\n"
                  "training: {global_batch: 8}\n") == doctest::Contains("sliding-window layers"));
}

TEST_CASE("a gpt_oss config whose layer types the spec cannot hold is refused, naming the field") {
  const trainsim::testing::TempDir temp;
  const std::filesystem::path& dir = temp.path();
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/models/hf_configs/gpt-oss-20b.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string full = "\"full_attention\"";
  std::string renamed = text;
  renamed.replace(renamed.find(full), full.size(), "\"chunked_attention\"");
  std::ofstream(dir / "chunked.json") << renamed;
  CHECK(errors_of("model: {hf_config: \"" + (dir / "chunked.json").string() + "\"}\n" + rest) ==
        doctest::Contains("field \"layer_types\": layers of kind \"chunked_attention\" are not modelled"));
  std::string short_list = text;
  short_list.replace(short_list.find(full), full.size() + 1, "");  // one entry fewer than the 24 layers
  std::ofstream(dir / "short.json") << short_list;
  CHECK(errors_of("model: {hf_config: \"" + (dir / "short.json").string() + "\"}\n" + rest) ==
        doctest::Contains("expected one entry per layer (24), found 23"));
}

TEST_CASE("a gpt_oss config without layer_types windows every other layer, as transformers' default does") {
  // GptOssConfig fills a missing layer_types with sliding_attention on layers 0, 2, 4, ... and
  // full_attention on the others: 12 of gpt-oss-20b's 24 layers windowed, as with the published list.
  const trainsim::testing::TempDir temp;
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/models/hf_configs/gpt-oss-20b.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t from = text.find("\"layer_types\"");
  REQUIRE(from != std::string::npos);
  const std::size_t to = text.find(']', from);
  text.erase(from, to + 2 - from);  // the key, its list and the comma after it
  std::ofstream(temp.path() / "no-types.json") << text;
  const model::TransformerSpec m =
      load_model("{hf_config: \"" + (temp.path() / "no-types.json").string() + "\"}");
  CHECK(m.sliding_window == 128);
  CHECK(m.windowed_layer_count() == 12);
  CHECK(m.is_windowed(0));
  CHECK_FALSE(m.is_windowed(1));
}

TEST_CASE("a config's window as long as its positions still windows a scenario that runs longer") {
  // Mistral-style: window 4096 = max_position_embeddings. At seq_len 4096 the window covers every key; at
  // 16384 each query sees 4096 of them.
  const trainsim::testing::TempDir temp;
  std::ofstream(temp.path() / "mistral.json") << R"({"model_type": "mistral", "hidden_size": 4096,
      "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
      "intermediate_size": 14336, "vocab_size": 32000, "max_position_embeddings": 4096,
      "sliding_window": 4096})";
  const std::string file = (temp.path() / "mistral.json").string();
  CHECK(load_model("{hf_config: \"" + file + "\"}").windowed_layer_count() == 0);
  const model::TransformerSpec longer = load_model("{hf_config: \"" + file + "\", seq_len: 16384}");
  CHECK(longer.sliding_window == 4096);
  CHECK(longer.windowed_layer_count() == 32);
}
