#pragma once
// UTF-8 well-formedness, where a byte is (line and column), and input text made safe to print in a
// message: bounded, with invalid UTF-8 and control bytes escaped (a hostile file must not write raw bytes
// to the terminal, nor megabytes of itself).
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace trainsim::sim {

/// Length of the UTF-8 sequence starting at `i`, or 0 when it is not well-formed UTF-8 (RFC 3629, Table 3-7
/// of the Unicode Standard): no overlong forms, no surrogates (U+D800..DFFF), nothing above U+10FFFF.
[[nodiscard]] std::size_t utf8_length(std::string_view s, std::size_t i);

/// Line and column (1-based, columns in bytes) of byte `offset` in `text`, for messages.
[[nodiscard]] std::pair<int, int> line_and_column(std::string_view text, std::size_t offset);

/// At most about `max_bytes` of `text` for a message: well-formed printable UTF-8 as it is, \n \t \r as
/// such, any other control byte or byte that is not well-formed UTF-8 as \xNN, and "..." where it was cut.
[[nodiscard]] std::string escaped_excerpt(std::string_view text, std::size_t max_bytes = 60);

}  // namespace trainsim::sim
