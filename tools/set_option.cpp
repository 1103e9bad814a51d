#include "tools/set_option.hpp"

#include "sim/error.hpp"

namespace trainsim::cli {

CLI::Option* add_set_option(CLI::App& command, std::vector<std::string>& sets) {
  return command.add_option(
      "--set", sets,
      "override a key before the scenario is read, as YAML text, e.g. --set cluster.nodes=64 "
      "(repeatable)");
}

std::vector<scenario::Override> parse_sets(const std::vector<std::string>& sets) {
  std::vector<scenario::Override> overrides;
  for (const std::string& text : sets) {
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw InputError("--set expects key.path=value, found \"" + text + "\"");
    }
    overrides.push_back({text.substr(0, eq), text.substr(eq + 1)});
  }
  return overrides;
}

}  // namespace trainsim::cli
