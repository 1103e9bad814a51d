#include "scenarios/studies/layout_search.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <string>

#include "models/step/step_plan.hpp"
#include "scenarios/framework_choice.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/studies/simulation.hpp"
#include "sim/trace.hpp"

using namespace trainsim;
using namespace trainsim::scenario;
using model::Fidelity;
using model::Recompute;
using model::Schedule;

namespace {

/// A toy model small enough to enumerate by hand: 4 layers, 4 heads, seq 8, batch 8, one node of 4 GPUs.
Scenario toy() {
  Scenario s;
  s.name = "toy";
  s.model.layers = 4;
  s.model.heads = 4;
  s.model.hidden = 64;
  s.model.seq_len = 8;
  s.model.vocab = 128;
  s.cluster.node.gpus_per_node = 4;
  s.cluster.nodes = 1;
  s.training.global_batch = 8;
  return s;
}

LayoutSpace small_space() {
  LayoutSpace space;
  space.max_cp = 2;
  space.zero_stages = {model::ZeroStage::none};
  space.recompute = {Recompute::none};
  return space;
}

/// Stand-in for the simulator: faster with more tensor parallelism and bigger micro-batches, and costlier
/// with more pipeline stages; layouts with cp = 2 "do not fit".
LayoutScore toy_score(const Scenario&, const Layout& layout, Fidelity fidelity) {
  const auto& p = layout.plan;
  LayoutScore s;
  s.step.fits = p.cp == 1;
  s.run_time_s = 100.0 / (p.tp * p.micro_batch) + p.pp + (p.schedule == Schedule::gpipe ? 1 : 0);
  s.cost_usd = 10.0 * p.tp + p.pp;
  // The event fidelity finds the analytic winner (tp 4, mb 8) slower than it thought.
  if (fidelity == Fidelity::event && p.tp == 4 && p.micro_batch == 8) s.run_time_s += 100;
  return s;
}

}  // namespace

TEST_CASE("the toy model has 69 dividing layouts without zero and recompute choices") {
  // Hand count (see the file comment of layout_search.hpp for the rules), by (tp, pp, cp) -> dp:
  //   mb choices are the divisors of 8/dp; schedules: 1 with pp = 1, 4 with pp = 2 (gpipe, 1f1b, zb-h1,
  //   interleaved v = 2), 3 with pp = 4 (no v divides 4/4 = 1).
  //   (1,1,1) dp4: 2x1  (1,1,2) dp2: 3x1  (1,2,1) dp2: 3x4  (1,2,2) dp1: 4x4  (1,4,1) dp1: 4x3
  //   (2,1,1) dp2: 3x1  (2,1,2) dp1: 4x1  (2,2,1) dp1: 4x4  (4,1,1) dp1: 4x1   -> 72
  // less the three interleaved layouts with a single micro-batch (mb = 8/dp), which the interleaved
  // schedule refuses (micro-batches must be a multiple of pp = 2): one each of (1,2,1), (1,2,2), (2,2,1).
  const auto layouts = enumerate_layouts(toy(), small_space());
  CHECK(layouts.size() == 69);
  for (const auto& l : layouts) {
    CHECK(l.plan.world_size() == 4);
    CHECK(8 % (l.plan.dp * l.plan.micro_batch) == 0);
    CHECK(4 % (l.plan.pp * l.plan.virtual_stages) == 0);
  }
}

TEST_CASE("every zero stage and recompute choice multiplies the layouts, ZeRO-3 once more for kept weights") {
  LayoutSpace space = small_space();
  space.zero_stages = {model::ZeroStage::none, model::ZeroStage::optimizer_states,
                       model::ZeroStage::gradients, model::ZeroStage::parameters};
  space.recompute = {Recompute::none, Recompute::selective, Recompute::full};
  // Four stages, ZeRO-3 also with its gathered weights kept to the backward: 5 x 3 per dividing layout.
  const auto layouts = enumerate_layouts(toy(), space);
  CHECK(layouts.size() == 69 * 15);
  const auto kept = std::count_if(layouts.begin(), layouts.end(),
                                  [](const Layout& l) { return !l.plan.framework.reshard_after_forward; });
  CHECK(kept == 69 * 3);
  for (const Layout& l : layouts) {
    if (!l.plan.framework.reshard_after_forward) CHECK(l.plan.zero == model::ZeroStage::parameters);
  }
  space.zero3_keep_weights = false;
  CHECK(enumerate_layouts(toy(), space).size() == 69 * 12);
}

TEST_CASE(
    "a megatron-core MoE scenario that overlaps its expert all-to-alls is offered only the layouts "
    "Megatron-Core runs that in") {
  // The toy with 2 experts: ep 1 gives the dense toy's 69 layouts; ep 2 (its own axis, the batch split over
  // dp·ep, so mb divides 8/(dp·2)), by (tp, pp, cp) -> dp:
  //   (1,1,1) dp2: 2x1  (1,1,2) dp1: 3x1  (2,1,1) dp1: 3x1  (1,2,1) dp1: 3x4 less interleaved mb 4 -> 19,
  // 88 in all. With the overlap Megatron-Core asserts ep > 1 and virtual pipeline stages when pp > 1: the
  // 8 ep-2 layouts without a pipeline and the 2 interleaved ones stay, 10; it refuses full recompute and
  // `moe` among the recomputed modules, and accepts the others.
  Scenario s = toy();
  s.model.experts = 2;
  s.model.top_k = 1;
  s.framework_named = true;
  s.parallelism.framework.ep_comm_overlap = true;
  s.parallelism.recompute_modules = static_cast<std::uint8_t>(model::RecomputeModule::moe);
  LayoutSpace space = small_space();
  space.recompute = {Recompute::none, Recompute::selective, Recompute::full};
  const auto layouts = enumerate_layouts(s, space);
  CHECK(layouts.size() == 10);
  for (const Layout& l : layouts) {
    CHECK(l.plan.ep == 2);
    CHECK((l.plan.pp == 1 || l.plan.schedule == Schedule::interleaved));
    CHECK(l.plan.recompute == Recompute::none);
  }
  s.parallelism.recompute_modules = static_cast<std::uint8_t>(model::RecomputeModule::core_attn);
  CHECK(enumerate_layouts(s, space).size() == 10 * 2);  // none and selective of core_attn
  // Without the flag, or under another framework, every layout stays: 88 of each recompute.
  s.parallelism.framework.ep_comm_overlap = false;
  CHECK(enumerate_layouts(s, space).size() == 88 * 3);
  s.parallelism.framework = model::framework_preset(model::FrameworkPreset::fsdp2);
  s.parallelism.framework.ep_comm_overlap = true;
  CHECK(enumerate_layouts(s, space).size() == 88 * 3);
  // A dense model has no all-to-all to overlap: the flag leaves its 69 layouts of each recompute.
  Scenario dense = toy();
  dense.framework_named = true;
  dense.parallelism.framework.ep_comm_overlap = true;
  CHECK(enumerate_layouts(dense, space).size() == 69 * 3);
}

TEST_CASE("layouts are distinct and tensor parallelism never exceeds a node or splits a head") {
  Scenario s = toy();
  s.model.heads = 6;  // tp = 4 does not divide 6 heads
  LayoutSpace space = small_space();
  std::set<std::tuple<int, int, int, std::int64_t, int, int, int>> seen;
  for (const auto& l : enumerate_layouts(s, space)) {
    const auto& p = l.plan;
    CHECK(p.tp <= 4);
    CHECK(6 % p.tp == 0);
    CHECK(seen.emplace(p.tp, p.pp, p.cp, p.dp, p.micro_batch, static_cast<int>(p.schedule), p.virtual_stages)
              .second);
  }
}

TEST_CASE("several node counts enumerate each cluster size") {
  LayoutSpace space = small_space();
  space.nodes = {1, 2};
  const auto layouts = enumerate_layouts(toy(), space);
  std::size_t on_two = 0;
  for (const auto& l : layouts) on_two += l.nodes == 2 ? 1 : 0;
  CHECK(layouts.size() - on_two == 69);
  CHECK(on_two > 0);
}

TEST_CASE("the Pareto front keeps the points nothing beats on both axes, by the first axis") {
  const std::vector<std::pair<double, double>> points = {{1, 5}, {2, 3}, {3, 4}, {4, 1}, {2, 3}, {5, 1}};
  CHECK(pareto_front(points) == std::vector<std::size_t>{0, 1, 3});
  CHECK(pareto_front({}).empty());
}

TEST_CASE("search ranks usable layouts by the objective and re-ranks the top K by the event fidelity") {
  SearchOptions options;
  options.space = small_space();
  options.top_k = 3;
  options.threads = 2;
  options.event_rerank = false;
  const SearchResult analytic = search_layouts(toy(), options, toy_score);
  CHECK(analytic.enumerated == 69);
  // cp = 2 layouts "do not fit": (1,1,2) 3 + (1,2,2) 15 + (2,1,2) 4 = 22 of 69.
  CHECK(analytic.usable == 47);
  REQUIRE(analytic.top.size() == 3);
  // Best time: tp 4, pp 1, mb 8 -> 100/32 + 1 = 4.125 s.
  CHECK(analytic.top[0].layout.plan.tp == 4);
  CHECK(analytic.top[0].layout.plan.micro_batch == 8);
  CHECK(analytic.top[0].analytic.run_time_s == doctest::Approx(4.125).scale(0));
  CHECK_FALSE(analytic.top[0].event.has_value());

  options.event_rerank = true;
  const SearchResult event = search_layouts(toy(), options, toy_score);
  REQUIRE(event.top.size() == 3);
  for (const auto& r : event.top) CHECK(r.event.has_value());
  // The analytic winner is 100 s slower by the event figures, so it drops to third of the three.
  CHECK(event.top[2].layout.plan.tp == 4);
  CHECK(event.top[2].layout.plan.micro_batch == 8);
}

TEST_CASE("the cost objective prefers the cheapest layout and the result does not depend on threads") {
  SearchOptions options;
  options.space = small_space();
  options.top_k = 5;
  options.objective = Objective::cost;
  options.event_rerank = false;
  options.threads = 1;
  const SearchResult one = search_layouts(toy(), options, toy_score);
  options.threads = 3;
  const SearchResult three = search_layouts(toy(), options, toy_score);
  REQUIRE(one.top.size() == 5);
  // Cheapest: tp 1, pp 1 -> $11; among those the fastest is mb 2 on dp 4 (100/2 + 1 = 51 s).
  CHECK(one.top[0].analytic.cost_usd == doctest::Approx(11).scale(0));
  CHECK(one.top[0].layout.plan.micro_batch == 2);
  for (std::size_t i = 0; i < 5; ++i) {
    CHECK(one.top[i].analytic.cost_usd == three.top[i].analytic.cost_usd);
    CHECK(one.top[i].analytic.run_time_s == three.top[i].analytic.run_time_s);
  }
  REQUIRE_FALSE(one.pareto.empty());
  for (std::size_t i = 1; i < one.pareto.size(); ++i) {
    CHECK(one.pareto[i].analytic.run_time_s > one.pareto[i - 1].analytic.run_time_s);
    CHECK(one.pareto[i].analytic.cost_usd < one.pareto[i - 1].analytic.cost_usd);
  }
}

TEST_CASE("every layout search enumerates loads as a scenario with its keys set, and plans as feasible") {
  // Search spells layouts as loader keys (layout_settings, with the enums' own names); the loader must
  // accept each of them with the same layout rules, as `trainsim run S.yaml --set parallelism.KEY=VALUE`
  // does.
  const std::string path = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/llama3-8b-64-h100.yaml";
  const Scenario base = load_scenario_file(path);
  LayoutSpace space;
  space.max_cp = 2;
  space.max_micro_batch = 2;
  space.max_virtual_stages = 2;
  const std::vector<Layout> layouts = enumerate_layouts(base, space);
  REQUIRE(layouts.size() > 100);
  int loaded = 0;
  for (std::size_t i = 0; i < layouts.size(); i += 7) {  // a deterministic seventh keeps the test quick
    std::vector<Override> set;
    for (const Override& o : layout_settings(layouts[i])) {
      if (!o.yaml_value.empty()) set.push_back(o);  // empty: left unset
    }
    Scenario s;
    CHECK_NOTHROW(s = load_scenario_file(path, set));
    const model::StepPlan plan = model::make_step_plan(s.model, s.cluster, s.parallelism, s.training);
    CHECK_MESSAGE(plan.feasible, plan.reason);
    // The loaded layout is the one searched: every key set took effect (a key layout_settings left out
    // would keep the base's value here).
    const model::ParallelPlan& want = layouts[i].plan;
    CHECK(s.cluster.nodes == layouts[i].nodes);
    CHECK(s.parallelism.tp == want.tp);
    CHECK(s.parallelism.pp == want.pp);
    CHECK(s.parallelism.dp == want.dp);
    CHECK(s.parallelism.cp == want.cp);
    CHECK(s.parallelism.ep == want.ep);
    CHECK(s.parallelism.micro_batch == want.micro_batch);
    CHECK(s.parallelism.schedule == want.schedule);
    CHECK(s.parallelism.virtual_stages == want.virtual_stages);
    CHECK(s.parallelism.zero == want.zero);
    CHECK(s.parallelism.shard_group == want.shard_group);
    CHECK(s.parallelism.recompute == want.recompute);
    CHECK(s.parallelism.framework.reshard_after_forward == want.framework.reshard_after_forward);
    CHECK(s.parallelism.framework.preset == want.framework.preset);
    ++loaded;
  }
  CHECK(loaded > 10);
}

TEST_CASE("search tries pipelines that do not divide the layers, as run lays them out") {
  // 6 layers on 4 GPUs: pp 4 leaves stages of 1, 2, 2, 1 layers, which run accepts.
  Scenario s = toy();
  s.model.layers = 6;
  bool uneven = false;
  for (const Layout& l : enumerate_layouts(s, small_space())) {
    if (l.plan.pp != 4) continue;
    uneven = true;
    const model::StepPlan plan = model::make_step_plan(s.model, s.cluster, l.plan, s.training);
    CHECK_MESSAGE(plan.feasible, plan.reason);
  }
  CHECK(uneven);
  // Llama-3 405B: 126 layers, its published pp 16 on 16,384 GPUs.
  const Scenario llama = load_scenario_file(std::string(TRAINSIM_SOURCE_DIR) +
                                            "/scenarios/examples/llama3-405b-8k-16k-h100.yaml");
  LayoutSpace space;
  space.max_cp = 1;
  space.zero_stages = {model::ZeroStage::optimizer_states};
  space.recompute = {Recompute::none};
  const auto layouts = enumerate_layouts(llama, space);
  CHECK(std::any_of(layouts.begin(), layouts.end(), [](const Layout& l) { return l.plan.pp == 16; }));
}

TEST_CASE("beyond --max-layouts an evenly spaced subset is scored, and the result says so") {
  SearchOptions options;
  options.space = small_space();
  options.event_rerank = false;
  options.max_layouts = 10;
  const SearchResult r = search_layouts(toy(), options, toy_score);
  CHECK(r.enumerated == 69);
  CHECK(r.stride == 7);   // ceil(69 / 10)
  CHECK(r.scored == 10);  // layouts 0, 7, ..., 63
  options.max_layouts = 69;
  const SearchResult all = search_layouts(toy(), options, toy_score);
  CHECK(all.stride == 1);
  CHECK(all.scored == 69);
}

TEST_CASE("the scenario's own layout is scored and placed among the usable layouts") {
  SearchOptions options;
  options.space = small_space();
  options.event_rerank = false;
  Scenario s = toy();
  s.parallelism.tp = 2;  // toy_score: 100/2 + 1 = 51 s
  s.parallelism.dp = 2;
  options.collapse_identical = false;  // ranked among every usable layout, as counted below
  const SearchResult r = search_layouts(s, options, toy_score);
  CHECK(r.given.layout.plan.tp == 2);
  CHECK(r.given.analytic.run_time_s == doctest::Approx(51).scale(0));
  // Usable layouts strictly faster than 51 s (cp 1, by toy_score's formula): counted by hand from the
  // enumeration, then one more for its own place.
  std::int64_t faster = 0;
  for (const Layout& l : enumerate_layouts(s, small_space())) {
    const LayoutScore score = toy_score(s, l, Fidelity::analytic);
    if (score.usable() && std::pair(score.run_time_s, score.cost_usd) < std::pair(51.0, 21.0)) ++faster;
  }
  CHECK(faster > 0);
  CHECK(r.given_rank == faster + 1);
}

TEST_CASE("layouts that miss the budget rank after every one that meets it and leave the Pareto front") {
  // The toy's fastest layouts use tp 4 (100 / (4·mb) s); here they "miss the deadline".
  const auto scored = [](const Scenario& s, const Layout& l, Fidelity f) {
    LayoutScore score = toy_score(s, l, f);
    if (l.plan.tp == 4) score.run.budget_violations.push_back("run_time exceeds budget.deadline");
    return score;
  };
  SearchOptions options;
  options.space = small_space();
  options.event_rerank = false;
  options.top_k = 69;
  options.collapse_identical = false;
  const SearchResult r = search_layouts(toy(), options, scored);
  CHECK(r.usable == 47);
  // tp 4 layouts: (4,1,1) dp 1 with mb 1, 2, 4, 8 -> 4 of the usable ones.
  CHECK(r.within_budget == 43);
  REQUIRE(r.top.size() == 47);
  for (std::size_t i = 0; i < 43; ++i) CHECK(r.top[i].best().meets_budget());
  for (std::size_t i = 43; i < 47; ++i) CHECK_FALSE(r.top[i].best().meets_budget());
  for (const auto& p : r.pareto) CHECK(p.layout.plan.tp != 4);
}

TEST_CASE("a scenario that names no framework has each layout priced with the framework the layout implies") {
  // model::unnamed_framework_preset: ZeRO 2-3 without tp, pp or cp is PyTorch FSDP1, the rest Megatron-Core.
  LayoutSpace space = small_space();
  space.zero_stages = {model::ZeroStage::none, model::ZeroStage::gradients, model::ZeroStage::parameters};
  int fsdp = 0;
  int megatron = 0;
  for (const Layout& l : enumerate_layouts(toy(), space)) {
    CHECK(l.framework_chosen);
    const model::ParallelPlan& p = l.plan;
    const bool fsdp_layout = model::shards_gradients(p.zero) && p.tp == 1 && p.pp == 1 && p.cp == 1;
    CHECK(p.framework.preset ==
          (fsdp_layout ? model::FrameworkPreset::fsdp1 : model::FrameworkPreset::megatron_core));
    (fsdp_layout ? fsdp : megatron) += 1;
    const std::vector<Override> keys = layout_settings(l);
    const auto preset = std::find_if(keys.begin(), keys.end(),
                                     [](const Override& o) { return o.key_path == "framework.preset"; });
    REQUIRE(preset != keys.end());
    CHECK(preset->yaml_value == model::to_string(p.framework.preset));
  }
  CHECK(fsdp > 0);
  CHECK(megatron > 0);
  Scenario named = toy();
  named.framework_named = true;
  for (const Layout& l : enumerate_layouts(named, space)) {
    CHECK_FALSE(l.framework_chosen);
    CHECK(l.plan.framework.preset == model::FrameworkPreset::megatron_core);
  }
}

TEST_CASE("a framework block without a preset starts each layout from the preset that layout implies") {
  // SPEC: a framework block without preset: starts from the preset the layout implies. The scenario's own
  // layout (tp 2) implies Megatron-Core; a layout of ZeRO 2 without tp, pp or cp implies FSDP1. Each layout
  // gets its preset with the block's flag, and the loader, given the layout's keys as `run --set` gives
  // them, reads the same framework and overlap_grad_reduce.
  const std::string text =
      "model: {layers: 4, hidden: 64, heads: 4, vocab: 128, seq_len: 8}\n"
      "cluster: {node: dgx-h100, nodes: 1, gpus_per_node: 4}\n"
      "parallelism: {tp: 2, dp: auto}\n"
      "framework: {prefetch: 3}\n"
      "training: {global_batch: 8}\n";
  const Scenario base = load_scenario_text(text, "t.yaml");
  REQUIRE(base.unnamed_framework_block);
  LayoutSpace space = small_space();
  space.zero_stages = {model::ZeroStage::none, model::ZeroStage::gradients};
  int fsdp = 0;
  int megatron = 0;
  for (const Layout& l : enumerate_layouts(base, space)) {
    const model::ParallelPlan& p = l.plan;
    CHECK_FALSE(l.framework_chosen);
    const bool fsdp_layout = model::shards_gradients(p.zero) && p.tp == 1 && p.pp == 1 && p.cp == 1;
    CHECK(p.framework.preset ==
          (fsdp_layout ? model::FrameworkPreset::fsdp1 : model::FrameworkPreset::megatron_core));
    CHECK(p.framework.prefetch == 3);
    (fsdp_layout ? fsdp : megatron) += 1;
    std::vector<Override> set;
    for (const Override& o : layout_settings(l)) {
      if (!o.yaml_value.empty()) set.push_back(o);
    }
    const Scenario run = load_scenario_text(text, "t.yaml", set);
    CHECK(run.parallelism.framework == p.framework);
    CHECK(run.parallelism.overlap_grad_reduce == p.overlap_grad_reduce);
  }
  CHECK(fsdp > 0);
  CHECK(megatron > 0);
}

TEST_CASE("layouts with identical figures are one answer that lists the knobs which do not matter") {
  // toy_score ignores the schedule but for gpipe: 1f1b, zb-h1 and interleaved give the same figures, and
  // with pp 1 there is one schedule only.
  SearchOptions options;
  options.space = small_space();
  options.event_rerank = false;
  options.top_k = 69;
  options.collapse_identical = false;
  const SearchResult all = search_layouts(toy(), options, toy_score);
  options.collapse_identical = true;
  const SearchResult one = search_layouts(toy(), options, toy_score);
  CHECK(one.usable == all.usable);
  CHECK(one.distinct < all.distinct);
  CHECK(all.distinct == all.usable);
  // Every usable layout is in exactly one answer: its own row or a row's same_results.
  std::size_t covered = 0;
  for (const RankedLayout& r : one.top) covered += 1 + r.same_results.size();
  CHECK(covered == static_cast<std::size_t>(all.usable));
  CHECK(one.top.size() == static_cast<std::size_t>(one.distinct));
  // No two rows share their figures, and each row's others share its figures exactly.
  for (std::size_t i = 0; i < one.top.size(); ++i) {
    const LayoutScore& a = one.top[i].analytic;
    for (std::size_t j = i + 1; j < one.top.size(); ++j) {
      const LayoutScore& b = one.top[j].analytic;
      CHECK_FALSE((a.run_time_s == b.run_time_s && a.cost_usd == b.cost_usd &&
                   a.step.memory_per_gpu == b.step.memory_per_gpu &&
                   a.step.iteration_time == b.step.iteration_time));
    }
    for (const Layout& other : one.top[i].same_results) {
      const LayoutScore o = toy_score(toy(), other, Fidelity::analytic);
      CHECK(o.run_time_s == a.run_time_s);
      CHECK(o.cost_usd == a.cost_usd);
    }
  }
  // tp 1, pp 2, dp 2, mb 1: 1f1b, zb-h1 and interleaved/2 all score 100 + 2 = 102 s; gpipe 103 s.
  const auto it = std::find_if(one.top.begin(), one.top.end(), [](const RankedLayout& r) {
    const auto& p = r.layout.plan;
    return p.tp == 1 && p.pp == 2 && p.dp == 2 && p.micro_batch == 1 && p.schedule != Schedule::gpipe;
  });
  REQUIRE(it != one.top.end());
  const std::vector<std::string> knobs = knobs_that_do_not_matter(*it);
  REQUIRE_FALSE(knobs.empty());
  CAPTURE(knobs.front());
  CHECK(knobs.front().starts_with("parallelism.schedule 1f1b/zero-bubble-h1/interleaved"));
}

TEST_CASE("search keeps the default memory headroom free unless the scenario or the caller sets one") {
  Scenario s = toy();
  s.cluster.node.gpu.hbm_bytes = 80e9;
  std::vector<double> seen;
  std::mutex lock;
  const auto spy = [&](const Scenario& sc, const Layout& l, Fidelity f) {
    const std::lock_guard<std::mutex> guard(lock);
    seen.push_back(sc.budget.headroom_fraction(80e9).value_or(-1));
    return toy_score(sc, l, f);
  };
  SearchOptions options;
  options.space = small_space();
  options.event_rerank = false;
  const SearchResult d = search_layouts(s, options, spy);
  CHECK(d.default_headroom);
  // 2 x 688 MB + 15 % of 80 GB = 13.376 GB of 80 GB.
  CHECK(d.memory_headroom == doctest::Approx(13.376 / 80));
  for (const double f : seen) CHECK(f == doctest::Approx(13.376 / 80));
  seen.clear();
  s.budget.memory_headroom_bytes = 8e9;
  const SearchResult given = search_layouts(s, options, spy);
  CHECK_FALSE(given.default_headroom);
  CHECK(given.memory_headroom == doctest::Approx(0.1));
  for (const double f : seen) CHECK(f == doctest::Approx(0.1));
  options.memory_headroom = 0.0;
  CHECK(search_layouts(s, options, spy).memory_headroom == 0);
}

TEST_CASE("the search prices each layout to the bit as a lone run of it does, whatever it timed before") {
  // The analytic pass scores layouts grouped by pipeline schedule and times a schedule it replayed before
  // from its recording (models/step/pipeline_schedule.hpp); a traced run replays the schedule pass by pass
  // (the analytic trace needs every span) and keeps nothing. Every usable layout's figures must be those.
  const Scenario base =
      load_scenario_file(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/examples/llama3-8b-64-h100.yaml");
  SearchOptions options;
  options.space.max_cp = 1;
  options.space.max_micro_batch = 2;
  options.space.max_virtual_stages = 3;
  options.space.zero_stages = {model::ZeroStage::none, model::ZeroStage::optimizer_states};
  options.space.recompute = {Recompute::none, Recompute::full};
  options.top_k = 100'000;
  options.event_rerank = false;
  options.collapse_identical = false;
  options.threads = 1;
  const SearchResult result = search_layouts(base, options);
  REQUIRE(result.top.size() > 50);
  std::set<std::pair<Schedule, int>> schedules;
  for (const RankedLayout& row : result.top) {
    schedules.emplace(row.layout.plan.schedule, row.layout.plan.pp);
    Scenario alone = base;
    alone.cluster.nodes = row.layout.nodes;
    alone.parallelism = row.layout.plan;
    alone.budget.memory_headroom = result.memory_headroom;
    choose_framework(alone);  // as the search does for a scenario that names none
    sim::ChromeTraceWriter trace;
    model::StepOptions traced;
    traced.trace = &trace;
    const ScenarioResult run = simulate_scenario(alone, Fidelity::analytic, traced);
    CAPTURE(row.layout.plan.tp);
    CAPTURE(row.layout.plan.pp);
    CAPTURE(row.layout.plan.micro_batch);
    CAPTURE(to_string(row.layout.plan.schedule));
    CHECK(run.step.iteration_time == row.analytic.step.iteration_time);
    CHECK(run.step.time.bubble == row.analytic.step.time.bubble);
    CHECK(run.step.time.exposed_pp_comm == row.analytic.step.time.exposed_pp_comm);
    CHECK(run.run.run_time == row.analytic.run_time_s);
  }
  CHECK(schedules.size() > 6);  // pipelines of several depths, each schedule
}
