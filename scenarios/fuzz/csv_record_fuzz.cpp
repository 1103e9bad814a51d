// libFuzzer target for the one CSV record reader (sim/csv_record.hpp) that sweep --resume, merge and report
// read with: any bytes split into records that move forward and cover the text; a record that ended did so
// at a line end outside quotes, one that did not reached the end of the text; never a crash or a hang.
// Seeds: the sweep and report CSVs of scenarios/examples and tests/tools/report_fixtures (tools/dev fuzz).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sim/csv_record.hpp"

// libFuzzer calls the entry point by this name.
extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (std::size_t pos = 0; pos < text.size();) {
    const trainsim::sim::CsvRecord r = trainsim::sim::read_csv_record(text, pos);
    if (r.next <= pos || r.next > text.size() || r.cells.empty()) std::abort();
    if (r.ended && text[r.next - 1] != '\n') std::abort();
    if (!r.ended && r.next != text.size()) std::abort();
    if (r.in_quotes && r.ended) std::abort();
    if (!r.error.empty() && (r.error_at < pos || r.error_at >= r.next)) std::abort();
    pos = r.next;
  }
  return 0;
}
