// `trainsim sweep`: expand the sweep block and run every point.
#include "tools/command.hpp"

namespace trainsim::cli {

void add_sweep_command(CLI::App& app, int& exit_code) {
  add_unimplemented_command(app, exit_code, "sweep", "expand the sweep block and run every point");
}

}  // namespace trainsim::cli
