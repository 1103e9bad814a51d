// parallelism.recompute: {modules: [...]}: Megatron-Core's --recompute-modules read, checked and written
// back.
#include <doctest/doctest.h>

#include <string>

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

std::string error_of(const std::string& modules, const char* scenario = kScenario) {
  try {
    (void)scenario::load_scenario_text(scenario, "r.yaml", {{"parallelism.recompute", modules}});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

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
  constexpr const char* kDense = R"(
model: llama3-8b
cluster: {node: dgx-h100, nodes: 1}
parallelism: {tp: 8}
training: {global_batch: 8, precision: bf16, optimizer: adamw, steps: 1}
)";
  CHECK(error_of("{modules: [mla_up_proj]}", kDense).find("multi-head latent attention") !=
        std::string::npos);
  CHECK(error_of("{modules: [layernorm, mlp]}", kDense).empty());
}
