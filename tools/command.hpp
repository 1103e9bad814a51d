#pragma once
// The trainsim command line: main.cpp builds the CLI11 app and asks each command to add itself.
// A command's callback stores its exit code in the shared `exit_code` (SPEC: 0 ok, 1 a validation or
// budget check failed, 2 bad input, 3 internal error). Bad input is thrown as trainsim::InputError and
// turned into exit code 2 by main; commands do not catch it.
#include <CLI/CLI.hpp>

namespace trainsim::cli {

enum ExitCode : int { exit_ok = 0, exit_check_failed = 1, exit_bad_input = 2, exit_internal = 3 };

void add_run_command(CLI::App& app, int& exit_code);         // cmd_run.cpp
void add_sweep_command(CLI::App& app, int& exit_code);       // cmd_sweep.cpp
void add_merge_command(CLI::App& app, int& exit_code);       // cmd_merge.cpp
void add_search_command(CLI::App& app, int& exit_code);      // cmd_search.cpp
void add_validate_command(CLI::App& app, int& exit_code);    // cmd_validate.cpp
void add_calibrate_command(CLI::App& app, int& exit_code);   // cmd_calibrate.cpp
void add_explain_command(CLI::App& app, int& exit_code);     // cmd_explain.cpp
void add_list_command(CLI::App& app, int& exit_code);        // cmd_list.cpp
void add_check_command(CLI::App& app, int& exit_code);       // cmd_check.cpp
void add_report_command(CLI::App& app, int& exit_code);      // cmd_report.cpp
void add_topology_command(CLI::App& app, int& exit_code);    // cmd_topology.cpp
void add_collective_command(CLI::App& app, int& exit_code);  // cmd_collective.cpp
void add_import_command(CLI::App& app, int& exit_code);      // cmd_import.cpp
void add_cluster_command(CLI::App& app, int& exit_code);     // cmd_cluster.cpp
void add_compare_command(CLI::App& app, int& exit_code);     // cmd_compare.cpp

/// Adds a subcommand that exists in the interface but is not built yet: it says so and exits 3.
void add_unimplemented_command(CLI::App& app, int& exit_code, const char* name, const char* description);

}  // namespace trainsim::cli
