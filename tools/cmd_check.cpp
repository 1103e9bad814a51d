// `trainsim check S.yaml...`: check that scenarios load (every key, unit, preset and divisibility the file
// alone decides) and print a one-line summary of each; exit 2 with every problem on bad input.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "models/workload/parameters.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/studies/region_sweep.hpp"
#include "scenarios/studies/sweep.hpp"
#include "sim/error.hpp"
#include "tools/command.hpp"
#include "tools/set_option.hpp"

namespace trainsim::cli {
namespace {

std::string run_length(const scenario::Scenario& s) {
  const model::TrainingSpec& t = s.training;
  if (s.convergence) return fmt::format("to loss {:.4g}", s.convergence->target_loss);
  if (t.tokens) return fmt::format("{:.4g} tokens", *t.tokens);
  if (t.steps) return fmt::format("{} steps", *t.steps);
  if (t.epochs) return fmt::format("{:.4g} epochs of {:.4g} tokens", *t.epochs, t.dataset_tokens.value_or(0));
  return "no run length";
}

std::string summary_line(const scenario::Scenario& s) {
  const auto& p = s.parallelism;
  return fmt::format(
      "ok: {}: model {} ({} layers, hidden {}, {:.4g}B params), {} GPUs ({} x {}), "
      "tp {} pp {} dp {} cp {} ep {}, global batch {}, {}, {}{}",
      s.name, s.model.name, s.model.layers, s.model.hidden, model::parameter_count(s.model) / 1e9,
      s.cluster.total_gpus(), s.cluster.nodes, s.cluster.node.name, p.tp, p.pp, p.dp, p.cp, p.ep,
      s.training.global_batch, topo::to_string(s.training.precision), run_length(s),
      s.sweep.empty()
          ? ""
          : fmt::format(", sweep of {} keys, {} points", s.sweep.axes.size(), scenario::sweep_size(s.sweep)));
}

// A sweep over pricing.region is checked as `sweep` checks it (scenarios/studies/region_sweep.hpp), so that
// check passes only what sweep would run: the error when every row would differ in the region's name only,
// the note on stderr otherwise.
void check_region_axis(const std::string& file, const std::vector<scenario::Override>& overrides,
                       const scenario::Scenario& s) {
  if (s.sweep.empty()) return;
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  const std::string note = scenario::check_region_sweep(text.str(), file, overrides, s.sweep);
  if (!note.empty()) std::cerr << "note: " << note << '\n';
}

}  // namespace

void add_check_command(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("check", "check that scenario files load; print a one-line summary of each");
  static std::vector<std::string> files;
  static std::vector<std::string> sets;
  static bool dump = false;
  sub->add_option("scenario", files, "scenario YAML file(s)")->required();
  add_set_option(*sub, sets);
  sub->add_flag("--dump", dump,
                "print the loaded scenario back as YAML (presets expanded, defaults explicit)");
  sub->callback([&exit_code] {
    const std::vector<scenario::Override> overrides = parse_sets(sets);
    if (files.size() == 1) {
      // One file: bad input propagates to main, which prints it and exits 2.
      const scenario::Scenario s = scenario::load_scenario_file(files.front(), overrides);
      check_region_axis(files.front(), overrides, s);
      std::cout << (dump ? scenario::dump_scenario(s) : summary_line(s) + "\n");
      return;
    }
    // Several files: check them all, report every problem, exit 2 if any failed.
    for (const auto& file : files) {
      try {
        const scenario::Scenario s = scenario::load_scenario_file(file, overrides);
        check_region_axis(file, overrides, s);
        std::cout << (dump ? scenario::dump_scenario(s) : summary_line(s) + "\n");
      } catch (const InputError& e) {
        std::cerr << "error: " << e.what() << '\n';
        exit_code = exit_bad_input;
      }
    }
  });
}

}  // namespace trainsim::cli
