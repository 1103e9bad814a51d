// Cluster files: the error discipline of scenario files (every problem, at file:line:col with its key
// path), and what a good file reads to. Scenario paths are resolved against the file's folder: the
// label sits in scenarios/examples so that shared-cluster/*.yaml exist.
#include "scenarios/cluster_file.hpp"

#include <doctest/doctest.h>

#include <string>

namespace trainsim::scenario {
namespace {

const std::string folder = TRAINSIM_SOURCE_DIR "/scenarios/examples/";

// The error text with the folder left out of the file names.
std::string errors_of(const std::string& text) {
  try {
    (void)load_cluster_text(text, folder + "c.yaml");
  } catch (const InputError& e) {
    std::string s = e.what();
    for (std::size_t at = s.find(folder); at != std::string::npos; at = s.find(folder))
      s.erase(at, folder.size());
    return s;
  }
  return "";
}

TEST_CASE("a cluster file reads to its plain struct") {
  const ClusterFile c = load_cluster_text(
      "cluster: {node: dgx-h100, nodes: 16, network: {topology: fat-tree, oversubscription: 2}}\n"
      "period: \"30 d\"\n"
      "scheduler: {policy: backfill, placement: leaf_aware, quotas: {a: 0.75, b: 0.25}}\n"
      "jobs:\n"
      "  - {scenario: shared-cluster/small.yaml, team: a, submit: \"2 d\", nodes: 4, priority: 3}\n"
      "arrivals:\n"
      "  - {team: b, rate: \"6/d\", seed: 9,\n"
      "     mix: [{scenario: shared-cluster/small.yaml, weight: 0.5, nodes: [1, 2]},\n"
      "           {scenario: shared-cluster/medium.yaml, nodes: 8}]}\n"
      "failures: {node_mtbf: \"5000 h\", repair: \"4 h\"}\n"
      "pricing: {gpu_hour: \"$2.20\"}\n",
      folder + "c.yaml");
  CHECK(c.nodes == 16);
  CHECK(c.node.gpus_per_node == 8);
  CHECK(c.period == 30 * 86400.0);
  CHECK(c.policy == model::QueuePolicy::backfill);
  CHECK(c.placement == model::PlacementRule::leaf_aware);
  REQUIRE(c.quotas.size() == 2);
  CHECK(c.quotas[1] == std::make_pair(std::string("b"), 0.25));
  REQUIRE(c.jobs.size() == 1);
  CHECK(c.jobs[0].submit == 2 * 86400.0);
  CHECK(c.jobs[0].priority == 3);
  CHECK(c.jobs[0].name == "a-0");
  CHECK(c.jobs[0].where.line == 5);
  CHECK(c.jobs[0].where.column == 16);
  REQUIRE(c.arrivals.size() == 1);
  CHECK(c.arrivals[0].rate == doctest::Approx(6.0 / 86400));
  CHECK(c.arrivals[0].seed == 9);
  REQUIRE(c.arrivals[0].mix.size() == 2);
  CHECK(c.arrivals[0].mix[0].nodes == std::vector<std::int64_t>{1, 2});
  CHECK(c.arrivals[0].mix[1].weight == 1);
  CHECK(c.node_mtbf == 5000 * 3600.0);
  CHECK(c.gpu_hour_usd == doctest::Approx(2.2));
  CHECK(c.network_yaml.find("fat-tree") != std::string::npos);
}

// `cluster: {node: dgx-h100, nodes: 4, contention: ` is 48 characters: the value starts at column 49.
TEST_CASE("cluster.contention and topology_aware placement read; a non-boolean contention is an error") {
  const ClusterFile c = load_cluster_text(
      "cluster: {node: dgx-h100, nodes: 4, contention: true}\n"
      "period: \"1 d\"\n"
      "scheduler: {placement: topology_aware}\n"
      "jobs: [{scenario: shared-cluster/small.yaml, team: a, nodes: 1}]\n",
      folder + "c.yaml");
  CHECK(c.contention);
  CHECK(c.contention_where.line == 1);
  CHECK(c.placement == model::PlacementRule::topology_aware);
  CHECK(!load_cluster_text("cluster: {node: dgx-h100, nodes: 4}\nperiod: \"1 d\"\n"
                           "jobs: [{scenario: shared-cluster/small.yaml, team: a, nodes: 1}]\n",
                           folder + "c.yaml")
             .contention);
  CHECK(errors_of("cluster: {node: dgx-h100, nodes: 4, contention: lots}\nperiod: \"1 d\"\n"
                  "jobs: [{scenario: shared-cluster/small.yaml, team: a, nodes: 1}]\n")
            .find("c.yaml:1:49: cluster.contention: ") != std::string::npos);
}

// Columns counted by hand in the text below: line 3 `scheduler: {policy: fifoo}` puts fifoo at 21; line 5
// `  - {scenario: shared-cluster/small.yaml, team: a, nodes: 8, colour: red}` puts 8 at 59 and colour at 62.
TEST_CASE("every bad key or value is reported at its line and column with its key path") {
  const std::string e = errors_of(
      "cluster: {node: dgx-h100, nodes: 4}\n"
      "period: 30\n"
      "scheduler: {policy: fifoo}\n"
      "jobs:\n"
      "  - {scenario: shared-cluster/small.yaml, team: a, nodes: 8, colour: red}\n");
  INFO(e);
  CHECK(e.find("c.yaml:2:9: period: ") != std::string::npos);
  CHECK(e.find("c.yaml:3:21: scheduler.policy: ") != std::string::npos);
  CHECK(e.find("c.yaml:5:59: jobs[0].nodes: asks for 8 nodes; the cluster has 4") != std::string::npos);
  CHECK(e.find("c.yaml:5:62: jobs[0].colour: unknown key") != std::string::npos);
}

TEST_CASE("cross-field rules are errors at the key they blame") {
  const std::string head = "cluster: {node: dgx-h100, nodes: 4}\nperiod: \"1 d\"\n";
  const std::string job = "jobs: [{scenario: shared-cluster/small.yaml, team: a, nodes: 1}]\n";
  CHECK(errors_of(head + job + "scheduler: {policy: backfill, preemption: true}\n")
            .find("c.yaml:4:43: scheduler.preemption: preemption needs `policy: priority`") !=
        std::string::npos);
  CHECK(errors_of(head + job + "scheduler: {quotas: {a: 0.75, b: 0.5}}\n")
            .find("no job or arrival stream belongs to team \"b\"") != std::string::npos);
  CHECK(errors_of(head + job + "scheduler: {quotas: {a: 0.75, b: 0.5}}\n").find("add up to 1.25") !=
        std::string::npos);
  CHECK(errors_of(head + "jobs: [{scenario: nowhere.yaml, team: a, nodes: 1}]\n")
            .find("c.yaml:3:19: jobs[0].scenario: no scenario file at ") != std::string::npos);
  CHECK(
      errors_of(head + "jobs: [{scenario: shared-cluster/small.yaml, team: a, nodes: 1, submit: \"2 d\"}]\n")
          .find("jobs[0].submit: the job is submitted after the period ends") != std::string::npos);
  CHECK(errors_of(head).find("expected `jobs:`, `arrivals:` or both") != std::string::npos);
  CHECK(errors_of("cluster: {node: dgx-h100, nodes: 4}\nperiod: \"200 d\"\n" + job)
            .find("c.yaml:2:9: period: expected at most 100 d") != std::string::npos);
  CHECK(errors_of(head + "arrivals: [{team: a, rate: 6, mix: []}]\n").find("c.yaml:3:28: arrivals[0].rate") !=
        std::string::npos);
}

}  // namespace
}  // namespace trainsim::scenario
