#pragma once
// A settings file (`trainsim validate --settings FILE`): for named validation cases, the keys their runs
// set that the case files do not state, each case's with its source. A case is named by its file's stem.
//
//   cases:
//     mb2608-gb200-qwen3-30b-mxfp8:
//       source: "Megatron-Bridge v0.6.0 src/megatron/bridge/perf_recipes/qwen/gb200/qwen3_moe.py"
//       set:
//         framework.moe_dispatcher: hybridep
//         parallelism.recompute: none
//
// Each `set` entry is an override of the case's tree before it is read (as `--set key.path=value`), so
// it is checked exactly as if written in the case, and a problem with it is reported at its place in
// the settings file.
#include <cstddef>
#include <string>
#include <vector>

#include "scenarios/loader.hpp"

namespace trainsim::scenario {

/// Larger settings files are refused (a settings file is a few pages of text).
inline constexpr std::size_t max_case_settings_bytes = 1 << 20;

/// An override as `--set` writes it: "key.path=value".
[[nodiscard]] std::string set_text(const Override& o);

struct CaseSetting {
  std::string case_name;            ///< the case file's stem
  std::string source;               ///< where the settings come from
  std::vector<Override> overrides;  ///< in the file's order, each with its place in the file
  int line = 0;                     ///< where the case's entry starts in the settings file
  int column = 0;
};

struct CaseSettings {
  std::string file;                ///< the settings file
  std::vector<CaseSetting> cases;  ///< in the file's order; names unique
  /// The entry for the case file `case_file` (matched by its stem), or null.
  [[nodiscard]] const CaseSetting* find(const std::string& case_file) const;
};

/// Reads a settings file; InputError with every problem at file:line:col (unknown or missing keys, an
/// empty `set`, a case named twice).
[[nodiscard]] CaseSettings load_case_settings_file(const std::string& path);
[[nodiscard]] CaseSettings load_case_settings_text(std::string_view yaml, const std::string& file_label);

/// InputError at its entry for each case the settings name that is not among `case_files`, so that a
/// misspelt or moved case is never silently run without its settings.
void check_settings_match(const CaseSettings& settings, const std::vector<std::string>& case_files);

/// load_case_settings_file, then check_settings_match against the cases about to run.
[[nodiscard]] CaseSettings load_case_settings_for(const std::string& path,
                                                  const std::vector<std::string>& case_files);

}  // namespace trainsim::scenario
