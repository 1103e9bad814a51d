// `trainsim compare A.yaml B.yaml … [-o page.html]`: simulate each scenario (the same --set applied to all)
// and put them side by side: time, cost, $ per million tokens, memory headroom, what bounds each and the
// error band of its figures (report/compare_page.hpp). Prints a table; -o also writes the HTML page.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "models/report/run_labels.hpp"
#include "models/step/memory_headroom.hpp"
#include "report/compare_page.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/studies/error_band.hpp"
#include "scenarios/studies/simulation.hpp"
#include "sim/error.hpp"
#include "sim/output_files.hpp"
#include "tools/command.hpp"
#include "tools/set_option.hpp"

namespace trainsim::cli {

void add_compare_command(CLI::App& app, int& exit_code) {
  struct Args {
    std::vector<std::string> scenarios;
    std::string output;
    std::string fidelity = "event";
    std::vector<std::string> sets;
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand("compare",
                                 "simulate several scenarios and put them side by side: time, cost, $ per "
                                 "million tokens, memory headroom, what bounds each, error band");
  sub->add_option("scenarios", args->scenarios, "two or more scenario files")->required()->expected(2, 64);
  sub->add_option("-o,--output", args->output, "also write the comparison as a self-contained HTML page");
  sub->add_option("--fidelity", args->fidelity, "event (default) or analytic")
      ->check(CLI::IsMember({"analytic", "event"}));
  add_set_option(*sub, args->sets);
  sub->callback([args, &exit_code] {
    const model::Fidelity fidelity = model::parse_fidelity(args->fidelity);
    std::vector<report::CompareOption> options;
    for (const std::string& path : args->scenarios) {
      const scenario::Scenario s = scenario::load_scenario_file(path, parse_sets(args->sets));
      const scenario::ScenarioResult r = scenario::simulate_scenario(s, fidelity);
      report::CompareOption o;
      o.name = s.name;
      o.hardware = fmt::format("{} x {}", s.cluster.total_gpus(), s.cluster.node.gpu.name);
      o.summary = scenario::run_summary(s, fidelity, r);
      const double hbm = s.cluster.node.gpu.hbm_bytes;
      o.headroom_needed = model::headroom_fraction_or_default(s.budget.headroom_fraction(hbm), hbm) * hbm;
      options.push_back(std::move(o));
    }
    std::cout << report::compare_text(options);
    if (!args->output.empty()) {
      sim::write_file_atomically(args->output, report::compare_report_html(options));
      std::cout << "wrote " << args->output << "\n";
    }
    exit_code = exit_ok;
  });
}

}  // namespace trainsim::cli
