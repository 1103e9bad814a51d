#pragma once
// Scenario tests: the smallest scenario that loads, and every diagnostic of loading a scenario's text, for
// doctest::Contains.
#include <doctest/doctest.h>

#include <string>

#include "scenarios/loader.hpp"
#include "sim/error.hpp"

namespace trainsim::testing {

/// The smallest scenario that loads: GPT-3 125M on two DGX A100 nodes, batch 64; tests append blocks to it.
inline const std::string kSmallScenario = R"(model: gpt3-125m
cluster: {node: dgx-a100-80gb, nodes: 2}
training: {global_batch: 64}
)";

/// Every diagnostic of loading `text` (labelled t.yaml), as doctest's string; empty when it loads.
inline doctest::String errors_of(const std::string& text) {
  try {
    (void)scenario::load_scenario_text(text, "t.yaml");
  } catch (const InputError& e) {
    return doctest::String(e.what());
  }
  return doctest::String("");
}

}  // namespace trainsim::testing
