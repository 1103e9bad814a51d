#pragma once
// The one reader of JSON input (hf_config files, summary.json, trace.json, search and sweep JSON), held to
// the rules of the YAML reader: nesting is capped while parsing (so no recursive walk or dump later runs on
// unbounded input), a key given twice in one object is an error, and every message names the file, line
// and column and shows a bounded excerpt with invalid UTF-8 and control bytes escaped.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "sim/utf8_text.hpp"

namespace trainsim::sim {

/// Deeper than any file trainsim reads (a Chrome trace nests four levels, an hf_config three).
constexpr int kMaxJsonDepth = 64;

/// Parses `text` as one JSON value. `file_label` names it in messages; `first_line` is the line of the
/// file that `text` starts on (one line of a JSON Lines file). Throws InputError (file:line:col) for text
/// that is not JSON, nests deeper than `max_depth`, or repeats a key within an object.
[[nodiscard]] nlohmann::ordered_json parse_json_input(std::string_view text, const std::string& file_label,
                                                      int first_line = 1, int max_depth = kMaxJsonDepth);

/// A parsed value as a bounded excerpt of its JSON text (the value's depth is capped by parse_json_input).
[[nodiscard]] std::string json_excerpt(const nlohmann::ordered_json& value, std::size_t max_bytes = 60);

}  // namespace trainsim::sim
