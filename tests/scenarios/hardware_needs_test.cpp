// What a step asks of its hardware is checked when the scenario loads, at the key that asks it
// (scenario_reader.cpp, check_hardware): throughput at training.precision, a fused attention kernel the GPU
// runs, a memory headroom the GPU has, NICs between nodes. Without it the step's pricing stopped at its first
// kernel with no place.
#include <doctest/doctest.h>

#include <string>

#include "tests/support/load_errors.hpp"

using trainsim::testing::errors_of;

namespace {

// GPT-3 125M on A100 nodes; line 3 is the training block the cases complete.
std::string on_a100(const std::string& model, const std::string& training,
                    const std::string& node = "dgx-a100-80gb", int nodes = 2) {
  return "model: " + model + "\ncluster: {node: " + node + ", nodes: " + std::to_string(nodes) +
         "}\ntraining: {global_batch: 64" + training + "}\n";
}

}  // namespace

TEST_CASE("a precision the GPU has no throughput for is an error at training.precision") {
  CHECK(errors_of(on_a100("gpt3-125m", ", precision: bf16")) == "");
  // "training: {global_batch: 64, precision: " is 40 columns: the value at 41.
  CHECK(errors_of(on_a100("gpt3-125m", ", precision: fp8")) ==
        doctest::Contains("t.yaml:3:41: training.precision: the cluster's GPU a100-sxm4-80gb has no fp8 "
                          "throughput (its peak.fp8)"));
}

TEST_CASE("an attention kernel the GPU does not run is an error at model.attention") {
  // FlashAttention-3 is Hopper-only: the A100 preset gives it no efficiency. "model: {preset: gpt3-125m,
  // attention: " is 38 columns: the value at 39.
  CHECK(errors_of(on_a100("{preset: gpt3-125m, attention: flash2}", "")) == "");
  CHECK(errors_of(on_a100("{preset: gpt3-125m, attention: flash3}", "")) ==
        doctest::Contains("t.yaml:1:39: model.attention: the attention kernel flash3 does not run on the "
                          "cluster's GPU a100-sxm4-80gb"));
}

TEST_CASE("nodes without NIC bandwidth are an error at cluster.node when there is more than one") {
  const std::string no_nics = "{preset: dgx-a100-80gb, nics_per_node: 0}";
  CHECK(errors_of(on_a100("gpt3-125m", "", no_nics, 1)) == "");
  CHECK(errors_of(on_a100("gpt3-125m", "", no_nics, 2)) ==
        doctest::Contains(
            "t.yaml:2:17: cluster.node: the cluster has 2 nodes, but its node dgx-a100-80gb has no "
            "NIC bandwidth between them"));
}

TEST_CASE("a memory headroom as a size is held to 0.95 of the GPU's HBM, as a fraction is") {
  // The A100 80GB preset has 80 GiB: 76 GiB is 0.95 of it.
  const auto with_headroom = [](const std::string& size) {
    return on_a100("gpt3-125m", "") + "budget: {memory_headroom: \"" + size + "\"}\n";
  };
  CHECK(errors_of(with_headroom("76 GiB")) == "");
  CHECK(errors_of(with_headroom("77 GiB")) ==
        doctest::Contains(
            "t.yaml:4:27: budget.memory_headroom: 77.0 GiB is more than 0.95 of the cluster's GPU's "
            "80.0 GiB of HBM"));
}
