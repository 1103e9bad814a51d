// `trainsim search`: enumerate and rank parallel layouts.
#include "tools/command.hpp"

namespace trainsim::cli {

void add_search_command(CLI::App& app, int& exit_code) {
  add_unimplemented_command(app, exit_code, "search", "enumerate and rank parallel layouts");
}

}  // namespace trainsim::cli
