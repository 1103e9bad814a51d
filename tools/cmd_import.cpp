// `trainsim import megatron ARGS [--node NAME] [--nodes N] [-o FILE]` and `trainsim import nemo RECIPE.yaml
// [--node NAME] [-o FILE]`: print (or write) the scenario of a Megatron-LM argument list
// (scenarios/importers/megatron_args.hpp) or of a NeMo 2 recipe (scenarios/importers/nemo_recipe.hpp), so a
// run starts from the configuration a user launches.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "scenarios/importers/megatron_args.hpp"
#include "scenarios/importers/nemo_recipe.hpp"
#include "scenarios/loader.hpp"
#include "sim/input_files.hpp"
#include "sim/output_files.hpp"
#include "tools/command.hpp"

namespace trainsim::cli {

namespace {

struct ImportArgs {
  std::string file;
  std::string output;
  scenario::MegatronImportOptions options;
  scenario::NemoImportOptions nemo;
};

// An argument list is a launch script or a flag file: a scenario file's size is more than enough.
std::string read_args(const std::string& path) {
  return sim::read_input_file(path, {.what = "a Megatron-LM argument list or launch script",
                                     .limit = "argument lists",
                                     .max_bytes = scenario::max_scenario_bytes});
}

// A recipe is a scenario-sized YAML file.
std::string read_recipe(const std::string& path) {
  return sim::read_input_file(
      path,
      {.what = "a NeMo 2 recipe (YAML)", .limit = "recipes", .max_bytes = scenario::max_scenario_bytes});
}

// What is written must load: the loader's checks (divisibility, memory-free keys) run before it is printed
// or written (atomically). Their messages name the scenario as imported from `source`, not the output
// file: nothing is written when they fail.
void emit(const std::string& yaml, const std::string& source, const std::string& output, std::size_t left_out,
          std::string_view what, const std::vector<std::string>& unknown) {
  (void)scenario::load_scenario_text(
      yaml, "(the scenario imported from " + source + ", not written; run without -o to see it)");
  for (const std::string& u : unknown) {
    std::cerr << "trainsim import: left out " << u << ", which this importer does not know (--lenient)\n";
  }
  if (output.empty()) {
    std::cout << yaml;
  } else {
    sim::write_file_atomically(output, yaml);
    std::cerr << "wrote " << output << " (" << left_out << " " << what
              << " left out, listed in its header)\n";
  }
}

}  // namespace

void add_import_command(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("import", "write a scenario from another tool's configuration");
  sub->require_subcommand(1);
  // Without a known source CLI11 says only "A subcommand is required": name the sources, and where a
  // HuggingFace config.json goes instead (`model: {hf_config: PATH}` in a scenario).
  sub->footer(
      "Sources: megatron (a Megatron-LM argument list or recipe file) and nemo (a NeMo 2 recipe). A "
      "HuggingFace config.json "
      "is not imported: write model: {hf_config: path/to/config.json} in a scenario.");
  auto args = std::make_shared<ImportArgs>();
  auto* megatron = sub->add_subcommand(
      "megatron",
      "a Megatron-LM argument list (a launch script, a file of pretrain_gpt.py flags or a recipe file of "
      "examples/moe_recipes) as a scenario: "
      "model, layout, batch, precision, recompute and offload modules, optimizer moments, MoE dispatcher and "
      "routing, overlap flags; flags that price nothing are listed, "
      "unknown ones refused (--lenient: listed)");
  megatron
      ->add_option("args", args->file,
                   "the argument list, launch script or Megatron-LM recipe file (examples/moe_recipes: "
                   "ARGS and ENV_VARS)")
      ->required();
  megatron
      ->add_option("--vocab-size", args->options.vocab_size,
                   "the tokenizer's vocabulary where the arguments give none (a HuggingFace tokenizer: its "
                   "length, before Megatron pads it)")
      ->check(CLI::Range(1LL, 1'000'000'000LL));
  megatron->add_option("--node", args->options.node, "node preset of the cluster (trainsim list clusters)")
      ->capture_default_str();
  megatron
      ->add_option("--nodes", args->options.nodes,
                   "nodes (default: torchrun's --nnodes when a number, else the fewest that hold one "
                   "replica: pp x lcm(tp x cp, ep x expert tp) GPUs)")
      ->check(CLI::Range(1, 1000000));
  megatron
      ->add_option("--gpus-per-node", args->options.gpus_per_node,
                   "GPUs of each node the run uses (e.g. 64 of an NVL72 rack; default: the node preset's)")
      ->check(CLI::Range(1, 1000000));
  megatron->add_option("-o,--output", args->output, "write the scenario to this file instead of stdout");
  megatron->add_flag("--lenient", args->options.lenient,
                     "leave out flags this importer does not know (listed on stderr and in the header) "
                     "instead of refusing them");
  megatron->callback([args, &exit_code] {
    const scenario::MegatronImport imported =
        scenario::import_megatron_args(read_args(args->file), args->file, args->options);
    emit(imported.yaml, args->file, args->output,
         imported.ignored_flags.size() + imported.unknown_flags.size(), "flags", imported.unknown_flags);
    exit_code = exit_ok;
  });

  auto* nemo = sub->add_subcommand(
      "nemo",
      "a NeMo 2 recipe as NeMo-Run writes it to YAML (model.config, trainer.strategy, trainer.plugins, "
      "trainer.callbacks, data, optim) as a scenario: model, layout, batch, precision, recompute, sharding "
      "and overlap flags; keys that price nothing are listed, unknown ones refused (--lenient: listed)");
  nemo->add_option("recipe", args->file, "the recipe YAML")->required();
  nemo->add_option("--node", args->nemo.node, "node preset of the cluster (trainsim list clusters)")
      ->capture_default_str();
  nemo->add_option("-o,--output", args->output, "write the scenario to this file instead of stdout");
  nemo->add_flag("--lenient", args->nemo.lenient,
                 "leave out keys this importer does not know (listed on stderr and in the header) instead "
                 "of refusing them");
  nemo->callback([args, &exit_code] {
    const scenario::NemoImport imported =
        scenario::import_nemo_recipe(read_recipe(args->file), args->file, args->nemo);
    emit(imported.yaml, args->file, args->output, imported.left_out.size(), "keys", imported.unknown);
    exit_code = exit_ok;
  });
}

}  // namespace trainsim::cli
