#pragma once
// gzip (RFC 1952) of a text in memory, with zlib: how `run -o DIR --gzip` writes trace.json.gz, which
// Perfetto and chrome://tracing open as they are.
#include <string>
#include <string_view>

namespace trainsim::sim {

/// The gzip member holding `text` (best speed: a trace compresses tenfold at level 1 already).
[[nodiscard]] std::string gzip(std::string_view text);

}  // namespace trainsim::sim
