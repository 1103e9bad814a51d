#pragma once
// A string as a JSON string literal (RFC 8259): '"' and '\\' escaped, control characters as \n, \t, \r or
// \u00XX, UTF-8 passed through. The same text is a YAML double-quoted scalar, so the scenario dump quotes
// with it too.
#include <string>
#include <string_view>

namespace trainsim::sim {

/// Appends `text`, quoted and escaped, to `out`.
void append_json_string(std::string& out, std::string_view text);

}  // namespace trainsim::sim
