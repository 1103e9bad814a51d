// `trainsim search`: enumerate every parallel layout of the scenario's model on its cluster, rank them
// analytically, re-simulate the best K event by event, print the top K and the time-vs-cost Pareto front
// (see scenarios/studies/layout_search.hpp for what is enumerated and pruned). With --format csv|json (to
// -o FILE or standard output) each distinct layout of the two lists is one row: its keys spelled as the
// loader reads them (so `run S.yaml --set KEY=VALUE ...` re-runs it), then the summary's fields at the
// fidelity named in the row.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "models/report/summary.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/node_count_rules.hpp"
#include "scenarios/quantity.hpp"
#include "scenarios/studies/layout_search.hpp"
#include "scenarios/studies/search_rows.hpp"
#include "sim/error.hpp"
#include "sim/output_files.hpp"
#include "tools/command.hpp"
#include "tools/progress_bar.hpp"
#include "tools/set_option.hpp"

namespace trainsim::cli {

namespace {

struct SearchArgs {
  std::string scenario;
  std::string objective = "time";
  int top = 10;
  int threads = 0;
  std::vector<std::string> nodes;
  bool no_event = false;
  std::int64_t max_layouts = scenario::SearchOptions{}.max_layouts;
  std::vector<std::string> sets;
  std::string format = "table";
  std::string output;
};

/// A whole number of nodes written in --nodes, or an InputError naming it.
std::int64_t node_count(const std::string& text, const std::string& item) {
  const scenario::QuantityResult n =
      scenario::try_parse_count(text, 1, static_cast<double>(std::int64_t{1} << 40));
  if (!n.ok()) {
    throw InputError("--nodes " + item +
                     ": expected a node count (a whole number from 1) or a span A..B, got '" + text + "'");
  }
  return static_cast<std::int64_t>(n.value);
}

/// --nodes as node counts: each item a count, or a span A..B that doubles from A while it stays within B
/// (32..128: 32, 64, 128), so that a search compares cluster sizes a factor of two apart. Sorted, each once.
std::vector<std::int64_t> node_counts(const std::vector<std::string>& items) {
  std::vector<std::int64_t> out;
  for (const std::string& item : items) {
    const std::size_t dots = item.find("..");
    if (dots == std::string::npos) {
      out.push_back(node_count(item, item));
      continue;
    }
    const std::int64_t from = node_count(item.substr(0, dots), item);
    const std::int64_t to = node_count(item.substr(dots + 2), item);
    if (to < from) throw InputError("--nodes " + item + ": a span A..B needs A <= B");
    for (std::int64_t n = from; n <= to; n *= 2) out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

// ZeRO-3 holding the weights gathered for the forward until the backward (FSDP's SHARD_GRAD_OP).
bool keeps_weights(const model::ParallelPlan& p) {
  return p.zero == model::ZeroStage::parameters && !p.framework.reshard_after_forward;
}

std::string layout_words(const model::ParallelPlan& p) {
  std::string words = fmt::format("tp {}, pp {}, dp {}, cp {}, ep {}, micro-batch {}, {}", p.tp, p.pp, p.dp,
                                  p.cp, p.ep, p.micro_batch, to_string(p.schedule));
  if (p.schedule == model::Schedule::interleaved) words += fmt::format("/{}", p.virtual_stages);
  words += fmt::format(", zero {}", model::to_string(p.zero));
  if (keeps_weights(p)) words += " (weights kept to the backward)";
  return words + ", recompute " + scenario::recompute_to_yaml(p);
}

// The table's recompute cell: the mode, or "modules" for a per-module selective recompute (the modules
// named once below the table, as they are too wide for the column).
std::string recompute_cell(const model::ParallelPlan& p) {
  const std::string yaml = scenario::recompute_to_yaml(p);
  return yaml.starts_with('{') ? "modules" : yaml;
}

/// Why the Pareto front is empty: nothing fits, or what the budget asks that no usable layout gives.
std::string empty_front_reason(const scenario::SearchResult& r, const model::BudgetSpec& budget) {
  using model::FieldUnit;
  using model::format_human;
  if (r.usable == 0) {
    return fmt::format(
        "no layout fits with {:.1f} % of HBM left free (memory headroom) and is feasible: `trainsim explain` "
        "the scenario's own layout shows what fills the memory; more GPUs (--nodes) or a smaller headroom "
        "(budget.memory_headroom) widen the search",
        r.memory_headroom * 100);
  }
  std::string out = fmt::format("none of the {} usable layouts meets the budget:", r.usable);
  if (budget.deadline_s && r.fastest_run_time_s > *budget.deadline_s) {
    out += fmt::format(" the fastest runs {}, past budget.deadline {};",
                       format_human(FieldUnit::seconds, r.fastest_run_time_s),
                       format_human(FieldUnit::seconds, *budget.deadline_s));
  }
  if (budget.max_cost_usd && r.cheapest_cost_usd > *budget.max_cost_usd) {
    out += fmt::format(" the cheapest costs {}, over budget.max_cost {};",
                       format_human(FieldUnit::usd, r.cheapest_cost_usd),
                       format_human(FieldUnit::usd, *budget.max_cost_usd));
  }
  if (out.back() == ':') out += " no single layout meets the deadline and the cost together;";
  return out + " the top layouts above are the closest (--nodes tries other cluster sizes)";
}

std::string table(const std::vector<scenario::RankedLayout>& rows, int gpus_per_node) {
  using model::FieldUnit;
  using model::format_human;
  std::string out = fmt::format(
      "{:>4} {:>6} {:>3} {:>3} {:>5} {:>3} {:>3} {:>3} {:<15} {:>4} {:<9} {:>10} {:>10} {:>6} "
      "{:>10} {:>10} {:<8} {:<6} {}\n",
      "#", "gpus", "tp", "pp", "dp", "cp", "ep", "mb", "schedule", "zero", "recompute", "iteration", "memory",
      "mfu", "run_time", "cost", "fidelity", "budget", "same results with");
  int rank = 0;
  bool kept = false;
  bool fsdp = false;
  std::vector<std::string> module_lists;  // the per-module recomputes the rows name "modules"
  for (const auto& row : rows) {
    const model::ParallelPlan& p = row.layout.plan;
    kept = kept || keeps_weights(p);
    if (const std::string yaml = scenario::recompute_to_yaml(p);
        yaml.starts_with('{') &&
        std::find(module_lists.begin(), module_lists.end(), yaml) == module_lists.end())
      module_lists.push_back(yaml);
    // The scenario names no framework and this layout chose one other than Megatron-Core.
    const bool chosen_fsdp =
        row.layout.framework_chosen && p.framework.preset != model::FrameworkPreset::megatron_core;
    fsdp = fsdp || chosen_fsdp;
    std::string zero =
        std::string(model::to_string(p.zero)) + (keeps_weights(p) ? "*" : "") + (chosen_fsdp ? "+" : "");
    if (p.shard_group > 0) zero += fmt::format("/{}", p.shard_group);
    const scenario::LayoutScore& s = row.best();
    const std::string schedule = p.schedule == model::Schedule::interleaved
                                     ? fmt::format("interleaved/{}", p.virtual_stages)
                                     : std::string(to_string(p.schedule));
    out += fmt::format(
        "{:>4} {:>6} {:>3} {:>3} {:>5} {:>3} {:>3} {:>3} {:<15} {:>4} {:<9} {:>10} {:>10} {:>6} {:>10} "
        "{:>10} {:<8} {:<6} {}\n",
        ++rank, row.layout.nodes * gpus_per_node, p.tp, p.pp, p.dp, p.cp, p.ep, p.micro_batch, schedule, zero,
        recompute_cell(p), format_human(FieldUnit::seconds, s.step.iteration_time),
        format_human(FieldUnit::bytes, s.step.memory_per_gpu), format_human(FieldUnit::fraction, s.step.mfu),
        format_human(FieldUnit::seconds, s.run_time_s), format_human(FieldUnit::usd, s.cost_usd),
        row.event ? "event" : "analytic", s.meets_budget() ? "ok" : "missed",
        scenario::same_results_words(row));
  }
  if (kept)
    out +=
        "   * ZeRO-3 keeping the gathered weights to the backward (framework.reshard_after_forward: false)\n";
  if (fsdp)
    out +=
        "   + priced as PyTorch FSDP1 (framework: fsdp1): the scenario names no framework, and ZeRO 2-3\n"
        "     without tp, pp or cp is FSDP's layout; name one to price every layout alike\n";
  for (const std::string& modules : module_lists)
    out += "   modules: selective recompute of the scenario's modules (parallelism.recompute: " + modules +
           ")\n";
  return out;
}

}  // namespace

void add_search_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SearchArgs>();
  auto* sub = app.add_subcommand(
      "search", "enumerate and rank every parallel layout; print the time-vs-cost Pareto front");
  sub->add_option("scenario", args->scenario, "scenario file (its model, cluster and training)")->required();
  sub->add_option("--objective", args->objective, "rank by run time or run cost (default: time)")
      ->check(CLI::IsMember({"time", "cost"}));
  sub->add_option("--top", args->top, "layouts re-simulated event by event and printed (default 10)")
      ->check(CLI::Range(0, 4096));
  sub->add_option("-j,--jobs", args->threads, "threads (default: all cores)")->check(CLI::Range(0, 4096));
  sub->add_option("--nodes", args->nodes,
                  "node counts to consider, comma-separated; A..B doubles from A up to B (32..128: 32, 64, "
                  "128), so the Pareto front trades time against cost across cluster sizes (default: the "
                  "scenario's count)")
      ->delimiter(',');
  sub->add_flag("--no-event", args->no_event, "rank with the analytic fidelity only");
  sub->add_option(
         "--max-layouts", args->max_layouts,
         fmt::format("score at most this many layouts, an evenly spaced subset beyond it (default {})",
                     args->max_layouts))
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
  add_set_option(*sub, args->sets);
  sub->add_option("--format", args->format,
                  "table (default), or csv / json: one row per distinct layout of the top K and the Pareto "
                  "front, keys spelled as --set takes them")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  sub->add_option("-o,--output", args->output,
                  "write the csv / json rows to this file (default: standard output)");
  sub->callback([args, &exit_code] {
    if (!args->output.empty() && args->format == "table") {
      throw InputError("search -o writes rows: add --format csv or --format json");
    }
    const scenario::Scenario s = scenario::load_scenario_file(args->scenario, parse_sets(args->sets));
    scenario::SearchOptions options;
    options.objective = args->objective == "cost" ? scenario::Objective::cost : scenario::Objective::time;
    options.top_k = args->top;
    options.threads = args->threads;
    options.event_rerank = !args->no_event;
    options.space.nodes = node_counts(args->nodes);
    for (const std::int64_t n : options.space.nodes) {
      if (const std::string problem = scenario::node_count_problem(s, n); !problem.empty())
        throw InputError(fmt::format("--nodes {}: {}", n, problem));
    }
    options.max_layouts = args->max_layouts;
    std::unique_ptr<ProgressBar> bar;
    options.progress = [&bar](std::int64_t done, std::int64_t total) {
      if (!bar) bar = std::make_unique<ProgressBar>(total, stderr_is_terminal());
      bar->update(done);
    };
    const auto start = std::chrono::steady_clock::now();
    const scenario::SearchResult r = scenario::search_layouts(s, options);
    if (bar) bar->finish();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const int gpn = s.cluster.gpus_in_use_per_node();
    // Rows to standard output keep it machine-readable: the words go to standard error then.
    const bool rows_to_stdout = args->format != "table" && args->output.empty();
    std::ostream& words = rows_to_stdout ? std::cerr : std::cout;
    words << fmt::format("{}: {} layouts divide, {} fit and are feasible ({:.2f} s); {} distinct answers\n",
                         s.name, r.enumerated, r.usable, seconds, r.distinct);
    const double hbm = s.cluster.node.gpu.hbm_bytes;
    words << fmt::format(
        "Every layout leaves {} of {} HBM free per GPU ({:.1f} %){}\n",
        model::format_human(model::FieldUnit::bytes, r.memory_headroom * hbm),
        model::format_human(model::FieldUnit::bytes, hbm), r.memory_headroom * 100,
        r.default_headroom
            ? ": the default memory headroom for what real jobs lose (CUDA context, NCCL buffers, "
              "allocator fragmentation; `trainsim explain` lists each with its source); set "
              "budget.memory_headroom to change it"
            : " (budget.memory_headroom)");
    if (s.budget.deadline_s || s.budget.max_cost_usd) {
      words << fmt::format("{} of them meet the budget; those that miss it rank after them and are marked\n",
                           r.within_budget);
    }
    if (r.stride > 1) {
      words << fmt::format(
          "stopped short: scored {} of {} layouts (one in {}, --max-layouts {}); raise --max-layouts to "
          "score them all\n",
          r.scored, r.enumerated, r.stride, args->max_layouts);
    }
    const scenario::LayoutScore& own = r.given.analytic;
    words << "The scenario's own layout (" << layout_words(r.given.layout.plan) << "): "
          << (own.usable() ? fmt::format("would rank {} of {}, run time {}, cost {} (analytic)", r.given_rank,
                                         r.distinct + 1,
                                         model::format_human(model::FieldUnit::seconds, own.run_time_s),
                                         model::format_human(model::FieldUnit::usd, own.cost_usd))
                           : "not usable: " + first_line(own.step.reason))
          << "\n";
    if (args->format == "table") {
      std::cout << fmt::format("\nTop {} by run {}:\n", r.top.size(), args->objective) << table(r.top, gpn);
      std::cout << fmt::format(
                       "\nPareto front, run time vs run cost ({} layouts meeting the budget, analytic):\n",
                       r.pareto.size())
                << table(r.pareto, gpn);
      if (r.pareto.empty()) std::cout << "   (empty) " << empty_front_reason(r, s.budget) << "\n";
      if (options.space.nodes.size() <= 1 && !r.pareto.empty()) {
        // On one cluster size every layout pays the same GPUs per second: the cheapest is the fastest.
        const std::int64_t n = s.cluster.nodes;
        std::cout << fmt::format(
            "   one node count: cost follows time; --nodes {}..{} compares cluster sizes\n",
            std::max<std::int64_t>(1, n / 2), 2 * n);
      }
    } else {
      if (r.pareto.empty()) words << "Pareto front empty: " << empty_front_reason(r, s.budget) << "\n";
      const std::vector<model::Summary> rows = scenario::search_rows(r, s);
      const std::string text =
          args->format == "csv" ? scenario::search_rows_csv(rows) : scenario::search_rows_json(rows);
      if (rows_to_stdout) {
        std::cout << text;
      } else {
        sim::write_file_atomically(args->output, text);
        std::cout << fmt::format("wrote {} layouts to {}\n", rows.size(), args->output);
      }
    }
    exit_code = r.usable > 0 ? exit_ok : exit_check_failed;
  });
}

}  // namespace trainsim::cli
