#pragma once
// Internal to the scenarios library: `--set key.path=value` and sweep points as edits of a YAML tree,
// before it is read, so that an override is checked exactly as if it had been written in the file.
#include <string>

#include "scenarios/yaml_tree.hpp"

namespace trainsim::scenario {

/// Sets `path` (dotted) in `root` to `value`, creating mappings on the way; `line`:`column` is where the
/// override came from (its key's location in messages). A scalar met on the way becomes a mapping naming
/// it (`model: gpt3-175b` + `model.seq_len` -> {preset: gpt3-175b, seq_len: …}).
void apply_override(Diagnostics& d, YamlValue& root, const std::string& path, YamlValue value, int line,
                    int column);

}  // namespace trainsim::scenario
