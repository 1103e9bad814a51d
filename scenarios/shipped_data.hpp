#pragma once
// Where the data shipped with trainsim is found. An installed binary (PREFIX/bin/trainsim, `cmake
// --install`) reads PREFIX/share/trainsim/, laid out as one TRAINSIM_PATH folder plus two more:
//   gpus/ nodes/ models/   the presets (topologies/presets/gpus, topologies/presets/nodes, models/presets)
//   regions/               the region price tables (models/regions)
//   validation/            the validation cases (scenarios/validation), one suite per sub-folder
//   examples/              the example scenarios (scenarios/examples)
//   hf_configs/            HuggingFace config.json files of published models (models/hf_configs)
// The Python module installed as PREFIX/lib/python3/dist-packages/trainsim (tools/python) reads the same
// PREFIX/share/trainsim/. A binary or module that has no such folder beside it (one run from its build
// folder, a test) reads the source tree it was built from instead. The choice is made once per process,
// from where the code lies (/proc/self/exe for the binary, the module's own file for the module).
#include <string>
#include <vector>

namespace trainsim::scenario {

enum class ShippedData {
  gpu_presets,
  node_presets,
  model_presets,
  region_presets,
  validation,
  examples,
  hf_configs
};

/// The folder holding one kind of shipped data (it may not exist in a partial install).
[[nodiscard]] std::string shipped_folder(ShippedData what);

/// True when the shipped data comes from an installed share/trainsim folder, not the source tree.
[[nodiscard]] bool running_installed();

/// The validation suites `trainsim validate --suite NAME` takes: "all" (every shipped case), then each
/// sub-folder of the shipped validation folder that holds cases, sorted.
[[nodiscard]] std::vector<std::string> validation_suites();

/// The folder of a suite; InputError naming the known suites for any other name.
[[nodiscard]] std::string validation_suite_folder(const std::string& name);

}  // namespace trainsim::scenario
