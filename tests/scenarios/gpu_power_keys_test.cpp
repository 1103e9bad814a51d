// A GPU's power keys, a preset's and the scenario's overrides together: idle below the TDP, and a power limit
// above idle and at most the TDP (scenarios/presets.cpp, check_gpu_power_keys), each problem at the key the
// scenario sets.
#include <doctest/doctest.h>

#include <string>

#include "tests/support/load_errors.hpp"

using trainsim::testing::errors_of;

namespace {

// GPT-3 125M on an A100 node whose GPU block (line 2) the case completes; the preset's TDP is 400 W.
std::string with_gpu(const std::string& keys) {
  return "model: gpt3-125m\n"
         "cluster: {node: {preset: dgx-a100-80gb, gpu: {preset: a100-sxm4-80gb, " +
         keys + "}}, nodes: 2}\ntraining: {global_batch: 64}\n";
}

}  // namespace

TEST_CASE(
    "a power limit between idle and the TDP loads; at or below idle, or above the TDP, it is an error") {
  // The first override's key starts at column 71 of line 2: its value at 84 after "power_limit: ", at 77
  // after "idle: ", at 76 after "tdp: ".
  CHECK(errors_of(with_gpu("idle: \"60 W\", power_limit: \"300 W\"")) == "");
  CHECK(errors_of(with_gpu("idle: \"60 W\", power_limit: \"400 W\"")) == "");  // the TDP itself
  CHECK(errors_of(with_gpu("power_limit: \"50 W\", idle: \"60 W\"")) ==
        doctest::Contains(
            "t.yaml:2:84: cluster.node.gpu.power_limit: power_limit (50 W) must be above idle (60 W)"));
  CHECK(errors_of(with_gpu("power_limit: \"60 W\", idle: \"60 W\"")) ==
        doctest::Contains("cluster.node.gpu.power_limit: power_limit (60 W) must be above idle (60 W)"));
  CHECK(errors_of(with_gpu("power_limit: \"500 W\"")) ==
        doctest::Contains(
            "t.yaml:2:84: cluster.node.gpu.power_limit: power_limit (500 W) is above tdp (400 W)"));
}

TEST_CASE("idle at or above the TDP is an error at the key the scenario sets, the preset's or its own") {
  CHECK(errors_of(with_gpu("idle: \"400 W\"")) ==
        doctest::Contains("t.yaml:2:77: cluster.node.gpu.idle: idle (400 W) must be below tdp (400 W)"));
  // The preset's idle (50 W) against a TDP the scenario lowers: blamed at the TDP it set.
  CHECK(errors_of(with_gpu("tdp: \"40 W\"")) ==
        doctest::Contains("t.yaml:2:76: cluster.node.gpu.tdp: idle (50 W) must be below tdp (40 W)"));
}
