// `trainsim topology`: summarise a cluster topology.
#include "tools/command.hpp"

namespace trainsim::cli {

void add_topology_command(CLI::App& app, int& exit_code) {
  add_unimplemented_command(app, exit_code, "topology", "summarise a cluster topology");
}

}  // namespace trainsim::cli
