// libFuzzer target for the hf_config reader (scenarios/importers/hf_config.hpp) and the one JSON reader under
// it (sim/json_input.hpp): any text must give a model or diagnostics, never a crash, a hang, a leak or
// another exception; a parsed value's excerpt stays bounded. Seeds: models/hf_configs/*.json (tools/dev
// fuzz).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "scenarios/importers/hf_config.hpp"
#include "sim/error.hpp"
#include "sim/json_input.hpp"

// libFuzzer calls the entry point by this name.
extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  trainsim::scenario::Diagnostics d;
  const trainsim::scenario::YamlValue at;
  const auto model =
      trainsim::scenario::read_hf_config_text(d, at, "model.hf_config", text, "fuzz.json", "fuzz.json");
  if (model.has_value() != d.empty()) std::abort();  // a model exactly when nothing was reported
  for (const trainsim::Diagnostic& diagnostic : d.list()) {
    if (diagnostic.message.size() > 4096) std::abort();  // messages quote bounded excerpts only
  }
  try {
    const auto value = trainsim::sim::parse_json_input(text, "fuzz.json");
    // 60 bytes, then at most one escape or character (4 bytes) and "...".
    if (trainsim::sim::json_excerpt(value).size() > 60 + 4 + 3) std::abort();
  } catch (const trainsim::InputError& e) {
    if (e.diagnostics().size() != 1 || e.diagnostics().front().message.size() > 4096) std::abort();
  }
  return 0;
}
