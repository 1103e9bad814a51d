// `trainsim merge`: join sharded sweep outputs.
#include "tools/command.hpp"

namespace trainsim::cli {

void add_merge_command(CLI::App& app, int& exit_code) {
  add_unimplemented_command(app, exit_code, "merge", "join sharded sweep outputs");
}

}  // namespace trainsim::cli
