#pragma once
// Input files read whole, with the checks every command that reads one needs: a regular file (not a
// folder, a device or a stream such as /dev/zero, which would be read without end), at most a stated size,
// and text (no NUL byte: a binary file is not a CSV or a JSON Lines file). Each failure is an InputError
// naming the path and what was expected.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace trainsim::sim {

/// The whole text of `path`. `what` names what the command expected there ("a sweep output (CSV or JSON
/// Lines)"), for the messages.
[[nodiscard]] std::string read_input_file(const std::filesystem::path& path, std::string_view what,
                                          std::size_t max_bytes);

}  // namespace trainsim::sim
