// The time section of explain: its lines add up to the closed-form iteration, the kernel lines to its
// compute, and each blocking collective that is exposed has its own line.
#include "models/report/explain_time.hpp"

#include <doctest/doctest.h>

#include "models/step/step_simulator.hpp"
#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::model;

TEST_CASE("the time lines add up to the analytic iteration and name each exposed collective") {
  // tp 8 without TP-communication overlap: every tensor-parallel collective is exposed.
  StepInput in = testing::small_gpt_on_a100(2, 8, 2, 1, 16);
  in.plan.framework.tp_comm_overlap = false;
  const StepReport r = simulate_step(in, Fidelity::analytic);
  const ExplainSection s = explain_time(in);
  REQUIRE_FALSE(s.lines.empty());
  CHECK(s.title.find("(critical)") != std::string::npos);
  double kernels = 0, collectives = 0, all = 0;
  for (std::size_t i = 0; i + 1 < s.lines.size(); ++i) {
    const ExplainLine& l = s.lines[i];
    CHECK(l.unit == "s");
    all += l.value;
    if (l.label.starts_with("kernels, ")) kernels += l.value;
    if (l.label.starts_with("exposed tp_")) collectives += l.value;
  }
  CHECK(s.lines.back().label == "iteration");
  CHECK(s.lines.back().value == doctest::Approx(r.iteration_time).epsilon(1e-12).scale(0));
  CHECK(all == doctest::Approx(r.iteration_time).epsilon(1e-9).scale(0));
  CHECK(kernels == doctest::Approx(r.time.compute).epsilon(1e-9).scale(0));
  CHECK(collectives > 0);
  CHECK(collectives == doctest::Approx(r.time.exposed_tp_comm).epsilon(1e-9).scale(0));
}

TEST_CASE("a plan that is not a layout gets a note, not lines") {
  StepInput in = testing::small_gpt_on_a100(2, 8, 2, 1, 15);  // 15 sequences over micro-batches of 1: fine
  in.plan.pp = 32;                                            // 32 stages of a 16-layer model: not a layout
  in.plan.dp = 1;
  in.cluster = testing::dgx_a100(32);
  const ExplainSection s = explain_time(in);
  CHECK(s.lines.empty());
  REQUIRE(s.notes.size() == 1);
  CHECK(s.notes[0].starts_with("not a layout: "));
}
