#pragma once
// Scenario tests: every diagnostic of loading a scenario's text, for doctest::Contains.
#include <doctest/doctest.h>

#include <string>

#include "scenarios/loader.hpp"
#include "sim/error.hpp"

namespace trainsim::testing {

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
