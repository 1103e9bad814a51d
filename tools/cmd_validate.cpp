// `trainsim validate`: compare predictions with published measurements.
#include "tools/command.hpp"

namespace trainsim::cli {

void add_validate_command(CLI::App& app, int& exit_code) {
  add_unimplemented_command(app, exit_code, "validate", "compare predictions with published measurements");
}

}  // namespace trainsim::cli
