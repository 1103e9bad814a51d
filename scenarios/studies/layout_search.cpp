#include "scenarios/studies/layout_search.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <span>
#include <tuple>

#include "models/step/layout_rules.hpp"
#include "models/step/memory_headroom.hpp"
#include "scenarios/framework_choice.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/studies/sweep.hpp"
#include "sim/error.hpp"

namespace trainsim::scenario {

namespace {

std::vector<std::int64_t> divisors_up_to(std::int64_t n, std::int64_t limit) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 1; d <= std::min(n, limit); ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

/// The layout's scenario: the same run with the node count and parallel plan substituted, and, when the
/// scenario names no framework, the attention kernel of the framework the layout implies.
Scenario with_layout(const Scenario& scenario, const Layout& layout) {
  Scenario s = scenario;
  s.cluster.nodes = layout.nodes;
  s.parallelism = layout.plan;
  s.sweep = {};
  choose_framework(s);
  return s;
}

/// Smaller is better; ties broken by the other figure, then by enumeration order (the caller's index).
std::pair<double, double> objective_key(const LayoutScore& score, Objective objective) {
  return objective == Objective::time ? std::pair{score.run_time_s, score.cost_usd}
                                      : std::pair{score.cost_usd, score.run_time_s};
}

// A framework block without a preset starts from the preset each layout implies (reread_unnamed_framework):
// the block is read once for each preset the layouts imply, not once a layout.
class UnnamedFrameworks {
 public:
  explicit UnnamedFrameworks(const Scenario& scenario) : scenario_(scenario) {}

  // Sets `p`'s framework and overlap_grad_reduce to the block read over the preset `p` implies.
  void operator()(model::ParallelPlan& p) {
    const model::FrameworkPreset implied = model::unnamed_framework_preset(p);
    auto it = read_.find(implied);
    if (it == read_.end()) {
      model::ParallelPlan read = p;
      reread_unnamed_framework(scenario_, read);
      it = read_.emplace(implied, std::pair{read.framework, read.overlap_grad_reduce}).first;
    }
    p.framework = it->second.first;
    p.overlap_grad_reduce = it->second.second;
  }

 private:
  const Scenario& scenario_;
  std::map<model::FrameworkPreset, std::pair<model::Framework, bool>> read_;
};

}  // namespace

std::vector<Override> layout_settings(const Layout& layout) {
  const model::ParallelPlan& p = layout.plan;
  return {
      {"cluster.nodes", std::to_string(layout.nodes)},
      {"parallelism.tp", std::to_string(p.tp)},
      {"parallelism.pp", std::to_string(p.pp)},
      {"parallelism.dp", std::to_string(p.dp)},
      {"parallelism.cp", std::to_string(p.cp)},
      {"parallelism.ep", std::to_string(p.ep)},
      {"parallelism.expert_folding", p.expert_folding ? "true" : "false"},
      {"parallelism.expert_tp", std::to_string(p.expert_tensor_parallel())},
      {"parallelism.micro_batch", std::to_string(p.micro_batch)},
      {"parallelism.schedule", std::string(to_string(p.schedule))},
      {"parallelism.virtual_stages", std::to_string(p.virtual_stages)},
      {"parallelism.zero", std::string(model::to_string(p.zero))},
      {"parallelism.shard_group", p.shard_group > 0 ? std::to_string(p.shard_group) : ""},
      {"parallelism.recompute", recompute_to_yaml(p)},
      {"framework.preset", layout.framework_chosen ? std::string(model::to_string(p.framework.preset)) : ""},
      {"framework.reshard_after_forward",
       p.zero == model::ZeroStage::parameters ? (p.framework.reshard_after_forward ? "true" : "false") : ""}};
}

std::vector<Layout> enumerate_layouts(const Scenario& scenario, const LayoutSpace& space) {
  const model::TransformerSpec& m = scenario.model;
  if (m.layers <= 0 || m.heads <= 0 || scenario.training.global_batch <= 0) {
    throw InputError("search needs a model with layers and heads and a training.global_batch");
  }
  const std::vector<std::int64_t> node_counts =
      space.nodes.empty() ? std::vector{scenario.cluster.nodes} : space.nodes;
  const std::int64_t gpus_per_node = scenario.cluster.gpus_in_use_per_node();
  const std::int64_t batch = scenario.training.global_batch;

  UnnamedFrameworks reread_framework(scenario);
  // Candidates by the search's own policy; which of them are layouts at all is layout_rules' call.
  const std::vector<std::int64_t> tps = divisors_up_to(gpus_per_node, gpus_per_node);
  std::vector<std::int64_t> pps(static_cast<std::size_t>(m.layers));
  std::iota(pps.begin(), pps.end(), std::int64_t{1});
  std::vector<std::int64_t> cps;
  for (std::int64_t cp = 1; cp <= space.max_cp; cp *= 2) cps.push_back(cp);
  const std::vector<std::int64_t> eps =
      m.is_moe() ? divisors_up_to(m.experts, m.experts) : std::vector<std::int64_t>{1};

  std::vector<Layout> layouts;
  for (const std::int64_t nodes : node_counts) {
    if (nodes <= 0) throw InputError("search: node counts must be positive");
    const std::int64_t gpus = nodes * gpus_per_node;
    for (const std::int64_t tp : tps) {
      for (const std::int64_t pp : pps) {
        for (const std::int64_t cp : cps) {
          for (const std::int64_t ep : eps) {
            const std::int64_t model_parallel = tp * pp * cp * ep;
            if (gpus % model_parallel != 0) continue;
            const std::int64_t dp = gpus / model_parallel;
            if (batch % dp != 0) continue;
            for (const std::int64_t mb : divisors_up_to(batch / dp, space.max_micro_batch)) {
              // (schedule, virtual stages) pairs: without a pipeline every schedule is the same one.
              std::vector<std::pair<model::Schedule, std::int64_t>> schedules;
              if (pp == 1) {
                schedules.emplace_back(model::Schedule::one_f_one_b, 1);
              } else {
                for (const model::Schedule schedule : space.schedules) {
                  if (schedule != model::Schedule::interleaved) {
                    schedules.emplace_back(schedule, 1);
                    continue;
                  }
                  for (std::int64_t v = 2; v <= space.max_virtual_stages; ++v) {
                    if (m.layers >= pp * v) schedules.emplace_back(schedule, v);
                  }
                }
              }
              // HSDP: ZeRO state sharded within one node's data-parallel ranks, replicated across nodes.
              const std::int64_t node_dp = gpus_per_node / std::gcd(gpus_per_node, tp * cp * ep);
              const bool hsdp = space.hsdp && node_dp > 1 && node_dp < dp && dp % node_dp == 0 &&
                                tp * cp * ep * node_dp == gpus_per_node;
              for (const auto& [schedule, virtual_stages] : schedules) {
                for (const model::ZeroStage zero : space.zero_stages) {
                  for (const std::int64_t shard_group : {std::int64_t{0}, node_dp}) {
                    if (shard_group > 0 && (!hsdp || zero == model::ZeroStage::none)) continue;
                    // ZeRO-3: resharded after the forward (the scenario's framework flag) and, when
                    // explored, kept to the backward.
                    const bool scenario_reshards = scenario.parallelism.framework.reshard_after_forward;
                    std::vector<bool> reshards{scenario_reshards};
                    if (zero == model::ZeroStage::parameters && space.zero3_keep_weights && scenario_reshards)
                      reshards.push_back(false);
                    for (const bool reshard : reshards) {
                      for (const model::Recompute recompute : space.recompute) {
                        Layout layout{.nodes = nodes,
                                      .plan = scenario.parallelism,
                                      .framework_chosen = !scenario.framework_named};
                        model::ParallelPlan& p = layout.plan;
                        p.tp = static_cast<int>(tp);
                        p.pp = static_cast<int>(pp);
                        p.cp = static_cast<int>(cp);
                        p.ep = static_cast<int>(ep);
                        p.expert_folding = false;  // ep an axis of its own: dp = GPUs / (tp·pp·cp·ep)
                        p.expert_tp = 0;           // experts split like the attention
                        p.dp = dp;
                        p.micro_batch = static_cast<int>(mb);
                        p.schedule = schedule;
                        p.virtual_stages = static_cast<int>(virtual_stages);
                        p.stage_layers.clear();  // split_pipeline_layers' even split
                        p.zero = zero;
                        p.shard_group = static_cast<int>(shard_group);
                        p.recompute = recompute;
                        if (layout.framework_chosen) {
                          choose_unnamed_framework(p);
                        } else if (scenario.unnamed_framework_block) {
                          reread_framework(p);
                        }
                        p.framework.reshard_after_forward = reshard;
                        if (!model::runs_megatron_ep_overlap(m, p)) continue;
                        if (model::layout_rules(m, p, scenario.training, gpus).empty())
                          layouts.push_back(std::move(layout));
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return layouts;
}

LayoutScore default_layout_evaluator(const Scenario& scenario, const Layout& layout,
                                     model::Fidelity fidelity) {
  LayoutScore score;
  try {
    // A layout that does not fit is dropped by the search whatever its time, so it is not timed.
    model::StepOptions options;
    options.time_unfit = false;
    const ScenarioResult result = simulate_scenario(with_layout(scenario, layout), fidelity, options);
    score.step = result.step;
    score.run = result.run;
    score.run_time_s = result.run.run_time;
    score.cost_usd = result.run.cost_total;
  } catch (const InputError& e) {
    score.step.feasible = false;
    score.step.reason = e.what();
  }
  return score;
}

std::vector<std::size_t> pareto_front(const std::vector<std::pair<double, double>>& points) {
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return points[a] < points[b]; });
  std::vector<std::size_t> front;
  for (const std::size_t i : order) {
    // Sorted by x then y: a point is on the front when its y beats every point with smaller or equal x.
    if (front.empty() || points[i].second < points[front.back()].second) front.push_back(i);
  }
  return front;
}

std::vector<std::string> knobs_that_do_not_matter(const RankedLayout& entry) {
  std::vector<std::string> out;
  if (entry.same_results.empty()) return out;
  const std::vector<Override> own = layout_settings(entry.layout);
  std::vector<std::vector<Override>> others;
  for (const Layout& l : entry.same_results) others.push_back(layout_settings(l));
  for (std::size_t i = 0; i < own.size(); ++i) {
    std::vector<std::string> values{own[i].yaml_value};
    for (const auto& o : others) {
      if (std::find(values.begin(), values.end(), o[i].yaml_value) == values.end())
        values.push_back(o[i].yaml_value);
    }
    if (values.size() < 2) continue;
    std::string knob = own[i].key_path + " ";
    for (std::size_t v = 0; v < values.size(); ++v)
      knob += (v ? "/" : "") + (values[v].empty() ? "unset" : values[v]);
    out.push_back(std::move(knob));
  }
  return out;
}

namespace {

/// The scenario every layout is scored on: its headroom the caller's, the scenario's, or the default
/// (recorded in `result`).
Scenario with_search_headroom(const Scenario& given, const SearchOptions& options, SearchResult& result) {
  Scenario scenario = given;
  const double hbm = scenario.cluster.node.gpu.hbm_bytes;
  if (options.memory_headroom) {
    scenario.budget.memory_headroom = options.memory_headroom;
    scenario.budget.memory_headroom_bytes.reset();
  }
  const std::optional<double> chosen = scenario.budget.headroom_fraction(hbm);
  result.default_headroom = !chosen;
  result.memory_headroom = model::headroom_fraction_or_default(chosen, hbm);
  if (!chosen) scenario.budget.memory_headroom = result.memory_headroom;
  return scenario;
}

/// At most `max_layouts` of `layouts`: every stride-th in enumeration order (the stride in `result`).
void keep_every_stride(std::vector<Layout>& layouts, std::int64_t max_layouts, SearchResult& result) {
  const std::int64_t budget = std::max<std::int64_t>(max_layouts, 1);
  if (result.enumerated <= budget) return;
  result.stride = (result.enumerated + budget - 1) / budget;
  std::vector<Layout> subset;
  for (std::size_t k = 0; k < layouts.size(); k += static_cast<std::size_t>(result.stride))
    subset.push_back(std::move(layouts[k]));
  layouts = std::move(subset);
}

/// The schedule a layout times: its replay depends on these alone (schedule, pp, virtual stages,
/// micro-batches per step: the same dp · micro_batch).
auto schedule_of(const Layout& l) {
  return std::tuple(l.nodes, l.plan.schedule, l.plan.pp, l.plan.virtual_stages,
                    l.plan.dp * l.plan.micro_batch);
}

/// The order to score `layouts` in, as runs that one thread scores one after another: the layouts that
/// time the same pipeline schedule together (otherwise enumeration order), at most kMostPerRun to a run. A
/// thread keeps the last few schedules it recorded and replayed (models/step/analytic_step.cpp) and the
/// units it priced (models/step/kept_units.hpp); handed out layout by layout, two threads would each
/// record every schedule and find half the reuse.
std::vector<std::vector<std::int64_t>> scoring_runs(const std::vector<Layout>& layouts) {
  constexpr std::size_t kMostPerRun = 256;  // the last run to finish keeps one thread busy alone
  std::vector<std::int64_t> order(layouts.size());
  std::iota(order.begin(), order.end(), std::int64_t{0});
  const auto key = [&](std::int64_t i) { return schedule_of(layouts[static_cast<std::size_t>(i)]); };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return key(a) < key(b); });
  std::vector<std::vector<std::int64_t>> runs;
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || key(order[k]) != key(order[k - 1]) || runs.back().size() == kMostPerRun)
      runs.emplace_back();
    runs.back().push_back(order[k]);
  }
  return runs;
}

/// Every layout's analytic score, in parallel; each score lands in its own slot, so the result does not
/// depend on the thread count or on the order they are scored in.
std::vector<LayoutScore> score_analytic(const Scenario& scenario, const std::vector<Layout>& layouts,
                                        const SearchOptions& options, const LayoutEvaluator& evaluate) {
  std::vector<LayoutScore> scores(layouts.size());
  const auto scored = static_cast<std::int64_t>(layouts.size());
  const std::vector<std::vector<std::int64_t>> runs = scoring_runs(layouts);
  std::vector<std::int64_t> run_index(runs.size());
  std::iota(run_index.begin(), run_index.end(), std::int64_t{0});
  std::int64_t done = 0;
  run_in_order(
      run_index, options.threads,
      [&](std::int64_t r) {
        for (const std::int64_t i : runs[static_cast<std::size_t>(r)]) {
          const auto k = static_cast<std::size_t>(i);
          scores[k] = evaluate(scenario, layouts[k], model::Fidelity::analytic);
        }
        return std::string();
      },
      [&](std::int64_t r, std::string&&) {
        done += static_cast<std::int64_t>(runs[static_cast<std::size_t>(r)].size());
        if (options.progress) options.progress(done, scored);
      });
  return scores;
}

/// The usable layouts' indices; records their count, how many meet the budget, and the fastest run time
/// and lowest cost among them.
std::vector<std::size_t> usable_layouts(const std::vector<LayoutScore>& scores, SearchResult& result) {
  std::vector<std::size_t> usable;
  for (std::size_t k = 0; k < scores.size(); ++k) {
    if (scores[k].usable()) usable.push_back(k);
  }
  result.usable = static_cast<std::int64_t>(usable.size());
  for (const std::size_t k : usable) result.within_budget += scores[k].meets_budget();
  if (!usable.empty()) {
    result.fastest_run_time_s = scores[usable.front()].run_time_s;
    result.cheapest_cost_usd = scores[usable.front()].cost_usd;
    for (const std::size_t k : usable) {
      result.fastest_run_time_s = std::min(result.fastest_run_time_s, scores[k].run_time_s);
      result.cheapest_cost_usd = std::min(result.cheapest_cost_usd, scores[k].cost_usd);
    }
  }
  return usable;
}

/// Identical figures are one answer: keeps the first layout of each in enumeration order in `usable` and
/// returns, for each one kept, the others.
std::map<std::size_t, std::vector<std::size_t>> collapse_identical(std::vector<std::size_t>& usable,
                                                                   const std::vector<LayoutScore>& scores) {
  std::map<std::size_t, std::vector<std::size_t>> same_as;
  std::map<std::tuple<double, double, double, double>, std::size_t> first_with;
  std::vector<std::size_t> kept;
  for (const std::size_t k : usable) {
    const LayoutScore& sc = scores[k];
    const auto [it, inserted] = first_with.emplace(
        std::tuple(sc.step.iteration_time, sc.step.memory_per_gpu, sc.run_time_s, sc.cost_usd), k);
    if (inserted) {
      kept.push_back(k);
    } else {
      same_as[it->second].push_back(k);
    }
  }
  usable = std::move(kept);
  return same_as;
}

/// The scored layouts as the ranking sees them.
struct ScoredLayouts {
  const std::vector<Layout>& layouts;
  const std::vector<LayoutScore>& scores;
  const std::map<std::size_t, std::vector<std::size_t>>& same_as;
  Objective objective;

  /// Layout k with its analytic score and the layouts with identical figures.
  [[nodiscard]] RankedLayout ranked(std::size_t k) const {
    RankedLayout r{layouts[k], scores[k], std::nullopt, {}};
    if (const auto it = same_as.find(k); it != same_as.end()) {
      for (const std::size_t o : it->second) r.same_results.push_back(layouts[o]);
    }
    return r;
  }

  /// Ranking order: a layout that misses the budget ranks after every one that meets it; then the
  /// objective; then the position.
  [[nodiscard]] bool before(const LayoutScore& a, std::size_t ia, const LayoutScore& b,
                            std::size_t ib) const {
    return std::tuple(!a.meets_budget(), objective_key(a, objective), ia) <
           std::tuple(!b.meets_budget(), objective_key(b, objective), ib);
  }
};

/// The best `top_k` of `usable` by the analytic ranking.
std::vector<RankedLayout> top_layouts(const ScoredLayouts& s, std::vector<std::size_t> ranked, int top_k) {
  const std::size_t k_top = std::min(ranked.size(), static_cast<std::size_t>(std::max(top_k, 0)));
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(k_top), ranked.end(),
                    [&](std::size_t a, std::size_t b) { return s.before(s.scores[a], a, s.scores[b], b); });
  ranked.resize(k_top);
  std::vector<RankedLayout> top;
  top.reserve(ranked.size());
  for (const std::size_t k : ranked) top.push_back(s.ranked(k));
  return top;
}

/// Scores `top` with the event fidelity (in parallel) and re-ranks it by those figures; a layout the event
/// fidelity finds unusable sinks to the bottom.
void rerank_by_events(std::vector<RankedLayout>& top, const ScoredLayouts& s, const Scenario& scenario,
                      int threads, const LayoutEvaluator& evaluate) {
  std::vector<std::int64_t> positions(top.size());
  std::iota(positions.begin(), positions.end(), std::int64_t{0});
  run_in_order(
      positions, threads,
      [&](std::int64_t i) {
        auto& entry = top[static_cast<std::size_t>(i)];
        entry.event = evaluate(scenario, entry.layout, model::Fidelity::event);
        return std::string();
      },
      [](std::int64_t, std::string&&) {});
  std::vector<std::size_t> order(top.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const LayoutScore& sa = top[a].best();
    const LayoutScore& sb = top[b].best();
    if (sa.usable() != sb.usable()) return sa.usable();
    return s.before(sa, a, sb, b);
  });
  std::vector<RankedLayout> reordered;
  reordered.reserve(order.size());
  for (const std::size_t i : order) reordered.push_back(top[i]);
  top = std::move(reordered);
}

/// The analytic Pareto front of (run time, cost) among the usable layouts that meet the budget.
std::vector<RankedLayout> pareto_layouts(const ScoredLayouts& s, const std::vector<std::size_t>& usable) {
  std::vector<std::size_t> in_budget;
  for (const std::size_t k : usable) {
    if (s.scores[k].meets_budget()) in_budget.push_back(k);
  }
  std::vector<std::pair<double, double>> points;
  points.reserve(in_budget.size());
  for (const std::size_t k : in_budget) points.emplace_back(s.scores[k].run_time_s, s.scores[k].cost_usd);
  std::vector<RankedLayout> front;
  for (const std::size_t i : pareto_front(points)) front.push_back(s.ranked(in_budget[i]));
  return front;
}

/// The scenario's own layout, which the search space may not hold (a stage_layers list, a degree the
/// candidates skip): its score, and where it ranks among the usable layouts.
void score_given(const Scenario& scenario, const ScoredLayouts& s, const std::vector<std::size_t>& usable,
                 const LayoutEvaluator& evaluate, SearchResult& result) {
  const Layout given{.nodes = scenario.cluster.nodes, .plan = scenario.parallelism};
  result.given = RankedLayout{given, evaluate(scenario, given, model::Fidelity::analytic), std::nullopt, {}};
  if (result.given.analytic.usable()) {
    const auto key = objective_key(result.given.analytic, s.objective);
    result.given_rank = 1;
    for (const std::size_t k : usable) result.given_rank += objective_key(s.scores[k], s.objective) < key;
  }
}

}  // namespace

SearchResult search_layouts(const Scenario& given_scenario, const SearchOptions& options,
                            const LayoutEvaluator& evaluate) {
  SearchResult result;
  // Every layout must leave the headroom free: the caller's, the scenario's, or the default.
  const Scenario scenario = with_search_headroom(given_scenario, options, result);
  std::vector<Layout> layouts = enumerate_layouts(scenario, options.space);
  result.enumerated = static_cast<std::int64_t>(layouts.size());
  keep_every_stride(layouts, options.max_layouts, result);
  result.scored = static_cast<std::int64_t>(layouts.size());
  const std::vector<LayoutScore> scores = score_analytic(scenario, layouts, options, evaluate);

  std::vector<std::size_t> usable = usable_layouts(scores, result);
  std::map<std::size_t, std::vector<std::size_t>> same_as;
  if (options.collapse_identical) same_as = collapse_identical(usable, scores);
  result.distinct = static_cast<std::int64_t>(usable.size());

  const ScoredLayouts scored{layouts, scores, same_as, options.objective};
  result.top = top_layouts(scored, usable, options.top_k);
  if (options.event_rerank) rerank_by_events(result.top, scored, scenario, options.threads, evaluate);
  result.pareto = pareto_layouts(scored, usable);
  score_given(scenario, scored, usable, evaluate, result);
  return result;
}

}  // namespace trainsim::scenario
