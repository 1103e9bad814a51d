// `trainsim import megatron ARGS [--node NAME] [--nodes N] [-o FILE]`: print (or write) the scenario of a
// Megatron-LM argument list (scenarios/megatron_args.hpp), so a run starts from the flags a user launches.
#include <iostream>
#include <memory>
#include <string>

#include "scenarios/loader.hpp"
#include "scenarios/megatron_args.hpp"
#include "sim/input_files.hpp"
#include "sim/output_files.hpp"
#include "tools/command.hpp"

namespace trainsim::cli {

namespace {

struct ImportArgs {
  std::string file;
  std::string output;
  scenario::MegatronImportOptions options;
};

// An argument list is a launch script or a flag file: a scenario file's size is more than enough.
std::string read_args(const std::string& path) {
  return sim::read_input_file(path, {.what = "a Megatron-LM argument list or launch script",
                                     .limit = "argument lists",
                                     .max_bytes = scenario::max_scenario_bytes});
}

}  // namespace

void add_import_command(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("import", "write a scenario from another tool's configuration");
  sub->require_subcommand(1);
  auto args = std::make_shared<ImportArgs>();
  auto* megatron = sub->add_subcommand(
      "megatron",
      "a Megatron-LM argument list (a launch script or a file of pretrain_gpt.py flags) as a scenario: "
      "model, layout, batch, precision, recompute and overlap flags; flags that price nothing are listed");
  megatron->add_option("args", args->file, "the argument list or launch script")->required();
  megatron->add_option("--node", args->options.node, "node preset of the cluster (trainsim list clusters)")
      ->capture_default_str();
  megatron
      ->add_option("--nodes", args->options.nodes,
                   "nodes (default: torchrun's --nnodes when a number, else the fewest that hold one "
                   "replica of tp x pp x cp)")
      ->check(CLI::Range(1, 1000000));
  megatron->add_option("-o,--output", args->output, "write the scenario to this file instead of stdout");
  megatron->callback([args, &exit_code] {
    const scenario::MegatronImport imported =
        scenario::import_megatron_args(read_args(args->file), args->file, args->options);
    // What is written must load: the loader's checks (divisibility, memory-free keys) run here.
    (void)scenario::load_scenario_text(imported.yaml, args->output.empty() ? "imported.yaml" : args->output);
    if (args->output.empty()) {
      std::cout << imported.yaml;
    } else {
      sim::write_file_atomically(args->output, imported.yaml);
      std::cerr << "wrote " << args->output << " (" << imported.ignored_flags.size()
                << " flags left out, listed in its header)\n";
    }
    exit_code = exit_ok;
  });
}

}  // namespace trainsim::cli
