// `trainsim merge OUT SHARD...`: join the outputs of `trainsim sweep --shard i/N` runs into one output,
// sorted by point index, with the header once. Refuses shards of different sweeps (headers differ) and a
// point present twice with different contents; a point present twice identically (a shard rerun) is kept
// once. Writes OUT through a temporary file renamed into place, so OUT is never half-written.
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
};

void merge(const MergeArgs& args) {
  const scenario::RowFormat format = format_from_path(args.output);
  std::string header;
  std::map<std::int64_t, std::string> rows;
  for (std::size_t i = 0; i < args.inputs.size(); ++i) {
    const SweepFile file = read_sweep_file(args.inputs[i], format);
    if (i == 0) header = file.header;
    if (file.header != header) {
      throw InputError(args.inputs[i] + ": its header differs from " + args.inputs[0] +
                       "'s: shards of different sweeps cannot be merged");
    }
    for (const auto& [index, line] : file.rows) {
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
  if (static_cast<std::int64_t>(rows.size()) != expected) {
    std::fprintf(stderr, "trainsim merge: warning: %lld of points 0..%lld are missing\n",
                 static_cast<long long>(expected - static_cast<std::int64_t>(rows.size())),
                 static_cast<long long>(expected - 1));
  }
  std::fprintf(stderr, "trainsim merge: %zu rows from %zu files -> %s\n", rows.size(), args.inputs.size(),
               args.output.c_str());
}

}  // namespace

void add_merge_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<MergeArgs>();
  auto* sub = app.add_subcommand("merge", "join sharded sweep outputs into one, sorted by point");
  sub->add_option("output", args->output, "merged output (.csv, or .jsonl for JSON Lines)")->required();
  sub->add_option("shards", args->inputs, "outputs of 'trainsim sweep --shard i/N'")->required();
  sub->callback([args, &exit_code] {
    merge(*args);
    exit_code = exit_ok;
  });
}

}  // namespace trainsim::cli
