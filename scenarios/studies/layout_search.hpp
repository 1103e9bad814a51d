#pragma once
// Layout search (`trainsim search`): enumerate every parallel layout of a scenario's model on its cluster,
// prune what does not divide, rank the rest with the analytic fidelity (dropping what does not fit), re-rank
// the best K with the event fidelity, and report the Pareto front of run time vs run cost.
//
// What a layout is: tp, pp, cp, ep, dp (= GPUs / (tp·pp·cp·ep)), micro_batch, schedule (+ virtual stages
// for interleaved), ZeRO stage (and for ZeRO ≥ 1 its sharding group: all dp ranks, or one node's, HSDP) and
// recompute. Everything else (sequence_parallel, overlap, bucket, rank order) is copied from the scenario's
// `parallelism:` block, and the framework's flags from its `framework:` block. Candidates: tp divides the
// GPUs per node (TP stays inside NVLink); every pp up to the layer count, stages as even as
// split_pipeline_layers makes them (as `run` lays them without stage_layers); interleaved: 2 <= v <=
// max_virtual_stages; cp a power of two up to max_cp; ep divides experts (MoE only); dp = GPUs /
// (tp·pp·cp·ep); micro_batch divides the per-replica batch, up to max_micro_batch. Of those, only the layouts
// that break no rule of models/step/layout_rules.hpp (the rules `run` loads with) are listed. Dense models
// enumerate ep = 1 only; models with pp = 1 enumerate one schedule (1f1b) since the others are identical
// without a pipeline. A MoE scenario whose framework is megatron-core with ep_comm_overlap is offered only
// the layouts Megatron-Core runs that overlap in (models/step/layout_rules.hpp's runs_megatron_ep_overlap):
// ep > 1, no pipeline or an interleaved one, no full recompute and no `moe` among the recomputed modules.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/run/run_report.hpp"
#include "models/spec/parallel_plan.hpp"
#include "models/step/step_report.hpp"
#include "models/step/step_simulator.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/scenario.hpp"

namespace trainsim::scenario {

enum class Objective { time, cost };

/// What to enumerate. Defaults: every sensible choice on the scenario's cluster size.
struct LayoutSpace {
  std::vector<std::int64_t> nodes;  ///< node counts to try; empty: the scenario's cluster.nodes
  int max_cp = 8;                   ///< context-parallel degrees 1, 2, 4, … up to this
  int max_micro_batch = 8;          ///< micro-batch sizes: divisors of the per-replica batch up to this
  int max_virtual_stages = 8;       ///< interleaved: virtual stages 2 … this
  std::vector<model::Schedule> schedules = {model::Schedule::gpipe, model::Schedule::one_f_one_b,
                                            model::Schedule::zero_bubble_h1, model::Schedule::interleaved};
  std::vector<model::ZeroStage> zero_stages = {model::ZeroStage::none, model::ZeroStage::optimizer_states,
                                               model::ZeroStage::gradients, model::ZeroStage::parameters};
  /// For ZeRO ≥ 1 also try HSDP: state sharded within the data-parallel ranks of one node
  /// (parallelism.shard_group), replicated across nodes.
  bool hsdp = true;
  /// For ZeRO-3 also try keeping the weights gathered for the forward until the backward (FSDP's
  /// SHARD_GRAD_OP, framework.reshard_after_forward false): one gather per micro-batch instead of two, for
  /// the memory of the gathered units.
  bool zero3_keep_weights = true;
  std::vector<model::Recompute> recompute = {model::Recompute::none, model::Recompute::selective,
                                             model::Recompute::full};
};

/// One candidate: a node count and a layout on it.
struct Layout {
  std::int64_t nodes = 0;
  /// The scenario's plan with the layout's degrees; its framework is the one the layout implies when the
  /// scenario names none (scenarios/framework_choice.hpp).
  model::ParallelPlan plan;
  /// plan.framework was chosen by the layout: the scenario names no framework.
  bool framework_chosen = false;
};

/// The layout as the loader's keys, in the order of the scenario's blocks (cluster.nodes, then
/// parallelism.tp, pp, dp, cp, ep, expert_folding, expert_tp, micro_batch, schedule, virtual_stages, zero,
/// shard_group, recompute, then framework.preset and framework.reshard_after_forward), each value spelled as
/// the loader reads it; an empty value is a key to leave unset (shard_group without HSDP, the preset of a
/// scenario that names its framework, reshard_after_forward below ZeRO-3).
/// `run S.yaml --set KEY=VALUE ...` with the others re-runs the layout.
[[nodiscard]] std::vector<Override> layout_settings(const Layout& layout);

/// Every layout that passes the divisibility rules above, in a deterministic order
/// (nodes, tp, pp, cp, ep, micro_batch, schedule, virtual stages, zero, shard group, ZeRO-3 resharding
/// (resharded first), recompute — each ascending).
[[nodiscard]] std::vector<Layout> enumerate_layouts(const Scenario& scenario, const LayoutSpace& space = {});

/// A layout's score: its step report and the whole-run figures the objectives use.
struct LayoutScore {
  model::StepReport step;
  model::RunReport run;   ///< the whole run (its budget_violations against the scenario's budget:)
  double run_time_s = 0;  ///< wall clock of the whole run (SPEC run_time)
  double cost_usd = 0;    ///< SPEC cost_total
  [[nodiscard]] bool usable() const { return step.feasible && step.fits; }
  [[nodiscard]] bool meets_budget() const { return run.budget_violations.empty(); }
};

/// Scores a layout at a fidelity. The default (default_layout_evaluator) runs model::simulate_step and the
/// run model on the scenario with the layout's nodes and plan substituted; a layout that does not fit in
/// memory is not timed (its step report has the memory and the reason, its time figures are 0), since
/// nothing the search reports uses the time of a layout that is not usable. Must be thread-safe.
using LayoutEvaluator = std::function<LayoutScore(const Scenario&, const Layout&, model::Fidelity)>;
[[nodiscard]] LayoutScore default_layout_evaluator(const Scenario& scenario, const Layout& layout,
                                                   model::Fidelity fidelity);

struct SearchOptions {
  Objective objective = Objective::time;
  /// At most this many layouts are scored: beyond it an evenly spaced subset (every k-th in enumeration
  /// order), and SearchResult says so. The default scores in well under a minute on two cores.
  std::int64_t max_layouts = 200'000;
  int top_k = 10;            ///< layouts re-simulated with the event fidelity and reported
  int threads = 0;           ///< 0: all cores
  bool event_rerank = true;  ///< false: report the analytic ranking only
  LayoutSpace space;
  /// Layouts whose analytic figures (iteration time, memory per GPU, run time, cost) are identical are one
  /// answer: the first in enumeration order is ranked and lists the others (RankedLayout::same_results), so
  /// the top K are K different answers. false: every layout is its own row.
  bool collapse_identical = true;
  /// Fraction of HBM every layout must leave free; none: the scenario's budget.memory_headroom, or when it
  /// gives none the default of models/step/memory_headroom.hpp (what real jobs lose beyond the model).
  std::optional<double> memory_headroom;
  /// Called with (layouts scored, layouts to score) as the analytic pass advances, from one thread at a
  /// time; empty: no reports. The CLI draws its progress bar with it.
  std::function<void(std::int64_t, std::int64_t)> progress;
};

struct RankedLayout {
  Layout layout;
  LayoutScore analytic;
  std::optional<LayoutScore> event;  ///< set for the top K when event_rerank
  /// Other layouts with identical analytic figures (SearchOptions::collapse_identical), enumeration order.
  std::vector<Layout> same_results;
  /// The score the final ranking used: event when present, else analytic.
  [[nodiscard]] const LayoutScore& best() const { return event ? *event : analytic; }
};

struct SearchResult {
  std::int64_t enumerated = 0;  ///< layouts that divide
  std::int64_t scored = 0;      ///< of those, scored: all, or every `stride`-th (max_layouts)
  std::int64_t stride = 1;
  std::int64_t usable = 0;         ///< of the scored, feasible and fitting (analytic)
  std::int64_t within_budget = 0;  ///< of those, meeting the scenario's budget (deadline, cost)
  std::int64_t distinct = 0;  ///< usable layouts left once identical results are one (collapse_identical)
  /// The headroom every layout had to leave free, as a fraction of HBM, and whether it is the default
  /// (the scenario gave no budget.memory_headroom).
  double memory_headroom = 0;
  bool default_headroom = false;
  /// Among the usable layouts: the shortest run time and the lowest cost (0 when none is usable), to say
  /// why no layout meets the budget.
  double fastest_run_time_s = 0;
  double cheapest_cost_usd = 0;
  /// Best K: those meeting the budget first, each part by the objective (ties: enumeration order).
  std::vector<RankedLayout> top;
  /// Analytic Pareto front of (run_time_s, cost_usd) among the layouts meeting the budget, by run time.
  std::vector<RankedLayout> pareto;
  /// The scenario's own layout, scored analytically, and where it would rank among the usable layouts
  /// (1 = better than all; 0 when it is not usable itself).
  RankedLayout given;
  std::int64_t given_rank = 0;
};

/// The keys of layout_settings whose values differ among `entry` and its same_results, each as
/// "parallelism.recompute none/selective": the knobs that do not change the answer. Empty when it stands
/// alone.
[[nodiscard]] std::vector<std::string> knobs_that_do_not_matter(const RankedLayout& entry);

/// Runs the search. Deterministic for a given scenario and options (independent of `threads`).
[[nodiscard]] SearchResult search_layouts(const Scenario& scenario, const SearchOptions& options,
                                          const LayoutEvaluator& evaluate = default_layout_evaluator);

/// Indices (into `points`) of the points no other point beats on both coordinates (minimising both),
/// sorted by the first coordinate; exact duplicates keep the first.
[[nodiscard]] std::vector<std::size_t> pareto_front(const std::vector<std::pair<double, double>>& points);

}  // namespace trainsim::scenario
