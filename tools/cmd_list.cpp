// `trainsim list`: list shipped presets.
#include "tools/command.hpp"

namespace trainsim::cli {

void add_list_command(CLI::App& app, int& exit_code) {
  add_unimplemented_command(app, exit_code, "list", "list shipped presets");
}

}  // namespace trainsim::cli
