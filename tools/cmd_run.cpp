// `trainsim run S.yaml`: load a scenario, simulate one step (event-driven by default) and the whole run
// around it, print the summary (SPEC "Outputs") as a table or JSON; with -o DIR also write summary.json,
// trace.json (Chrome/Perfetto trace of the step: a process per pipeline stage, a thread per stream; at the
// analytic fidelity the closed form's timeline in the same layout) and run.csv (the run's timeline). Exit 1
// when the layout is infeasible, does not fit in memory, or a budget check fails (the summary is printed
// first in every case).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "models/report/run_labels.hpp"
#include "models/report/summary.hpp"
#include "models/run/run_timeline.hpp"
#include "models/step/event_graph_limits.hpp"
#include "models/step/step_simulator.hpp"
#include "scenarios/loader.hpp"
#include "scenarios/studies/error_band.hpp"
#include "scenarios/studies/simulation.hpp"
#include "sim/error.hpp"
#include "sim/gzip.hpp"
#include "sim/output_files.hpp"
#include "sim/trace.hpp"
#include "tools/command.hpp"
#include "tools/set_option.hpp"

namespace trainsim::cli {

namespace {

struct RunArgs {
  std::string scenario;
  std::string out_dir;
  std::string format = "table";
  std::string fidelity = "event";
  bool dump = false;
  std::vector<std::string> sets;
  std::string trace_detail;  // "" = pass above kPassDetailGpus GPUs, else layer
  bool gzip = false;
  bool full_cluster = false;
};

// Above this many GPUs the trace is per pass by default: a layer-level trace of a 1,024-GPU step holds
// hundreds of thousands of slices (tens of MB).
constexpr std::int64_t kPassDetailGpus = 256;

int run(const RunArgs& args) {
  const scenario::Scenario s = scenario::load_scenario_file(args.scenario, parse_sets(args.sets));
  if (args.dump) {
    std::cout << scenario::dump_scenario(s);
    return exit_ok;
  }
  const model::Fidelity fidelity = model::parse_fidelity(args.fidelity);
  model::StepOptions options;
  if (args.full_cluster && fidelity != model::Fidelity::event) {
    throw InputError("--full-cluster simulates events: it needs --fidelity event");
  }
  if (args.full_cluster) options.mode = model::StepMode::full_cluster;
  // -o DIR: summary.json, trace.json and run.csv appear together or not at all, and none of an earlier
  // run's files stays beside them.
  sim::OutputFiles outputs;
  const std::filesystem::path dir(args.out_dir);
  sim::ChromeTraceWriter trace;
  if (!args.out_dir.empty()) {
    sim::ensure_output_folder(dir);
    outputs.remove_on_commit(dir / (args.gzip ? "trace.json" : "trace.json.gz"));  // never both
    const bool pass =
        args.trace_detail.empty() ? s.cluster.total_gpus() > kPassDetailGpus : args.trace_detail == "pass";
    options.trace_detail =
        pass ? model::StepOptions::TraceDetail::pass : model::StepOptions::TraceDetail::layer;
    options.trace = &trace;
  }
  for (const std::string& note : scenario::run_notes(s)) std::cerr << "note: " << note << '\n';
  const scenario::ScenarioResult result = scenario::simulate_scenario(s, fidelity, options);
  const model::StepReport& step = result.step;
  const model::RunReport& run = result.run;

  // With how far predictions of runs like this one were from their measurements
  // (scenarios/studies/error_band.hpp).
  const model::Summary summary = scenario::run_summary(s, fidelity, result);
  if (args.format == "json") {
    std::cout << model::to_json(summary, 2) << '\n';
  } else {
    std::cout << model::format_table(summary);
  }
  if (!args.out_dir.empty()) {
    outputs.stage(dir / "summary.json", model::to_json(summary, 2) + "\n");
    const std::filesystem::path trace_file = dir / (args.gzip ? "trace.json.gz" : "trace.json");
    if (step.feasible) {
      const std::string text = trace.str();
      outputs.stage(trace_file, args.gzip ? sim::gzip(text) : text);
      outputs.stage(dir / "run.csv",
                    model::timeline_csv(model::run_timeline(run, run.recovery_time), s.tags));
    } else {
      outputs.remove_on_commit(trace_file);
      outputs.remove_on_commit(dir / "run.csv");
    }
    outputs.commit();
  }
  if (!step.feasible) {
    std::cerr << "infeasible layout: " << step.reason << '\n';
    return exit_check_failed;
  }
  if (!step.fits) std::cerr << "does not fit: " << step.reason << '\n';
  for (const auto& v : run.budget_violations) std::cerr << "budget: " << v << '\n';
  return run.budget_violations.empty() && step.fits ? exit_ok : exit_check_failed;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<RunArgs>();
  auto* sub =
      app.add_subcommand("run", "simulate one scenario: iteration time, memory per GPU, run time and cost");
  sub->add_option("scenario", args->scenario, "scenario file (YAML)")->required();
  sub->add_option("-o,--output", args->out_dir,
                  "write summary.json, trace.json and run.csv into this folder");
  sub->add_option("--format", args->format, "how to print the summary")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  sub->add_option("--fidelity", args->fidelity,
                  "event (discrete-event simulation of the step, the default) or analytic (closed form)")
      ->check(CLI::IsMember({"analytic", "event"}))
      ->capture_default_str();
  sub->add_flag("--dump-scenario", args->dump,
                "print the loaded scenario (presets expanded) as YAML and stop");
  add_set_option(*sub, args->sets);
  sub->add_option("--trace-detail", args->trace_detail,
                  fmt::format("slices of the event trace: layer (every kernel run and collective) or pass "
                              "(one per pass and stream); default pass above {} GPUs, else layer",
                              kPassDetailGpus))
      ->check(CLI::IsMember({"layer", "pass"}));
  sub->add_flag(
      "--full-cluster", args->full_cluster,
      fmt::format("simulate every data-parallel replica and pipeline rank, each GPU's transfers "
                  "(data-parallel, pipeline, and context- and expert-parallel ones that leave the "
                  "node) routed over the cluster graph as the flows of the algorithm NCCL picks "
                  "(ECMP, oversubscribed leaves, degraded NICs, background traffic as flows), "
                  "instead of one GPU per pipeline rank with the fabric in closed form (the default "
                  "unless a NIC is degraded or a node straggles); refused before it is built when "
                  "its event graph would take more than {}, saying how many tasks it would need "
                  "and what they would cost",
                  model::event_graph_limits()));
  sub->add_flag("--gzip", args->gzip,
                "write DIR/trace.json.gz instead of DIR/trace.json (Perfetto opens both)");
  sub->callback([args, &exit_code] { exit_code = run(*args); });
}

}  // namespace trainsim::cli
