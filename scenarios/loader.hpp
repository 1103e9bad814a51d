#pragma once
// Scenario files (SPEC "Scenario files") to plain structs. The only door from YAML into trainsim: nothing
// downstream sees a YAML node.
//
// Contract:
//  - One YAML document (a second one is an error), strict UTF-8, at most max_scenario_bytes; nesting depth
//    and alias expansion (in nodes and in bytes) are capped.
//  - Exact key sets per block; unknown keys are errors with a "did you mean"; duplicate keys are errors;
//    YAML 1.1 surprises (010, 0x1F, yes/no, .nan, .inf) are rejected where a number is expected.
//  - Physical quantities carry units (scenarios/quantity.hpp); counts are bare numbers (300e9 accepted).
//  - Presets are resolved (scenarios/presets.hpp), `dp: auto` resolved, defaults filled in, and the
//    layout rules are checked (models/step/layout_rules.hpp), each problem at the key it blames.
//  - Every problem found is collected; they are thrown together as one trainsim::InputError whose
//    diagnostics carry file, 1-based line and column, and the dotted key path.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "scenarios/presets.hpp"
#include "scenarios/scenario.hpp"

namespace trainsim::scenario {

/// Larger scenario files are refused with a clear message (a scenario is a page of text).
inline constexpr std::size_t max_scenario_bytes = 1 << 20;

/// A change applied to the YAML tree before it is converted, so a sweep point goes through exactly the
/// same validation as a hand-written file. `key_path` is dotted ("cluster.nodes", "parallelism.tp",
/// "training.optimizer"); missing intermediate mappings are created. `yaml_value` is YAML text: "64",
/// "adafactor", "{kind: adamw, state_precision: bf16}", "\"200 Gb/s\"".
struct Override {
  std::string key_path;
  std::string yaml_value;
  /// Where the value was written, when it comes from a file rather than the command line (a `validate
  /// --settings` file): its problems are reported there. Empty: "override KEY" (a --set).
  std::string origin_file;
  int origin_line = 0;
  int origin_column = 0;
};

/// Sweep values (`sweep:`) are each checked in place when the scenario is loaded without overrides; a load
/// with overrides (a sweep point) skips that check. Cross-field divisibility of a point is an InputError
/// too: a sweep should record it as that point's infeasibility reason and go on.
///
/// Reads and loads a scenario file. Throws InputError (with every problem) on bad input, including a
/// missing file, a directory, or a file over max_scenario_bytes. `name` defaults to the file's stem.
/// Presets are resolved in `presets` (the caller's, shared by its loads; thread-safe), or, when it is
/// null, in a library of this load's own.
[[nodiscard]] Scenario load_scenario_file(const std::string& path,
                                          const std::vector<Override>& overrides = {},
                                          PresetLibrary* presets = nullptr);

/// Loads scenario text; `file_label` is used in messages and as the default name's source.
[[nodiscard]] Scenario load_scenario_text(std::string_view yaml, const std::string& file_label,
                                          const std::vector<Override>& overrides = {},
                                          PresetLibrary* presets = nullptr);

/// The scenario as YAML that loads back (load_scenario_text) to equal structs. Presets are written out
/// in full (no preset names are needed to read it back); the sweep block is kept.
[[nodiscard]] std::string dump_scenario(const Scenario& scenario);

/// `parallelism.recompute` as the reader reads it (and --set takes it): the mode's name, or
/// `{modules: [...]}` for a per-module selective recompute (the recompute row's text,
/// scenarios/parallelism_fields.cpp).
[[nodiscard]] std::string recompute_to_yaml(const model::ParallelPlan& plan);

/// Edit distance based suggestion: the closest of `candidates` to `word`, or "" when none is close.
[[nodiscard]] std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace trainsim::scenario
