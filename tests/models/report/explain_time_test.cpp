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

TEST_CASE("with a spread the kernels' slowest-GPU factor is a note, and the lines still add up") {
  // tp 8 × pp 2, 16 micro-batches, constants fitted on 2 GPUs: the fill's one pass at E[max of 8] = 1.42360
  // (one replica: no slowest-replica term), the 16 steady passes at E[max of 16] = 1.76599 (Harter 1961),
  // x̄ = (1.42360 + 16 x 1.76599) / 17 = 1.74585; (1 + 0.02 x 1.74585) / (1 + 0.02 / √π) = 1.02337.
  StepInput in = testing::small_gpt_on_a100(2, 8, 2, 1, 16);
  in.cluster.node.gpu.variability = 0.02;
  in.cluster.node.gpu.efficiency_fit_gpus = 2;
  const ExplainSection s = explain_time(in);
  REQUIRE(s.notes.size() == 1);
  CHECK(
      s.notes[0].starts_with("the kernels above wait for the slowest GPUs: x1.0234 = (1 + 0.02 x 1.746) / "));
  CHECK(s.notes[0].find("constants fitted on 2 GPUs") != std::string::npos);
  CHECK(s.lines.back().value ==
        doctest::Approx(simulate_step(in, Fidelity::analytic).iteration_time).epsilon(1e-12).scale(0));
  in.cluster.node.gpu.variability = 0;
  CHECK(explain_time(in).notes.empty());
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

TEST_CASE("a MoE layout's token dispatch is its own part of the step, never the tensor-parallel one") {
  // tp 1 and cp 1: nothing but the expert all-to-alls is model-parallel communication, so every exposed
  // collective line is an ep_ one and they add up to exposed_ep_comm; exposed_tp_comm is 0.
  StepInput in;
  in.model = testing::gpt(4, 1024, 16, 1024);
  in.model.experts = 16;
  in.model.top_k = 2;
  in.model.expert_ffn_hidden = 2048;
  in.cluster = testing::dgx_h100(2);
  in.plan.ep = 16;
  in.plan.dp = 16;
  in.plan.expert_folding = true;
  in.plan.zero = ZeroStage::optimizer_states;
  in.training.global_batch = 32;
  for (const Fidelity fidelity : {Fidelity::analytic, Fidelity::event}) {
    CAPTURE(static_cast<int>(fidelity));
    const StepReport r = simulate_step(in, fidelity);
    REQUIRE(r.feasible);
    CHECK(r.time.exposed_tp_comm == 0);
    CHECK(r.time.exposed_ep_comm > 0);
    CHECK(r.time.total() == doctest::Approx(r.iteration_time).epsilon(1e-9));
  }
  double ep_lines = 0;
  const StepReport r = simulate_step(in, Fidelity::analytic);
  for (const ExplainLine& l : explain_time(in).lines) {
    if (l.label.starts_with("exposed ep_")) ep_lines += l.value;
    CHECK_FALSE(l.label.starts_with("exposed tp_"));
  }
  CHECK(ep_lines > 0);
  CHECK(ep_lines == doctest::Approx(r.time.exposed_ep_comm).epsilon(1e-9));
}
