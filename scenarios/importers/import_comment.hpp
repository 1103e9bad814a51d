#pragma once
// The header comments of an imported scenario (`trainsim import megatron | nemo`): what was read and left
// out, one list per kind, wrapped as comment lines.
#include <string>
#include <vector>

namespace trainsim::scenario {

/// `title` and the words after it as comment lines of at most 110 characters (each word escaped and
/// bounded); "" when there are none.
[[nodiscard]] std::string comment_list(const std::string& title, const std::vector<std::string>& words);

}  // namespace trainsim::scenario
