// `trainsim merge OUT SHARD...`: join the outputs of `trainsim sweep --shard i/N` runs into one output,
// sorted by point index, with the header once. Refuses shards of different sweeps (headers or row
// fingerprints differ) and a point present twice with different contents; a point present twice
// identically (a shard rerun) is kept once. Writes OUT through a temporary file renamed into place, so OUT is
// never half-written.
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "sim/error.hpp"
#include "sim/output_files.hpp"
#include "tools/command.hpp"
#include "tools/sweep_output.hpp"

namespace trainsim::cli {

namespace {

struct MergeArgs {
  std::string output;
  std::vector<std::string> inputs;
  bool strict = false;
};

/// Merges the shards; returns whether the result is whole (no torn row dropped, no point missing).
bool merge(const MergeArgs& args) {
  const scenario::RowFormat format = format_from_path(args.output);
  std::string header;
  std::string fingerprint;  // of the first row read: every row must carry the same
  std::map<std::int64_t, std::string> rows;
  std::size_t torn = 0;
  for (std::size_t i = 0; i < args.inputs.size(); ++i) {
    const SweepFile file = read_sweep_file(args.inputs[i], format);
    if (file.torn_bytes > 0) {
      ++torn;
      std::fprintf(stderr, "trainsim merge: warning: %s ends in a torn row (%llu bytes) that is left out\n",
                   args.inputs[i].c_str(), static_cast<unsigned long long>(file.torn_bytes));
    }
    if (i == 0) header = file.header;
    if (file.header != header) {
      throw InputError(args.inputs[i] + ": its header differs from " + args.inputs[0] +
                       "'s: shards of different sweeps cannot be merged");
    }
    for (const auto& [index, line] : file.rows) {
      const std::string_view row_sweep = scenario::row_fingerprint(line, format);
      if (rows.empty()) fingerprint = row_sweep;
      if (row_sweep != fingerprint) {
        throw InputError(args.inputs[i] + ": point " + std::to_string(index) + " has sweep fingerprint \"" +
                         std::string(row_sweep) + "\", not \"" + fingerprint +
                         "\" as the rows before it: shards of different sweeps cannot be merged");
      }
      const auto [it, inserted] = rows.emplace(index, line);
      if (!inserted && it->second != line) {
        throw InputError(args.inputs[i] + ": point " + std::to_string(index) +
                         " appears in two shards with different contents");
      }
    }
  }
  std::string text = header;
  for (const auto& entry : rows) text += entry.second;
  sim::write_file_atomically(args.output, text);
  // Gaps are worth a warning: a shard missing from the list, or one that did not finish.
  const std::int64_t expected = rows.empty() ? 0 : rows.rbegin()->first + 1;
  const std::int64_t missing = expected - static_cast<std::int64_t>(rows.size());
  if (missing > 0) {
    std::fprintf(stderr, "trainsim merge: warning: %lld of points 0..%lld are missing\n",
                 static_cast<long long>(missing), static_cast<long long>(expected - 1));
  }
  std::fprintf(stderr, "trainsim merge: %zu rows from %zu files -> %s\n", rows.size(), args.inputs.size(),
               args.output.c_str());
  return torn == 0 && missing == 0;
}

}  // namespace

void add_merge_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<MergeArgs>();
  auto* sub = app.add_subcommand("merge", "join sharded sweep outputs into one, sorted by point");
  sub->add_option("output", args->output, "merged output (.csv, or .jsonl for JSON Lines)")->required();
  sub->add_option("shards", args->inputs, "outputs of 'trainsim sweep --shard i/N'")->required();
  sub->add_flag("--strict", args->strict, "exit 1 when a torn row was left out or a point is missing");
  sub->callback([args, &exit_code] {
    const bool whole = merge(*args);
    exit_code = whole || !args->strict ? exit_ok : exit_check_failed;
  });
}

}  // namespace trainsim::cli
