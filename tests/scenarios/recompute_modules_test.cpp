// parallelism.recompute: {modules: [...]}: Megatron-Core's --recompute-modules, and parallelism.offload:
// {modules: [...]}: its --fine-grained-activation-offloading with --offload-modules; read, checked against
// Megatron's own rules and written back.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "scenarios/loader.hpp"
#include "sim/error.hpp"

using namespace trainsim;

namespace {

constexpr const char* kScenario = R"(
model: {preset: deepseek-v3, seq_len: 4096}
cluster: {node: dgx-h100, nodes: 32}
parallelism: {tp: 1, pp: 16, ep: 16, expert_folding: true, micro_batch: 1, zero: 1}
training: {global_batch: 1024, precision: bf16, optimizer: adamw, steps: 1}
)";

std::string error_with(const std::vector<scenario::Override>& sets, const char* scenario = kScenario) {
  try {
    (void)scenario::load_scenario_text(scenario, "r.yaml", sets);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string error_of(const std::string& modules, const char* scenario = kScenario) {
  return error_with({{"parallelism.recompute", modules}}, scenario);
}

std::string offload_error_of(const std::string& modules, const char* scenario = kScenario,
                             const std::string& recompute = "selective") {
  return error_with({{"parallelism.offload", modules}, {"parallelism.recompute", recompute}}, scenario);
}

constexpr const char* kDense = R"(
model: llama3-8b
cluster: {node: dgx-h100, nodes: 1}
parallelism: {tp: 8}
training: {global_batch: 8, precision: bf16, optimizer: adamw, steps: 1}
)";

}  // namespace

TEST_CASE("recompute modules are read as a selective recompute of those modules and written back") {
  const auto s = scenario::load_scenario_text(
      kScenario, "r.yaml", {{"parallelism.recompute", "{modules: [mla_up_proj, moe_act]}"}});
  CHECK(s.parallelism.recompute == model::Recompute::selective);
  CHECK(s.parallelism.recompute_modules == (static_cast<std::uint8_t>(model::RecomputeModule::mla_up_proj) |
                                            static_cast<std::uint8_t>(model::RecomputeModule::moe_act)));
  const std::string yaml = scenario::dump_scenario(s);
  CHECK(yaml.find("recompute: {modules: [moe_act, mla_up_proj]}") != std::string::npos);
  CHECK(scenario::load_scenario_text(yaml, "back.yaml").parallelism.recompute_modules ==
        s.parallelism.recompute_modules);
}

TEST_CASE("a misspelt, repeated or inapplicable module is refused at its key") {
  CHECK(error_of("{modules: [mla_up_prj]}").find("parallelism.recompute.modules[0]") != std::string::npos);
  CHECK(error_of("{modules: [mla_up_prj]}").find("mla_up_proj") != std::string::npos);  // the suggestion
  CHECK(error_of("{modules: [mlp, mlp]}").find("appears twice") != std::string::npos);
  CHECK(error_of("{modules: []}").find("parallelism.recompute.modules") != std::string::npos);
  CHECK(error_of("{modlues: [mlp]}").find("parallelism.recompute") != std::string::npos);
  CHECK(error_of("{modules: [mla_up_proj]}", kDense).find("multi-head latent attention") !=
        std::string::npos);
  CHECK(error_of("{modules: [layernorm, mlp]}", kDense).empty());
  // The MoE modules need experts, and shared_experts a model that has them (Mixtral has none).
  for (const char* moe_module : {"moe", "moe_act", "shared_experts"}) {
    CAPTURE(moe_module);
    CHECK(
        error_of(std::string("{modules: [") + moe_module + "]}", kDense)
            .find("parallelism.recompute: modules moe, moe_act and shared_experts need a mixture-of-experts "
                  "model") != std::string::npos);
  }
  constexpr const char* kMixtral = R"(
model: mixtral-8x7b
cluster: {node: dgx-h100, nodes: 1}
parallelism: {tp: 1, ep: 8}
training: {global_batch: 8, precision: bf16, optimizer: adamw, steps: 1}
)";
  CHECK(error_of("{modules: [moe_act]}", kMixtral).empty());
  CHECK(error_of("{modules: [shared_experts]}", kMixtral)
            .find("module shared_experts needs a model with shared experts") != std::string::npos);
  CHECK(error_of("{modules: [shared_experts]}").empty());  // DeepSeek-V3 has one
}

TEST_CASE("offload modules are read and written back; none by default") {
  CHECK(scenario::load_scenario_text(kScenario, "r.yaml").parallelism.offload_modules == 0);
  const auto s = scenario::load_scenario_text(
      kScenario, "r.yaml", {{"parallelism.offload", "{modules: [expert_fc1, core_attn, attn_proj]}"}});
  CHECK(s.parallelism.offload_modules == (static_cast<std::uint8_t>(model::OffloadModule::expert_fc1) |
                                          static_cast<std::uint8_t>(model::OffloadModule::core_attn) |
                                          static_cast<std::uint8_t>(model::OffloadModule::attn_proj)));
  const std::string yaml = scenario::dump_scenario(s);
  CHECK(yaml.find("offload: {modules: [core_attn, attn_proj, expert_fc1]}") != std::string::npos);
  CHECK(scenario::load_scenario_text(yaml, "back.yaml").parallelism.offload_modules ==
        s.parallelism.offload_modules);
}

TEST_CASE("a misspelt, repeated or inapplicable offload module is refused at its key") {
  CHECK(offload_error_of("{modules: [expert_fc2]}").find("parallelism.offload.modules[0]") !=
        std::string::npos);
  CHECK(offload_error_of("{modules: [moe_act, moe_act]}").find("appears twice") != std::string::npos);
  CHECK(offload_error_of("{modules: []}").find("parallelism.offload.modules") != std::string::npos);
  CHECK(offload_error_of("{modules: [attn_proj]}").find("attn_proj needs core_attn") != std::string::npos);
  CHECK(offload_error_of("{modules: [core_attn]}", kScenario, "full").find("parallelism.offload") !=
        std::string::npos);
  CHECK(offload_error_of("{modules: [expert_fc1]}", kDense).find("mixture-of-experts") != std::string::npos);
  CHECK(offload_error_of("{modules: [attn_norm, core_attn, attn_proj, mlp_norm]}", kDense).empty());
}
