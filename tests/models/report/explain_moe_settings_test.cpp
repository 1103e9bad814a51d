// The MoE exchange under Megatron-Core's other settings: each line is the closed-form step of the scenario
// with that dispatcher and overlap, the scenario's own first; layouts the overlap does not run in, dense
// models and other frameworks get no such line or section.
#include "models/report/explain_moe_settings.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "tests/support/fixtures.hpp"

using namespace trainsim;
using namespace trainsim::model;

namespace {

// The four-expert MoE on one DGX H100, 8 ranks of data and expert parallelism (folded), one micro-batch
// each of the 16 sequences' share.
StepInput moe_on_one_node(int pp = 1) {
  StepInput in;
  in.model = testing::four_expert_moe();
  in.model.layers = 4;
  in.cluster = testing::dgx_h100(1);
  in.plan.pp = pp;
  in.plan.dp = 8 / pp;
  in.plan.ep = 4;
  in.plan.expert_folding = true;
  in.plan.zero = ZeroStage::optimizer_states;
  in.training.global_batch = 16;
  return in;
}

double step_with(StepInput in, MoeDispatcher dispatcher, bool overlap) {
  in.plan.framework.moe_dispatcher = dispatcher;
  in.plan.framework.ep_comm_overlap = overlap;
  return simulate_step(in, Fidelity::analytic).iteration_time;
}

const ExplainLine* line(const ExplainSection& s, const std::string& label) {
  const auto it = std::ranges::find_if(s.lines, [&](const ExplainLine& l) { return l.label == label; });
  return it == s.lines.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("each setting's line is the step with that dispatcher and overlap, the scenario's own first") {
  const StepInput in = moe_on_one_node();
  const auto s = explain_moe_settings(in);
  REQUIRE(s.has_value());
  REQUIRE(s->lines.size() == 6);  // alltoall, deepep, hybridep, each with and without the overlap
  CHECK(s->lines[0].label == "alltoall, no overlap (as written)");
  CHECK(s->lines[0].value == simulate_step(in, Fidelity::analytic).iteration_time);
  struct Setting {
    std::string label;
    MoeDispatcher dispatcher;
    bool overlap;
  };
  for (const auto& [label, dispatcher, overlap] :
       {Setting{"alltoall, ep_comm_overlap", MoeDispatcher::all_to_all, true},
        Setting{"deepep, no overlap", MoeDispatcher::deepep, false},
        Setting{"hybridep, ep_comm_overlap", MoeDispatcher::hybridep, true}}) {
    CAPTURE(label);
    const ExplainLine* l = line(*s, label);
    REQUIRE(l != nullptr);
    CHECK(l->value == step_with(in, dispatcher, overlap));
    CHECK(l->formula.find(" x the step as written") != std::string::npos);
  }
}

TEST_CASE("a 1f1b pipeline leaves the overlap out and says why") {
  const auto s = explain_moe_settings(moe_on_one_node(2));
  REQUIRE(s.has_value());
  CHECK(s->lines.size() == 3);
  for (const ExplainLine& l : s->lines) CHECK(l.label.find("ep_comm_overlap") == std::string::npos);
  CHECK(std::ranges::any_of(s->notes,
                            [](const std::string& n) { return n.starts_with("ep_comm_overlap left out"); }));
}

TEST_CASE("no section for a dense model, ep 1 or a framework other than Megatron-Core's") {
  StepInput in = moe_on_one_node();
  in.plan.framework = framework_preset(FrameworkPreset::fsdp2);
  CHECK_FALSE(explain_moe_settings(in).has_value());
  in = moe_on_one_node();
  in.plan.ep = 1;
  CHECK_FALSE(explain_moe_settings(in).has_value());
  CHECK_FALSE(explain_moe_settings(testing::small_gpt_on_a100(1, 2, 1, 4, 16)).has_value());
}

TEST_CASE("on a GPU whose SMs' copy rate is measured, DeepEP's step by its SMs: the fastest its value") {
  StepInput in = moe_on_one_node();
  in.cluster.node.gpu.sm_count = 132;  // an H100's
  in.cluster.node.gpu.efficiency.sm_peer_copy_bytes_per_s = 10e9;
  const auto s = explain_moe_settings(in);
  REQUIRE(s.has_value());
  REQUIRE(s->lines.size() == 8);  // the six settings, then DeepEP by its SMs without and with the overlap
  for (const bool overlap : {false, true}) {
    CAPTURE(overlap);
    const ExplainLine* l = line(*s, std::string("deepep, ") + (overlap ? "ep_comm_overlap" : "no overlap") +
                                        " by its SMs (moe_dispatcher_sms)");
    REQUIRE(l != nullptr);
    // The value is the least step over the SM counts the line lists, each the step at that count.
    double best = 0;
    int best_sms = 0;
    for (const int sms : kDeepepSmCounts) {
      StepInput v = in;
      v.plan.framework.moe_dispatcher_sms = sms;
      const double t = step_with(v, MoeDispatcher::deepep, overlap);
      const std::string entry = std::to_string(sms) + ": ";
      CHECK((l->formula.starts_with(entry) || l->formula.find(", " + entry) != std::string::npos));
      if (best_sms == 0 || t < best) {
        best = t;
        best_sms = sms;
      }
    }
    CHECK(l->value == best);
    CHECK(l->formula.find("fastest at " + std::to_string(best_sms) + " SMs") != std::string::npos);
  }
  // Fewer SMs copy more slowly: without the overlap nothing else changes, so 8 SMs expose more of the
  // exchange than 64 (this small model's step is the eager host's either way, so its length does not
  // change: the GPU waits for the host less).
  StepInput v = in;
  v.plan.framework.moe_dispatcher = MoeDispatcher::deepep;
  v.plan.framework.moe_dispatcher_sms = 8;
  const double eight = simulate_step(v, Fidelity::analytic).time.exposed_ep_comm;
  v.plan.framework.moe_dispatcher_sms = 64;
  CHECK(eight > simulate_step(v, Fidelity::analytic).time.exposed_ep_comm);
}

TEST_CASE("no SM line for DeepEP when its expert group leaves the NVLink domain the rate was measured in") {
  // 16 experts over two DGX H100 nodes given a peer-copy rate: ep 16 spans both nodes, ep 8 stays in one.
  StepInput in = moe_on_one_node();
  in.model.experts = 16;
  in.cluster = testing::dgx_h100(2);
  in.cluster.node.gpu.sm_count = 132;
  in.cluster.node.gpu.efficiency.sm_peer_copy_bytes_per_s = 10e9;
  in.plan.dp = 16;
  in.training.global_batch = 32;
  const auto has_sm_line = [](const ExplainSection& s) {
    return std::ranges::any_of(
        s.lines, [](const ExplainLine& l) { return l.label.ends_with("by its SMs (moe_dispatcher_sms)"); });
  };
  in.plan.ep = 16;
  const auto across = explain_moe_settings(in);
  REQUIRE(across.has_value());
  CHECK_FALSE(has_sm_line(*across));
  in.plan.ep = 8;
  const auto inside = explain_moe_settings(in);
  REQUIRE(inside.has_value());
  CHECK(has_sm_line(*inside));
}

TEST_CASE(
    "a flex backend's line names its SMs: the scenario's flag, which Megatron-Core gives either backend") {
  // Written with HybridEP on 32 SMs: the DeepEP line is DeepEP on those 32 (Megatron-Core's one
  // --moe-flex-dispatcher-num-sms), and says so; the all-to-all's names none.
  StepInput in = moe_on_one_node();
  in.plan.framework.moe_dispatcher = MoeDispatcher::hybridep;
  in.plan.framework.moe_dispatcher_sms = 32;
  const auto s = explain_moe_settings(in);
  REQUIRE(s.has_value());
  const ExplainLine* deepep = line(*s, "deepep, no overlap");
  REQUIRE(deepep != nullptr);
  CHECK(deepep->formula.find(", on 32 SMs") != std::string::npos);
  CHECK(deepep->value == step_with(in, MoeDispatcher::deepep, false));
  const ExplainLine* plain = line(*s, "alltoall, no overlap");
  REQUIRE(plain != nullptr);
  CHECK(plain->formula.find("SMs") == std::string::npos);
}
