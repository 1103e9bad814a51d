// `trainsim validate [PATH...] [--suite NAME]...`: run validation cases (scenarios with a `measured:` block),
// print predicted vs measured and the error per case, MAPE and worst case per metric, per source folder,
// per attention kernel, per framework ("(unnamed)" when a case names none) and per GPU; mark the cases whose
// layout does not fit in memory as written (still scored); exit 1 when a case is outside its tolerance or
// cannot be evaluated.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "models/step/step_simulator.hpp"
#include "scenarios/presets.hpp"
#include "scenarios/studies/validation_runner.hpp"
#include "tools/command.hpp"
#include "tools/set_option.hpp"

namespace trainsim::cli {

namespace {

struct ValidateArgs {
  std::vector<std::string> paths;
  std::vector<std::string> suites;
  std::string format = "table";
  int jobs = 0;
  std::string fidelity = "analytic";
  bool failures_only = false;
  std::vector<std::string> gpu_files;
  std::vector<std::string> sets;
  std::string settings_file;
};

}  // namespace

void add_validate_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ValidateArgs>();
  auto* sub =
      app.add_subcommand("validate",
                         "run validation cases (scenarios with a `measured:` block): predicted vs "
                         "measured, error per case, MAPE "
                         "per metric and per source; a case whose layout does not fit in memory as "
                         "written is still scored and marked (the table's 'does not fit' line, the "
                         "CSV's last column fits, the JSON's fits and unfit_reason); exit 1 if a case "
                         "is outside its tolerance");
  sub->add_option("paths", args->paths,
                  "case files or folders (searched recursively for *.yaml); default: every shipped case "
                  "(the suite 'all'), from any working directory");
  sub->add_option("--suite", args->suites,
                  "shipped cases by name, added to the paths (repeat for several): all, or a folder of the "
                  "shipped cases (korthikanti, megatron2020, published, vtrain-single, vtrain-multi, "
                  "collectives, moe-dispatch, moe-recipes; an unknown name lists them)")
      ->allow_extra_args(false);
  sub->add_option("--format", args->format, "output format")
      ->check(CLI::IsMember({"table", "csv", "json"}))
      ->capture_default_str();
  sub->add_option("-j,--jobs", args->jobs, "worker threads (0: one per core)")->check(CLI::Range(0, 4096));
  sub->add_option(
         "--fidelity", args->fidelity,
         "analytic (closed form, milliseconds per case: the default, so the whole set runs in seconds) "
         "or event (discrete-event simulation of each step)")
      ->check(CLI::IsMember({"analytic", "event"}))
      ->capture_default_str();
  sub->add_option(
         "--gpu", args->gpu_files,
         "GPU preset file(s) replacing, by name, the GPU of every case (e.g. the output of `trainsim "
         "calibrate`, checked before it is installed); repeat for several")
      ->allow_extra_args(false);
  add_set_option(*sub, args->sets)->allow_extra_args(false);
  sub->add_option("--settings", args->settings_file,
                  "a settings file: for named cases (by file stem), keys their runs set that the case files "
                  "do not state, each case's with its source (`cases: {NAME: {source: ..., set: {key.path: "
                  "value}}}`); every case it names must be among those run. Each case's settings are listed "
                  "under it (table), in the settings column (CSV) and field (JSON)")
      ->allow_extra_args(false);
  sub->add_flag("--failures-only", args->failures_only,
                "table format: list only the cases outside tolerance (the summary is always complete)");
  sub->callback([args, &exit_code] {
    const std::vector<std::string> files = scenario::validation_case_files(args->paths, args->suites);
    scenario::ValidationOptions options{.fidelity = model::parse_fidelity(args->fidelity),
                                        .jobs = args->jobs};
    for (const std::string& f : args->gpu_files)
      options.gpu_overrides.push_back(scenario::load_gpu_preset_file(f));
    options.overrides = parse_sets(args->sets);
    if (!args->settings_file.empty())
      options.settings = scenario::load_case_settings_for(args->settings_file, files);
    const std::vector<scenario::CaseResult> results = scenario::run_cases(files, options);
    const std::vector<scenario::GroupSummary> summary = scenario::summarize_cases(results);
    if (args->format == "csv") {
      std::cout << scenario::format_validation_csv(results);
    } else if (args->format == "json") {
      std::cout << scenario::format_validation_json(results, summary);
    } else {
      std::cout << scenario::format_validation_table(results, summary, args->failures_only);
    }
    bool all_passed = true;
    for (const scenario::CaseResult& r : results) all_passed = all_passed && r.passed();
    exit_code = all_passed ? exit_ok : exit_check_failed;
  });
}

}  // namespace trainsim::cli
