// libFuzzer target for the readers of `trainsim report` (report/table.hpp, report_trace.hpp): any
// text, read as a sweep or search CSV, as JSON Lines or a JSON array, and as a Chrome trace, must give a
// table or a trace, or throw InputError; never crash, hang, leak or throw anything else. (summary.json is
// read by sim::parse_json_input, which the hf_config target fuzzes.) Seeds: the report fixtures' CSVs and
// JSON (tools/dev fuzz).
#include <cstddef>
#include <cstdint>
#include <string>

#include "report/table.hpp"
#include "report/trace.hpp"
#include "sim/error.hpp"

// libFuzzer calls the entry point by this name.
extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)trainsim::report::parse_csv(text, "fuzz.csv");
  } catch (const trainsim::InputError&) {
  }
  try {
    (void)trainsim::report::parse_json_lines(text, "fuzz.jsonl");
  } catch (const trainsim::InputError&) {
  }
  try {
    (void)trainsim::report::read_trace(text, "trace.json");
  } catch (const trainsim::InputError&) {
  }
  return 0;
}
