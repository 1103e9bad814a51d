// pricing.gpu_hour as a map: the cluster's node preset's price first, then its GPU preset's
// (scenarios/scenario_reader.cpp, read_gpu_hour); a node preset whose GPU the scenario replaced by another
// GPU is priced by its GPU alone.
#include <doctest/doctest.h>

#include <string>

#include "scenarios/loader.hpp"
#include "tests/support/load_errors.hpp"

using namespace trainsim;
using trainsim::testing::errors_of;

namespace {

std::string priced(const std::string& node, const std::string& prices) {
  return "model: gpt3-125m\ncluster: {node: " + node + ", nodes: 2}\ntraining: {global_batch: 64}\n" +
         "pricing: {gpu_hour: {" + prices + "}}\n";
}

double price_of(const std::string& text) {
  return scenario::load_scenario_text(text, "t.yaml").pricing.gpu_hour_usd;
}

}  // namespace

TEST_CASE("a node preset's price comes first, then its GPU's") {
  CHECK(price_of(priced("dgx-h100", R"(h100-sxm: "$1/h", dgx-h100: "$2/h")")) == 2.0);
  CHECK(price_of(priced("dgx-h100", R"(h100-sxm: "$1/h", dgx-b200: "$6/h")")) == 1.0);
  // The same GPU with an override (a power limit): still the node preset's hardware and price.
  CHECK(price_of(priced(R"({preset: dgx-h100, gpu: {preset: h100-sxm, power_limit: "500 W"}})",
                        R"(h100-sxm: "$1/h", dgx-h100: "$2/h")")) == 2.0);
}

TEST_CASE("a node preset whose GPU is replaced by another GPU is priced by that GPU, never by the preset") {
  CHECK(price_of(priced("{preset: dgx-h100, gpu: b200}", R"(dgx-h100: "$2/h", b200: "$6/h")")) == 6.0);
  CHECK(
      errors_of(priced("{preset: dgx-h100, gpu: b200}", R"(dgx-h100: "$2/h", dgx-b200: "$6/h")")) ==
      doctest::Contains("t.yaml:4:21: pricing.gpu_hour: no price for the cluster's GPU b200 (the node preset "
                        "dgx-h100 with its GPU replaced"));
  // Named by the scenario, the node is its own: priced by its name.
  CHECK(price_of(priced("{preset: dgx-h100, name: h100-chassis-b200, gpu: b200}",
                        R"(h100-chassis-b200: "$5/h", b200: "$6/h")")) == 5.0);
}
