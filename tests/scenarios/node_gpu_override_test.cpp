// A node preset's GPU overridden key by key: `gpu:` without `preset:` under a node preset starts from that
// preset's GPU (scenarios/presets.cpp, read_gpu_over), as `--set cluster.node.gpu.KEY=VALUE` writes it;
// without a node preset such a block is a whole GPU and needs its sizes.
#include <doctest/doctest.h>

#include <string>

#include "scenarios/loader.hpp"
#include "scenarios/presets.hpp"
#include "tests/support/load_errors.hpp"

using namespace trainsim;
using trainsim::testing::errors_of;

namespace {

std::string with_node(const std::string& node) {
  return "model: gpt3-125m\ncluster: {node: " + node + ", nodes: 2}\ntraining: {global_batch: 64}\n";
}

}  // namespace

TEST_CASE("a gpu mapping without a preset under a node preset overrides that preset's GPU") {
  const topo::GpuSpec h100 = scenario::gpu_preset("h100-sxm");
  const scenario::Scenario s =
      scenario::load_scenario_text(with_node(R"({preset: dgx-h100, gpu: {power_limit: "500 W"}})"), "t.yaml");
  const topo::GpuSpec& g = s.cluster.node.gpu;
  CHECK(g.name == "h100-sxm");
  CHECK(g.power_limit_w == 500);
  CHECK(g.peak.bf16 == h100.peak.bf16);
  CHECK(g.hbm_bytes == h100.hbm_bytes);
  CHECK_FALSE(s.cluster.node.gpu_replaced);
  // The same key from the command line, on a node given by its preset's name alone.
  const scenario::Scenario set = scenario::load_scenario_text(
      with_node("dgx-h100"), "t.yaml", {{"cluster.node.gpu.power_limit", "\"500 W\""}});
  CHECK(set.cluster.node.gpu == g);
}

TEST_CASE("without a node preset a gpu mapping without a preset is a whole GPU") {
  CHECK(errors_of(
            with_node(R"({gpus_per_node: 8, intra_bandwidth: "450 GB/s", gpu: {power_limit: "500 W"}})")) ==
        doctest::Contains("cluster.node.gpu.peak: missing key \"peak\""));
}
