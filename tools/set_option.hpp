#pragma once
// `--set key.path=value`, shared by every command that loads a scenario (check, run, sweep, search): each
// is an override of the file's tree before it is read (scenario::Override), so a row of `search -o`
// re-runs exactly with `run S.yaml --set ...`.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "scenarios/loader.hpp"

namespace trainsim::cli {

/// Adds the repeatable --set option, storing its texts in `sets`; returns it (a command whose positional
/// arguments are a list takes one text per --set).
CLI::Option* add_set_option(CLI::App& command, std::vector<std::string>& sets);

/// The overrides the texts name; InputError for a text without "key=value".
[[nodiscard]] std::vector<scenario::Override> parse_sets(const std::vector<std::string>& sets);

}  // namespace trainsim::cli
