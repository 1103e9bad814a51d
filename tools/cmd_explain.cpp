// `trainsim explain S.yaml`: the parameter count, FLOPs per token, attention kernel, optimizer costs, the
// memory per GPU of every pipeline stage and the time of one iteration on the critical stage, with the
// formula and numbers behind each line, and why the layout does not fit when it does not. Text by default;
// --json for the same lines as data.
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/report/explain.hpp"
#include "models/report/explain_campaign.hpp"
#include "models/report/explain_headroom.hpp"
#include "models/report/explain_time.hpp"
#include "scenarios/framework_choice.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/studies/simulation.hpp"
#include "tools/command.hpp"
#include "tools/set_option.hpp"

namespace trainsim::cli {
namespace {

nlohmann::json to_json(const model::Explanation& e) {
  nlohmann::json sections = nlohmann::json::array();
  for (const auto& s : e.sections) {
    nlohmann::json lines = nlohmann::json::array();
    for (const auto& l : s.lines) {
      lines.push_back({{"label", l.label}, {"formula", l.formula}, {"value", l.value}, {"unit", l.unit}});
    }
    sections.push_back({{"title", s.title}, {"lines", lines}, {"notes", s.notes}});
  }
  return {{"fits", e.fits}, {"reason", e.reason}, {"sections", sections}};
}

}  // namespace

void add_explain_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string path;
    bool json = false;
    std::vector<std::string> sets;
  };
  auto options = std::make_shared<Options>();
  auto* sub = app.add_subcommand("explain",
                                 "show the memory breakdown per GPU and the time of one iteration with "
                                 "their formulas, and why a layout does not fit");
  sub->add_option("scenario", options->path, "scenario YAML file")->required();
  sub->add_flag("--json", options->json, "print the explanation as JSON");
  add_set_option(*sub, options->sets);
  sub->callback([options, &exit_code] {
    const scenario::Scenario s = scenario::load_scenario_file(options->path, parse_sets(options->sets));
    if (const std::string note = scenario::unnamed_framework_note(s); !note.empty()) {
      std::cerr << "note: " << note << '\n';
    }
    const double hbm = s.cluster.node.gpu.hbm_bytes;
    const std::optional<double> headroom = s.budget.headroom_fraction(hbm);
    model::Explanation e =
        model::explain(s.model, s.parallelism, s.training, s.cluster.node.gpu, headroom.value_or(0.0));
    if (!e.sections.empty() && e.memory_per_gpu > 0)
      e.sections.push_back(model::explain_headroom(headroom, e.memory_per_gpu, hbm));
    e.sections.push_back(model::explain_time(scenario::step_input_of(s)));
    if (s.convergence) {
      e.sections.push_back(model::explain_convergence(s.model, s.training.global_batch, *s.convergence));
    }
    if (s.tuning) e.sections.push_back(model::explain_tuning(*s.tuning));
    if (options->json) {
      std::cout << to_json(e).dump(2) << '\n';
    } else {
      std::cout << "scenario " << s.name << "\n\n" << model::to_text(e);
    }
    exit_code = exit_ok;
  });
}

}  // namespace trainsim::cli
