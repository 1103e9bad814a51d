// moe_layer_step, the key of MoE layers interleaved with dense ones: read, refused where it means nothing,
// and Llama 4 Maverick's preset laid out as the released model (interleave_moe_layer_step 2).
#include <doctest/doctest.h>

#include <string>

#include "scenarios/loader.hpp"
#include "sim/error.hpp"

using namespace trainsim;
using namespace trainsim::model;

TEST_CASE("moe_layer_step is read, refused on a dense model and where no layer would be MoE") {
  const std::string rest = "cluster: {node: dgx-h100, nodes: 1}\ntraining: {global_batch: 8}\n";
  const auto errors_of = [&](const std::string& model) {
    try {
      (void)scenario::load_scenario_text(model + rest, "t.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string moe =
      "model: {layers: 4, hidden: 64, heads: 4, vocab: 100, seq_len: 32, experts: 4, top_k: 1";
  CHECK(errors_of(moe + ", moe_layer_step: 2}\n").empty());
  CHECK(scenario::load_scenario_text(moe + ", moe_layer_step: 2}\n" + rest, "t.yaml").model.moe_layer_step ==
        2);
  CHECK(errors_of(moe + ", moe_layer_step: 0}\n").find("model.moe_layer_step") != std::string::npos);
  // 2 dense first layers, then every third: layer 4 would be the first MoE layer of 4.
  CHECK(errors_of(moe + ", dense_layers: 2, moe_layer_step: 3}\n")
            .find("no layer would be MoE: the first is layer dense_layers + moe_layer_step - 1 = 4") !=
        std::string::npos);
  CHECK(errors_of("model: {layers: 4, hidden: 64, heads: 4, vocab: 100, seq_len: 32, moe_layer_step: 2}\n")
            .find("moe_layer_step is set but experts is 0") != std::string::npos);
}

TEST_CASE("Llama 4 Maverick's preset interleaves its 24 MoE layers with 24 dense ones") {
  const TransformerSpec m = scenario::load_scenario_text(
                                "model: llama4-maverick\ncluster: {node: dgx-h100, nodes: 1}\n"
                                "training: {global_batch: 8}\n",
                                "t.yaml")
                                .model;
  CHECK(m.moe_layer_step == 2);
  CHECK(m.dense_layer_count() == 24);
  CHECK(m.dense_layers_in(0, 12) == 6);  // a quarter of the model at pp 4 holds 6 of each
  CHECK(m.dense_layers_in(36, 12) == 6);
}
