// `trainsim sweep`: expand the scenario's sweep block and run every point (see tools/sweep_runner.hpp), then
// say in one line what came of it: points, feasible, fitting, the fastest feasible one, the time taken.
#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "models/report/summary.hpp"
#include "scenarios/studies/sweep.hpp"
#include "sim/error.hpp"
#include "tools/command.hpp"
#include "tools/set_option.hpp"
#include "tools/sweep_output.hpp"
#include "tools/sweep_runner.hpp"

namespace trainsim::cli {

namespace {

constexpr int kExitInterrupted = 130;

struct SweepArgs {
  std::string scenario;
  std::string output;
  std::string format;
  std::string fidelity = "analytic";
  std::string shard = "0/1";
  int threads = 0;
  bool resume = false;
  bool mpi = false;
  bool large = false;
  std::vector<std::string> sets;
};

}  // namespace

void add_sweep_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SweepArgs>();
  auto* sub = app.add_subcommand("sweep", "expand the scenario's sweep block and run every point");
  sub->footer(
      "Rows are written in point order (column 'point'), one whole line each, as CSV (unit-suffixed columns) "
      "or JSON Lines. Points that cannot be built or do not fit stay in the output with feasible=false and "
      "their reason (fits=false for those that do not fit).\n"
      "Interrupted (Ctrl-C, kill)? Rerun the same command with --resume: points already written are "
      "skipped.\n"
      "Many machines: --shard i/N on each (0 <= i < N), then 'trainsim merge OUT SHARD...'; or "
      "'mpirun -np N trainsim sweep S.yaml --mpi -o OUT'.");
  sub->add_option("scenario", args->scenario, "scenario file with a sweep: block")->required();
  sub->add_option("-j,--jobs", args->threads, "threads (default: all cores)")->check(CLI::Range(0, 4096));
  sub->add_option("-o,--output", args->output, "output file (default: standard output)");
  sub->add_option("--format", args->format, "csv or jsonl (default: from the -o extension, else csv)")
      ->check(CLI::IsMember({"csv", "jsonl"}));
  sub->add_flag("--resume", args->resume, "skip the points the output file already holds");
  sub->add_option("--fidelity", args->fidelity, "analytic (default) or event")
      ->check(CLI::IsMember({"analytic", "event"}));
  sub->add_option("--shard", args->shard, "run only slice i of N: points whose index mod N is i");
  sub->add_flag("--large", args->large,
                "run a sweep of more than 1,000,000 points (refused without it, with its core-hours and "
                "output size)");
  sub->add_flag("--mpi", args->mpi, "spread points over MPI ranks (mpirun -np N trainsim sweep ... --mpi)");
  add_set_option(*sub, args->sets);
  sub->callback([args, &exit_code] {
    SweepJob job;
    job.scenario_path = args->scenario;
    job.overrides = parse_sets(args->sets);
    job.output = args->output;
    job.format = args->format.empty()      ? format_from_path(args->output)
                 : args->format == "jsonl" ? scenario::RowFormat::jsonl
                                           : scenario::RowFormat::csv;
    job.fidelity = model::parse_fidelity(args->fidelity);
    job.threads = args->threads;
    job.resume = args->resume;
    job.large = args->large;
    job.shard = scenario::parse_shard(args->shard);
    const SweepOutcome outcome = args->mpi ? run_sweep_mpi(job) : run_sweep(job);
    if (!args->mpi && outcome.complete()) {
      std::string fastest = "no point is feasible";
      if (outcome.fastest_point >= 0) {
        fastest = fmt::format("fastest feasible: point {} ({} per iteration)", outcome.fastest_point,
                              model::format_human(model::FieldUnit::seconds, outcome.fastest_iteration));
      }
      fmt::print(stderr, "trainsim sweep: {} points in {:.2f} s: {} feasible, {} fit; {}\n", outcome.planned,
                 outcome.seconds, outcome.feasible, outcome.fits, fastest);
    }
    // Interrupted: the shell convention for SIGINT, so scripts can tell it from a failed check.
    exit_code = outcome.complete() ? exit_ok : kExitInterrupted;
  });
}

}  // namespace trainsim::cli
