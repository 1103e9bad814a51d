// `trainsim cluster C.yaml`: many teams' jobs on one shared cluster (SPEC "Shared clusters"). Loads the
// cluster file, gets every job's run time from the step model (each distinct scenario and node count once),
// runs the queue on the discrete-event engine and prints per-team and cluster results as a table or JSON;
// with -o DIR also writes jobs.csv, cluster.csv, trace.json and queue.json (and links.csv under
// contention), together or not at all.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "models/cluster/queue_outputs.hpp"
#include "models/cluster/queue_simulator.hpp"
#include "scenarios/cluster_file.hpp"
#include "scenarios/studies/cluster_queue.hpp"
#include "sim/output_files.hpp"
#include "tools/command.hpp"

namespace trainsim::cli {

namespace {

struct ClusterArgs {
  std::string file;
  std::string out_dir;
  std::string format = "table";
};

int run_cluster(const ClusterArgs& args) {
  const scenario::ClusterFile file = scenario::load_cluster_file(args.file);
  const scenario::ClusterStudy study = scenario::build_cluster_study(file);
  const model::QueueReport report = model::simulate_queue(study.spec);
  const std::vector<std::string> notes = scenario::cluster_study_notes(study);
  if (args.format == "json") {
    std::cout << model::queue_json(study.spec, report, notes);
  } else {
    std::cout << model::queue_table(study.spec, report, notes);
  }
  if (!args.out_dir.empty()) {
    const std::filesystem::path dir(args.out_dir);
    sim::ensure_output_folder(dir);
    sim::OutputFiles outputs;
    outputs.stage(dir / "jobs.csv", model::queue_jobs_csv(study.spec, report));
    outputs.stage(dir / "cluster.csv", model::queue_cluster_csv(study.spec, report));
    if (study.spec.contention) outputs.stage(dir / "links.csv", model::queue_links_csv(report));
    outputs.stage(dir / "trace.json", model::queue_trace_json(study.spec, report));
    outputs.stage(dir / "queue.json", model::queue_json(study.spec, report, notes));
    outputs.commit();
  }
  return exit_ok;
}

}  // namespace

void add_cluster_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ClusterArgs>();
  auto* sub = app.add_subcommand(
      "cluster", "simulate a shared cluster: many teams' jobs queued on one set of nodes (waits, idle cost)");
  sub->add_option("cluster_file", args->file,
                  "cluster file (YAML): cluster, period, scheduler, jobs, arrivals")
      ->required();
  sub->add_option("-o,--output", args->out_dir,
                  "write jobs.csv, cluster.csv, trace.json and queue.json (the summary --format json "
                  "prints) into this folder (and links.csv with cluster.contention)");
  sub->add_option("--format", args->format, "how to print the result")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  sub->callback([args, &exit_code] { exit_code = run_cluster(*args); });
}

}  // namespace trainsim::cli
