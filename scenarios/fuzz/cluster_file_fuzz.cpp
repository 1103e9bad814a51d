// libFuzzer target for the cluster-file loader (scenarios/cluster_file.hpp, `trainsim cluster`): any text
// must load or throw InputError, never crash, hang, leak or throw anything else. Seeds: the shipped
// cluster files (tools/dev fuzz).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scenarios/cluster_file.hpp"
#include "sim/error.hpp"

// libFuzzer calls the entry point by this name.
extern "C" int LLVMFuzzerTestOneInput(  // NOLINT(readability-identifier-naming)
    const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)trainsim::scenario::load_cluster_text(text, "fuzz/cluster.yaml");
  } catch (const trainsim::InputError&) {
  }
  return 0;
}
