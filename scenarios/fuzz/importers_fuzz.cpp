// libFuzzer target for the importers (scenarios/importers/megatron_args.hpp,
// scenarios/importers/nemo_recipe.hpp): any text, read as a Megatron-LM argument list and as a NeMo recipe,
// strictly and leniently, must give a scenario or throw InputError, never crash, hang, leak or throw anything
// else; a scenario they give must load or be refused with InputError (as `trainsim import` checks before it
// writes). Seeds: tests/tools/megatron_args and tests/tools/nemo_recipes (tools/dev fuzz).
#include <cstddef>
#include <cstdint>
#include <string>

#include "scenarios/importers/megatron_args.hpp"
#include "scenarios/importers/nemo_recipe.hpp"
#include "scenarios/loader.hpp"
#include "sim/error.hpp"

namespace {

void load(const std::string& yaml) {
  try {
    (void)trainsim::scenario::load_scenario_text(yaml, "imported.yaml");
  } catch (const trainsim::InputError&) {
    // An import the loader refuses: `trainsim import` reports it and writes nothing.
  }
}

}  // namespace

// libFuzzer calls the entry point by this name.
extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (const bool lenient : {false, true}) {
    try {
      trainsim::scenario::MegatronImportOptions options;
      options.lenient = lenient;
      load(trainsim::scenario::import_megatron_args(text, "fuzz.args", options).yaml);
    } catch (const trainsim::InputError&) {
    }
    try {
      trainsim::scenario::NemoImportOptions options;
      options.lenient = lenient;
      load(trainsim::scenario::import_nemo_recipe(text, "fuzz.yaml", options).yaml);
    } catch (const trainsim::InputError&) {
    }
  }
  return 0;
}
