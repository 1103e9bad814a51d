// `trainsim run`: simulate one scenario.
#include "tools/command.hpp"

namespace trainsim::cli {

void add_run_command(CLI::App& app, int& exit_code) {
  add_unimplemented_command(app, exit_code, "run", "simulate one scenario");
}

}  // namespace trainsim::cli
