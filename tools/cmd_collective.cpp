// `trainsim collective`: time a collective like nccl-tests.
#include "tools/command.hpp"

namespace trainsim::cli {

void add_collective_command(CLI::App& app, int& exit_code) {
  add_unimplemented_command(app, exit_code, "collective", "time a collective like nccl-tests");
}

}  // namespace trainsim::cli
