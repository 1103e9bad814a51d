// trainsim — simulate distributed training runs: time, memory and money.
#include <cstdio>
#include <exception>
#include <iostream>

#include "sim/error.hpp"
#include "tools/command.hpp"

namespace trainsim::cli {

void add_unimplemented_command(CLI::App& app, int& exit_code, const char* name, const char* description) {
  auto* sub = app.add_subcommand(name, std::string(description) + " (not implemented yet)");
  sub->allow_extras();
  sub->callback([&exit_code, name] {
    std::cerr << "trainsim " << name << ": not implemented yet\n";
    exit_code = exit_internal;
  });
}

}  // namespace trainsim::cli

int main(int argc, char** argv) {
  using namespace trainsim::cli;
  int exit_code = exit_ok;
  CLI::App app{
      "trainsim: simulate distributed training runs — iteration time, memory per GPU, run time, cost"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "trainsim 0.1.0");
  add_run_command(app, exit_code);
  add_sweep_command(app, exit_code);
  add_merge_command(app, exit_code);
  add_search_command(app, exit_code);
  add_compare_command(app, exit_code);
  add_validate_command(app, exit_code);
  add_calibrate_command(app, exit_code);
  add_explain_command(app, exit_code);
  add_list_command(app, exit_code);
  add_check_command(app, exit_code);
  add_report_command(app, exit_code);
  add_topology_command(app, exit_code);
  add_collective_command(app, exit_code);
  add_import_command(app, exit_code);
  add_cluster_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RequiredError& e) {
    // A command that takes a sub-command (import) given none it knows: name them, not just "required".
    const CLI::App* command = &app;
    while (!command->get_subcommands().empty()) command = command->get_subcommands().front();
    const auto choices = command->get_subcommands({});
    if (command == &app || choices.empty() || !command->get_subcommands().empty()) {
      app.exit(e);
      return exit_bad_input;
    }
    std::string names;
    for (const CLI::App* c : choices) names += (names.empty() ? "" : ", ") + c->get_name();
    std::cerr << "error: trainsim " << command->get_name() << " needs one of: " << names << "\n";
    if (!command->get_footer().empty()) std::cerr << command->get_footer() << "\n";
    std::cerr << "Run with --help for more information.\n";
    return exit_bad_input;
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return exit_bad_input;
  } catch (const trainsim::InputError& e) {
    std::cerr << "error: " << e.what() << '\n';
    return exit_bad_input;
  } catch (const trainsim::InternalError& e) {
    std::cerr << e.what() << '\n';
    return exit_internal;
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << '\n';
    return exit_internal;
  }
  return exit_code;
}
