#pragma once
// Input files read whole, with the checks every command that reads one needs: a regular file (not a
// folder, a device or a stream such as /dev/zero, which would be read without end), at most a stated size
// (read in a bounded way, so a file that grows meanwhile is caught too), and, where the reader expects
// text it parses line by line, no NUL byte. Each failure is an InputError naming the path and what was
// expected.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace trainsim::sim {

/// What a command expects at a path, for the checks and their messages.
struct InputKind {
  std::string_view what;   ///< "a YAML scenario file", "a sweep output (CSV or JSON Lines)", …
  std::string_view limit;  ///< whose size limit, plural: "scenario and preset files", "sweep outputs", …
  std::size_t max_bytes = 0;
  bool refuse_nul = true;  ///< false where the reader reports bad bytes itself, with their location
};

/// The whole text of `path`.
[[nodiscard]] std::string read_input_file(const std::filesystem::path& path, const InputKind& kind);

}  // namespace trainsim::sim
