// A cluster file to the queue's input: run times from the step model, memoised per (scenario, nodes);
// arrival streams drawn from their seeds; a scenario that cannot run at a node count is an error at the
// key that named it.
#include "scenarios/studies/cluster_queue.hpp"

#include <doctest/doctest.h>

#include <string>

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

}  // namespace
}  // namespace trainsim::scenario
