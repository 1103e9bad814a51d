// libFuzzer target for the scenario loader: any input must either load or throw InputError — never crash,
// hang, leak or throw anything else. Built only with -DTRAINSIM_FUZZ=ON and clang (see
// scenarios/CMakeLists.txt). Seeds: scenarios/examples/ and tests/tools/bad_inputs/.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "scenarios/loader.hpp"
#include "scenarios/quantity.hpp"
#include "sim/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const trainsim::scenario::Scenario s = trainsim::scenario::load_scenario_text(text, "fuzz.yaml");
    // What loads must dump and load back.
    (void)trainsim::scenario::load_scenario_text(trainsim::scenario::dump_scenario(s), "dumped.yaml");
  } catch (const trainsim::InputError&) {
    // Bad input, reported: the expected outcome for most inputs.
  }
  // Every quantity dimension on the raw bytes: errors are values here, never exceptions.
  for (int d = 0; d <= static_cast<int>(trainsim::scenario::Dimension::grams_per_kwh); ++d) {
    (void)trainsim::scenario::try_parse_quantity(text, static_cast<trainsim::scenario::Dimension>(d));
  }
  (void)trainsim::scenario::try_parse_count(text, 0, 1e18);
  return 0;
}
