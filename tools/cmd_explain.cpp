// `trainsim explain S.yaml`: the parameter count, FLOPs per token, attention kernel, optimizer costs, the
// memory per GPU of every pipeline stage and the time of one iteration on the critical stage, with the
// formula and numbers behind each line, and why the layout does not fit when it does not. Text by default;
// --json for the same lines as data; --ops adds one layer's ops, each alone.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "scenarios/framework_choice.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/studies/scenario_explanation.hpp"
#include "tools/command.hpp"
#include "tools/set_option.hpp"

namespace trainsim::cli {

void add_explain_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::string path;
    bool json = false;
    bool ops = false;
    std::vector<std::string> sets;
  };
  auto options = std::make_shared<Options>();
  auto* sub = app.add_subcommand("explain",
                                 "show the memory breakdown per GPU and the time of one iteration with "
                                 "their formulas, and why a layout does not fit");
  sub->add_option("scenario", options->path, "scenario YAML file")->required();
  sub->add_flag("--json", options->json, "print the explanation as JSON");
  sub->add_flag("--ops", options->ops,
                "also list one layer's ops on one GPU, forward then backward: each kernel's time alone, its "
                "FLOPs or bytes, the rate it reaches and what bounds it, and each collective's time");
  add_set_option(*sub, options->sets);
  sub->callback([options, &exit_code] {
    const scenario::Scenario s = scenario::load_scenario_file(options->path, parse_sets(options->sets));
    if (const std::string note = scenario::unnamed_framework_note(s); !note.empty()) {
      std::cerr << "note: " << note << '\n';
    }
    const model::Explanation e = scenario::explain_scenario(s, {.ops = options->ops});
    if (options->json) {
      std::cout << scenario::explanation_json(e, 2) << '\n';
    } else {
      std::cout << "scenario " << s.name << "\n\n" << model::to_text(e);
    }
    exit_code = exit_ok;
  });
}

}  // namespace trainsim::cli
