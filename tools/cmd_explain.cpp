// `trainsim explain`: show the memory and time breakdown with its formulas.
#include "tools/command.hpp"

namespace trainsim::cli {

void add_explain_command(CLI::App& app, int& exit_code) {
  add_unimplemented_command(app, exit_code, "explain", "show the memory and time breakdown with its formulas");
}

}  // namespace trainsim::cli
