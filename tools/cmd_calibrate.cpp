// `trainsim calibrate`: fit hardware efficiency parameters to measurements.
#include "tools/command.hpp"

namespace trainsim::cli {

void add_calibrate_command(CLI::App& app, int& exit_code) {
  add_unimplemented_command(app, exit_code, "calibrate", "fit hardware efficiency parameters to measurements");
}

}  // namespace trainsim::cli
