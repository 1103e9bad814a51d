// `trainsim check`: check that a scenario loads.
#include "tools/command.hpp"

namespace trainsim::cli {

void add_check_command(CLI::App& app, int& exit_code) {
  add_unimplemented_command(app, exit_code, "check", "check that a scenario file loads");
}

}  // namespace trainsim::cli
