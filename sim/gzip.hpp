#pragma once
// gzip (RFC 1952) of a text in memory, with zlib: how `run -o DIR --gzip` writes trace.json.gz, which
// Perfetto and chrome://tracing open as they are, and how `report` reads it back.
#include <cstddef>
#include <string>
#include <string_view>

namespace trainsim::sim {

/// The gzip member holding `text` (best speed: a trace compresses tenfold at level 1 already).
[[nodiscard]] std::string gzip(std::string_view text);

/// The text of a gzip member (what gzip() wrote, or gzip(1)). Throws InputError, naming `label`, when the
/// data is not gzip, is cut short or corrupt, or would inflate beyond `max_bytes` (a small file that
/// inflates without bound must not exhaust memory).
[[nodiscard]] std::string gunzip(std::string_view data, std::size_t max_bytes, std::string_view label);

}  // namespace trainsim::sim
