// The keys that name nodes against a node count the file did not read (scenarios/node_count_rules.hpp):
// what `search --nodes N` asks before it prices N nodes, as the reader asks of cluster.nodes.
#include "scenarios/node_count_rules.hpp"

#include <doctest/doctest.h>

#include <string>

#include "scenarios/loader.hpp"

using namespace trainsim::scenario;

namespace {

const std::string head = "model: gpt3-125m\ntraining: {global_batch: 128}\n";

Scenario on_eight_nodes(const std::string& cluster_keys, const std::string& rest = "") {
  return load_scenario_text(head + "cluster: {node: dgx-a100-80gb, nodes: 8" + cluster_keys + "}\n" + rest,
                            "t.yaml");
}

}  // namespace

TEST_CASE("a node count the keys that name nodes allow has no problem; the scenario's own always") {
  const Scenario plain = on_eight_nodes("");
  CHECK(node_count_problem(plain, 8) == "");
  CHECK(node_count_problem(plain, 2) == "");
  CHECK(node_count_problem(plain, 64) == "");
  const Scenario torus = on_eight_nodes(", network: {topology: torus-2d, torus_dims: [2, 4]}");
  CHECK(node_count_problem(torus, 8) == "");
}

TEST_CASE("torus sizes, stragglers, degraded NICs and concurrent trials each name what the count breaks") {
  const Scenario torus = on_eight_nodes(", network: {topology: torus-2d, torus_dims: [2, 4]}");
  CHECK(node_count_problem(torus, 16) ==
        "cluster.network.torus_dims: the sizes multiply to 8 nodes; the cluster has 16");
  const Scenario straggler = on_eight_nodes(", stragglers: [{node: 7, slowdown: 3}]");
  CHECK(node_count_problem(straggler, 8) == "");
  CHECK(node_count_problem(straggler, 7) == "cluster.stragglers: node 7 is not among the cluster's 7 nodes");
  const Scenario degraded = on_eight_nodes(", degraded: [{node: 6, nic: 0, bandwidth: \"10 Gb/s\"}]");
  CHECK(node_count_problem(degraded, 7) == "");
  CHECK(node_count_problem(degraded, 6) == "cluster.degraded: node 6 is not among the cluster's 6 nodes");
  const Scenario tuning = on_eight_nodes("", "tuning: {trials: 16, concurrent: 8}\n");
  CHECK(node_count_problem(tuning, 8) == "");
  CHECK(
      node_count_problem(tuning, 4) ==
      "tuning.concurrent: 8 trials at a time need at least one node each; the cluster has 4: set concurrent "
      "to at most 4 (the rest of the trials wait their turn)");
}
