// The framework a scenario that names none runs, chosen by its layout, and the note it then gets.
#include "scenarios/framework_choice.hpp"

#include <doctest/doctest.h>

#include <string>

#include "scenarios/loader.hpp"
#include "tests/support/load_errors.hpp"

using namespace trainsim::scenario;

namespace {

const std::string& base = trainsim::testing::kSmallScenario;

Scenario load(const std::string& extra) {
  return load_scenario_text(base + extra, "t.yaml");
}

std::string note_for(const std::string& extra) {
  return unnamed_framework_note(load(extra));
}

}  // namespace

TEST_CASE(
    "ZeRO 2 or 3 without model parallelism and without a framework block gets a note naming the choice") {
  const std::string zero3 = note_for("parallelism: {zero: 3}\n");
  CHECK(zero3.find("ZeRO-3") != std::string::npos);
  CHECK(zero3.find("framework: fsdp1") != std::string::npos);
  CHECK(note_for("parallelism: {zero: 2}\n").find("ZeRO-2") != std::string::npos);
}

TEST_CASE("no note once the framework is named, for Megatron's own layouts, or with model parallelism") {
  CHECK(note_for("parallelism: {zero: 3}\nframework: fsdp2\n").empty());
  CHECK(note_for("parallelism: {zero: 3}\nframework: megatron-core\n").empty());
  CHECK(note_for("parallelism: {zero: 1}\n").empty());
  CHECK(note_for("parallelism: {zero: 0}\n").empty());
  CHECK(note_for("parallelism: {zero: 3, tp: 2}\n").empty());
  CHECK(note_for("parallelism: {zero: 3, pp: 2}\n").empty());
}

TEST_CASE("a scenario that names no framework runs PyTorch FSDP1 for ZeRO 2-3 without model parallelism") {
  for (const char* zero : {"2", "3"}) {
    const Scenario s = load(std::string("parallelism: {zero: ") + zero + "}\n");
    CHECK_FALSE(s.framework_named);
    CHECK(s.parallelism.framework.preset == trainsim::model::FrameworkPreset::fsdp1);
    // fsdp1's flags, not megatron-core's: eager element-wise ops, FSDP1's gradient copies, fp32 reduction.
    CHECK_FALSE(s.parallelism.framework.fused_elementwise);
    CHECK(s.parallelism.framework.gradient_staging == trainsim::model::GradientStaging::fsdp1);
    CHECK(s.parallelism.framework.grad_reduce_dtype == trainsim::topo::Precision::fp32);
    // `attention: flash` is the FlashAttention-2 its model code calls.
    CHECK(s.model.attention == trainsim::model::Attention::flash2);
    CHECK(s.attention_from_framework);
  }
}

TEST_CASE("every other unnamed layout, and every named framework, keeps its framework and attention") {
  for (const char* plan :
       {"{zero: 1}", "{zero: 0}", "{zero: 3, tp: 2}", "{zero: 3, pp: 2}", "{zero: 2, cp: 2}"}) {
    CAPTURE(plan);
    const Scenario s = load(std::string("parallelism: ") + plan + "\n");
    CHECK(s.parallelism.framework.preset == trainsim::model::FrameworkPreset::megatron_core);
    CHECK(s.model.attention == trainsim::model::Attention::flash);
  }
  const Scenario named = load("parallelism: {zero: 3}\nframework: megatron-core\n");
  CHECK(named.parallelism.framework.preset == trainsim::model::FrameworkPreset::megatron_core);
  CHECK(named.model.attention == trainsim::model::Attention::flash);
  const Scenario kernel = load_scenario_text(
      "model: {preset: gpt3-125m, attention: standard}\ncluster: {node: dgx-a100-80gb, nodes: 2}\n"
      "training: {global_batch: 64}\nparallelism: {zero: 3}\n",
      "t.yaml");
  CHECK(kernel.parallelism.framework.preset == trainsim::model::FrameworkPreset::fsdp1);
  CHECK(kernel.model.attention == trainsim::model::Attention::standard);  // a named kernel stays
}

TEST_CASE("the choice keeps the memory reserve and follows a layout changed after loading") {
  Scenario s = load("parallelism: {zero: 3}\nmemory: {reserve: 0.1}\n");
  CHECK(s.parallelism.framework.memory_reserve == doctest::Approx(0.1));
  // The layout search changes the plan, then chooses again: tp 2 is Megatron-Core's, with the GPU's kernel.
  s.parallelism.tp = 2;
  choose_framework(s);
  CHECK(s.parallelism.framework.preset == trainsim::model::FrameworkPreset::megatron_core);
  CHECK(s.parallelism.framework.memory_reserve == doctest::Approx(0.1));
  CHECK(s.model.attention == trainsim::model::Attention::flash);
  CHECK_FALSE(s.attention_from_framework);
  s.parallelism.tp = 1;
  s.parallelism.framework.reshard_after_forward = false;
  choose_framework(s);
  CHECK(s.parallelism.framework.preset == trainsim::model::FrameworkPreset::fsdp1);
  CHECK_FALSE(s.parallelism.framework.reshard_after_forward);  // the search's choice survives
  CHECK(s.model.attention == trainsim::model::Attention::flash2);
}

TEST_CASE("a framework block that sets flags without a preset starts from the preset the layout implies") {
  const Scenario fsdp = load("parallelism: {zero: 3}\nframework: {prefetch: 2}\n");
  CHECK(fsdp.parallelism.framework.preset == trainsim::model::FrameworkPreset::fsdp1);
  CHECK(fsdp.parallelism.framework.prefetch == 2);
  CHECK_FALSE(fsdp.parallelism.framework.fused_elementwise);  // fsdp1's, not megatron-core's
  const Scenario megatron = load("parallelism: {zero: 3, tp: 2}\nframework: {prefetch: 2}\n");
  CHECK(megatron.parallelism.framework.preset == trainsim::model::FrameworkPreset::megatron_core);
  CHECK(megatron.parallelism.framework.prefetch == 2);
}
