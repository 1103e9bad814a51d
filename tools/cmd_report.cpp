// `trainsim report`: write an HTML report.
#include "tools/command.hpp"

namespace trainsim::cli {

void add_report_command(CLI::App& app, int& exit_code) {
  add_unimplemented_command(app, exit_code, "report", "write an HTML report");
}

}  // namespace trainsim::cli
