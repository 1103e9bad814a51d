// A cluster file to the queue's input: run times from the step model, memoised per (scenario, nodes);
// arrival streams drawn from their seeds; a scenario that cannot run at a node count is an error at the
// key that named it.
#include "scenarios/studies/cluster_queue.hpp"

#include <doctest/doctest.h>

#include <string>

#include "models/cluster/queue_simulator.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/studies/simulation.hpp"
#include "sim/error.hpp"

namespace trainsim::scenario {
namespace {

const std::string folder = TRAINSIM_SOURCE_DIR "/scenarios/examples/";

ClusterStudy study_of(const std::string& text) {
  return build_cluster_study(load_cluster_text(text, folder + "c.yaml"));
}

TEST_CASE("each distinct (scenario, node count) is simulated once") {
  const ClusterStudy s = study_of(
      "cluster: {node: dgx-h100, nodes: 8}\n"
      "period: \"10 d\"\n"
      "jobs:\n"
      "  - {scenario: shared-cluster/small.yaml, team: a, nodes: 1}\n"
      "  - {scenario: shared-cluster/small.yaml, team: b, nodes: 1, submit: \"1 h\"}\n"
      "  - {scenario: shared-cluster/small.yaml, team: a, nodes: 2}\n");
  CHECK(s.simulations == 2);
  REQUIRE(s.spec.jobs.size() == 3);
  CHECK(s.spec.teams == std::vector<std::string>{"a", "b"});
  CHECK(s.spec.jobs[1].team == 1);
  CHECK(s.spec.jobs[0].duration == s.spec.jobs[1].duration);
  // Twice the GPUs on the same tokens: less than the 1-node time, more than half of it is not asserted
  // (the step model decides); only that it is faster.
  CHECK(s.spec.jobs[2].duration < s.spec.jobs[0].duration);
  CHECK(s.spec.jobs[0].scenario == "small");
  CHECK(s.spec.gpus_per_node == 8);
  const std::vector<std::string> notes = cluster_study_notes(s);
  CHECK(notes.at(0).find("contention-free") != std::string::npos);
  CHECK(notes.at(1).find("2 simulations for 3 jobs") != std::string::npos);
}

TEST_CASE("arrival streams are drawn from their seeds, inside the period, every mix pair simulated") {
  const std::string text =
      "cluster: {node: dgx-h100, nodes: 8}\n"
      "period: \"20 d\"\n"
      "arrivals:\n"
      "  - {team: v, rate: \"5/d\", seed: 4, mix: [{scenario: shared-cluster/small.yaml, nodes: [1, 2, "
      "4]}]}\n";
  const ClusterStudy a = study_of(text);
  const ClusterStudy b = study_of(text);
  CHECK(a.simulations == 3);
  REQUIRE(a.spec.jobs.size() == b.spec.jobs.size());
  CHECK(a.spec.jobs.size() > 50);  // about 100 expected; 50 is ~7 standard deviations below
  CHECK(a.spec.jobs.size() < 150);
  double last = 0;
  for (std::size_t i = 0; i < a.spec.jobs.size(); ++i) {
    CHECK(a.spec.jobs[i].submit == b.spec.jobs[i].submit);
    CHECK(a.spec.jobs[i].nodes == b.spec.jobs[i].nodes);
    CHECK(a.spec.jobs[i].submit >= last);
    CHECK(a.spec.jobs[i].submit < 20 * 86400.0);
    last = a.spec.jobs[i].submit;
  }
  const ClusterStudy other =
      study_of(text.substr(0, text.find("seed: 4")) + "seed: 5" + text.substr(text.find("seed: 4") + 7));
  CHECK(other.spec.jobs.front().submit != a.spec.jobs.front().submit);
}

// llm-70b asks for tp 8 x pp 4 = 32 GPUs a replica; one node has 8. The error is at jobs[0].scenario,
// line 4, column 16 (`  - {scenario: ` is 15 characters).
TEST_CASE("a scenario that cannot run at its node count is an error at the key that named it") {
  try {
    (void)study_of(
        "cluster: {node: dgx-h100, nodes: 8}\n"
        "period: \"10 d\"\n"
        "jobs:\n"
        "  - {scenario: shared-cluster/llm-70b.yaml, team: a, nodes: 1}\n");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("c.yaml:4:16: jobs[0].scenario: ") != std::string::npos);
    CHECK(what.find("at 1 nodes") != std::string::npos);
  }
}

// Two data-parallel llm-8b jobs of 32 nodes on a fat-tree of radix 5 at 4:1: leaves of 4 ports down and 1
// up (rail-optimized: 4 nodes a leaf). F (2 nodes) takes nodes 0-1; under first fit A takes nodes 2-33
// (leaves 0-8) and B nodes 34-65 (leaves 8-16): both cross leaf 8's uplinks with the same traffic per step
// (same scenario, same nodes), so each gets 1/2 of them — the other's half is background to it. Its step is
// then the single job's step with cluster.background 0.5, and it runs that many times longer. The closed
// form at 32 nodes in leaves of 4 halves its ring's uplink share at that background (1 x (1 - 0.5) / (4 x
// 8/32)), so the slowdown is real (> 1).
const char* const two_dp_jobs =
    "cluster: {node: dgx-h100, nodes: 72, contention: true,\n"
    "          network: {topology: fat-tree, oversubscription: 4, switch_radix: 5}}\n"
    "period: \"30 d\"\n"
    "jobs:\n"
    "  - {scenario: shared-cluster/small.yaml, team: a, nodes: 2, name: F}\n"
    "  - {scenario: shared-cluster/llm-8b.yaml, team: a, nodes: 32, name: A}\n"
    "  - {scenario: shared-cluster/llm-8b.yaml, team: b, nodes: 32, name: B}\n"
    "pricing: {gpu_hour: \"$2\"}\n";

double llm_8b_step(const std::string& background) {
  std::vector<Override> overrides = {
      {"cluster.node", "dgx-h100"},
      {"cluster.nodes", "32"},
      {"cluster.network", "{topology: fat-tree, oversubscription: 4, switch_radix: 5}"}};
  if (!background.empty()) overrides.push_back({"cluster.background", "{fraction: " + background + "}"});
  const Scenario s = load_scenario_file(folder + "shared-cluster/llm-8b.yaml", overrides);
  return model::simulate_step(step_input_of(s), model::Fidelity::analytic).iteration_time;
}

TEST_CASE("contention: two 32-node DP jobs crossing one 4:1 leaf's uplinks each run at background 0.5") {
  const ClusterStudy study = study_of(two_dp_jobs);
  REQUIRE(study.spec.contention);
  CHECK(study.spec.nodes_per_leaf == 4);
  CHECK(study.spec.jobs[1].traffic_per_step > 0);
  CHECK(study.spec.jobs[1].traffic_per_step == study.spec.jobs[2].traffic_per_step);
  const model::QueueReport r = model::simulate_queue(study.spec);
  const double slowdown = llm_8b_step("0.5") / llm_8b_step("");
  CHECK(slowdown > 1.001);
  for (const std::size_t j : {1, 2}) {
    CHECK(r.jobs[j].contention_slowdown == doctest::Approx(slowdown).epsilon(1e-12));
    CHECK(r.jobs[j].end == doctest::Approx(study.spec.jobs[j].duration * slowdown).epsilon(1e-12));
    CHECK(r.jobs[j].contention_gpu_hours ==
          doctest::Approx(study.spec.jobs[j].duration * (slowdown - 1) * 32 * 8 / 3600).epsilon(1e-9));
  }
  CHECK(r.jobs[0].contention_slowdown == 1.0);  // under one leaf
  REQUIRE(r.links.size() == 1);
  CHECK(r.links[0].leaf == 8);
  const model::QueueClusterResult& c = r.cluster;
  CHECK(c.contention_cost == doctest::Approx(2 * c.contention_gpu_hours));
  CHECK(c.busy_gpu_hours + c.idle_gpu_hours + c.down_gpu_hours ==
        doctest::Approx(72.0 * 8 * 30 * 24).epsilon(1e-12));
  const model::QueueReport again = model::simulate_queue(study_of(two_dp_jobs).spec);
  CHECK(again.jobs[1].end == r.jobs[1].end);
  CHECK(cluster_study_notes(study).at(0).find("contention: steady-state shares") != std::string::npos);
}

// Topology-aware: F best-fits leaf 0; A takes the first run of 8 adjacent leaves holding 32 free nodes that
// no job crosses (leaves 1-8, nodes 4-35) and B the next (leaves 9-16): no uplink is shared.
TEST_CASE("contention: topology-aware placement keeps the two jobs under their own leaves") {
  std::string text = two_dp_jobs;
  text.insert(text.find("period:"), "scheduler: {placement: topology_aware}\n");
  const ClusterStudy study = study_of(text);
  const model::QueueReport r = model::simulate_queue(study.spec);
  REQUIRE(r.segments.size() == 3);
  CHECK(r.segments[1].nodes.front() == 4);
  CHECK(r.segments[2].nodes.front() == 36);
  for (const std::size_t j : {1, 2}) {
    CHECK(r.jobs[j].contention_slowdown == 1.0);
    CHECK(r.jobs[j].end == doctest::Approx(study.spec.jobs[j].duration));
  }
  CHECK(r.cluster.contention_gpu_hours == 0);
  CHECK(r.links.empty());
}

TEST_CASE("contention on a fabric without leaves and spines is an error at cluster.contention") {
  CHECK_THROWS_WITH_AS(
      (void)study_of("cluster: {node: dgx-h100, nodes: 8, contention: true, network: {topology: torus-2d}}\n"
                     "period: \"1 d\"\n"
                     "jobs:\n"
                     "  - {scenario: shared-cluster/small.yaml, team: a, nodes: 2}\n"),
      doctest::Contains("cluster.contention: contention is modelled on leaf-and-spine fabrics"), InputError);
}

}  // namespace
}  // namespace trainsim::scenario
